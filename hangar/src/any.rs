//! The format-neutral front door: a registry of the formats hangar reads. Each format gives one
//! [`FileFormat`] (recognise, open, turn a dump back into a file, write from a neutral scene) and
//! one [`Document`] (describe, dump, check, make a scene, write itself); nothing here knows a format.
//! The CLI calls only this.

use crate::detect::Format;
use crate::error::{Error, ErrorKind, Result, Warning};
use crate::io::Pieces;
use crate::model::Scene;
use crate::validate::Finding;
use serde::Serialize;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// One format hangar reads.
pub trait FileFormat: Sync {
    /// The formats this entry opens.
    fn formats(&self) -> &'static [Format];

    /// The format of `bytes`, when they are this format's (by their leading bytes; `ext`, lower
    /// case without the dot, decides only where a format has no magic).
    fn detect(&self, bytes: &[u8], ext: &str) -> Option<Format>;

    /// Opens `bytes`, detected as `format`, read from `path`.
    fn open<'a>(&self, format: Format, bytes: &'a [u8], path: &Path) -> Result<Opened<'a>>;

    /// The `format` name a `hangar dump` of this format carries, if it has a dump.
    fn dump_name(&self) -> Option<&'static str> {
        None
    }

    /// The document an edited dump describes (the dump's fields, without `hangar_dump`).
    fn open_dump(&self, _body: Value, _path: &Path) -> Result<Opened<'static>> {
        Err(Error::unsupported("this format has no dump"))
    }

    /// The extensions its documents write themselves (see [`Document::write`]), for messages and
    /// for checking an output name before any work.
    fn extensions(&self) -> &'static [&'static str] {
        &[]
    }

    /// True when this format writes files named like `output` from a neutral scene.
    fn writes_scene(&self, _output: &Path) -> bool {
        false
    }

    /// The file `output` names, built from a neutral scene (see [`Self::writes_scene`]) as `opts`
    /// asks.
    fn write_scene(
        &self,
        _scene: &Scene,
        _output: &Path,
        _opts: &WriteOptions,
    ) -> Result<(Vec<u8>, Vec<Warning>)> {
        Err(Error::unsupported(
            "this format is not written from a scene",
        ))
    }
}

/// An opened file of some format.
pub trait Document {
    /// The numbers `hangar info` shows (format name and warnings are added by [`Opened::info`]).
    fn info(&self) -> Info;

    /// Every field as JSON; [`FileFormat::open_dump`] of it writes the same bytes again.
    fn dump(&self) -> Result<Value> {
        Err(Error::unsupported("this file has no dump"))
    }

    /// The dump as text with its header keys (`format`, `hangar_dump`), when the document writes
    /// it without building [`Self::dump`]'s JSON tree first (large files: half the memory).
    fn dump_text(&self, _format: &str, _version: u32) -> Option<Result<String>> {
        None
    }

    /// What `hangar validate` reports beyond the reader's warnings.
    fn validate(&self) -> Vec<Finding>;

    /// The document as a neutral scene named `name`, with the clips of `motions` (label, file).
    fn to_scene(
        &self,
        name: &str,
        motions: &[(String, &Opened<'_>)],
    ) -> Result<(Scene, Vec<Warning>)>;

    /// The bytes of `output` when it names a form this document writes itself: its own format
    /// (a byte-exact rewrite) or another form of its own (a readable text, a picture). `None` when
    /// the output is not one of them: then it is made from the neutral scene.
    fn write(&self, _output: &Path) -> Option<Result<(Vec<u8>, Vec<Warning>)>> {
        None
    }

    /// The names that tie a motion to its actor: for an actor the node and morph target names it
    /// offers, for a motion the names it drives. Empty for other files.
    fn binding_names(&self) -> Vec<String> {
        Vec::new()
    }

    /// The file as an animation source for another model's `--motion`.
    fn motion(&self) -> Option<Motion<'_>> {
        None
    }
}

/// Files whose clips can be added to another model (`--motion`).
pub enum Motion<'s> {
    M3(&'s crate::formats::m3::M3<'s>),
    Emfx(&'s crate::formats::emfx::File),
}

/// An opened file: its format, the document and what the reader noticed on the way.
pub struct Opened<'a> {
    pub format: Format,
    pub document: Box<dyn Document + 'a>,
    pub warnings: Vec<Warning>,
}

