//! The game view: files addressed by game paths (`assets/units/size_s/ship.xml`), the way the game
//! addresses them: case-insensitive, `/` and `\` alike, never outside the root the view was given.
//!
//! A view is a stack of layers; a later layer overrides an earlier one for the same path, as later
//! catalogs override earlier ones in the game. Every reader that follows a path found inside a file
//! (textures, component geometry, the material library) asks a view, so loose and packed files
//! resolve the same way.

use crate::error::{Error, ErrorKind, Result};
use crate::formats::catalog;
use crate::io::Input;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

mod archive;
mod folder;
mod source;
pub use archive::{is_archive_source, ArchiveLayer};
pub use folder::Folder;
pub use source::{ByteSource, SharedSource, SourceLayer};

pub use crate::gamepath::normalize;

/// One source of game files.
pub enum Layer {
    Folder(Folder),
    Catalog(CatalogLayer),
    /// Files read through [`ByteSource`]s (a browser's files, memory).
    Source(SourceLayer),
    /// An MPQ archive's files (a StarCraft II map or mod).
    Archive(ArchiveLayer),
}

impl Layer {
    /// The bytes of the file at the normalized path `norm`, when this layer has it.
    fn get(&self, norm: &str) -> Option<Result<Input>> {
        match self {
            Layer::Folder(f) => f.find(norm).map(|p| crate::io::read_input(&p)),
            Layer::Catalog(c) => c.get(norm),
            Layer::Source(s) => s.get(norm),
            Layer::Archive(a) => a.get(norm),
        }
    }

    fn has(&self, norm: &str) -> bool {
        match self {
            Layer::Folder(f) => f.find(norm).is_some(),
            Layer::Catalog(c) => c.index(norm).is_some(),
            Layer::Source(s) => s.has(norm),
            Layer::Archive(a) => a.has(norm),
        }
    }

    fn files(&self, prefix: &str, out: &mut Vec<String>) {
        match self {
            Layer::Folder(f) => f.files(prefix, out),
            Layer::Catalog(c) => c.files(prefix, out),
            Layer::Source(s) => s.files(prefix, out),
            Layer::Archive(a) => a.files(prefix, out),
        }
    }
}

/// A `.cat` + `.dat` as a layer: entries found by normalized path (the later duplicate wins) and
/// read as slices of the mapped `.dat`. An extension's `ext_` catalog sits below its folder
/// (`mount`, e.g. `extensions/ego_dlc_split/`); `subst_` and the game's own catalogs at the root.
pub struct CatalogLayer {
    opened: Arc<catalog::Opened>,
    mount: String,
}

impl CatalogLayer {
    pub fn open(cat: &Path, mount: &str) -> Result<CatalogLayer> {
        let opened = catalog::open(cat)?;
        let mount = CatalogLayer::mount_prefix(mount)?;
        Ok(CatalogLayer {
            opened: Arc::new(opened),
            mount,
        })
    }

    /// The game folder a catalog sits below, as the prefix of its paths (`""` or ending in `/`).
    fn mount_prefix(mount: &str) -> Result<String> {
        let mount = normalize(mount)?;
        Ok(if mount.is_empty() {
            mount
        } else {
            format!("{mount}/")
        })
    }

    fn index(&self, norm: &str) -> Option<usize> {
        let inner = norm.strip_prefix(self.mount.as_str())?;
        self.opened.index.get(&self.opened.catalog.entries, inner)
    }

    fn get(&self, norm: &str) -> Option<Result<Input>> {
        let i = self.index(norm)?;
        let o = &self.opened;
        let e = o.catalog.entries.get(i)?;
        if o.dat.entry(e).is_none() {
            return Some(Err(e
                .past_the_end(o.dat.bytes().len() as u64)
                .in_file(&o.dat_path)));
        }
        let range = o.dat.range(e)?;
        let whole: Arc<dyn AsRef<[u8]> + Send + Sync> = Arc::clone(o) as _;
        Some(Ok(Input::Part(whole, range)))
    }

    fn files(&self, prefix: &str, out: &mut Vec<String>) {
        listed(
            self.opened.index.paths(&self.opened.catalog.entries),
            &self.mount,
            prefix,
            out,
        );
    }
}

