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
pub mod rgba;
pub mod schema;
pub mod tga;
pub mod x4xml;
pub mod xmf;