impl<'a> Opened<'a> {
    pub fn new(format: Format, document: impl Document + 'a, warnings: Vec<Warning>) -> Self {
        Opened {
            format,
            document: Box::new(document),
            warnings,
        }
    }

    /// `hangar info`: the document's numbers, its format's name and the reader's warnings.
    pub fn info(&self) -> Info {
        let mut info = self.document.info();
        if info.format.is_empty() {
            info.format = self.format.name().to_string();
        }
        info.warnings = self.warnings.clone();
        info
    }

    /// `hangar dump`: `{"hangar_dump": 1, "format": ..., fields...}`.
    pub fn dump(&self) -> Result<String> {
        let name = entry(self.format)
            .and_then(|e| e.dump_name())
            .ok_or_else(|| Error::unsupported(format!("{} has no dump", self.format.name())))?;
        if let Some(text) = self.document.dump_text(name, DUMP_VERSION) {
            return text;
        }
        let body = self.document.dump()?;
        let mut out = Map::new();
        out.insert("hangar_dump".into(), DUMP_VERSION.into());
        out.insert("format".into(), name.into());
        match body {
            Value::Object(fields) => out.extend(fields),
            other => {
                out.insert("fields".into(), other);
            }
        }
        serde_json::to_string_pretty(&Value::Object(out)).map_err(dump_error)
    }

    /// The reader's warnings and the document's findings.
    pub fn validate(&self) -> Vec<Finding> {
        let mut v: Vec<Finding> = self.warnings.iter().cloned().map(Into::into).collect();
        v.extend(self.document.validate());
        v
    }
}

/// `hangar info --json`: the numbers every format reports, then what is particular to the format.
#[derive(Debug, Default, Serialize)]
pub struct Info {
    pub format: String,
    pub vertices: u64,
    pub triangles: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bones: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sequences: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub animations: Option<u64>,
    /// Keys a format puts at the top level (tools depend on their names).
    #[serde(flatten)]
    pub top: Map<String, Value>,
    pub details: Value,
    pub warnings: Vec<Warning>,
}

const DUMP_VERSION: u32 = 1;

/// A dump that JSON could not hold (a document's [`Document::dump`] or [`Document::dump_text`]).
pub(crate) fn dump_error(e: serde_json::Error) -> Error {
    Error::new(ErrorKind::Invalid, None, "dump", e.to_string())
}

/// Every format hangar reads, in the order they are asked to recognise a file.
static FORMATS: &[&dyn FileFormat] = &[
    &crate::formats::xmf::document::XmfFormat,
    &crate::formats::m3::document::M3Format,
    &crate::formats::emfx::document::EmfxFormat,
    &crate::gltf::document::GltfFormat,
    &crate::formats::ani::document::AniFormat,
    &crate::formats::anark::document::AnarkFormat,
    &crate::assemble::document::ComponentFormat,
    &crate::formats::dds::document::TextureFormat,
    &DumpFormat,
];

/// The registered formats, in the order they are asked to recognise a file.
pub fn formats() -> &'static [&'static dyn FileFormat] {
    FORMATS
}

/// The registered format that opens `format`.
fn entry(format: Format) -> Option<&'static dyn FileFormat> {
    FORMATS
        .iter()
        .copied()
        .find(|f| f.formats().contains(&format))
}