/// The game paths `paths` (sorted) below `mount` that are `prefix` or lie below it, in order.
fn listed<'a>(
    paths: impl Iterator<Item = &'a str>,
    mount: &str,
    prefix: &str,
    out: &mut Vec<String>,
) {
    out.reserve(paths.size_hint().0);
    for k in paths {
        let mut full = String::with_capacity(mount.len() + k.len());
        full.push_str(mount);
        full.push_str(k);
        let under = prefix.is_empty()
            || full == prefix
            || full
                .strip_prefix(prefix)
                .is_some_and(|rest| rest.starts_with('/'));
        if under {
            out.push(full);
        }
    }
}

/// Files by game path, from layers in override order (the last one that has a path wins). A
/// clone shares the layers.
#[derive(Clone)]
pub struct GameView {
    /// What the user named (a folder, a .cat), for messages.
    pub label: String,
    layers: Vec<Arc<Layer>>,
}

/// A file of a view as a batch lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Its path as written: inside a folder the names on disk (letter case kept), inside a
    /// catalog the game path.
    pub shown: String,
    /// Its game path ([`normalize`]d).
    pub norm: String,
    /// The file on disk, when a folder layer holds it.
    pub disk: Option<PathBuf>,
}

impl Entry {
    /// How messages and reports name it: the file on disk, else the game path.
    pub fn name(&self) -> String {
        match &self.disk {
            Some(p) => p.display().to_string(),
            None => self.norm.clone(),
        }
    }
}

impl GameView {
    /// A plain folder as the game's root.
    pub fn folder(root: &Path) -> Result<GameView> {
        Ok(GameView {
            label: root.display().to_string(),
            layers: vec![Arc::new(Layer::Folder(Folder::new(root)?))],
        })
    }

    /// The view a user names on the command line (`GAME` in `GAME::path`): one `.cat`, a game or
    /// mod folder (its loose files, then its catalogs in override order, then each extension's), or
    /// a plain folder, or an MPQ archive (a StarCraft II map or mod, known by its magic).
    pub fn open(spec: &Path) -> Result<GameView> {
        if crate::formats::mpq::is_archive_file(spec) {
            return GameView::archive(spec);
        }
        if spec.is_file() && crate::io::has_ext(spec, "cat") {
            return Ok(GameView {
                label: spec.display().to_string(),
                layers: vec![Arc::new(Layer::Catalog(CatalogLayer::open(spec, "")?))],
            });
        }
        if spec.is_dir() {
            let mut view = GameView::folder(spec)?;
            for cat in catalogs_in(spec) {
                view.push(Layer::Catalog(CatalogLayer::open(&cat, "")?));
            }
            let ext = spec.join("extensions");
            let mut dirs: Vec<PathBuf> = std::fs::read_dir(&ext)
                .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
                .unwrap_or_default();
            dirs.retain(|d| d.is_dir());
            dirs.sort();
            for d in dirs {
                let name = d
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                for cat in catalogs_in(&d) {
                    let subst = cat
                        .file_name()
                        .is_some_and(|n| n.to_string_lossy().to_lowercase().starts_with("subst_"));
                    let mount = if subst {
                        String::new()
                    } else {
                        format!("extensions/{name}")
                    };
                    view.push(Layer::Catalog(CatalogLayer::open(&cat, &mount)?));
                }
            }
            return Ok(view);
        }
        Err(Error::new(
            ErrorKind::Io,
            None,
            "",
            format!(
                "{}: not a game folder, a mod folder or a .cat file",
                spec.display()
            ),
        ))
    }

    /// The view around a loose file: the nearest folder above it that holds the game's top folders
    /// (`assets/`, `libraries/`, `Assets/`; a mod's root), and the file's game path inside it.
    pub fn around(file: &Path) -> Option<(GameView, String)> {
        let file = crate::io::canonical(file).ok()?;
        let mut dir = file.parent();
        while let Some(d) = dir {
            if is_game_root(d) {
                let rel = file.strip_prefix(d).ok()?;
                let game_path = normalize(&rel.to_string_lossy()).ok()?;
                return Some((GameView::folder(d).ok()?, game_path));
            }
            dir = d.parent();
        }
        None
    }

