//! A whole mod checked before the game loads it: every file validated as `hangar validate` does
//! one, and every reference a file makes followed to what it names (an index entry to its file, a
//! macro to its component, a part to its geometry, a material to its library and textures...).
//! The mod is read through game views (`files`), stacked on the game and the extensions it
//! depends on when those are given; the result is findings, each naming the file and line of the
//! reference and the reference as written.

pub mod conflicts;
pub mod files;
mod out;
mod report;
mod sc2;
mod world;
mod x4;
pub(crate) mod xml;

use crate::error::Result;
use crate::validate::{Finding, Severity};
use crate::vfs::GameView;
use serde::Serialize;
use std::path::Path;

pub use files::ModFiles;
pub use world::World;

/// What a mod check found.
#[derive(Debug, Default, Serialize)]
pub struct ModCheck {
    /// `x4` (an X4 / X Rebirth extension) or `sc2` (a StarCraft II mod or map folder).
    pub kind: String,
    /// The mod's folder name.
    pub name: String,
    /// Every file of the mod, as findings name them.
    pub files: Vec<String>,
    pub findings: Vec<Finding>,
    /// Every reference followed: where it is written and what it names.
    pub links: Vec<Link>,
}

impl ModCheck {
    /// True when a finding is an error.
    pub fn failed(&self) -> bool {
        self.findings.iter().any(|f| f.severity == Severity::Error)
    }
}

/// A reference in a mod's file and what it led to.
#[derive(Debug, Clone, Serialize)]
pub struct Link {
    pub file: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// As written in the file.
    pub written: String,
    /// The file it names (a mod's file as findings name it, or `GAME::path`), or a name's
    /// definition; none when it is missing or was not checked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
}

/// The kinds of mod folder hangar checks whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModKind {
    X4,
    Sc2,
}

/// What kind of mod the folder `dir` holds, if any: a folder with a `content.xml` is an X4 or X
/// Rebirth extension; a `*.SC2Mod` or `*.SC2Map` folder, or an MPQ archive, a StarCraft II one.
pub fn mod_kind(dir: &Path) -> Option<ModKind> {
    if crate::formats::mpq::is_archive_file(dir) {
        // A StarCraft II map or mod saved as one file.
        return Some(ModKind::Sc2);
    }
    if !dir.is_dir() {
        return None;
    }
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let has = |n: &str| crate::assemble::read::find_in(dir, n);
    if has("content.xml").is_some_and(|p| p.is_file()) {
        return Some(ModKind::X4);
    }
    let sc2 = sc2_name(&name) || has("base.sc2data").is_some_and(|p| p.is_dir());
    sc2.then_some(ModKind::Sc2)
}

/// A StarCraft II mod or map saved as a folder is named so (`name` in lower case).
fn sc2_name(name: &str) -> bool {
    name.ends_with(".sc2mod") || name.ends_with(".sc2map")
}

/// [`mod_kind`] for a mod given as its folder's name and its files' paths inside it (a page's
/// dropped folder).
pub fn mod_kind_of_files<'a>(
    folder: &str,
    paths: impl IntoIterator<Item = &'a str>,
) -> Option<ModKind> {
    let mut sc2 = sc2_name(&folder.to_ascii_lowercase());
    for p in paths {
        let norm = crate::vfs::normalize(p).unwrap_or_default();
        if norm == "content.xml" {
            return Some(ModKind::X4);
        }
        sc2 |= norm.starts_with("base.sc2data/");
    }
    sc2.then_some(ModKind::Sc2)
}

/// Checks the mod in the folder `dir`, on the game in `game` when given (a game folder, with the
/// extensions the mod depends on found beside the mod).
pub fn check_folder(dir: &Path, game: Option<&Path>) -> Result<ModCheck> {
    let files = ModFiles::open(dir)?;
    if mod_kind(dir) == Some(ModKind::Sc2) {
        return Ok(sc2::walk(&files, game));
    }
    let game_view = game.map(GameView::open).transpose()?;
    let world = World::new(files, game_view, game, Some(dir));
    Ok(check(&world))
}

/// Checks a mod already gathered with its game: a StarCraft II one when its folder is named so
/// or it has a `Base.SC2Data` folder, else an X4 one.
pub fn check(world: &World) -> ModCheck {
    let name = world.files.folder.to_ascii_lowercase();
    let sc2 = sc2_name(&name)
        || world
            .files
            .files()
            .iter()
            .any(|f| f.norm.starts_with("base.sc2data/"));
    if sc2 {
        return sc2::walk(&world.files, None);
    }
    let mut out = x4::walk(world);
    out.kind = "x4".into();
    out
}
