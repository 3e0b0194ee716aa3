//! Every call into the hangar library, in one place: the library's door (`hangar::open`,
//! `hangar::convert`, `hangar::write_scene_to`). Nothing in this crate knows a format.

use hangar::model::Scene;
use hangar::{ConvertOptions, Finding, Info, Outcome, Pictures, Result, Warning};
use std::path::{Path, PathBuf};

/// `hangar info`: the numbers of the file `path` names (a file, or `GAME::path`).
pub fn info(path: &Path) -> Result<Info> {
    Ok(hangar::open(path)?.info())
}

/// `hangar validate`: the reader's warnings and the document's findings; an unreadable file is one
/// finding, as the CLI reports it.
pub fn validate(path: &Path) -> Vec<Finding> {
    match hangar::open(path) {
        Ok(o) => o.validate(),
        Err(e) => vec![e.into()],
    }
}

/// The neutral scene of `path` (named after the file) with the clips of `motions` (an M3's .m3a,
/// an actor's .xsm / .xpm), and the readers' warnings.
/// With `textures`, the materials' textures are found as a conversion finds them and their
/// pictures (PNG, by the path the materials name) come along.
pub fn scene(
    path: &Path,
    motions: &[PathBuf],
    textures: bool,
) -> Result<(Scene, Pictures, Vec<Warning>)> {
    let mut opened = hangar::open(path)?;
    let mut warnings = opened.warnings().to_vec();
    for m in motions {
        let motion = hangar::open(m.as_path())?;
        warnings.extend(motion.warnings().iter().cloned());
        opened.add_motion(motion);
    }
    let (scene, pictures, w) = if textures {
        opened.textured(&ConvertOptions::for_input(path, Vec::new())?)?
    } else {
        let (scene, w) = opened.to_scene()?;
        (scene, Pictures::new(), w)
    };
    warnings.extend(w);
    Ok((scene, pictures, warnings))
}

/// The conversion options the keywords of `hangar.convert` give (`textures`: embed, copy, link or
/// none); a `GAME::path` input's game is searched for textures.
pub fn options(
    input: &Path,
    textures: hangar::TextureMode,
    quantize: bool,
    compress: bool,
    modl_version: Option<u32>,
) -> Result<ConvertOptions> {
    let mut o = ConvertOptions::for_input(input, Vec::new())?;
    o.textures.mode = textures;
    o.gltf.quantize = quantize;
    o.gltf.compress = compress;
    o.write.modl_version = modl_version;
    Ok(o)
}

/// `hangar convert INPUT OUTPUT` (a file, a component folder, a folder or `GAME::folder` as a
/// batch), written; returns the warnings.
pub fn convert(
    input: &Path,
    output: &Path,
    motions: &[PathBuf],
    opts: &ConvertOptions,
) -> Result<Vec<Warning>> {
    Ok(
        match hangar::convert(input, output, motions, "glb", opts, &|_| {})? {
            Outcome::File { warnings, .. } => warnings.into_iter().flat_map(|(_, w)| w).collect(),
            Outcome::Batch(report) => {
                if let Some(first) = report.failed.first() {
                    return Err(hangar::Error::new(
                        hangar::ErrorKind::Invalid,
                        None,
                        "",
                        format!(
                            "{} of {} files failed (see {}); the first: {}",
                            report.failed.len(),
                            report.models,
                            report.report.display(),
                            first.error
                        ),
                    ));
                }
                report
                    .warnings
                    .into_iter()
                    .map(|w| Warning::new(None, "", w))
                    .collect()
            }
        },
    )
}

/// Writes `scene` as `output` (and, for a component, its data folder and .ani; `original` is the
/// file the scene was read from); returns the warnings.
pub fn write(
    scene: &Scene,
    output: &Path,
    original: Option<&Path>,
    patch: bool,
) -> Result<Vec<Warning>> {
    Ok(hangar::write_scene_to_with(scene, output, original, patch)?.warnings)
}

/// Each mesh's edges (for an editor that stores them), the meshes side by side.
pub fn edges(scene: &Scene) -> Vec<hangar::model::Edges> {
    use rayon::prelude::*;
    scene.meshes.par_iter().map(|m| m.edges()).collect()
}

