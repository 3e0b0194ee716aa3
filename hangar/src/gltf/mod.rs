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