    /// Adds a layer that overrides the ones before it.
    pub fn push(&mut self, layer: Layer) {
        self.layers.push(Arc::new(layer));
    }

    /// How a report names `prefix` inside this view: `GAME::prefix`, or the folder itself.
    pub fn label_of(&self, prefix: &str) -> String {
        if prefix.is_empty() {
            self.label.clone()
        } else {
            format!("{}::{prefix}", self.label)
        }
    }

    /// Every file at or below `prefix`, once each, sorted by how it is shown: a folder's files by
    /// their names on disk (two that differ only in case are two files), a catalog's by game
    /// path; a catalog entry hides a loose file of the same game path below it. `skip` (an
    /// output folder inside the input) and hangar's temporary files are left out.
    pub fn entries(&self, prefix: &str, skip: Option<&Path>) -> Result<Vec<Entry>> {
        let prefix = normalize(prefix)?;
        let skip = skip.and_then(|s| crate::io::canonical(s).ok());
        let mut by_norm: HashMap<String, usize> = HashMap::new();
        let mut out: Vec<Option<Entry>> = Vec::new();
        for layer in &self.layers {
            let found: Vec<Entry> = match &**layer {
                Layer::Folder(f) => f
                    .entries(&prefix, skip.as_deref())
                    .into_iter()
                    .filter(|e| !e.disk.as_deref().is_some_and(crate::io::is_temp))
                    .collect(),
                other => {
                    let mut names = Vec::new();
                    other.files(&prefix, &mut names);
                    names
                        .into_iter()
                        .map(|n| Entry {
                            shown: n.clone(),
                            norm: n,
                            disk: None,
                        })
                        .collect()
                }
            };
            for e in found {
                if e.disk.is_none() {
                    // A later layer wins: drop what an earlier one had at this path.
                    if let Some(i) = by_norm.get(&e.norm) {
                        if let Some(slot) = out.get_mut(*i) {
                            *slot = None;
                        }
                    }
                }
                by_norm.insert(e.norm.clone(), out.len());
                out.push(Some(e));
            }
        }
        let mut all: Vec<Entry> = out.into_iter().flatten().collect();
        all.sort_by(|a, b| a.shown.cmp(&b.shown));
        Ok(all)
    }

    /// The first `n` bytes of `e` (fewer when it is shorter), to tell its format without reading
    /// it whole, and its whole length; `None` when it cannot be read.
    pub fn head(&self, e: &Entry, n: usize) -> Option<(Vec<u8>, u64)> {
        match &e.disk {
            Some(p) => {
                use std::io::Read;
                let mut head = Vec::with_capacity(n);
                let f = std::fs::File::open(p).ok()?;
                let len = f.metadata().ok()?.len();
                f.take(n as u64).read_to_end(&mut head).ok()?;
                Some((head, len))
            }
            None => {
                let b = self.get(&e.norm)?.ok()?;
                Some((b.get(..b.len().min(n))?.to_vec(), b.len() as u64))
            }
        }
    }

    /// True when some layer holds `path`.
    pub fn exists(&self, path: &str) -> bool {
        normalize(path).is_ok_and(|n| self.layers.iter().rev().any(|l| l.has(&n)))
    }

    /// The bytes of the file at `path`.
    pub fn read(&self, path: &str) -> Result<Input> {
        self.get(&normalize(path)?).unwrap_or_else(|| {
            Err(Error::new(
                ErrorKind::Io,
                None,
                "",
                format!("{path}: not found in {}", self.label),
            ))
        })
    }

    /// The file at the normalized path `norm` (as the game compares paths), `None` when no layer has it: for
    /// searches that try many paths, where a miss needs no message.
    pub fn get(&self, norm: &str) -> Option<Result<Input>> {
        self.layers.iter().rev().find_map(|layer| layer.get(norm))
    }

