//! The registry: the table of formats hangar reads (each a [`FileFormat`] of [`crate::document`]),
//! above them all. It recognises a file by asking each format in turn, opens it, and converts an
//! opened document to whatever output is named; it knows no format itself.

use crate::detect::Format;
use crate::document::{dump_error, DUMP_VERSION};
pub use crate::document::{Document, FileFormat, Info, Opened, WriteOptions};
use crate::error::{Error, ErrorKind, Result, Warning};
use crate::io::Pieces;
use crate::model::Scene;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::path::{Path, PathBuf};

impl Opened<'_> {
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
    &crate::formats::mpq::document::ArchiveFormat,
    &DumpFormat,
];

/// Detects the format of `bytes`: each registered format looks at the leading bytes; `path` (its
/// extension) decides only between formats without a magic.
pub fn detect(bytes: &[u8], path: Option<&Path>) -> Format {
    let ext = path
        .and_then(|p| p.extension())
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    FORMATS
        .iter()
        .find_map(|f| f.detect(bytes, &ext))
        .or_else(|| crate::detect::recognised_only(bytes, &ext))
        .unwrap_or(Format::Unknown)
}

/// The registered format that opens `format`.
fn entry(format: Format) -> Option<&'static dyn FileFormat> {
    FORMATS
        .iter()
        .copied()
        .find(|f| f.formats().contains(&format))
}

fn stem(path: &Path) -> String {
    stem_or(path, "model")
}

/// The file stem of `path`, or `default` when it has none. A file at the top of a view is named
/// `GAME::file.ext`: the game is no part of its name.
pub(crate) fn stem_or(path: &Path, default: &str) -> String {
    let stem = path
        .file_stem()
        .map_or_else(|| default.to_string(), |s| s.to_string_lossy().into_owned());
    match stem.rsplit_once("::") {
        Some((_, s)) if !s.is_empty() => s.to_string(),
        _ => stem,
    }
}

/// Opens `bytes` read from `path` (the path names the file in errors and hints the format).
pub fn open<'a>(bytes: &'a [u8], path: &Path) -> Result<Opened<'a>> {
    open_inner(bytes, path).map_err(|e| e.in_file(path))
}

fn open_inner<'a>(bytes: &'a [u8], path: &Path) -> Result<Opened<'a>> {
    let format = detect(bytes, Some(path));
    if let Some(f) = entry(format) {
        return f.open(format, bytes, path);
    }
    match format {
        Format::Unknown if bytes.is_empty() => Err(Error::new(
            ErrorKind::Truncated,
            Some(0),
            "magic",
            "the file is empty (0 bytes)",
        )),
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

/// Whether a file of `format` is a model that an `.xml` output writes as a whole component (for
/// an Anark .bgf, `.xml` is its presentation XML instead).
pub(crate) fn writes_component(format: Format) -> bool {
    matches!(
        format,
        Format::Xmf
            | Format::Xac
            | Format::M3Md34
            | Format::M3Md33
            | Format::Glb
            | Format::GltfText
            | Format::ComponentXml
    )
}

/// What a file of `format` converts to: a neutral scene's forms (not for pictures), a whole
/// component for a model (`.xml`), then the extensions its own format writes.
pub(crate) fn outputs_of(format: Format) -> Vec<&'static str> {
    // Pictures and archives make no scene.
    let picture = matches!(
        format,
        Format::Dds | Format::Png | Format::Tga | Format::Mpq
    );
    let mut out: Vec<&'static str> = if picture {
        Vec::new()
    } else {
        SCENE_OUTPUTS.to_vec()
    };
    if writes_component(format) {
        out.push("xml");
    }
    for e in entry(format).map_or(&[][..], |f| f.extensions()) {
        if !out.contains(e) {
            out.push(e);
        }
    }
    out
}

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

/// Everything a conversion can be told: where a model's textures are found and how they travel,
/// how a glTF output is encoded, and how a file built from a scene is written.
#[derive(Default)]
pub struct ConvertOptions {
    pub textures: crate::textures::Options,
    pub gltf: crate::gltf::export::Options,
    pub write: WriteOptions,
    /// The game file a glTF came from (`--original`): what a tool's glTF lost on the way (the
    /// component's XML, part roles, connection names, untouched meshes' bytes, the .ani) is taken
    /// from it (`hangar convert edited.glb ship.xml --original game/ship.xml`).
    pub original: Option<std::path::PathBuf>,
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
    /// What was made beyond its size, for messages (`512x512, BC7, 10 mip levels`); often empty.
    pub what: String,
}

