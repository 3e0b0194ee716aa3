//! Finding a model's textures the way the game does, and turning them into PNG images for glTF.
//!
//! Every lookup goes through game views ([`crate::vfs::GameView`]): case-insensitive, `\` or `/`.
//! Where to look, in order: the views the user named (`--textures-from`, `--game`, `GAME::`), the
//! mod root above the model, the model's own folder (by file name, as loose mods keep them).

use crate::error::Warning;
use crate::formats::dds::{self, PngCompression};
use crate::formats::x4xml::material_library::Library;
use crate::material::Recipe;
use crate::model::Scene;
use crate::vfs::{GameView, Nearby};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How a glTF output carries its textures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Mode {
    /// PNG images inside the file (a GLB's buffer, or a .gltf's embedded buffer).
    #[default]
    Embed,
    /// PNG files written into `<output stem>_textures/` beside the output, which names them by
    /// relative URI (a .glb too).
    Copy,
    /// The texture's own file, by a URI relative to the output, when it is a loose PNG; any other
    /// texture (DDS, X4's .gz, inside a catalog) is copied as with [`Mode::Copy`].
    Link,
    /// No images: texture paths are kept in the materials' extras only.
    None,
    /// A game model written from a glTF: the glTF's images that differ from the game's written
    /// back as the game reads them (`texture_files`). A glTF output embeds, as [`Mode::Embed`].
    Write,
}

const LIBRARY: &str = "libraries/material_library.xml";

/// Options of a conversion that concern textures: a model's, or a texture file's own.
#[derive(Default)]
pub struct Options {
    /// Views searched first, in order (`--textures-from DIR`, `--game GAME`, `GAME::`).
    pub views: Vec<GameView>,
    pub mode: Mode,
    pub png: PngCompression,
    /// A cube map, array or volume converted to a .png: one surface or all side by side.
    pub surfaces: dds::Surfaces,
    /// How a .dds output is encoded.
    pub dds: dds::encode::Options,
    /// The folders around the models converted with these options (a batch's share them).
    pub nearby: Nearby,
}

/// The picture options of `opts` (a texture file converted alone).
impl Options {
    pub fn picture(&self) -> dds::PictureOptions {
        dds::PictureOptions {
            png: self.png,
            surfaces: self.surfaces,
            dds: self.dds,
        }
    }
}

/// The PNG images of a scene's textures, by the path the materials name them with.
pub type Images = BTreeMap<String, Vec<u8>>;

/// A scene's textures as [`resolve`] finds them: PNG images, and the loose PNG files on disk some
/// of them are (what [`Mode::Link`] refers to).
#[derive(Debug, Default)]
pub struct Resolved {
    pub images: Images,
    pub loose_png: BTreeMap<String, PathBuf>,
}

/// How a glTF refers to its images: inside it, or by URI to files beside it.
#[derive(Debug, Default)]
pub struct Placement {
    /// PNG images inside the glTF, by texture path.
    pub embedded: Images,
    /// Images named by a path relative to the glTF's folder (`/` separated, not yet
    /// percent-encoded), by texture path.
    pub linked: BTreeMap<String, String>,
    /// Files to write with the glTF (copied textures), each path relative to the output's folder.
    pub files: Vec<(PathBuf, Vec<u8>)>,
}

/// Where one model's textures are looked for.
pub struct Search<'a> {
    views: Vec<&'a GameView>,
    owned: Vec<Arc<GameView>>,
    /// A game or mod is in view (named by the user, or a mod root around the model): textures it
    /// lacks are a problem, not just elsewhere.
    pub has_game: bool,
}