    /// The layer that gives `norm` (the last that has it) and, for a folder, its file on disk.
    fn winner(&self, norm: &str) -> Option<(&Layer, Option<PathBuf>)> {
        self.layers.iter().rev().find_map(|layer| match &**layer {
            Layer::Folder(f) => f.find(norm).map(|p| (&**layer, Some(p))),
            other => other.has(norm).then_some((other, None)),
        })
    }

    /// `path` as the layer that holds it spells it: a folder's file by its names on disk, a loose
    /// file as it was given (both relative to the view's root, with `/`); none for a catalog's
    /// entry (its game path is all there is) or a path not in the view. Written back, a file keeps
    /// its letter case (`ARG_DROPSHIP_DATA.ANI`).
    pub fn spelled(&self, path: &str) -> Option<String> {
        let norm = normalize(path).ok()?;
        match self.winner(&norm)? {
            (Layer::Folder(f), Some(p)) => {
                let rel = p.strip_prefix(f.root()).ok()?;
                Some(rel.to_string_lossy().replace('\\', "/"))
            }
            (Layer::Source(s), _) => s.spelled(&norm).map(|p| p.replace('\\', "/")),
            (Layer::Archive(a), _) => a.spelled(&norm),
            _ => None,
        }
    }

    /// The file on disk [`Self::read`] gives for `path`, when the layer that wins is a folder (not
    /// a catalog).
    pub fn locate(&self, path: &str) -> Option<PathBuf> {
        self.winner(&normalize(path).ok()?)?.1
    }

    /// Every file at or below the game folder `prefix` (`""` for all), normalized, sorted, each once.
    pub fn files(&self, prefix: &str) -> Result<Vec<String>> {
        let prefix = normalize(prefix)?;
        let mut out = Vec::new();
        for layer in &self.layers {
            layer.files(&prefix, &mut out);
        }
        out.sort();
        out.dedup();
        Ok(out)
    }

    /// Which of [`GameView::files`] hangar shows (by extension: models, motions, UI files, textures,
    /// glTF). A game or mod keeps its models under `assets/`, so there its other XMLs (scripts,
    /// libraries) are left out; a loose folder's XMLs may be components anywhere.
    pub fn models(files: &[String]) -> Vec<&String> {
        let game = files.iter().any(|p| p.starts_with("assets/"));
        files
            .iter()
            .filter(|p| {
                let e = p
                    .rsplit('/')
                    .next()
                    .and_then(|n| n.rsplit_once('.'))
                    .map_or("", |x| x.1);
                SHOWN.iter().any(|s| s.eq_ignore_ascii_case(e))
                    && (!e.eq_ignore_ascii_case("xml")
                        || !game
                        || p.starts_with("assets/")
                        || p.contains("/assets/"))
            })
            .collect()
    }
}

/// Extensions of the files hangar opens and shows: models, motions, UI files, textures, glTF.
pub const SHOWN: &[&str] = &[
    "xml", "xmf", "m3", "m3a", "xac", "xsm", "xpm", "ani", "bgf", "bgp", "bsg", "dds", "tga", "gz",
    "glb", "gltf",
];

/// The data catalogs directly in `dir` in the order the game stacks them: `NN.cat`, then
/// `ext_*.cat`, then `subst_*.cat`, each by name; `_sig.cat` signatures left out.
pub(crate) fn catalogs_in(dir: &Path) -> Vec<PathBuf> {
    let mut cats: Vec<(u8, String, PathBuf)> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().to_lowercase();
                    if !catalog::is_data_catalog(&name) || !e.path().is_file() {
                        return None;
                    }
                    Some((catalog_rank(&name), name, e.path()))
                })
                .collect()
        })
        .unwrap_or_default();
    cats.sort();
    cats.into_iter().map(|c| c.2).collect()
}

/// Where a data catalog (lower-case name) stacks among those of its folder: `NN.cat` 0, `ext_` 1,
/// `subst_` 2.
fn catalog_rank(name: &str) -> u8 {
    if name.starts_with("ext_") {
        1
    } else if name.starts_with("subst_") {
        2
    } else {
        0
    }
}