impl Converted {
    /// Writes `output` and its files as one output (each to a temporary file, renamed when all
    /// are written): all of them or none, the output itself last.
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
            what: String::new(),
        }
    }

    fn write(self, output: &Path) -> Result<Wrote> {
        write_with_files(output, &self.body, &self.files)?;
        Ok(Wrote {
            bytes: self.body.len(),
            files: self.files.len(),
            warnings: self.warnings,
            what: String::new(),
        })
    }
}

/// What [`crate::Opened::write_to`] wrote: the output's size, how many files went beside it,
/// and what was noticed on the way.
#[derive(Debug, Default)]
pub struct Wrote {
    pub bytes: usize,
    pub files: usize,
    pub warnings: Vec<Warning>,
    /// What was made beyond its size, for messages (`512x512, BC7, 10 mip levels`); often empty.
    pub what: String,
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
    let (mut scene, warnings) = scene_of(opened, input, &stem(input), motions)?;
    let back = textures_back(opened, &mut scene, input, output, opts)?;
    scene_made(
        Cow::Owned(scene),
        warnings,
        input,
        output,
        opts,
        opened.format.name(),
        |mut made| {
            if let Some((files, warnings)) = back {
                made.files.extend(files);
                made.warnings.extend(warnings);
            }
            then(made)
        },
    )
}

/// The scene of `opened` (read from `input`) with `motions`; a glTF's part sources, which it
/// carries relative to itself, are found again from where it lies (see `assemble::sources`).
pub(crate) fn scene_of(
    opened: &Opened<'_>,
    input: &Path,
    stem: &str,
    motions: &[(String, &Opened<'_>)],
) -> Result<(Scene, Vec<Warning>)> {
    let (mut scene, warnings) = opened.document.to_scene(stem, motions)?;
    if matches!(opened.format, Format::Glb | Format::GltfText)
        && crate::assemble::sources::any(&scene)
    {
        if let Some(dir) = crate::io::folder_of(input) {
            crate::assemble::sources::resolved_from(&mut scene, &dir);
        }
    }
    Ok((scene, warnings))
}

/// Writes a neutral scene built elsewhere (arrays from Python, a scene made in code) as the file
/// `output` names; textures are looked for around `output`.
pub(crate) fn convert_scene(
    scene: &Scene,
    output: &Path,
    opts: &ConvertOptions,
) -> Result<Converted> {
    check_output(output)?;
    if ext_of(output) == "json" {
        return Err(
            Error::unsupported("a dump is written from a file, not from a scene").in_file(output),
        );
    }
    scene_made(
        Cow::Borrowed(scene),
        Vec::new(),
        output,
        output,
        opts,
        "a scene",
        |m| Ok(m.converted()),
    )
    .map_err(|e| e.in_file(output))
}

/// The output of a scene (`input` names where it came from): a format that writes scenes, or a
/// glTF or OBJ with its textures. `from` names the input's format in messages.
fn scene_made<T>(
    mut scene: Cow<'_, Scene>,
    mut warnings: Vec<Warning>,
    input: &Path,
    output: &Path,
    opts: &ConvertOptions,
    from: &str,
    then: impl FnOnce(Made<'_>) -> Result<T>,
) -> Result<T> {
    if let Some(f) = FORMATS.iter().find(|f| f.writes_scene(output)) {
        let (bytes, w) = f.write_scene(&scene, output, &opts.write)?;
        warnings.extend(w);
        return then(Made {
            body: bytes.into(),
            files: Vec::new(),
            warnings,
        });
    }
    let (mut placement, w) = textured_scene(scene.to_mut(), input, output, &opts.textures);
    warnings.extend(w);
    if matches!(ext_of(output).as_str(), "glb" | "gltf") && crate::assemble::sources::any(&scene) {
        if let Some(dir) = crate::io::folder_of(output) {
            crate::assemble::sources::relative_to(scene.to_mut(), &dir);
        }
    }
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
            "{} is not written from {from}: use one of {}",
            output
                .extension()
                .map_or("this file".into(), |e| format!(".{}", e.to_string_lossy())),
            outputs()
        ))),
    }
}

/// The texture files `--textures write` adds to an output (relative to its folder), and the
/// warnings of making them.
pub(crate) type TexturesBack = (Vec<(PathBuf, Vec<u8>)>, Vec<Warning>);

