//! The door into the library: open a file from wherever it is, ask it what it holds, check it,
//! and write it as another file. The CLI, the Python module and the WebAssembly page call only
//! this (re-exported at the crate root).

use crate::any;
use crate::detect::Format;
use crate::error::{Error, Result, Warning};
use crate::io::Input;
use crate::model::Scene;
use crate::validate::Finding;
use crate::vfs::GameView;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use crate::any::{Converted, Info, Wrote};
pub use crate::check::{Link, ModCheck, ModKind};
pub use crate::document::WriteOptions;

/// PNG pictures of a model's textures by the path its materials name them with (see
/// [`Opened::textured`]).
pub type Pictures = std::collections::BTreeMap<String, Vec<u8>>;

/// Where a file comes from.
pub enum Source {
    /// A file or a component folder on disk, or `GAME::path` inside a game's catalogs or folder.
    Path(PathBuf),
    /// Bytes in memory, named by `name` (its extension hints the format where there is no magic,
    /// and errors name it).
    Bytes { name: String, bytes: Vec<u8> },
    /// A file inside a game view (a component in it reads its parts through the view).
    InView(Arc<GameView>, String),
}

impl Source {
    /// Bytes in memory named `name` (`"ship.xmf"`).
    pub fn bytes(name: impl Into<String>, bytes: Vec<u8>) -> Source {
        Source::Bytes {
            name: name.into(),
            bytes,
        }
    }
}

impl From<&Path> for Source {
    fn from(p: &Path) -> Source {
        Source::Path(p.to_path_buf())
    }
}

impl From<PathBuf> for Source {
    fn from(p: PathBuf) -> Source {
        Source::Path(p)
    }
}

impl From<&PathBuf> for Source {
    fn from(p: &PathBuf) -> Source {
        Source::Path(p.clone())
    }
}

impl From<&str> for Source {
    fn from(p: &str) -> Source {
        Source::Path(PathBuf::from(p))
    }
}

impl GameView {
    /// The game a `GAME::path` names, opened (`None` for any other path): a face searches it
    /// for textures after the user's own views.
    pub fn of_spec(path: &Path) -> Option<Result<GameView>> {
        let (game, _) = path.to_str().and_then(crate::vfs::split_spec)?;
        Some(GameView::open(&game))
    }
}

/// The component XML a data folder belongs to (`ship_data/` gives `ship.xml` beside it, in any
/// case), as [`open`] finds it when given the folder: for a tool that keeps the file it read.
///
/// ```
/// assert_eq!(hangar::component_of(std::path::Path::new("../samples")), None);
/// ```
pub fn component_of(data_folder: &Path) -> Option<PathBuf> {
    crate::assemble::xml_beside(data_folder)
}

/// The files of `view` that opening and showing the file at `path` reads, as far as its name
/// and a quick look tell: for a component XML, the XML, every file of its data folder and its
/// `.ani`; for anything else, the file alone. A caller whose reads are slow one at a time (a
/// browser page) fetches them together first.
///
/// ```
/// let view = hangar::GameView::folder(std::path::Path::new("../samples"))?;
/// assert_eq!(hangar::files_read(&view, "wedge-lod0.xmf"), ["wedge-lod0.xmf"]);
/// # Ok::<(), hangar::Error>(())
/// ```
pub fn files_read(view: &GameView, path: &str) -> Vec<String> {
    if crate::io::has_ext(Path::new(path), "xml") {
        return crate::assemble::read::files_read(view, path);
    }
    crate::vfs::normalize(path).into_iter().collect()
}