/// True when `dir` looks like the root of the game or of a mod.
fn is_game_root(dir: &Path) -> bool {
    // Probing the spellings games and mods use costs a few stats; listing every folder up to `/`
    // (often a crowded /tmp) for each model was a sixth of an M3 batch.
    [
        "assets",
        "Assets",
        "ASSETS",
        "libraries",
        "Libraries",
        "LIBRARIES",
    ]
    .iter()
    .any(|n| dir.join(n).is_dir())
}

/// [`is_game_root`] for files given by their paths: the deepest folder above `path` (not the top)
/// that holds an `assets` or `libraries` folder among `paths`, as its normalized prefix.
pub fn game_root_in<'a>(paths: impl IntoIterator<Item = &'a str>, path: &str) -> Option<String> {
    let path = normalize(path).ok()?;
    let mut best: Option<String> = None;
    for p in paths {
        let Ok(p) = normalize(p) else { continue };
        for sub in ["/assets/", "/libraries/"] {
            let Some(at) = p.find(sub) else { continue };
            let root = &p[..at + 1];
            let deeper = best.as_ref().is_none_or(|b| root.len() > b.len());
            if deeper && path.starts_with(root) {
                best = Some(root.to_string());
            }
        }
    }
    best
}

/// Views of the folders around loose models, kept as long as one set of conversion options
/// serves (a batch): the models of one folder share its game root, its view and the listings read
/// through it, where each model asked the system again before (a fifth of an M3 batch).
#[derive(Default)]
pub struct Nearby {
    folders: Mutex<HashMap<PathBuf, Option<Arc<GameView>>>>,
    /// A model's folder as named → that folder with links resolved, and the game root above it.
    roots: Mutex<HashMap<PathBuf, Option<Resolved>>>,
}

/// A folder with its links resolved, and the game root above it.
type Resolved = (PathBuf, Option<PathBuf>);

impl Nearby {
    /// A view of the folder `dir`.
    pub fn folder(&self, dir: &Path) -> Option<Arc<GameView>> {
        // A poisoned lock only means another thread panicked mid-insert: the map is still whole.
        let mut folders = self.folders.lock().unwrap_or_else(|e| e.into_inner());
        folders
            .entry(dir.to_path_buf())
            .or_insert_with(|| GameView::folder(dir).ok().map(Arc::new))
            .clone()
    }

    /// [`GameView::around`], worked out once per folder.
    pub fn around(&self, file: &Path) -> Option<(Arc<GameView>, String)> {
        let name = file.file_name()?;
        if std::fs::symlink_metadata(file)
            .ok()?
            .file_type()
            .is_symlink()
        {
            // A link's root is the one around the file it points to.
            let (v, p) = GameView::around(file)?;
            return Some((Arc::new(v), p));
        }
        let dir = file.parent().filter(|d| !d.as_os_str().is_empty());
        let dir = dir.unwrap_or(Path::new("."));
        let (real, root) = {
            let mut roots = self.roots.lock().unwrap_or_else(|e| e.into_inner());
            roots
                .entry(dir.to_path_buf())
                .or_insert_with(|| {
                    let real = crate::io::canonical(dir).ok()?;
                    let root = real
                        .ancestors()
                        .find(|d| is_game_root(d))
                        .map(Path::to_path_buf);
                    Some((real, root))
                })
                .clone()?
        };
        let root = root?;
        let rel = real.join(name);
        let game_path = normalize(&rel.strip_prefix(&root).ok()?.to_string_lossy()).ok()?;
        Some((self.folder(&root)?, game_path))
    }
}

/// The game paths a reference inside a file may mean: as written (normalized), then, for
/// `extensions\NAME\rest`, `rest` read inside the mod (a mod names its own files with the path it
/// is installed at, and hangar's view of a loose mod starts at the mod's folder).
pub fn reference_paths(path: &str) -> Vec<String> {
    let Ok(p) = normalize(path) else {
        return Vec::new();
    };
    let inside = p
        .strip_prefix("extensions/")
        .and_then(|rest| rest.split_once('/'))
        .map(|(_, rest)| rest.to_string());
    std::iter::once(p).chain(inside).collect()
}

