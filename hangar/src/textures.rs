//! Finding a model's textures the way the game does, and turning them into PNG images for glTF.
//!
//! Every lookup goes through game views ([`crate::vfs::GameView`]): case-insensitive, `\` or `/`.
//! Where to look, in order: the views the user named (`--textures-from`, `--game`, `GAME::`), the
//! mod root above the model, the model's own folder (by file name, as loose mods keep them).

use crate::error::Warning;
use crate::formats::dds::{self, PngCompression};
use crate::formats::x4xml::material_library::Library;
use crate::model::Scene;
use crate::vfs::GameView;
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;

/// How a glTF output carries its textures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Mode {
    /// PNG images inside the file (a GLB's buffer, or a .gltf's embedded buffer).
    #[default]
    Embed,
    /// No images: texture paths are kept in the materials' extras only.
    None,
}

const LIBRARY: &str = "libraries/material_library.xml";

/// Options of a model conversion that concern textures.
#[derive(Default)]
pub struct Options {
    /// Views searched first, in order (`--textures-from DIR`, `--game GAME`, `GAME::`).
    pub views: Vec<GameView>,
    pub mode: Mode,
    pub png: PngCompression,
}

/// The PNG images of a scene's textures, by the path the materials name them with.
pub type Images = BTreeMap<String, Vec<u8>>;

/// Where one model's textures are looked for.
pub struct Search<'a> {
    views: Vec<&'a GameView>,
    owned: Vec<GameView>,
}