/// The game root above the file at `path` among `paths` (files given by their paths inside
/// what was opened, as a page's dropped folder): the deepest folder above it that holds an
/// `assets` or `libraries` folder, as a model's textures are looked for on disk. Its prefix in
/// normalized form (`"base.sc2data/"`); none when there is none below the top.
///
/// ```
/// let files = ["Base.SC2Data/Assets/Models/a.m3", "Base.SC2Data/Assets/Textures/a.dds"];
/// assert_eq!(hangar::game_root_in(files, "Base.SC2Data/Assets/Models/a.m3").as_deref(), Some("base.sc2data/"));
/// assert_eq!(hangar::game_root_in(["assets/a.xmf"], "assets/a.xmf"), None);
/// ```
pub fn game_root_in<'a>(paths: impl IntoIterator<Item = &'a str>, path: &str) -> Option<String> {
    crate::vfs::game_root_in(paths, path)
}

/// What kind of mod the folder `dir` holds, when it is one hangar checks whole: an X4 / X
/// Rebirth extension (a `content.xml` in it), a StarCraft II mod or map saved as a folder
/// (`*.SC2Mod`, `*.SC2Map`).
///
/// ```
/// assert_eq!(hangar::mod_kind(std::path::Path::new("../samples")), None);
/// ```
pub fn mod_kind(dir: &Path) -> Option<ModKind> {
    crate::check::mod_kind(dir)
}

/// [`mod_kind`] for a mod given as its folder's name and its files' paths inside it (as
/// [`check_mod_files`] takes them): a `content.xml` at its root, a folder named `*.SC2Mod` or
/// `*.SC2Map`, or a `Base.SC2Data` folder.
///
/// ```
/// use hangar::{mod_kind_of_files, ModKind};
/// assert_eq!(mod_kind_of_files("my_mod", ["Content.xml", "index/macros.xml"]), Some(ModKind::X4));
/// assert_eq!(mod_kind_of_files("Map.SC2Map", ["MapInfo"]), Some(ModKind::Sc2));
/// assert_eq!(mod_kind_of_files("ships", ["a/content.xml", "a.xmf"]), None);
/// ```
pub fn mod_kind_of_files<'a>(
    folder: &str,
    paths: impl IntoIterator<Item = &'a str>,
) -> Option<ModKind> {
    crate::check::mod_kind_of_files(folder, paths)
}

/// Checks the mod in the folder `dir` whole (`hangar validate DIR`): every file validated, every
/// reference followed. With `game` (a game folder) the mod is stacked on it, and on the
/// extensions it depends on found beside it; without, a reference into the game is reported as
/// not checked, never as an error.
pub fn check_mod(dir: &Path, game: Option<&Path>) -> Result<ModCheck> {
    crate::check::check_folder(dir, game)
}

/// [`check_mod`] for a mod given as its files (its path inside the mod, its bytes), named
/// `name` (the folder the game would find it in), on `game` when given.
pub fn check_mod_files(
    name: &str,
    files: Vec<(String, crate::vfs::SharedSource)>,
    game: Option<GameView>,
) -> Result<ModCheck> {
    let files = crate::check::ModFiles::from_sources(name, files)?;
    Ok(crate::check::check(&crate::check::World::new(
        files, game, None, None,
    )))
}

/// Opens a file (or a component folder) and reads it: its format is told by its first bytes.
///
/// ```
/// let opened = hangar::open("../samples/wedge-lod0.xmf")?;
/// let info = opened.info();
/// assert_eq!((info.vertices, info.triangles), (32, 14));
/// # Ok::<(), hangar::Error>(())
/// ```
pub fn open(source: impl Into<Source>) -> Result<Opened> {
    match source.into() {
        Source::Path(path) => {
            if let Some((game, inside)) = path.to_str().and_then(crate::vfs::split_spec) {
                let view = Arc::new(GameView::open(&game)?);
                let bytes = view.read(inside).map_err(|e| e.in_file(&path))?;
                return Opened::read(bytes, path.clone(), Some((view, inside.to_string())));
            }
            if path.is_dir() {
                return Ok(Opened::from_document(
                    crate::assemble::document::open_folder(&path),
                    path,
                ));
            }
            let bytes = crate::io::read_input(&path)?;
            Opened::read(bytes, path, None)
        }
        Source::Bytes { name, bytes } => {
            Opened::read(Input::Read(bytes), PathBuf::from(name), None)
        }
        Source::InView(view, inside) => {
            let bytes = view.read(&inside)?;
            let label = PathBuf::from(format!("{}::{inside}", view.label));
            Opened::read(bytes, label, Some((view, inside)))
        }
    }
}

