//! hangar: read, check, convert and write the 3D model files of Egosoft's X Rebirth / X4 and
//! Blizzard's M3.
//!
//! The door is at the crate root: [`open`] a file (a path, `GAME::path`, a component folder or
//! named bytes) and ask the [`Opened`] file for its [`Info`], its findings, its dump, its neutral
//! scene or its bytes as another format; [`convert`] does what `hangar convert` does, [`batch`]
//! converts a folder or a game at once, and [`write_scene`] writes a scene built elsewhere.
//!
//! Below the door, for people who want them:
//! - [`formats`]: one module per file format, raw and reversible (read, write, check).
//! - [`model`]: the format-neutral scene the formats convert to and from.

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

pub(crate) mod any;
mod api;
pub(crate) mod assemble;
pub(crate) mod author;
pub mod batch;
pub(crate) mod bytes;
pub(crate) mod check;
mod convert;
pub(crate) mod detect;
pub(crate) mod document;
pub(crate) mod error;
pub(crate) mod find;
pub mod formats;
pub(crate) mod gamepath;
pub(crate) mod gltf;
pub(crate) mod io;
pub(crate) mod material;
pub mod model;
pub(crate) mod normalized;
pub(crate) mod obj;
pub(crate) mod original;
pub(crate) mod raw;
pub(crate) mod validate;
pub(crate) mod vfs;
pub(crate) mod xml;
pub(crate) mod xmlpatch;

pub use api::{
    check_mod, check_mod_files, component_of, files_read, game_root_in, mod_kind,
    mod_kind_of_files, open, write_scene, ConvertOptions, Converted, Info, Link, ModCheck, ModKind,
    Opened, Pictures, Source, WriteOptions, Wrote,
};
pub use author::{
    new_component, new_component_with_progress, new_ship, new_ship_with_progress, NewComponent,
    NewExtension, NewShip,
};
pub use check::conflicts::{find as conflicts, find_in_files as conflicts_in_files, Conflict};
pub use convert::{convert, Outcome};
pub use detect::Format;
pub use error::{Error, ErrorKind, Result, Warning};
pub use find::{
    find, find_in, macro_by_name, open_game, FindOptions, Found, Index as FindIndex,
    Kind as FoundKind,
};
pub use formats::rgba::Image;
pub use gltf::export::Options as GltfOptions;
pub use io::keep_freed_memory;
pub use material::{images as material_images, Recipe, Slot};
pub use original::{write_scene_to, write_scene_to_with};
pub use textures::{
    write_back as write_textures, x4_material_name, Edit as TextureEdit, Mode as TextureMode,
    Options as TextureOptions, WroteTexture,
};
pub use validate::{Finding, Severity};
pub use vfs::Nearby;
pub use vfs::{ByteSource, GameView, SharedSource};
pub use xmlpatch::{
    diff_xml, diff_xml_counted, patch_xml, write_xml, Diffed, Failure as PatchFailure, Patched,
};

/// The catalog commands of the faces (`hangar cat`): a game's `.cat`/`.dat` pairs opened, verified,
/// extracted, packed and compared through the door, not from [`crate::formats::catalog`] (which holds
/// the structures).
pub mod catalogs {
    pub use crate::formats::catalog::{
        dat_path, diff, extract, open, pack, pack_name, verify, Diff, Extracted, Opened, Verdict,
        GITATTRIBUTES,
    };
}

/// MPQ archives (StarCraft II maps and mods): opened, listed, extracted, verified, packed and
/// compared.
pub mod archives {
    pub use crate::formats::mpq::{
        build, build_with, diff, extract, has_archive_name, is_archive_file, is_archive_path,
        max_inflate, open, pack, pack_with, set_max_inflate, verify, Entry, Opened, Own,
        PackOptions, Packed, DEFAULT_MAX_INFLATE,
    };
}

/// The picture choices of the faces (a `.png`'s compression and surfaces, a `.dds`'s encoding and
/// mips, in [`TextureOptions`]) and what they need to show one level of a texture, through the door
/// rather than from [`crate::formats::dds`] (which reads and writes the files).
pub mod pictures {
    pub use crate::formats::dds::encode::{Encoding, Mipmaps, Options as DdsOptions};
    pub use crate::formats::dds::{png_size, Levels, PngCompression, Surfaces};
}

/// Whether the X4 material `name` draws with the multimat shader (its colour set `multimat` picks
/// each vertex's layer): what Blender and the page ask to show such a material.
pub fn is_multimat(name: &str) -> bool {
    formats::xmf::colors::is_multimat(name)
}

/// `bytes` read as every XML file of the library is (mod check, conflicts, patches, components,
/// material and library files): a DOCTYPE taken as the game takes it (its internal subset's
/// entities expanded within bounds, nothing fetched). The number of nodes, or why it does not
/// read (with its line).
pub fn read_xml(bytes: &[u8]) -> Result<usize> {
    let refused = |r: xml::Refused| Error::invalid(0, "xml", r.to_string());
    let text = xml::text(bytes).map_err(refused)?;
    let doc = xml::parse(&text).map_err(refused)?;
    Ok(doc.descendants().count())
}

/// The Anark name hash (`hangar hash`): the number .bgf, .bgp and .bsg files store a name as.
pub fn anark_hash(name: &str) -> u32 {
    formats::anark::hash::hash(name)
}

#[cfg(test)]
mod test_corpus;
pub(crate) mod textures;
