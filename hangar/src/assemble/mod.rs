//! Whole X4 components: `ship.xml` (connections with their parts, offsets and tags, lights in its
//! layers), the `ship_data/` folder of `<part>-lodN.xmf` / `<part>-collision.xmf`, and
//! `ship_data.ani`, as one neutral scene ([`read`]), and back ([`write`]). A bare folder of parts
//! with no XML is read by [`bare`]; all of them through a game view.

pub mod bare;
pub mod document;
pub(crate) mod part;
pub mod read;
pub(crate) mod sources;
pub mod write;

pub use read::{to_scene, xml_beside};
pub use write::{from_scene, Written};
