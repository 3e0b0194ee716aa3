//! glTF 2.0 out of and into the neutral model ([`crate::model`]), with gltf-json types.
//!
//! Export writes one buffer: each vertex attribute in its own 4-byte aligned view, accessors with
//! min/max where glTF requires them, one primitive per material range sharing the mesh's vertex
//! accessors. Node roles go to `extras.hangar` (`{"collision": true}`), so an import can find them.

pub mod document;
pub mod export;
pub mod import;
pub mod json_text;
pub mod meshopt;
pub mod quantize;

pub use import::from_slice;

/// A colour set that is shader data, not a tint (its role in `Vertices::color_names`), travels as
/// the application attribute `_X4_<ROLE>` (glTF 2.0 leaves names starting with `_` to
/// applications): as a `COLOR_n` every viewer would multiply it into the base colour.
pub fn data_color_attribute(role: &str) -> String {
    format!("X4_{}", role.to_ascii_uppercase())
}

/// The role of an application attribute's name (without its leading `_`) that
/// [`data_color_attribute`] made, `None` for any other.
pub fn data_color_role(attribute: &str) -> Option<String> {
    attribute
        .strip_prefix("X4_")
        .filter(|r| !r.is_empty())
        .map(|r| r.to_ascii_lowercase())
}
