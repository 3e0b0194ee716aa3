//! One module per file format. Each keeps its on-disk structures (`mod.rs`) apart from reading
//! (`read`), writing (`write`), checking (`check`) and the neutral-model adapter (`mesh`).

// The value types the raw structures are made of (a file's bytes, exact floats, fixed strings).
pub use crate::raw::{Bytes, F32Bits, F64Bits, FixedString};

pub mod anark;
pub mod ani;
pub mod catalog;
pub mod dds;
pub mod emfx;
pub mod m3;
pub mod mpq;
pub mod rgba;
pub mod schema;
pub mod tga;
pub mod x4xml;
pub mod xmf;

/// An edited scene's meshes written into the game file it came from (`m3::edit`, `emfx::edit`),
/// every other part kept; or why they cannot be (the file is then rebuilt whole).
pub(crate) enum Remeshed {
    Done(Vec<u8>, Vec<crate::error::Warning>),
    Cannot(String),
}
