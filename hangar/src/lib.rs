//! hangar: read, check, convert and write the 3D model files of Egosoft's X Rebirth / X4 and
//! Blizzard's M3.
//!
//! Layers, bottom up:
//! - [`formats`]: one module per file format, raw and reversible (read, write, check).
//! - [`model`]: the format-neutral scene the formats convert to and from.
//! - [`gltf`] and [`obj`]: the neutral scene as glTF 2.0 (both ways) and OBJ.
//! - [`any`]: open any supported file by its magic and do what the CLI asks of it.

// No input may crash hangar (issue 10): library code has no unwrap, expect, panic or unreachable.
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::unreachable
    )
)]

pub mod any;
mod api;
pub mod assemble;
pub mod batch;
pub mod bytes;
mod convert;
pub mod detect;
pub mod document;
pub mod error;
pub mod formats;
pub mod gamepath;
pub mod gltf;
pub mod io;
pub mod model;
pub mod normalized;
pub mod obj;
pub mod original;
pub mod raw;
pub mod samples;
pub mod validate;
pub mod vfs;

pub use api::{
    open, write_scene, ConvertOptions, Converted, Info, Opened, Source, WriteOptions, Wrote,
};
pub use convert::{convert, Outcome};
pub use detect::Format;
pub use error::{Error, ErrorKind, Result, Warning};
pub use validate::{Finding, Severity};
pub use vfs::GameView;
pub mod textures;
