//! Every call into the hangar library, in one place (the library's facade will replace these
//! calls; nothing else in this crate names a library module that reads or writes a format).

use hangar::any::{ConvertOptions, Info, Opened};
use hangar::model::Scene;
use hangar::validate::Finding;
use hangar::{Result, Warning};
use std::path::{Path, PathBuf};

/// `hangar info`: the numbers of the file `path` names (a file, or `GAME::path`).
pub fn info(path: &Path) -> Result<Info> {
    let bytes = hangar::vfs::read_arg(path)?;
    let info = hangar::any::open(&bytes, path)?.info();
    Ok(info)
}

/// `hangar validate`: the reader's warnings and the document's findings; an unreadable file is one
/// finding, as the CLI reports it.
pub fn validate(path: &Path) -> Vec<Finding> {
    match hangar::vfs::read_arg(path).and_then(|b| Ok(hangar::any::open(&b, path)?.validate())) {
        Ok(v) => v,
        Err(e) => vec![e.into()],
    }
}

/// The neutral scene of `path` (named after the file) with the clips of `motions` (an M3's .m3a,
/// an actor's .xsm / .xpm), and the readers' warnings.
pub fn scene(path: &Path, motions: &[PathBuf]) -> Result<(Scene, Vec<Warning>)> {
    let bytes = hangar::vfs::read_arg(path)?;
    let opened = hangar::any::open(&bytes, path)?;
    let name = path
        .file_stem()
        .map_or("model".into(), |s| s.to_string_lossy().into_owned());
    let motion_bytes = read_all(motions)?;
    let motion_files = open_all(motions, &motion_bytes)?;
    let labels = labels(motions, &motion_files);
    let (scene, mut w) = opened
        .document
        .to_scene(&name, &labels)
        .map_err(|e| e.in_file(path))?;
    w.splice(0..0, opened.warnings);
    for o in &motion_files {
        w.extend(o.warnings.iter().cloned());
    }
    Ok((scene, w))
}

/// The bytes of each motion file (a file or `GAME::path`).
fn read_all(motions: &[PathBuf]) -> Result<Vec<hangar::io::Input>> {
    motions.iter().map(|m| hangar::vfs::read_arg(m)).collect()
}

/// Each motion file opened from its bytes.
fn open_all<'a>(motions: &[PathBuf], bytes: &'a [hangar::io::Input]) -> Result<Vec<Opened<'a>>> {
    motions
        .iter()
        .zip(bytes)
        .map(|(m, b)| hangar::any::open(b, m))
        .collect()
}

/// Each motion file named by its stem, as the CLI's `--motion` labels them.
fn labels<'o, 'a>(motions: &[PathBuf], opened: &'o [Opened<'a>]) -> Vec<(String, &'o Opened<'a>)> {
    motions
        .iter()
        .zip(opened)
        .map(|(m, o)| {
            let stem = m
                .file_stem()
                .map_or("motion".into(), |s| s.to_string_lossy().into_owned());
            (stem, o)
        })
        .collect()
}

/// `hangar convert INPUT OUTPUT`, written; returns the warnings.
pub fn convert(
    input: &Path,
    output: &Path,
    motions: &[PathBuf],
    opts: &ConvertOptions,
) -> Result<Vec<Warning>> {
    if motions.is_empty() && hangar::any::writes_component(input, output) {
        let written = hangar::any::gltf_to_component(input, output)?;
        let files = hangar::original::Files {
            files: written.files,
            warnings: written.warnings,
        };
        files.write()?;
        return Ok(files.warnings);
    }
    if input.is_dir() {
        let c = hangar::any::convert_component(input, output, opts)?;
        c.write(output)?;
        return Ok(c.warnings);
    }
    let bytes = hangar::vfs::read_arg(input)?;
    let opened = hangar::any::open(&bytes, input)?;
    let motion_bytes = read_all(motions)?;
    let motion_files = open_all(motions, &motion_bytes)?;
    let labels = labels(motions, &motion_files);
    let wrote = hangar::any::convert_and_write(&opened, input, output, &labels, opts)?;
    let mut w = opened.warnings.clone();
    w.extend(wrote.warnings);
    Ok(w)
}

/// Texture options as the CLI builds them: `GAME::` inputs look their textures up in the game.
pub fn texture_options(
    input: &Path,
    mode: hangar::textures::Mode,
) -> Result<hangar::textures::Options> {
    let mut views = Vec::new();
    if let Some((game, _)) = input.to_str().and_then(hangar::vfs::split_spec) {
        views.push(hangar::vfs::GameView::open(&game)?);
    }
    Ok(hangar::textures::Options {
        views,
        mode,
        ..Default::default()
    })
}

/// Writes `scene` as `output` (and, for a component, its data folder and .ani; `original` is the
/// file the scene was read from); returns the warnings.
pub fn write(scene: &Scene, output: &Path, original: Option<&Path>) -> Result<Vec<Warning>> {
    let files = hangar::original::from_scene(scene, output, original)?;
    files.write()?;
    Ok(files.warnings)
}
