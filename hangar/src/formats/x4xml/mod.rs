//! X4's XML data files that models depend on.

pub mod material_library;

/// `v` as the value of an attribute in X4's XML (`&`, `<`, `>`, `"` as entities).
pub fn escaped(v: &str) -> String {
    v.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
