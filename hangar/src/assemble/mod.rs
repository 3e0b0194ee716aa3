//! Whole X4 components: the component XML with its `_data/` folder of XMFs and the `_data.ani`
//! beside it, as one neutral scene, and back (see [`component`]).

pub mod component;
pub mod document;

pub use component::{data_ani, from_scene, to_scene, xml_beside, Written};
