//! Every call this crate makes into the hangar library, in one place, so that they can move to the
//! library's one front door (`hangar::open`) without touching the page's plumbing. Nothing here
//! knows a format: the library decides.

use hangar::any::{ConvertOptions, Converted, Opened};
use hangar::detect::Format;
use hangar::error::Result;
use hangar::textures::Picture;
use hangar::validate::Finding;
use hangar::vfs::GameView;
use std::path::Path;
use std::sync::Arc;

/// What a file is, by its bytes (its name only decides between formats without a magic).
pub fn detect(bytes: &[u8], name: &str) -> Format {
    hangar::any::detect(bytes, Some(Path::new(name)))
}

/// Opens `bytes` read from `name` (as `hangar info FILE` does).
pub fn open<'a>(bytes: &'a [u8], name: &str) -> Result<Opened<'a>> {
    hangar::any::open(bytes, Path::new(name))
}

/// A component XML at game path `xml` in `view`: its parts, data folder and .ani are read there,
/// as `hangar convert GAME::path` reads them.
pub fn open_component(view: Arc<GameView>, xml: &str, label: &str) -> Opened<'static> {
    hangar::assemble::document::open_in_view(view, xml, Path::new(label))
}

/// `hangar info --json`.
pub fn info_json(opened: &Opened<'_>) -> serde_json::Value {
    serde_json::to_value(opened.info()).unwrap_or_default()
}

/// `hangar validate --json`'s findings.
pub fn validate(opened: &Opened<'_>) -> Vec<Finding> {
    opened.validate()
}

/// An error as a finding, as `hangar validate` reports a file it cannot open.
pub fn error_finding(e: hangar::Error) -> Finding {
    e.into()
}

/// True when a finding fails the file (`hangar validate` exits 1).
pub fn fails(f: &Finding) -> bool {
    f.severity == hangar::validate::Severity::Error
}

/// How a glTF output is encoded and where textures are looked for.
pub fn options(views: Vec<GameView>, quantize: bool, compress: bool) -> ConvertOptions {
    let mut o = ConvertOptions::default();
    o.textures.views = views;
    o.gltf.quantize = quantize;
    o.gltf.compress = compress;
    o
}

/// `hangar convert INPUT --motion M... OUTPUT`, the output's bytes made in memory (its extension
/// picks what is written).
pub fn convert(
    opened: &Opened<'_>,
    input: &str,
    output: &str,
    motions: &[(String, &Opened<'_>)],
    opts: &ConvertOptions,
) -> Result<Converted> {
    hangar::any::convert_textured(opened, Path::new(input), Path::new(output), motions, opts)
}

/// A texture (DDS, X4's .gz, TGA, PNG) as a PNG, as `hangar convert tex.dds tex.png` makes it;
/// `None` when `output` names no picture.
pub fn texture(
    bytes: &[u8],
    input: &str,
    output: &str,
    opts: &ConvertOptions,
) -> Option<Result<Picture>> {
    hangar::textures::convert_texture(bytes, Path::new(input), Path::new(output), &opts.textures)
}

/// The formats a document of `format` writes itself beside glTF, for download buttons.
pub fn own_outputs(format: Format) -> Vec<&'static str> {
    hangar::any::formats()
        .iter()
        .filter(|f| f.formats().contains(&format))
        .flat_map(|f| f.extensions().iter().copied())
        .collect()
}