/// Refuses `--motion` for a document that has nothing to move.
pub fn no_motions(motions: &[(String, &Opened<'_>)]) -> Result<()> {
    match motions.first() {
        Some((label, _)) => Err(Error::unsupported(format!(
            "{label}: motions can be added to M3 models and XAC actors only"
        ))),
        None => Ok(()),
    }
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "model".into())
}

/// Opens `bytes` read from `path` (the path names the file in errors and hints the format).
pub fn open<'a>(bytes: &'a [u8], path: &Path) -> Result<Opened<'a>> {
    open_inner(bytes, path).map_err(|e| e.in_file(path))
}

fn open_inner<'a>(bytes: &'a [u8], path: &Path) -> Result<Opened<'a>> {
    let format = crate::detect::detect(bytes, Some(path));
    if let Some(f) = entry(format) {
        return f.open(format, bytes, path);
    }
    match format {
        Format::Unknown => Err(Error::new(
            ErrorKind::Unsupported,
            Some(0),
            "magic",
            format!(
                "unknown format (first bytes {:02x?})",
                bytes.get(..bytes.len().min(8)).unwrap_or_default()
            ),
        )),
        other => Err(Error::unsupported(format!(
            "{} is not supported yet",
            other.name()
        ))),
    }
}

fn ext_of(path: &Path) -> String {
    path.extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default()
}

/// `hangar dump` files: the dump names its format, whose entry turns it back into a document.
struct DumpFormat;

impl FileFormat for DumpFormat {
    fn formats(&self) -> &'static [Format] {
        &[Format::HangarJson]
    }

    /// Any JSON object that is not glTF (the glTF entry is asked first).
    fn detect(&self, bytes: &[u8], _ext: &str) -> Option<Format> {
        crate::detect::json_head(bytes).map(|_| Format::HangarJson)
    }

    fn open<'a>(&self, _format: Format, bytes: &'a [u8], path: &Path) -> Result<Opened<'a>> {
        let mut v: Value = serde_json::from_slice(bytes).map_err(|e| {
            Error::new(
                ErrorKind::Invalid,
                None,
                format!("json line {} column {}", e.line(), e.column()),
                format!("not a hangar dump: {e}"),
            )
        })?;
        let version = v.get("hangar_dump").and_then(Value::as_u64).unwrap_or(0);
        if version > u64::from(DUMP_VERSION) {
            return Err(Error::unsupported(format!(
                "dump version {version} is newer than this hangar ({DUMP_VERSION})"
            )));
        }
        let name = v
            .get("format")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if let Some(o) = v.as_object_mut() {
            o.remove("hangar_dump");
            o.remove("format");
        }
        let f = FORMATS
            .iter()
            .find(|f| f.dump_name() == Some(name.as_str()))
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::Invalid,
                    None,
                    "format",
                    format!("not a hangar dump: unknown format {name:?}"),
                )
            })?;
        f.open_dump(v, path)
    }
}

/// Writes a neutral scene as glTF (`.glb`, `.gltf`) or OBJ: the bytes (a .glb's borrowed from
/// `scene`) and the warnings.
fn scene_output<'s>(
    scene: &'s Scene,
    output: &Path,
    images: Option<&'s crate::textures::Placement>,
    gltf: crate::gltf::export::Options,
) -> Option<Result<(Pieces<'s>, Vec<Warning>)>> {
    let ext = ext_of(output);
    let bytes = match ext.as_str() {
        "obj" => return Some(Ok((crate::obj::to_obj(scene).into(), Vec::new()))),
        "glb" | "gltf" => (|| {
            let mut e = crate::gltf::export::to_gltf_with(scene, images, gltf)?;
            let warnings = std::mem::take(&mut e.warnings);
            let bytes = if ext == "glb" {
                e.into_glb_pieces()?
            } else {
                e.to_gltf_text()?.into()
            };
            Ok((bytes, warnings))
        })(),
        _ => return None,
    };
    Some(bytes)
}

/// What any document converts to: a neutral scene's forms and the dump.
const SCENE_OUTPUTS: &[&str] = &["glb", "gltf", "obj", "json"];