/// With `--textures write`, a glTF `opened` (read from `input`) and a game model `output`: the
/// files that write the glTF's changed and new images back as the game reads them beside
/// `output` (originals looked for around `input` and in the user's views), with the warnings of
/// reading them; none otherwise. A new material in `scene` takes the name its X4 library entry
/// gets.
pub(crate) fn textures_back(
    opened: &Opened<'_>,
    scene: &mut Scene,
    input: &Path,
    output: &Path,
    opts: &ConvertOptions,
) -> Result<Option<TexturesBack>> {
    // A game model: a format written from a scene, or a whole X4 component.
    let game_model = FORMATS.iter().any(|f| f.writes_scene(output)) || ext_of(output) == "xml";
    let bytes = opened.document.source();
    let (Some(bytes), true, crate::textures::Mode::Write) = (bytes, game_model, opts.textures.mode)
    else {
        return Ok(None);
    };
    let (mut edits, mut warnings) = crate::gltf::import::images(bytes, input.parent())?;
    // A material new in the glTF is named in the model as its library entry will be.
    for e in edits.iter_mut().filter(|e| e.key.is_empty()) {
        if let Some(name) = crate::textures::x4_material_name(output, &e.material) {
            for m in scene.materials.iter_mut().filter(|m| m.name == e.material) {
                m.name.clone_from(&name);
            }
            e.material = name;
        }
    }
    let (files, w) = crate::textures::texture_files(input, &opts.textures.views, output, &edits)?;
    warnings.extend(w);
    Ok(Some((
        files.into_iter().map(|(f, b, _)| (f, b)).collect(),
        warnings,
    )))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_at_the_top_of_a_view_is_named_without_the_view() {
        assert_eq!(stem(Path::new("files::ship-lod0.xmf")), "ship-lod0");
        assert_eq!(stem(Path::new("X4::assets/units/ship.xml")), "ship");
        assert_eq!(stem(Path::new("dir/plain.m3")), "plain");
    }

    #[test]
    fn magic_wins_over_extension() {
        assert_eq!(
            detect(b"XUMF\x03\x00\x40\x00", Some(Path::new("a.m3"))),
            Format::Xmf
        );
        assert_eq!(
            detect(b"43DM\x00\x00\x00\x00", Some(Path::new("a.xmf"))),
            Format::M3Md34
        );
        assert_eq!(detect(b"XAC \x01\x00\x00\x00", None), Format::Xac);
        assert_eq!(
            detect(b"\x00\x04\x1a\x00\x00\x00AnarkBGF", None),
            Format::AnarkBgf
        );
        assert_eq!(detect(b"glTF\x02\x00\x00\x00", None), Format::Glb);
        assert_eq!(detect(b"hello", Some(Path::new("a.xmf"))), Format::Unknown);
    }

    #[test]
    fn ani_is_recognised_by_its_header() {
        let mut b = vec![0u8; 16];
        b[4..8].copy_from_slice(&16i32.to_le_bytes());
        b[8..12].copy_from_slice(&1i32.to_le_bytes());
        assert_eq!(detect(&b, Some(Path::new("x_data.ANI"))), Format::Ani);
    }

    #[test]
    fn json_is_a_dump_or_gltf() {
        assert_eq!(
            detect(b" {\"hangar_dump\": 1, \"format\": \"xmf\"}", None),
            Format::HangarJson
        );
        assert_eq!(
            detect(b"{\"asset\": {\"version\": \"2.0\"}}", None),
            Format::GltfText
        );
    }

    #[test]
    fn textures_by_magic_and_tga_and_gz_by_name() {
        assert_eq!(detect(b"DDS |\x00\x00\x00", None), Format::Dds);
        assert_eq!(
            detect(b"\x89PNG\r\n\x1a\n", Some(Path::new("a.dds"))),
            Format::Png
        );
        assert_eq!(
            detect(b"\x1f\x8b\x08\x00", Some(Path::new("a.GZ"))),
            Format::Dds
        );
        assert_eq!(
            detect(b"\x1f\x8b\x08\x00", Some(Path::new("a.bin"))),
            Format::Unknown
        );
        assert_eq!(
            detect(b"\x00\x00\x02\x00", Some(Path::new("a.tga"))),
            Format::Tga
        );
        assert!(!Format::Dds.supported() && !Format::Png.supported() && !Format::Tga.supported());
    }

    /// The dump written straight from the file (no second JSON tree, for memory) is the same text as
    /// the dump built as a JSON tree, for every corpus file, and reads back into the same bytes.
    #[test]
    fn an_emfx_streamed_dump_is_the_tree_dump() {
        let (Some(mut files), Some(xsm)) = (
            crate::test_corpus::corpus("emfx", "xac"),
            crate::test_corpus::corpus("emfx", "xsm"),
        ) else {
            return;
        };
        files.extend(xsm);
        for f in files {
            let bytes = std::fs::read(&f).unwrap();
            let opened = open(&bytes, &f).unwrap();
            let text = opened.dump().unwrap();
            let mut tree = opened.document.dump().unwrap();
            let tree = tree.as_object_mut().unwrap();
            let head: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(head["format"], "emfx");
            tree.insert("format".into(), head["format"].clone());
            tree.insert("hangar_dump".into(), 1.into());
            assert_eq!(
                text,
                serde_json::to_string_pretty(&tree).unwrap(),
                "{}",
                f.display()
            );
        }
    }
}
