//! X4's XML data files that models depend on.

pub mod material_library;

/// An extension's `content.xml`: its `id` as written and the ids its `<dependency>` elements name;
/// `None` when its text does not read or parse.
pub(crate) fn content_ids(bytes: &[u8]) -> Option<(Option<String>, Vec<String>)> {
    let text = crate::xml::text(bytes).ok()?;
    let doc = crate::xml::parse(&text).ok()?;
    let root = doc.root_element();
    let deps = root
        .children()
        .filter(|c| c.has_tag_name("dependency"))
        .filter_map(|c| c.attribute("id").map(str::to_string))
        .collect();
    Some((root.attribute("id").map(str::to_string), deps))
}

/// `v` as the value of an attribute in X4's XML (`&`, `<`, `>`, `"` as entities).
pub fn escaped(v: &str) -> String {
    v.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