/// The extensions `hangar convert` writes, for messages.
fn outputs() -> String {
    let mut all: Vec<&str> = SCENE_OUTPUTS.to_vec();
    for f in FORMATS {
        all.extend(
            f.extensions()
                .iter()
                .filter(|e| !all.contains(e))
                .collect::<Vec<_>>(),
        );
    }
    all.iter()
        .map(|e| format!(".{e}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Checks that `output`'s extension names something hangar can write.
pub fn check_output(output: &Path) -> Result<()> {
    let ext = ext_of(output);
    let known = SCENE_OUTPUTS.contains(&ext.as_str())
        || FORMATS
            .iter()
            .any(|f| f.extensions().contains(&ext.as_str()) || f.writes_scene(output));
    if known {
        Ok(())
    } else {
        Err(Error::unsupported(format!(
            "cannot tell what to write from the extension {ext:?}: use one of {}",
            outputs()
        ))
        .in_file(output))
    }
}

/// Converts an opened document to the bytes of `output` (whose name picks the type). Nothing is
/// written here: the caller stores the bytes.
pub fn convert(
    opened: &Opened<'_>,
    input: &Path,
    output: &Path,
) -> Result<(Vec<u8>, Vec<Warning>)> {
    convert_with(opened, input, output, &[])
}

/// [`convert`] with animation files (`--motion`) whose clips are added to a glTF output.
pub fn convert_with(
    opened: &Opened<'_>,
    input: &Path,
    output: &Path,
    motions: &[(String, &Opened<'_>)],
) -> Result<(Vec<u8>, Vec<Warning>)> {
    convert_textured(opened, input, output, motions, &Default::default())
        .map(|c| (c.bytes, c.warnings))
}

/// Everything a conversion can be told: where a model's textures are found and how they travel,
/// how a glTF output is encoded, and how a file built from a scene is written.
#[derive(Default)]
pub struct ConvertOptions {
    pub textures: crate::textures::Options,
    pub gltf: crate::gltf::export::Options,
    pub write: WriteOptions,
}

/// How a file built from a neutral scene is written (`hangar convert --modl-version`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteOptions {
    /// The MODL version of an .m3 or .m3a output (`None`: the default, see
    /// [`crate::formats::m3::build::VERSIONS`]). An M3 input is then rebuilt from its scene
    /// instead of being rewritten byte for byte.
    pub modl_version: Option<u32>,
}

impl From<crate::textures::Options> for ConvertOptions {
    fn from(textures: crate::textures::Options) -> Self {
        ConvertOptions {
            textures,
            ..Default::default()
        }
    }
}

/// What a conversion writes: the output's bytes, the files that go with it (textures copied
/// beside a glTF; paths relative to the output's folder), and what was noticed on the way.
#[derive(Debug, Default)]
pub struct Converted {
    pub bytes: Vec<u8>,
    pub files: Vec<(PathBuf, Vec<u8>)>,
    pub warnings: Vec<Warning>,
}

impl Converted {
    /// Writes `output` and its files as one output (see [`crate::io::write_outputs`]): all of
    /// them or none, the output itself last.
    pub fn write(&self, output: &Path) -> Result<()> {
        write_with_files(output, &self.bytes[..].into(), &self.files)
    }
}

/// [`Converted`] as it is made, before its bytes are joined: the output as pieces borrowed from
/// the scene (see [`convert_and_write`]).
struct Made<'a> {
    body: Pieces<'a>,
    files: Vec<(PathBuf, Vec<u8>)>,
    warnings: Vec<Warning>,
}

impl Made<'_> {
    fn converted(self) -> Converted {
        Converted {
            bytes: self.body.to_vec(),
            files: self.files,
            warnings: self.warnings,
        }
    }

    fn write(self, output: &Path) -> Result<Wrote> {
        write_with_files(output, &self.body, &self.files)?;
        Ok(Wrote {
            bytes: self.body.len(),
            files: self.files.len(),
            warnings: self.warnings,
        })
    }
}

/// What [`convert_and_write`] wrote: the output's size, how many files went beside it, and what
/// was noticed on the way.
#[derive(Debug, Default)]
pub struct Wrote {
    pub bytes: usize,
    pub files: usize,
    pub warnings: Vec<Warning>,
}

/// Writes `output` and `files` (relative to its folder) as one output: all or none, `output` last.
fn write_with_files(output: &Path, body: &Pieces<'_>, files: &[(PathBuf, Vec<u8>)]) -> Result<()> {
    let dir = output.parent().unwrap_or(Path::new(""));
    let paths: Vec<PathBuf> = files.iter().map(|(p, _)| dir.join(p)).collect();
    let bodies: Vec<Pieces<'_>> = files.iter().map(|(_, b)| b[..].into()).collect();
    let mut all: Vec<(&Path, &Pieces<'_>)> =
        paths.iter().map(PathBuf::as_path).zip(&bodies).collect();
    all.push((output, body));
    crate::io::write_outputs(&all)
}

/// [`convert_with`] with options (textures: where to look, how the glTF carries them, PNG
/// compression; glTF encoding).
pub fn convert_textured(
    opened: &Opened<'_>,
    input: &Path,
    output: &Path,
    motions: &[(String, &Opened<'_>)],
    opts: &ConvertOptions,
) -> Result<Converted> {
    convert_inner(opened, input, output, motions, opts, |m| Ok(m.converted()))
        .map_err(naming(input, output))
}

/// [`convert_textured`], written to `output` (and the files that go with it) as it is made: a
/// .glb goes to disk straight from the scene's arrays, never assembled in memory.
pub fn convert_and_write(
    opened: &Opened<'_>,
    input: &Path,
    output: &Path,
    motions: &[(String, &Opened<'_>)],
    opts: &ConvertOptions,
) -> Result<Wrote> {
    convert_inner(opened, input, output, motions, opts, |m| m.write(output))
        .map_err(naming(input, output))
}

/// A conversion error named after the output; a refused output is the input's doing, so a
/// message without a file names both.
fn naming<'a>(input: &'a Path, output: &'a Path) -> impl FnOnce(Error) -> Error + 'a {
    move |mut e| {
        if e.file.is_none() {
            e.message = format!("{} (converting {})", e.message, input.display());
        }
        e.in_file(output)
    }
}

fn convert_inner<T>(
    opened: &Opened<'_>,
    input: &Path,
    output: &Path,
    motions: &[(String, &Opened<'_>)],
    opts: &ConvertOptions,
    then: impl FnOnce(Made<'_>) -> Result<T>,
) -> Result<T> {
    check_output(output)?;
    let ext = ext_of(output);
    if !motions.is_empty() && !matches!(ext.as_str(), "glb" | "gltf") {
        return Err(Error::unsupported(
            "--motion adds animations to a glTF output (.glb or .gltf) only",
        ));
    }
    if opts.write.modl_version.is_some() && !matches!(ext.as_str(), "m3" | "m3a") {
        return Err(Error::unsupported(
            "--modl-version applies to an M3 output (.m3 or .m3a) only",
        ));
    }
    let plain = |(bytes, warnings): (Vec<u8>, Vec<Warning>)| Made {
        body: bytes.into(),
        files: Vec::new(),
        warnings,
    };
    if ext == "json" {
        return then(plain((opened.dump()?.into_bytes(), Vec::new())));
    }
    if motions.is_empty() && opts.write == WriteOptions::default() {
        if let Some(r) = opened.document.write(output) {
            return then(plain(r?));
        }
    }
    let (mut scene, mut warnings) = opened.document.to_scene(&stem(input), motions)?;
    if let Some(f) = FORMATS.iter().find(|f| f.writes_scene(output)) {
        let (bytes, w) = f.write_scene(&scene, output, &opts.write)?;
        warnings.extend(w);
        return then(plain((bytes, warnings)));
    }
    let (mut placement, w) = textured_scene(&mut scene, input, output, &opts.textures);
    warnings.extend(w);
    let files = std::mem::take(&mut placement.files);
    match scene_output(&scene, output, Some(&placement), opts.gltf) {
        Some(r) => {
            let (body, w) = r?;
            warnings.extend(w);
            then(Made {
                body,
                files,
                warnings,
            })
        }
        None => Err(Error::unsupported(format!(
            "{} is not written from {}: use one of {}",
            output
                .extension()
                .map_or("this file".into(), |e| format!(".{}", e.to_string_lossy())),
            opened.format.name(),
            outputs()
        ))),
    }
}

/// Finds `scene`'s textures (`model` is where it was read from) and places them for a glTF written
/// to `output`. An OBJ output takes no images.
fn textured_scene(
    scene: &mut Scene,
    model: &Path,
    output: &Path,
    textures: &crate::textures::Options,
) -> (crate::textures::Placement, Vec<Warning>) {
    let (resolved, mut warnings) = crate::textures::resolve(scene, model, textures);
    let mode = if matches!(ext_of(output).as_str(), "glb" | "gltf") {
        textures.mode
    } else {
        crate::textures::Mode::Embed
    };
    let (placement, w) = crate::textures::place(resolved, mode, output);
    warnings.extend(w);
    (placement, warnings)
}

/// A component as one glTF file: its XML (see [`crate::assemble`]), a `_data` folder with the XML
/// beside it, or a bare folder of parts and their `_data.ani` (see [`crate::component`]).
pub fn convert_component(dir: &Path, output: &Path, opts: &ConvertOptions) -> Result<Converted> {
    let xml = if dir.is_file() {
        Some(dir.to_path_buf())
    } else {
        crate::assemble::xml_beside(dir)
    };
    let (mut scene, mut warnings) = match &xml {
        Some(xml) => crate::assemble::to_scene(xml)?,
        None => crate::component::to_scene(dir).map_err(|e| e.in_file(dir))?,
    };
    if scene.meshes.is_empty() && scene.animations.is_empty() {
        return Err(Error::new(
            ErrorKind::Invalid,
            None,
            "",
            "no model in this folder: a component folder holds PART-lodN.xmf files (or give its XML)",
        )
        .in_file(dir));
    }
    // Textures are looked for around the XML, or inside a bare folder.
    let model = xml.unwrap_or_else(|| dir.join("component"));
    let (mut placement, w) = textured_scene(&mut scene, &model, output, &opts.textures);
    warnings.extend(w);
    let files = std::mem::take(&mut placement.files);
    match scene_output(&scene, output, Some(&placement), opts.gltf) {
        Some(r) => {
            let (body, w) = r.map_err(|e| e.in_file(output))?;
            warnings.extend(w);
            Ok(Converted {
                bytes: body.to_vec(),
                files,
                warnings,
            })
        }
        None => {
            Err(Error::unsupported("a component converts to .glb, .gltf or .obj").in_file(output))
        }
    }
}

/// True when converting `input` to `output` writes a whole component (a glTF to an `.xml`).
pub fn writes_component(input: &Path, output: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 4096];
    let n = std::fs::File::open(input)
        .and_then(|mut f| f.read(&mut head))
        .unwrap_or(0);
    crate::io::has_ext(output, "xml")
        && matches!(
            crate::detect::detect(head.get(..n).unwrap_or_default(), Some(input)),
            Format::Glb | Format::GltfText
        )
}

/// A glTF back into a component: the XML at `output`, its data folder of XMFs and the .ani.
pub fn gltf_to_component(input: &Path, output: &Path) -> Result<crate::assemble::Written> {
    let bytes = crate::io::read_input(input)?;
    let imported = crate::gltf::from_slice(&bytes, input.parent()).map_err(|e| e.in_file(input))?;
    let mut w = crate::assemble::from_scene(&imported.scene, output)?;
    w.warnings.splice(0..0, imported.warnings);
    Ok(w)
}