impl<'a> Search<'a> {
    /// The user's views, then the mod root around `model`, then the model's folder.
    pub fn new(model: &Path, user: &'a [GameView], nearby: &Nearby) -> Search<'a> {
        let mut owned = Vec::new();
        let around = nearby.around(model);
        let has_game = !user.is_empty() || around.is_some();
        if let Some((v, _)) = around {
            owned.push(v);
        }
        let dir = model.parent().filter(|p| !p.as_os_str().is_empty());
        if let Some(v) = nearby.folder(dir.unwrap_or(Path::new("."))) {
            owned.push(v);
        }
        Search {
            views: user.iter().collect(),
            owned,
            has_game,
        }
    }

    fn all(&self) -> impl Iterator<Item = &GameView> {
        self.views
            .iter()
            .copied()
            .chain(self.owned.iter().map(|v| &**v))
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

    /// The texture `path` names, with the file on disk when it is a loose file (not inside a
    /// catalog), and the game path it was found under.
    pub fn read_located(
        &self,
        path: &str,
    ) -> Result<(crate::io::Input, Option<PathBuf>, String), String> {
        // Each candidate normalized once for every view (a batch of models misses thousands).
        let normalized = |p: &str| -> Vec<(String, String)> {
            Self::candidates(p)
                .into_iter()
                .filter_map(|c| Some((crate::vfs::normalize(&c).ok()?, c)))
                .collect()
        };
        let first = |v: &GameView, cands: &[(String, String)]| {
            cands.iter().find_map(|(norm, c)| match v.get(norm) {
                Some(Ok(b)) => Some((b, v.locate(c), c.clone())),
                _ => None,
            })
        };
        let cands = normalized(path);
        if let Some(found) = self.all().find_map(|v| first(v, &cands)) {
            return Ok(found);
        }
        // Loose models keep textures beside them under their file name alone.
        if let (Some(beside), Some(name)) = (self.owned.last(), path.rsplit(['/', '\\']).next()) {
            if let Some(found) = first(beside, &normalized(name)) {
                return Ok(found);
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

/// A texture's PNG, and the file on disk when it is a loose PNG.
type Png = (Vec<u8>, Option<PathBuf>);

/// A texture path, its PNG or why there is none, and the warnings of its decoding.
type Found = (String, Result<Png, Miss>, Vec<Warning>);

/// Finds and converts every texture `scene`'s materials name; a texture that is not found or does
/// not decode is dropped from its slot (never a dangling URI) and reported with the paths looked for.
/// Its path stays in the material's extras where the format reader put it.
pub fn resolve(scene: &mut Scene, model: &Path, opts: &Options) -> (Resolved, Vec<Warning>) {
    let search = Search::new(model, &opts.views, &opts.nearby);
    let mut warnings = library_onto(scene, &search);
    let mut wanted: Vec<Recipe> = scene
        .materials
        .iter()
        .flat_map(|m| crate::material::images(m).into_iter().map(|(_, r)| r))
        .collect();
    wanted.sort();
    wanted.dedup();
    if wanted.is_empty() {
        return (Resolved::default(), warnings);
    }
    if opts.mode == Mode::None {
        for m in &mut scene.materials {
            m.textures = Default::default();
        }
        return (Resolved::default(), warnings);
    }
    let results: Vec<Found> = wanted
        .par_iter()
        .map(|r| made(r, &search, opts.png))
        .collect();
    let mut images = Images::new();
    let mut loose_png = BTreeMap::new();
    let (mut missing, mut broken) = (Vec::new(), Vec::new());
    for (p, r, w) in results {
        warnings.extend(
            w.into_iter()
                .map(|w| Warning::new(w.offset, format!("texture {p}: {}", w.path), w.message)),
        );
        match r {
            Ok((png, loose)) => {
                if let Some(f) = loose {
                    loose_png.insert(p.clone(), f);
                }
                images.insert(p, png);
            }
            Err(Miss::NotFound(looked)) => missing.push(looked),
            Err(Miss::Broken(why)) => broken.push(why),
        }
    }
    for m in &mut scene.materials {
        for (slot, r) in crate::material::images(m) {
            if !images.contains_key(&r.key()) {
                crate::material::clear(&mut m.textures, slot);
            }
        }
    }
    if !missing.is_empty() {
        let w = Warning::new(
            None,
            "materials",
            format!(
                "{} textures not found, left out (their paths stay in the materials' extras; --game or --textures-from names where they are): {}",
                missing.len(),
                missing.join("; ")
            ),
        );
        // With a game or mod in view, a missing texture is a problem; a loose model without one
        // usually has its textures elsewhere in the game's files, as a note.
        warnings.push(Warning {
            note: !search.has_game,
            ..w
        });
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
    (Resolved { images, loose_png }, warnings)
}

/// X4 names materials `collection.material`; the library the views make knows their textures,
/// which go into the materials that name none yet. Returns the library's warnings.
fn library_onto(scene: &mut Scene, search: &Search<'_>) -> Vec<Warning> {
    let untextured =
        |m: &crate::model::Material| m.textures == Default::default() && m.name.contains('.');
    if !scene.materials.iter().any(untextured) {
        return Vec::new();
    }
    let (lib, warnings) = search.material_library();
    if let Some(lib) = lib {
        lib.apply_to_scene(scene);
    }
    warnings
}

/// What the game would fail on or show wrong in the textures of `scene` (read from `model`), for
/// `hangar validate` on a model: each texture its materials name, found as a conversion finds it,
/// with the findings the texture file gets alone (a side not a power of two, no mip chain, BC7
/// in StarCraft II, a normal map in another layout than the game reads), each message naming the
/// texture as the material names it. What is not found is a conversion's warning, not repeated here.
pub fn findings(scene: &mut Scene, model: &Path, sc2: bool) -> Vec<crate::validate::Finding> {
    let nearby = Nearby::default();
    let search = Search::new(model, &[], &nearby);
    library_onto(scene, &search);
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for m in &scene.materials {
        for (slot, recipe) in crate::material::images(m) {
            let normal = slot == crate::material::Slot::Normal;
            for path in recipe.sources() {
                if !seen.insert(path.to_ascii_lowercase()) {
                    continue;
                }
                let Ok((bytes, _, _)) = search.read_located(path) else {
                    continue;
                };
                for mut f in dds::document::texture_findings(&bytes, sc2, normal) {
                    f.message = format!("texture {path} (material {:?}): {}", m.name, f.message);
                    out.push(f);
                }
            }
        }
    }
    out
}

/// The PNG image of one [`Recipe`]: a file as it is (a loose PNG's bytes and path kept), a normal
/// map decoded to tangent space (unit length, facing out; a PNG one as it is), or metal and
/// smoothness packed; by its key.
fn made(r: &Recipe, search: &Search<'_>, level: PngCompression) -> Found {
    let key = r.key();
    let load = |p: &str| -> Result<(dds::Image, Vec<Warning>), Miss> {
        let (bytes, _, name) = search.read_located(p).map_err(Miss::NotFound)?;
        dds::load(&bytes, Path::new(&name)).map_err(|e| Miss::Broken(format!("{p}: {e}")))
    };
    let png = |img: &dds::Image| {
        dds::encode_png(img, level).map_err(|e| Miss::Broken(format!("{key}: {e}")))
    };
    let made = match r {
        Recipe::Plain(p) => return as_is(p, search, level),
        // A PNG is the modder's own, passed on as it is; a DDS is decoded anyway.
        Recipe::Normal(p) if is_png(search, p) => return as_is(p, search, level),
        Recipe::Normal(p) => load(p).and_then(|(img, w)| {
            let n = crate::material::tangent_normals(&img);
            png(&n).map(|p| ((p, None), w))
        }),
        Recipe::MetalRoughness { metal, smooth } => {
            let metal = metal.as_deref().map(load).transpose();
            let smooth = smooth.as_deref().map(load).transpose();
            match (metal, smooth) {
                (Ok(m), Ok(s)) => {
                    let mr = crate::material::metal_roughness(
                        m.as_ref().map(|(i, _)| i),
                        s.as_ref().map(|(i, _)| i),
                    );
                    let w = m.into_iter().chain(s).flat_map(|(_, w)| w).collect();
                    png(&mr).map(|p| ((p, None), w))
                }
                (Err(e), _) | (_, Err(e)) => Err(e),
            }
        }
    };
    match made {
        Ok((png, w)) => (key, Ok(png), w),
        Err(e) => (key, Err(e), Vec::new()),
    }
}

/// Whether the texture `p` is a PNG file (gzip'd or not).
fn is_png(search: &Search<'_>, p: &str) -> bool {
    search
        .read_located(p)
        .is_ok_and(|(b, _, _)| matches!(dds::unpack(&b), Ok(dds::Content::Png(_))))
}

/// The texture `p` as a PNG of its pixels as stored (a loose PNG's own bytes, and its file).
fn as_is(p: &str, search: &Search<'_>, level: PngCompression) -> Found {
    let png_options = dds::PngOptions {
        level,
        surfaces: dds::Surfaces::First,
    };
    match search.read_located(p) {
        Err(looked) => (p.to_string(), Err(Miss::NotFound(looked)), Vec::new()),
        Ok((bytes, file, name)) => match dds::to_png_with(&bytes, Path::new(&name), png_options) {
            Ok(png) => {
                let loose = file.filter(|_| bytes.starts_with(&dds::PNG_MAGIC));
                (p.to_string(), Ok((png.bytes, loose)), png.warnings)
            }
            Err(e) => (
                p.to_string(),
                Err(Miss::Broken(format!("{p}: {e}"))),
                Vec::new(),
            ),
        },
    }
}

/// The folder [`Mode::Copy`] writes an output's textures into: `<output stem>_textures`.
pub fn copy_folder(output: &Path) -> String {
    let stem = output
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "model".into());
    format!("{stem}_textures")
}

/// The file name a texture gets in the copy folder: its own name (the game path's last part) as
/// `.png`, with characters file systems or URIs trip on replaced, made unique (any case) by `_2`...
fn copy_name(path: &str, taken: &mut Vec<String>) -> String {
    let last = path.rsplit(['/', '\\']).next().unwrap_or_default();
    let stem = match last.rfind('.') {
        Some(i) if i > 0 => last.get(..i).unwrap_or(last),
        _ => last,
    };
    let mut clean: String = stem
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || "-_ .".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    clean = clean.trim_matches(['.', ' ']).to_string();
    if clean.is_empty() {
        clean = "texture".into();
    }
    let mut name = format!("{clean}.png");
    let mut k = 2;
    while taken.iter().any(|t| t.eq_ignore_ascii_case(&name)) {
        name = format!("{clean}_{k}.png");
        k += 1;
    }
    taken.push(name.clone());
    name
}

/// How the glTF written to `output` carries the `resolved` textures under `mode`: inside it
/// ([`Mode::Embed`]), or as files beside it named by relative URI ([`Mode::Copy`], [`Mode::Link`]).
pub fn place(resolved: Resolved, mode: Mode, output: &Path) -> (Placement, Vec<Warning>) {
    let mut placement = Placement::default();
    let mut warnings = Vec::new();
    match mode {
        Mode::Embed | Mode::None | Mode::Write => {
            placement.embedded = resolved.images;
            return (placement, warnings);
        }
        Mode::Copy | Mode::Link => {}
    }
    let folder = copy_folder(output);
    let out_dir = crate::io::folder_of(output);
    let mut taken = Vec::new();
    let mut copied_instead = Vec::new();
    for (path, png) in resolved.images {
        if mode == Mode::Link {
            let link = resolved
                .loose_png
                .get(&path)
                .and_then(|f| crate::io::relative_path(out_dir.as_deref()?, f));
            if let Some(rel) = link {
                placement.linked.insert(path, rel);
                continue;
            }
            copied_instead.push(path.clone());
        }
        let name = copy_name(&path, &mut taken);
        placement.linked.insert(path, format!("{folder}/{name}"));
        placement.files.push((Path::new(&folder).join(&name), png));
    }
    if !copied_instead.is_empty() {
        warnings.push(Warning::note(
            None,
            "materials",
            format!(
                "{} textures are not loose PNG files (DDS, X4's .gz, inside a catalog): written as PNG into {folder}/ and linked there: {}",
                copied_instead.len(),
                copied_instead.join("; ")
            ),
        ));
    }
    (placement, warnings)
}

/// A texture changed outside the game (painted in Blender, replaced in a glTF), to be written back
/// as the game reads it.
#[derive(Debug, Clone)]
pub struct Edit {
    /// The material it belongs to, for messages.
    pub material: String,
    /// What its channels mean (a normal map is tangent-space RGB here, written in the game's
    /// layout; a metallic-roughness image is split back into its metal and smooth maps).
    pub slot: crate::material::Slot,
    /// The image's key: the game path of the texture (`Recipe::key`).
    pub key: String,
    /// RGBA pixels, rows top to bottom.
    pub image: dds::Image,
}

/// A texture file written back: where, and as what.
#[derive(Debug, Clone, PartialEq)]
pub struct WroteTexture {
    pub file: PathBuf,
    /// ", BC3, 10 mip levels, gzip'd"
    pub what: String,
}

/// `game_path` as a path below the folder a model is exported into: `/`-separated, an
/// `extensions/NAME/` prefix dropped (a mod's files sit at its root). Refused (naming `material`)
/// when it is absolute, has a drive letter or climbs out with `..`.
fn inside_path(game_path: &str, material: &str) -> crate::error::Result<String> {
    let refuse = |why: &str| {
        crate::error::Error::refused(
            "materials",
            format!("material {material:?}: texture path {game_path:?} {why}: not written"),
        )
    };
    let p = game_path.replace('\\', "/");
    let parts: Vec<&str> = p
        .split('/')
        .filter(|x| !x.is_empty() && *x != ".")
        .collect();
    if p.starts_with('/') || Path::new(game_path).is_absolute() {
        return Err(refuse("is absolute"));
    }
    if parts
        .first()
        .is_some_and(|f| f.len() == 2 && f.ends_with(':'))
        || p.contains(':')
    {
        return Err(refuse("names a drive"));
    }
    if parts.contains(&"..") || parts.is_empty() {
        return Err(refuse("leads outside the folder exported into"));
    }
    let skip = match parts.as_slice() {
        [e, _, _, ..] if e.eq_ignore_ascii_case("extensions") => 2,
        _ => 0,
    };
    Ok(parts[skip..].join("/"))
}

/// How many folders up from `output`'s folder the root of a model written to `output` is: the
/// model's own game path (where it sits in its game or mod) when `output` ends so; for a model
/// from no game folder, the folder above the output's `assets`; else none.
fn climb(model: &Path, output: &Path) -> usize {
    let Some((_, game_path)) = GameView::around(model) else {
        // A model from no game folder (a glTF): the root is the folder that holds the output's
        // `assets` folder, where both games keep their models.
        let dir = output.parent().unwrap_or(Path::new(""));
        return dir
            .components()
            .rev()
            .position(|c| c.as_os_str().eq_ignore_ascii_case("assets"))
            .map_or(0, |n| n + 1);
    };
    let want: Vec<String> = game_path.rsplit('/').map(str::to_lowercase).collect();
    let tail: Vec<String> = output
        .components()
        .rev()
        .take(want.len())
        .map(|c| c.as_os_str().to_string_lossy().to_lowercase())
        .collect();
    if tail == want {
        want.len() - 1
    } else {
        0
    }
}

/// What the game keeps a texture as: its block compression, whether the file is gzip'd (X4's
/// `.gz`), the normal-map layout, and the file's extension.
struct Kept {
    encoding: dds::encode::Encoding,
    gzip: bool,
    layout: crate::material::Layout,
    ext: String,
}

/// How the original texture `bytes` (found as `name`) is kept; a texture format the game's own
/// files do not use (BC2, uncompressed) is written as BC3.
fn kept(bytes: &[u8], name: &str) -> Kept {
    use dds::encode::Encoding;
    let gzip = bytes.starts_with(&[0x1f, 0x8b]);
    let ext = name
        .rsplit_once('.')
        .filter(|(_, e)| !e.contains('/'))
        .map_or(if gzip { "gz" } else { "dds" }, |(_, e)| e)
        .to_ascii_lowercase();
    let mut k = Kept {
        encoding: Encoding::Bc3,
        gzip,
        layout: crate::material::Layout::Rgb,
        ext,
    };
    if let Ok(dds::Content::Dds(d)) = dds::unpack(bytes) {
        if let Ok(h) = dds::read_header(&d) {
            k.encoding = match h.format {
                dds::Format::Bc1 => Encoding::Bc1,
                dds::Format::Bc4 => Encoding::Bc4,
                dds::Format::Bc5 => Encoding::Bc5,
                dds::Format::Bc7 => Encoding::Bc7,
                _ => Encoding::Bc3,
            };
        }
        if let Ok((img, _)) = dds::decode(&d) {
            k.layout = crate::material::layout(&img);
        }
    }
    k
}

/// The files that write each edited texture back as the game reads it, each path relative to
/// `output`'s folder and below the root of the model written there ([`climb`]): at the path its
/// material names, in the original's compression (found around `model`, in `views` first, as a
/// conversion finds it; BC3 when there is none) with a full mip chain, gzip'd where the original
/// is (X4's `.gz`); a normal map in the original's layout (DXT5nm: x in alpha, y in green), a
/// metallic-roughness image as its metal and smooth maps. An image whose pixels are the
/// original's gives no file. Refused: a path outside that root, or over the original file itself.
/// Each file comes with what it is (", BC3, 10 mip levels, gzip'd").
pub fn texture_files(
    model: &Path,
    views: &[GameView],
    output: &Path,
    edits: &[Edit],
) -> crate::error::Result<(Vec<TextureFile>, Vec<Warning>)> {
    use crate::material::{Layout, Slot};
    let up = PathBuf::from_iter(std::iter::repeat_n("..", climb(model, output)));
    let dir = output.parent().unwrap_or(Path::new(""));
    let nearby = Nearby::default();
    let search = Search::new(model, views, &nearby);
    let mut files: Vec<TextureFile> = Vec::new();
    let (new, edits): (Vec<&Edit>, Vec<&Edit>) = edits.iter().partition(|e| e.key.is_empty());
    for e in edits {
        // A metallic-roughness image goes back as its two grey maps.
        let parts: Vec<(String, dds::Image)> = match e.slot {
            Slot::MetallicRoughness => {
                let (metal, smooth) = e.key.split_once('|').unwrap_or((&e.key, ""));
                let (metal_img, smooth_img) = crate::material::metal_and_smooth(&e.image);
                [(metal, metal_img), (smooth, smooth_img)]
                    .into_iter()
                    .filter(|(k, _)| !k.is_empty())
                    .map(|(k, i)| (k.to_string(), i))
                    .collect()
            }
            _ => vec![(e.key.clone(), e.image.clone())],
        };
        for (path, mut image) in parts {
            let rel = inside_path(&path, &e.material)?;
            let found = search.read_located(&path).ok();
            let k = found
                .as_ref()
                .map(|(b, _, name)| kept(b, name))
                .unwrap_or_else(|| kept(&[], &rel));
            if let Some((bytes, _, name)) = &found {
                // Unchanged pixels are not written (what a round trip gives back).
                if let Ok((orig, _)) = dds::load(bytes, Path::new(name)) {
                    let dds = !matches!(dds::unpack(bytes), Ok(dds::Content::Png(_)));
                    let orig = match e.slot {
                        Slot::Normal if dds => crate::material::tangent_normals(&orig),
                        Slot::MetallicRoughness => crate::material::as_grey(&orig),
                        _ => orig,
                    };
                    if orig == image {
                        continue;
                    }
                }
            }
            if e.slot == Slot::Normal && k.layout == Layout::Dxt5nm {
                for px in image.rgba.chunks_exact_mut(4) {
                    px.copy_from_slice(&[255, px[1], 0, px[0]]);
                }
            }
            let stem = rel
                .rsplit_once('.')
                .filter(|(_, x)| !x.contains('/'))
                .map_or(rel.as_str(), |(s, _)| s);
            let file = up.join(format!("{stem}.{}", k.ext));
            if let Some(orig) = found.as_ref().and_then(|(_, f, _)| f.as_ref()) {
                if crate::io::same_file(orig, &dir.join(&file)) {
                    return Err(crate::error::Error::refused(
                        "materials",
                        format!(
                            "material {:?}: {} is the original texture: write into another folder",
                            e.material,
                            dir.join(&file).display()
                        ),
                    ));
                }
            }
            let (bytes, what) = encoded(&image, k.encoding, k.gzip, &file)?;
            files.push((file, bytes, what));
        }
    }
    let (more, warnings) = new_materials(model, output, &search, &up, &new)?;
    files.extend(more);
    Ok((files, warnings))
}

/// A texture file to write: its path relative to the output's folder, its bytes, and what it is
/// (", BC3, 10 mip levels, gzip'd").
pub type TextureFile = (PathBuf, Vec<u8>, String);

/// `image` as the game keeps a texture: `encoding` with a full mip chain, gzip'd (X4's `.gz`) when
/// asked; `file` names it in errors. With what it is, for messages.
fn encoded(
    image: &dds::Image,
    encoding: dds::encode::Encoding,
    gzipped: bool,
    file: &Path,
) -> crate::error::Result<(Vec<u8>, String)> {
    let opts = dds::encode::Options {
        encoding,
        mipmaps: dds::encode::Mipmaps::Full,
    };
    let mut bytes = dds::encode::encode(image, opts).map_err(|err| err.in_file(file))?;
    let mips = dds::encode::full_chain(image.width, image.height);
    let mut what = format!(", {}, {mips} mip levels", encoding.name());
    if gzipped {
        bytes = gzip(&bytes).map_err(|err| crate::error::Error::io(file, err))?;
        what.push_str(", gzip'd");
    }
    Ok((bytes, what))
}

/// Whether `output` names an X4 model (a component's XML or an XMF).
fn is_x4_model(output: &Path) -> bool {
    crate::io::has_ext(output, "xml") || crate::io::has_ext(output, "xmf")
}

/// The X4 name of a material new in an export to `output`: X4 finds a material by
/// `collection.material`, so a name without a collection gets the model's (its file stem),
/// both lower case with only letters, digits and `_`. `None` when `output` is no X4 model or
/// the name has its collection already.
pub fn x4_material_name(output: &Path, name: &str) -> Option<String> {
    if !is_x4_model(output) || name.contains('.') {
        return None;
    }
    let plain = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '_'
                }
            })
            .collect()
    };
    let stem = output
        .file_stem()
        .map(|s| s.to_string_lossy())
        .unwrap_or_default();
    // A part's XMF (`hull-lod0.xmf`) belongs to the component its folder is the data of.
    let stem = stem.split('-').next().unwrap_or("model");
    Some(format!("{}.{}", plain(stem), plain(name)))
}

/// The folder name the game knows the mod at `root` by (its files are `extensions\NAME\...`):
/// as its library already writes it, else its `content.xml`'s id, else the folder's own name.
fn extension_folder(root: &Path, library: Option<&str>) -> String {
    let written = library.and_then(|text| {
        let at = text.to_ascii_lowercase().find("extensions\\")? + "extensions\\".len();
        let name = text.get(at..)?.split(['\\', '"', '/']).next()?;
        (!name.is_empty()).then(|| name.to_string())
    });
    let id = || {
        let text = std::fs::read_to_string(root.join("content.xml")).ok()?;
        let doc = crate::xml::parse(&text).ok()?;
        let id = doc.root_element().attribute("id")?.trim();
        (!id.is_empty() && !id.contains(['\\', '/', '.'])).then(|| id.to_string())
    };
    written.or_else(id).unwrap_or_else(|| {
        crate::io::canonical(root)
            .ok()
            .and_then(|r| r.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_default()
    })
}

/// The images of materials new in an export (edits without a game path). X4: each a BC3 DDS,
/// gzip'd, at `assets/textures/<collection>/<material>_<map>.gz` below the root of the model
/// written to `output`, and each material an entry of the mod's `libraries/material_library.xml`
/// (the one at that root, else the model's own mod's, patched; else a new `<diff>`), its maps
/// named as the game finds them (`extensions\<mod>\...` in a mod). Elsewhere (an M3 names its
/// textures by layer, which a new material has none of) each is said in a warning, not written.
fn new_materials(
    model: &Path,
    output: &Path,
    search: &Search<'_>,
    up: &Path,
    new: &[&Edit],
) -> crate::error::Result<(Vec<TextureFile>, Vec<Warning>)> {
    if new.is_empty() {
        return Ok(Default::default());
    }
    if !is_x4_model(output) {
        let warnings = new
            .iter()
            .map(|e| {
                Warning::new(
                    None,
                    "materials",
                    format!(
                        "material {:?} is new: a StarCraft II material names its textures by layer, and a new one has none; its {} image is not written (paint a material the model had)",
                        e.material,
                        e.slot.name()
                    ),
                )
            })
            .collect();
        return Ok((Vec::new(), warnings));
    }
    let dir = output.parent().unwrap_or(Path::new(""));
    let root = dir.join(up);
    // Where the game finds a mod's files: `extensions\<its folder>\...`.
    let mod_root = [root.clone()]
        .into_iter()
        .chain(crate::io::folder_of(model).and_then(|f| {
            f.ancestors()
                .find(|a| a.join("content.xml").is_file())
                .map(Path::to_path_buf)
        }))
        .find(|r| r.join("content.xml").is_file());
    // The library patched: the export root's, else the model's own mod's.
    let base = [Some(root.clone()), mod_root.clone()]
        .into_iter()
        .flatten()
        .find_map(|r| std::fs::read_to_string(r.join(LIBRARY)).ok());
    let prefix = mod_root
        .map(|r| format!("extensions\\{}\\", extension_folder(&r, base.as_deref())))
        .unwrap_or_default();
    let (game_library, _) = search.material_library();
    let (mut files, by_material) = new_maps(
        new,
        |m| x4_material_name(output, m).unwrap_or_else(|| m.to_string()),
        &prefix,
        up,
    )?;
    if let Some(text) = with_materials(base, by_material, game_library.as_ref())? {
        files.push((up.join(LIBRARY), text.into_bytes(), String::new()));
    }
    Ok((files, Vec::new()))
}

/// New materials' library properties by X4 name (`collection.material`), as [`new_maps`] gives them.
pub(crate) type NewMaps = BTreeMap<String, Vec<crate::formats::x4xml::material_library::Property>>;

/// The images of materials new in an export (`new`, each named in X4 by `x4_name`): each map a BC3
/// DDS, gzip'd, at `up/assets/textures/<collection>/<material>_<map>.gz`, and each material's
/// `BitMap` properties naming them as the game finds them (`prefix`: `extensions\<mod>\` in a mod).
pub(crate) fn new_maps(
    new: &[&Edit],
    x4_name: impl Fn(&str) -> String,
    prefix: &str,
    up: &Path,
) -> crate::error::Result<(Vec<TextureFile>, NewMaps)> {
    use crate::formats::x4xml::material_library::Property;
    use crate::material::Slot;
    let mut files: Vec<TextureFile> = Vec::new();
    let mut by_material = NewMaps::new();
    for e in new {
        let name = x4_name(&e.material);
        let (collection, material) = name.split_once('.').unwrap_or(("", &name));
        let maps: Vec<(&str, dds::Image)> = match e.slot {
            Slot::BaseColor => vec![("diffuse_map", e.image.clone())],
            Slot::Normal => vec![("normal_map", e.image.clone())],
            Slot::Emissive => vec![("color_glow_map", e.image.clone())],
            Slot::MetallicRoughness => {
                let (metal, smooth) = crate::material::metal_and_smooth(&e.image);
                vec![("metal_map", metal), ("smooth_map", smooth)]
            }
            _ => Vec::new(),
        };
        for (map, image) in maps {
            let short = map.trim_end_matches("_map");
            let rel = format!("assets/textures/{collection}/{material}_{short}");
            let file = up.join(format!("{rel}.gz"));
            let (bytes, what) = encoded(&image, dds::encode::Encoding::Bc3, true, &file)?;
            files.push((file, bytes, what));
            by_material.entry(name.clone()).or_default().push(Property {
                ty: "BitMap".into(),
                name: map.into(),
                value: format!("{prefix}{}", rel.replace('/', "\\")),
            });
        }
    }
    Ok((files, by_material))
}

/// A mod's library `text` (none: a new `<diff>` patch) with each material of `materials` in it,
/// shader `P1_complex_surface.fx`; one of a collection the game's library has is added into it.
/// `None` when there is nothing to write.
pub(crate) fn with_materials(
    text: Option<String>,
    materials: NewMaps,
    game_library: Option<&Library>,
) -> crate::error::Result<Option<String>> {
    use crate::formats::x4xml::material_library as library;
    let mut text = text;
    for (name, properties) in materials {
        let (collection, material) = name.split_once('.').unwrap_or(("", &name));
        let in_game = game_library.is_some_and(|l| {
            l.collections
                .iter()
                .any(|c| c.name.eq_ignore_ascii_case(collection))
        });
        let entry = library::Material {
            name: material.into(),
            shader: "P1_complex_surface.fx".into(),
            properties,
        };
        text = Some(library::with_material(
            text.as_deref(),
            collection,
            &entry,
            in_game,
        )?);
    }
    Ok(text)
}

/// The texture files of `edits` (`texture_files`) written beside `output` (a model exported from
/// `model`), all or none.
pub fn write_back(
    model: &Path,
    output: &Path,
    edits: &[Edit],
) -> crate::error::Result<(Vec<WroteTexture>, Vec<Warning>)> {
    let dir = output.parent().unwrap_or(Path::new(""));
    let (files, warnings) = texture_files(model, &[], output, edits)?;
    let whole: Vec<(PathBuf, Vec<u8>)> = files
        .iter()
        .map(|(f, b, _)| (crate::io::joined(dir, f), b.clone()))
        .collect();
    for (f, _) in &whole {
        crate::io::create_parent(f)?;
    }
    crate::io::write_files(&whole)?;
    let wrote = files
        .into_iter()
        .zip(whole)
        .map(|((_, _, what), (file, _))| WroteTexture { file, what })
        .collect();
    Ok((wrote, warnings))
}

/// `bytes` gzip'd, as X4 packs its textures.
fn gzip(bytes: &[u8]) -> std::io::Result<Vec<u8>> {
    use std::io::Write;
    let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(bytes)?;
    z.finish()
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_mod_with_assets_in_two_letter_cases_has_the_textures_of_both() {
        let root = std::env::temp_dir().join(format!("hangar-case-twins-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for d in ["Assets/Textures", "assets/textures", "Assets/Units"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        // Two red BC1 textures, one under each spelling of the folder.
        // Any bytes: only where they are found and how many there are matter here.
        let red = [7u8; 136];
        std::fs::write(root.join("Assets/Textures/hull_d.dds"), red).unwrap();
        std::fs::write(root.join("assets/textures/hull_n.dds"), &red[..132]).unwrap();
        let model = root.join("Assets/Units/ship.m3");
        std::fs::write(&model, b"MD34").unwrap();
        let nearby = crate::vfs::Nearby::default();
        let search = super::Search::new(&model, &[], &nearby);
        assert!(search.has_game);
        // The game's spelling of either path finds the file under either folder.
        for (path, len) in [
            (r"Assets\Textures\hull_d.dds", 136),
            ("assets/textures/hull_d.dds", 136),
            (r"Assets\Textures\hull_n.dds", 132),
            ("assets/textures/HULL_N", 132),
        ] {
            let (found, _, _) = search
                .read_located(path)
                .unwrap_or_else(|e| panic!("{path}: {e}"));
            assert_eq!(found.len(), len, "{path}");
        }
        let _ = std::fs::remove_dir_all(&root);
    }

    /// A texture that is not found is a note when no game or mod is in view (loose models keep their
    /// textures elsewhere in the game), and a warning naming where it looked when one is.
    #[test]
    fn a_missing_texture_is_a_warning_only_with_a_game_in_view() {
        let dir =
            std::env::temp_dir().join(format!("hangar-textures-missing-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("game")).unwrap();
        let scene = || {
            let mut s = crate::model::Scene::default();
            s.materials.push(crate::model::Material {
                name: "hull".into(),
                textures: crate::model::Textures {
                    base_color: Some(r"assets\textures\hull_diff.dds".into()),
                    ..Default::default()
                },
                ..Default::default()
            });
            s
        };
        let model = dir.join("hull.xmf");
        let alone = crate::TextureOptions::default();
        let mut s = scene();
        let (images, w) = resolve(&mut s, &model, &alone);
        assert!(images.images.is_empty());
        assert_eq!(
            s.materials[0].textures.base_color, None,
            "no dangling texture"
        );
        assert_eq!(w.len(), 1);
        assert!(w[0].note && w[0].message.contains("hull_diff"), "{w:?}");

        let with_game = crate::TextureOptions {
            views: vec![GameView::folder(&dir.join("game")).unwrap()],
            ..Default::default()
        };
        let mut s = scene();
        let (_, w) = resolve(&mut s, &model, &with_game);
        assert_eq!(w.len(), 1);
        assert!(!w[0].note, "{w:?}");
        assert!(
            w[0].message.contains("assets\\textures\\hull_diff.dds")
                && w[0].message.contains("game"),
            "{}",
            w[0].message
        );
    }

    /// `validate` on a model reads the textures it names: a StarCraft II normal map written as RGB
    /// (not DXT5nm), 100 pixels wide and without mips, gets those three warnings, each naming the
    /// texture and its material; the same file as the diffuse of an X4 model gets two (X4 reads
    /// RGB normals, and a diffuse has no layout to check).
    #[test]
    fn a_models_textures_are_validated_as_its_game_reads_them() {
        let dir =
            std::env::temp_dir().join(format!("hangar-texture-findings-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let (w, h) = (100, 64);
        let flat = dds::Image {
            width: w,
            height: h,
            rgba: [128u8, 128, 255, 255].repeat((w * h) as usize),
        };
        let opts = dds::encode::Options {
            encoding: dds::encode::Encoding::Bc3,
            mipmaps: dds::encode::Mipmaps::None,
        };
        std::fs::write(
            dir.join("unit_n.dds"),
            dds::encode::encode(&flat, opts).unwrap(),
        )
        .unwrap();
        let scene = |normal: bool| {
            let mut s = crate::model::Scene::default();
            let path = Some("unit_n.dds".to_string());
            s.materials.push(crate::model::Material {
                name: "unit".into(),
                textures: if normal {
                    crate::model::Textures {
                        normal: path,
                        ..Default::default()
                    }
                } else {
                    crate::model::Textures {
                        base_color: path,
                        ..Default::default()
                    }
                },
                ..Default::default()
            });
            s
        };
        let found = findings(&mut scene(true), &dir.join("unit.m3"), true);
        let paths: Vec<&str> = found.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            paths,
            ["DDS.width", "DDS.mipMapCount", "DDS.data"],
            "{found:?}"
        );
        assert!(found.iter().all(|f| f
            .message
            .starts_with("texture unit_n.dds (material \"unit\"): ")));
        assert!(
            found[2]
                .message
                .contains("stored as Rgb, but StarCraft II reads Dxt5nm"),
            "{}",
            found[2].message
        );
        let found = findings(&mut scene(false), &dir.join("unit.xmf"), false);
        let paths: Vec<&str> = found.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["DDS.width", "DDS.mipMapCount"], "{found:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    use super::*;

    #[test]
    fn copied_names_are_plain_unique_png_names() {
        let mut taken = Vec::new();
        assert_eq!(
            copy_name(r"assets\textures\Hull_d.dds", &mut taken),
            "Hull_d.png"
        );
        assert_eq!(copy_name("other/HULL_D.gz", &mut taken), "HULL_D_2.png");
        assert_eq!(copy_name("../..", &mut taken), "texture.png");
        assert_eq!(copy_name("a/b:c?.dds", &mut taken), "b_c_.png");
    }

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