/// `GAME::path/inside` on the command line: the game (folder or catalog) and the path inside it.
pub fn split_spec(arg: &str) -> Option<(PathBuf, &str)> {
    let (game, inside) = arg.split_once("::")?;
    (!game.is_empty()).then(|| (PathBuf::from(game), inside))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_folds_case_and_separators() {
        assert_eq!(
            normalize(r"Assets\Units/Size_S\\Ship.XML").unwrap(),
            "assets/units/size_s/ship.xml"
        );
        assert_eq!(normalize("./a/b/../c").unwrap(), "a/c");
        assert_eq!(normalize("/abs/x").unwrap(), "abs/x");
        // Already normal: given back as it is; anything else takes the long way.
        assert_eq!(normalize("assets/a b/x.xml").unwrap(), "assets/a b/x.xml");
        assert_eq!(normalize("a//b/").unwrap(), "a/b");
        assert_eq!(normalize("a/./b").unwrap(), "a/b");
        assert_eq!(normalize("Ä/b").unwrap(), "ä/b");
    }

    #[test]
    fn normalize_refuses_escapes() {
        for bad in ["../x", "a/../../x", r"C:\x", "c:/x", r"..\..\etc\passwd"] {
            let e = normalize(bad).unwrap_err();
            assert_eq!(e.kind, ErrorKind::Refused, "{bad}");
        }
    }

    #[test]
    fn references_into_an_extension_are_also_read_inside_the_mod() {
        assert_eq!(
            reference_paths(r"\Extensions\UTLogos\assets\Data\10m"),
            ["extensions/utlogos/assets/data/10m", "assets/data/10m"]
        );
        assert_eq!(reference_paths("assets/x.xmf"), ["assets/x.xmf"]);
        assert!(reference_paths("../x").is_empty());
    }

    #[test]
    fn split_spec_takes_the_first_double_colon() {
        let (g, p) = split_spec("X4::assets/units").unwrap();
        assert_eq!(g, PathBuf::from("X4"));
        assert_eq!(p, "assets/units");
        assert!(split_spec("plain/path.xmf").is_none());
        assert!(split_spec("::x").is_none());
    }

    fn cat(dir: &Path, name: &str, files: &[(&str, &[u8])]) {
        let mut text = String::new();
        let mut dat = Vec::new();
        for (p, b) in files {
            text.push_str(&format!("{p} {} 0 {}\n", b.len(), catalog::md5_hex(b)));
            dat.extend_from_slice(b);
        }
        std::fs::write(dir.join(name), text).unwrap();
        std::fs::write(catalog::dat_path(&dir.join(name)), dat).unwrap();
    }

    #[test]
    fn a_game_folder_stacks_catalogs_and_extensions() {
        let root = std::env::temp_dir().join(format!("hangar-vfs-game-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let ext = root.join("extensions/ego_dlc_x");
        std::fs::create_dir_all(&ext).unwrap();
        cat(
            &root,
            "01.cat",
            &[(r"Assets\\A.xml", b"one"), ("assets/b.xml", b"bee")],
        );
        cat(&root, "02.cat", &[("assets/a.xml", b"two")]);
        cat(&root, "01_sig.cat", &[("assets/a.xml", b"signature")]);
        cat(&ext, "ext_01.cat", &[("assets/a.xml", b"own")]);
        cat(&ext, "subst_01.cat", &[("assets/b.xml", b"replaced")]);
        let v = GameView::open(&root).unwrap();
        assert_eq!(&*v.read("ASSETS/a.xml").unwrap(), b"two");
        assert_eq!(&*v.read("assets/b.xml").unwrap(), b"replaced");
        assert_eq!(
            &*v.read("extensions/ego_dlc_x/assets/a.xml").unwrap(),
            b"own"
        );
        assert_eq!(
            v.files("assets").unwrap(),
            vec!["assets/a.xml", "assets/b.xml"]
        );
        let one = GameView::open(&root.join("01.cat")).unwrap();
        assert_eq!(&*one.read(r"assets\\a.XML").unwrap(), b"one");
        assert!(one.read("assets/c.xml").is_err());
        let _ = std::fs::remove_dir_all(&root);
    }
}