/// A fingerprint of byte buffers: each one's Adler-32 (as zlib computes it) and length,
/// `xxxxxxxx:len` joined by `/`. One after the other: a mesh's few megabytes take well under a
/// millisecond, while waking rayon's threads on a busy machine took 4 ms a call (45 calls in a
/// dropship import inside Blender, 196 ms in all at load 7 on 2 cores).
pub fn digest(buffers: &[&[u8]]) -> String {
    let parts: Vec<String> = buffers
        .iter()
        .map(|b| format!("{:08x}:{}", libdeflater::adler32(b), b.len()))
        .collect();
    parts.join("/")
}

/// The files hangar shows that a game or mod folder (or one `.cat`) holds, as `GAME::path` names
/// them: its catalogs' indexes are read, no entry.
pub fn models(game: &Path) -> Result<Vec<String>> {
    let view = hangar::GameView::open(game)?;
    let all = view.files("")?;
    Ok(hangar::GameView::models(&all)
        .into_iter()
        .cloned()
        .collect())
}

/// The component XML of a data folder (`ship_data/` -> `ship.xml` beside it).
pub fn component_of(folder: &Path) -> Option<PathBuf> {
    hangar::component_of(folder)
}

/// What `hangar.new_ship` and `hangar.new_component` ask for, as `hangar new ship|component` take it.
pub struct NewShipArgs {
    pub directory: PathBuf,
    pub spec: hangar::NewComponent,
    pub game: Option<PathBuf>,
    pub force: bool,
    /// `new ship`: the template must be a ship's.
    pub ship_only: bool,
}

/// `hangar new ship|component`: the extension made from `scene` (or the glTF `path` names) and written whole
/// under `directory` (its name is the extension's id). The work runs on a thread of its own while
/// the calling thread hands `progress(done, total)` on, so a caller whose interface lives on one
/// thread (Blender) can show it; after an error `progress` returns, nothing is written.
/// Returns the paths written and the warnings.
pub fn new_ship<E>(
    scene: Option<Scene>,
    path: Option<&Path>,
    mut args: NewShipArgs,
    progress: &mut dyn FnMut(usize, usize) -> std::result::Result<(), E>,
) -> std::result::Result<(Vec<PathBuf>, Vec<Warning>), NewShipError<E>> {
    let (scene, mut warnings) = match (scene, path) {
        (Some(s), _) => (s, Vec::new()),
        (None, Some(p)) => {
            let opened = hangar::open(p)?;
            let (scene, mut warnings) = opened.to_scene()?;
            if args.spec.textures && args.spec.images.is_empty() {
                let (images, w) = opened.images()?;
                args.spec.images = images;
                warnings.extend(w);
            }
            (scene, warnings)
        }
        (None, None) => return Err(hangar::Error::refused("scene", "no scene given").into()),
    };
    let folder = args
        .directory
        .file_name()
        .map(|n| n.to_string_lossy().into_owned());
    args.spec.folder = args.spec.folder.or(folder);
    let view = args
        .game
        .as_deref()
        .map(hangar::GameView::open)
        .transpose()?;
    let (tx, rx) = std::sync::mpsc::channel::<(usize, usize)>();
    let (made, stopped) = std::thread::scope(|s| {
        let worker = s.spawn(move || {
            let report = |done, total| {
                let _ = tx.send((done, total));
            };
            if args.ship_only {
                hangar::new_ship_with_progress(&scene, &args.spec, view.as_ref(), &report)
            } else {
                hangar::new_component_with_progress(&scene, &args.spec, view.as_ref(), &report)
            }
        });
        let mut stopped = None;
        for (done, total) in rx {
            if stopped.is_none() {
                stopped = progress(done, total).err();
            }
        }
        (worker.join(), stopped)
    });
    if let Some(e) = stopped {
        return Err(NewShipError::Stopped(e));
    }
    let ext = made.map_err(|_| {
        hangar::Error::new(
            hangar::ErrorKind::Invalid,
            None,
            "",
            "new content: the work stopped",
        )
    })??;
    warnings.extend(ext.warnings.iter().cloned());
    let written = ext.write_to(&args.directory, args.force)?;
    Ok((written, warnings))
}

/// Why [`new_ship`] failed: the library's error, or the one the progress callback gave.
pub enum NewShipError<E> {
    Hangar(hangar::Error),
    Stopped(E),
}

impl<E> From<hangar::Error> for NewShipError<E> {
    fn from(e: hangar::Error) -> Self {
        NewShipError::Hangar(e)
    }
}