impl<'a> Search<'a> {
    /// The user's views, then the mod root around `model`, then the model's folder.
    pub fn new(model: &Path, user: &'a [GameView]) -> Search<'a> {
        let mut owned = Vec::new();
        if let Some((v, _)) = GameView::around(model) {
            owned.push(v);
        }
        let dir = model.parent().filter(|p| !p.as_os_str().is_empty());
        if let Ok(v) = GameView::folder(dir.unwrap_or(Path::new("."))) {
            owned.push(v);
        }
        Search {
            views: user.iter().collect(),
            owned,
        }
    }

    fn all(&self) -> impl Iterator<Item = &GameView> {
        self.views.iter().copied().chain(self.owned.iter())
    }

    /// The candidates the game would try for `path`: as written, then `.gz` and `.dds` for one
    /// another (X4 packs `x.dds` as `x.gz`), and `extensions\NAME\` paths read inside the mod.
    pub fn candidates(path: &str) -> Vec<String> {
        let mut out = Vec::new();
        for b in crate::vfs::reference_paths(path) {
            let stem = b
                .rfind('.')
                .filter(|&i| !b.get(i..).unwrap_or("/").contains('/'))
                .and_then(|i| b.get(..i))
                .unwrap_or(&b);
            let ext = b.get(stem.len()..).unwrap_or("").to_ascii_lowercase();
            match ext.as_str() {
                ".dds" => out.extend([b.clone(), format!("{stem}.gz")]),
                ".gz" => out.extend([b.clone(), format!("{stem}.dds")]),
                "" => out.extend([
                    format!("{stem}.gz"),
                    format!("{stem}.dds"),
                    format!("{stem}.png"),
                    b.clone(),
                ]),
                _ => out.push(b.clone()),
            }
        }
        out
    }

    /// X4's material library as the views make it: each view's `libraries/material_library.xml`
    /// in search order (the game's, then the mod's), a `<diff>` applied onto what came before.
    pub fn material_library(&self) -> (Option<Library>, Vec<Warning>) {
        let mut lib: Option<Library> = None;
        let mut warnings = Vec::new();
        let mut seen = Vec::new();
        for v in self.all() {
            if seen.contains(&&v.label) {
                continue;
            }
            seen.push(&v.label);
            let Ok(bytes) = v.read(LIBRARY) else { continue };
            let text = String::from_utf8_lossy(&bytes);
            let l = lib.get_or_insert_with(Library::default);
            match l.apply(&text) {
                Ok(w) => warnings.extend(w),
                Err(e) => warnings.push(Warning::new(
                    e.offset,
                    e.path,
                    format!("{} in {}: {}", LIBRARY, v.label, e.message),
                )),
            }
        }
        (lib, warnings)
    }

    /// The bytes of the texture the game names `path`, or the paths looked for.
    pub fn read(&self, path: &str) -> Result<crate::io::Input, String> {
        let cands = Self::candidates(path);
        for v in self.all() {
            for c in &cands {
                if let Ok(b) = v.read(c) {
                    return Ok(b);
                }
            }
        }
        // Loose models keep textures beside them under their file name alone.
        if let (Some(beside), Some(name)) = (self.owned.last(), path.rsplit(['/', '\\']).next()) {
            for c in Self::candidates(name) {
                if let Ok(b) = beside.read(&c) {
                    return Ok(b);
                }
            }
        }
        let places: Vec<&str> = self.all().map(|v| v.label.as_str()).collect();
        Err(format!("{path} (looked in {})", places.join(", ")))
    }
}

/// Why a texture has no image: not found (the places looked in), or found but not decodable.
enum Miss {
    NotFound(String),
    Broken(String),
}

/// A texture path, its PNG or why there is none, and the warnings of its decoding.
type Found = (String, Result<Vec<u8>, Miss>, Vec<Warning>);

/// Finds and converts every texture `scene`'s materials name; a texture that is not found or does
/// not decode is dropped from its slot (never a dangling URI) and reported with the paths looked for.
/// Its path stays in the material's extras where the format reader put it.
pub fn resolve(scene: &mut Scene, model: &Path, opts: &Options) -> (Images, Vec<Warning>) {
    let mut warnings = Vec::new();
    let search = Search::new(model, &opts.views);
    // X4 names materials `collection.material`; the library knows their textures.
    let untextured =
        |m: &crate::model::Material| m.textures == Default::default() && m.name.contains('.');
    if scene.materials.iter().any(untextured) {
        let (lib, w) = search.material_library();
        warnings.extend(w);
        if let Some(lib) = lib {
            lib.apply_to_scene(scene);
        }
    }
    let mut wanted: Vec<String> = scene
        .materials
        .iter()
        .flat_map(|m| {
            let t = &m.textures;
            [&t.base_color, &t.normal, &t.emissive]
        })
        .flatten()
        .cloned()
        .collect();
    wanted.sort();
    wanted.dedup();
    if wanted.is_empty() {
        return (Images::new(), warnings);
    }
    if opts.mode == Mode::None {
        for m in &mut scene.materials {
            m.textures = Default::default();
        }
        return (Images::new(), warnings);
    }
    let results: Vec<Found> = wanted
        .par_iter()
        .map(|p| match search.read(p) {
            Err(looked) => (p.clone(), Err(Miss::NotFound(looked)), Vec::new()),
            Ok(bytes) => match dds::to_png(&bytes, opts.png) {
                Ok(png) => (p.clone(), Ok(png.bytes), png.warnings),
                Err(e) => (
                    p.clone(),
                    Err(Miss::Broken(format!("{p}: {e}"))),
                    Vec::new(),
                ),
            },
        })
        .collect();
    let mut images = Images::new();
    let (mut missing, mut broken) = (Vec::new(), Vec::new());
    for (p, r, w) in results {
        warnings.extend(
            w.into_iter()
                .map(|w| Warning::new(w.offset, format!("texture {p}: {}", w.path), w.message)),
        );
        match r {
            Ok(png) => {
                images.insert(p, png);
            }
            Err(Miss::NotFound(looked)) => missing.push(looked),
            Err(Miss::Broken(why)) => broken.push(why),
        }
    }
    for m in &mut scene.materials {
        let t = &mut m.textures;
        for slot in [&mut t.base_color, &mut t.normal, &mut t.emissive] {
            if slot.as_ref().is_some_and(|p| !images.contains_key(p)) {
                *slot = None;
            }
        }
    }
    if !missing.is_empty() {
        // Textures usually live elsewhere in the game's files: not a problem of the model.
        warnings.push(Warning::note(
            None,
            "materials",
            format!(
                "{} textures not found, left out (their paths stay in the materials' extras; --game or --textures-from names where they are): {}",
                missing.len(),
                missing.join("; ")
            ),
        ));
    }
    if !broken.is_empty() {
        warnings.push(Warning::new(
            None,
            "materials",
            format!(
                "{} textures do not decode, left out (their paths stay in the materials' extras): {}",
                broken.len(),
                broken.join("; ")
            ),
        ));
    }
    (images, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_swap_gz_and_dds_and_read_extension_paths_inside_the_mod() {
        assert_eq!(
            Search::candidates(r"extensions\ego_dlc\assets\textures\a.dds"),
            vec![
                "extensions/ego_dlc/assets/textures/a.dds",
                "extensions/ego_dlc/assets/textures/a.gz",
                "assets/textures/a.dds",
                "assets/textures/a.gz",
            ]
        );
        assert_eq!(
            Search::candidates("assets/x/b"),
            vec![
                "assets/x/b.gz",
                "assets/x/b.dds",
                "assets/x/b.png",
                "assets/x/b"
            ]
        );
    }
}