/// An opened file: what it is, what the reader noticed, and the ways out of it.
pub struct Opened {
    // Declared before `bytes`, so it is dropped first: it borrows them (see `Opened::read`).
    parsed: any::Opened<'static>,
    motions: Vec<Opened>,
    /// Kept alive for `parsed`; read again only by `source_bytes`.
    _bytes: Option<Input>,
    name: PathBuf,
}

impl Opened {
    /// The bytes the file was read from (empty for a scene built in code).
    pub(crate) fn source_bytes(&self) -> &[u8] {
        self._bytes.as_deref().unwrap_or_default()
    }

    fn read(bytes: Input, name: PathBuf, view: Option<(Arc<GameView>, String)>) -> Result<Opened> {
        // SAFETY: the slice points into `bytes`' heap buffer or memory map, which does not move
        // when `bytes` moves into the returned `Opened`, and which lives as long as it: `parsed`,
        // the only holder of the borrow, is dropped before `_bytes` (field order) and is never
        // handed out with a lifetime longer than `&self`.
        let slice: &'static [u8] = unsafe { std::mem::transmute::<&[u8], &'static [u8]>(&bytes) };
        let format = any::detect(slice, Some(&name));
        let parsed = match view {
            Some((view, inside)) if format == Format::ComponentXml => {
                crate::assemble::document::open_in_view(view, &inside, &name)
            }
            _ => any::open(slice, &name)?,
        };
        Ok(Opened {
            parsed,
            motions: Vec::new(),
            _bytes: Some(bytes),
            name,
        })
    }

    /// A file of `view` at the game path `norm`, already read (a batch's catalog entries).
    pub(crate) fn read_in(bytes: Input, view: &GameView, norm: &str) -> Result<Opened> {
        Opened::read(
            bytes,
            PathBuf::from(norm),
            Some((Arc::new(view.clone()), norm.to_string())),
        )
    }

    /// The names that tie a motion to its actor (see `Document::binding_names`).
    pub(crate) fn binding_names(&self) -> Vec<String> {
        self.parsed.document.binding_names()
    }

    fn from_document(doc: any::Opened<'static>, name: PathBuf) -> Opened {
        Opened {
            parsed: doc,
            motions: Vec::new(),
            _bytes: None,
            name,
        }
    }

    /// The name it was opened by (a path, `GAME::path`, or the name given with the bytes).
    pub fn name(&self) -> &Path {
        &self.name
    }

    /// Its format.
    pub fn format(&self) -> Format {
        self.parsed.format
    }

    /// What the reader noticed while opening (notes included: see [`Warning::note`]).
    pub fn warnings(&self) -> &[Warning] {
        &self.parsed.warnings
    }

    /// The extensions this file can be written as (for download buttons): what any model converts
    /// to, then the forms its own format writes.
    pub fn outputs(&self) -> Vec<&'static str> {
        any::outputs_of(self.format())
    }

    /// What `hangar info` shows: counts, layout, materials, warnings.
    ///
    /// ```
    /// let info = hangar::open("../samples/wedge-lod0.xmf")?.info();
    /// assert_eq!(info.format, "XMF v3");
    /// # Ok::<(), hangar::Error>(())
    /// ```
    pub fn info(&self) -> Info {
        self.parsed.info()
    }

    /// What `hangar validate` reports: the reader's warnings and the format's checks; for a model,
    /// also what the game would fail on or draw wrong in the textures it names.
    ///
    /// ```
    /// use hangar::Severity;
    /// let findings = hangar::open("../samples/wedge-lod0.xmf")?.validate();
    /// assert!(findings.iter().all(|f| f.severity != Severity::Error));
    /// # Ok::<(), hangar::Error>(())
    /// ```
    pub fn validate(&self) -> Vec<Finding> {
        let mut findings = self.parsed.validate();
        // A model's textures: where the game would fail on them or draw them wrong.
        let sc2 = matches!(self.format(), Format::M3Md34 | Format::M3Md33);
        if sc2
            || matches!(
                self.format(),
                Format::Xmf | Format::ComponentXml | Format::Xac
            )
        {
            if let Ok((mut scene, _)) = self.to_scene() {
                findings.extend(crate::textures::findings(&mut scene, &self.name, sc2));
            }
        }
        findings
    }

    /// Every field as JSON (`hangar dump`); opening the dump and writing it as the original
    /// format gives the same bytes.
    ///
    /// ```
    /// let dump = hangar::open("../samples/wedge-lod0.xmf")?.dump()?;
    /// assert!(dump.contains("\"format\": \"xmf\""));
    /// # Ok::<(), hangar::Error>(())
    /// ```
    pub fn dump(&self) -> Result<String> {
        self.parsed.dump().map_err(|e| e.in_file(&self.name))
    }

    /// Adds a motion file (`.xsm`, `.xpm`, `.m3a`, an M3) whose clips go into this model's
    /// scene and glTF outputs, as `hangar convert --motion` does.
    pub fn add_motion(&mut self, motion: Opened) {
        self.motions.push(motion);
    }

    /// The motions' labels (their file stems, made unique) and documents.
    fn motion_list(&self) -> Vec<(String, &any::Opened<'static>)> {
        let mut labels: Vec<String> = Vec::new();
        for m in &self.motions {
            let stem = any::stem_or(&m.name, "motion");
            let mut label = stem.clone();
            let mut k = 2;
            while labels.contains(&label) {
                label = format!("{stem} {k}");
                k += 1;
            }
            labels.push(label);
        }
        labels
            .into_iter()
            .zip(&self.motions)
            .map(|(l, m)| (l, &m.parsed))
            .collect()
    }

    /// The neutral scene (nodes, meshes, materials, skins, animations; motions added).
    ///
    /// ```
    /// let (scene, _warnings) = hangar::open("../samples/wedge-lod0.xmf")?.to_scene()?;
    /// assert_eq!(scene.meshes[0].vertices.positions.len(), 32);
    /// # Ok::<(), hangar::Error>(())
    /// ```
    pub fn to_scene(&self) -> Result<(Scene, Vec<Warning>)> {
        let stem = any::stem_or(&self.name, "model");
        let motions = self.motion_list();
        any::scene_of(&self.parsed, &self.name, &stem, &motions).map_err(|e| e.in_file(&self.name))
    }

    /// The model's scene with its materials' textures found and decoded as a conversion finds them
    /// (beside the model, in `options`' views, through an X4 game's material library): each
    /// material names its textures by path, and the pictures are PNG files by that path. A
    /// texture not found or not decodable is left out of its material, and said in the warnings.
    ///
    /// ```
    /// let opened = hangar::open("../samples/wedge-lod0.xmf")?;
    /// let (scene, pictures, _) = opened.textured(&hangar::ConvertOptions::default())?;
    /// assert!(pictures.is_empty() && !scene.meshes.is_empty());
    /// # Ok::<(), hangar::Error>(())
    /// ```
    pub fn textured(&self, options: &ConvertOptions) -> Result<(Scene, Pictures, Vec<Warning>)> {
        let (mut scene, mut warnings) = self.to_scene()?;
        let (resolved, w) = crate::textures::resolve(&mut scene, &self.name, &options.textures);
        warnings.extend(w);
        Ok((scene, resolved.images, warnings))
    }

    /// A glTF's images by the material each draws (PNG inside the GLB, a data URI, or a file
    /// beside the glTF), as `--textures write` takes them back; none for any other format. An
    /// image that cannot be read is left out and said in the warnings.
    pub fn images(&self) -> Result<(Vec<crate::textures::Edit>, Vec<Warning>)> {
        match (self.format(), self.parsed.document.source()) {
            (Format::Glb | Format::GltfText, Some(bytes)) => {
                crate::gltf::import::images(bytes, self.name.parent())
                    .map_err(|e| e.in_file(&self.name))
            }
            _ => Ok(Default::default()),
        }
    }

    /// The bytes of the file `output` names (its extension picks the type: `.glb`, `.gltf`,
    /// `.obj`, `.json`, the game formats, `.png`/`.dds` for pictures, `.xml` for a whole
    /// component), and the files that go with it (paths relative to `output`'s folder). Nothing
    /// is written.
    ///
    /// ```
    /// let opened = hangar::open("../samples/wedge-lod0.xmf")?;
    /// let glb = opened.write_as("wedge.glb", &hangar::ConvertOptions::default())?;
    /// assert_eq!(&glb.bytes[..4], b"glTF");
    /// # Ok::<(), hangar::Error>(())
    /// ```
    pub fn write_as(
        &self,
        output: impl AsRef<Path>,
        options: &ConvertOptions,
    ) -> Result<Converted> {
        let output = output.as_ref();
        if let Some(p) = self.picture(output, options) {
            return p;
        }
        if let Some(w) = self.component_files(output, options)? {
            return Ok(relative(w, output));
        }
        if let Some(c) = self.with_original(output, options) {
            return c;
        }
        let motions = self.motion_list();
        any::convert_textured(&self.parsed, &self.name, output, &motions, options)
    }

    /// [`Self::write_as`], written to disk: `output` and the files beside it all or none, never
    /// over the input. A `.glb` goes to disk straight from the scene's arrays.
    pub fn write_to(&self, output: impl AsRef<Path>, options: &ConvertOptions) -> Result<Wrote> {
        let output = output.as_ref();
        if crate::io::same_file(&self.name, output) {
            return Err(Error::refused(
                "",
                "refusing to write over the input; pick another output name",
            )
            .in_file(output));
        }
        if let Some(p) = self.picture(output, options) {
            let p = p?;
            crate::io::write_output(output, &p.bytes)?;
            return Ok(Wrote {
                bytes: p.bytes.len(),
                files: 0,
                warnings: p.warnings,
                what: p.what,
            });
        }
        if options.write.patch && options.original.is_none() {
            return Err(Error::unsupported(
                "--patch needs --original: the game's component XML the patch is made against",
            ));
        }
        if let Some(w) = self.component_files(output, options)? {
            if let Some((p, _)) = w
                .files
                .iter()
                .find(|(p, _)| crate::io::same_file(p, &self.name))
            {
                return Err(Error::refused("", "would be written over the input").in_file(p));
            }
            crate::io::write_files(&w.files)?;
            return Ok(Wrote {
                bytes: w.files.iter().map(|(_, b)| b.len()).sum(),
                files: w.files.len().saturating_sub(1),
                warnings: w.warnings,
                what: String::new(),
            });
        }
        if options.write.patch {
            return Err(Error::unsupported(
                "--patch applies to a component .xml written from a glTF with --original (the game's component XML)",
            ));
        }
        if let Some(c) = self.with_original(output, options) {
            let c = c?;
            c.write(output)?;
            return Ok(Wrote {
                bytes: c.bytes.len() + c.files.iter().map(|(_, b)| b.len()).sum::<usize>(),
                files: c.files.len(),
                warnings: c.warnings,
                what: c.what,
            });
        }
        let motions = self.motion_list();
        any::convert_and_write(&self.parsed, &self.name, output, &motions, options)
    }

    /// How many mip levels and surfaces (cube faces, array layers, volume slices) a picture
    /// holds, for choosing one with [`crate::formats::dds::Surfaces::One`] in
    /// `options.textures.surfaces`; `None` for what is no picture.
    pub fn levels(&self) -> Option<Result<crate::formats::dds::Levels>> {
        let bytes = self.picture_bytes()?;
        Some(crate::formats::dds::levels(bytes, &self.name).map_err(|e| e.in_file(&self.name)))
    }

    /// The bytes of a picture (DDS, PNG, TGA); `None` for anything else.
    fn picture_bytes(&self) -> Option<&[u8]> {
        let picture = matches!(self.format(), Format::Dds | Format::Png | Format::Tga);
        self._bytes.as_deref().filter(|_| picture)
    }

    /// A picture (DDS, PNG, TGA) converted to a `.png` or `.dds` output with `options`' encoding
    /// (the document's own `write` knows only the defaults); `None` for anything else.
    fn picture(&self, output: &Path, options: &ConvertOptions) -> Option<Result<Converted>> {
        let bytes = self.picture_bytes()?;
        let p =
            crate::formats::dds::convert(bytes, &self.name, output, options.textures.picture())?;
        Some(p.map(|p| Converted {
            what: format!("{}x{}{}", p.width, p.height, p.what),
            bytes: p.bytes,
            files: Vec::new(),
            warnings: p.warnings,
        }))
    }

    /// A scene written as a whole component (an `.xml` output): the XML, its `_data/` files and
    /// the .ani, by absolute path. A glTF made from a component, or a component itself, gives
    /// that component back (its scene carries the XML and the files no part shows); any other
    /// model becomes a new component of its meshes.
    fn component_files(
        &self,
        output: &Path,
        options: &ConvertOptions,
    ) -> Result<Option<crate::assemble::Written>> {
        let gltf = matches!(self.format(), Format::Glb | Format::GltfText);
        if !crate::io::has_ext(output, "xml")
            || !any::writes_component(self.format())
            || !self.motions.is_empty()
            || (options.original.is_some() && !gltf)
        {
            // A motion or `--original` on another input: refused with the reason further on; a
            // .bgf's `.xml` is its presentation XML.
            return Ok(None);
        }
        let (mut scene, warnings) = self.to_scene()?;
        let back = any::textures_back(&self.parsed, &mut scene, &self.name, output, options)?;
        let mut w = match options.original.as_ref().filter(|_| gltf) {
            Some(original) => {
                // The original's own warnings are about it, not this conversion: not repeated.
                let (was, _) = open(original.as_path())?.to_scene()?;
                let scene = crate::original::restore(scene, &was, original)?;
                let f = crate::original::from_scene(&scene, output, Some(original))?;
                crate::assemble::Written {
                    files: f.files,
                    warnings: f.warnings,
                }
            }
            None => crate::assemble::from_scene(&scene, output, &options.textures.views)?,
        };
        w.warnings.splice(0..0, warnings);
        if let (true, Some(original)) = (options.write.patch, options.original.as_deref()) {
            crate::xmlpatch::into_patch(&mut w.files, original)?;
        }
        if let Some((files, more)) = back {
            let dir = output.parent().unwrap_or(Path::new(""));
            w.files.extend(
                files
                    .into_iter()
                    .map(|(f, b)| (crate::io::joined(dir, &f), b)),
            );
            w.warnings.extend(more);
        }
        Ok(Some(w))
    }

    /// A glTF written as another game file with `--original`: the scene with what the glTF lost
    /// taken back from the original, then written as any scene is (an untouched XMF, M3 or XAC:
    /// the original's bytes; an XSM or XPM on the original's sub-motions).
    fn with_original(&self, output: &Path, options: &ConvertOptions) -> Option<Result<Converted>> {
        let original = options.original.as_deref()?;
        if !matches!(self.format(), Format::Glb | Format::GltfText) || !self.motions.is_empty() {
            return Some(Err(Error::unsupported(
                "--original applies to a glTF input (the game file it was made from)",
            )));
        }
        let converted = (|| {
            let (mut scene, warnings) = self.to_scene()?;
            let back = any::textures_back(&self.parsed, &mut scene, &self.name, output, options)?;
            let was = crate::original::read(original)?;
            let scene = match &was.1 {
                Some(w) => crate::original::restore(scene, w, original)?,
                None => scene,
            };
            let mut notes = Vec::new();
            if let Some(made) =
                crate::original::from_original(&scene, output, original, &was, &mut notes)
            {
                let (bytes, w) = made?;
                let c = Converted {
                    bytes,
                    warnings: warnings.into_iter().chain(notes).chain(w).collect(),
                    ..Default::default()
                };
                return Ok((c, back));
            }
            let mut c = write_scene(&scene, output, options)?;
            c.warnings.splice(0..0, warnings.into_iter().chain(notes));
            Ok((c, back))
        })();
        // The glTF's changed and new images, written back beside the model.
        Some(converted.map(|(mut c, back)| {
            if let Some((files, warnings)) = back {
                c.files.extend(files);
                c.warnings.extend(warnings);
            }
            c
        }))
    }
}

/// A component's files (absolute) as a [`Converted`] whose output is the XML `output` and whose
/// other files are relative to its folder.
fn relative(w: crate::assemble::Written, output: &Path) -> Converted {
    let dir = output.parent().unwrap_or(Path::new(""));
    let mut files = Vec::new();
    let mut bytes = Vec::new();
    for (path, b) in w.files {
        if path == output {
            bytes = b;
        } else {
            files.push((path.strip_prefix(dir).unwrap_or(&path).to_path_buf(), b));
        }
    }
    Converted {
        bytes,
        files,
        warnings: w.warnings,
        what: String::new(),
    }
}

/// The way back from a neutral scene (built in code, or from arrays): the bytes of the file
/// `output` names, as [`Opened::write_as`] gives them (`.glb`, `.gltf`, `.obj`, the game
/// formats that are written from a scene, `.xml` for a whole component). Nothing is written;
/// textures named by the scene are looked for around `output`.
///
/// ```
/// let (scene, _) = hangar::open("../samples/wedge-lod0.xmf")?.to_scene()?;
/// let glb = hangar::write_scene(&scene, "wedge.glb", &hangar::ConvertOptions::default())?;
/// assert_eq!(&glb.bytes[..4], b"glTF");
/// let back = hangar::open(hangar::Source::bytes("wedge.glb", glb.bytes))?;
/// assert_eq!(back.info().vertices, 32);
/// # Ok::<(), hangar::Error>(())
/// ```
pub fn write_scene(
    scene: &Scene,
    output: impl AsRef<Path>,
    options: &ConvertOptions,
) -> Result<Converted> {
    let output = output.as_ref();
    if crate::io::has_ext(output, "xml") {
        return crate::assemble::from_scene(scene, output, &options.textures.views)
            .map(|w| relative(w, output));
    }
    any::convert_scene(scene, output, options)
}

/// Everything a conversion can be told (see [`Opened::write_as`]).
pub use crate::any::ConvertOptions;

impl std::fmt::Debug for Opened {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Opened")
            .field("name", &self.name)
            .field("format", &self.format())
            .finish()
    }
}

impl ConvertOptions {
    /// Options for converting `input` with textures looked up first in `views` (`--textures-from`,
    /// `--game`), then, for a `GAME::path` input, in that game.
    pub fn for_input(input: &Path, mut views: Vec<GameView>) -> Result<ConvertOptions> {
        if let Some(game) = GameView::of_spec(input) {
            views.push(game?);
        }
        let mut options = ConvertOptions::default();
        options.textures.views = views;
        Ok(options)
    }
}
