//! `hangar convert INPUT OUTPUT` as one decision, above the door's [`open`](crate::open) and the
//! batch: a file, a component folder, or a whole folder or game.

use crate::api::{open, ConvertOptions, WriteOptions, Wrote};
use crate::error::{Error, Result, Warning};
use crate::vfs::GameView;
use std::path::{Path, PathBuf};

/// What [`convert`] did: one output written, or a whole folder or game converted.
#[derive(Debug)]
pub enum Outcome {
    /// One output (and the files beside it), with what was noticed on the way: each input's
    /// warnings by its name (the model first, then its motions), then the conversion's.
    File {
        output: PathBuf,
        wrote: Wrote,
        warnings: Vec<(PathBuf, Vec<Warning>)>,
    },
    /// A batch (a folder, or `GAME::folder`): see [`crate::batch::Report`].
    Batch(crate::batch::Report),
}

/// `hangar convert INPUT OUTPUT`: the one decision of what a conversion is, for every face.
/// A file (or `GAME::file`) becomes `output` (`motions` added to it); a component folder becomes
/// one `.glb`/`.gltf`/`.obj`; any other folder, or `GAME::folder`, becomes a folder of `.{to}`
/// files (a batch, `progress` told after each file).
///
/// ```no_run
/// use hangar::{convert, ConvertOptions, Outcome};
/// match convert("ship.xml".as_ref(), "ship.glb".as_ref(), &[], "glb", &ConvertOptions::default(), &|_| {})? {
///     Outcome::File { wrote, .. } => println!("{} bytes", wrote.bytes),
///     Outcome::Batch(report) => println!("{} converted", report.converted),
/// }
/// # Ok::<(), hangar::Error>(())
/// ```
pub fn convert(
    input: &Path,
    output: &Path,
    motions: &[PathBuf],
    to: &str,
    options: &ConvertOptions,
    progress: &(dyn Fn(crate::batch::Progress) + Sync),
) -> Result<Outcome> {
    let batch = |view: &GameView, prefix: &str| {
        if !motions.is_empty() {
            return Err(Error::unsupported(
                "--motion applies to one model, not to a folder conversion",
            ));
        }
        if options.write != WriteOptions::default() || options.original.is_some() {
            return Err(Error::unsupported(
                "--modl-version and --original apply to one file, not to a folder conversion",
            ));
        }
        crate::batch::run(view, prefix, output, to, options, progress).map(Outcome::Batch)
    };
    if let Some((game, inside)) = input.to_str().and_then(crate::vfs::split_spec) {
        let view = GameView::open(&game)?;
        if !view.exists(inside) {
            return batch(&view, inside);
        }
    } else if crate::formats::mpq::is_archive_file(input) {
        // A map or mod archive converts as a folder does.
        return batch(&GameView::archive(input)?, "");
    } else if input.is_dir() {
        if !motions.is_empty() {
            return Err(Error::unsupported(
                "--motion applies to one model, not to a folder conversion",
            ));
        }
        let one_file = !output.is_dir()
            && ["glb", "gltf", "obj"]
                .iter()
                .any(|e| crate::io::has_ext(output, e));
        if !one_file {
            if !output.is_dir() && output.extension().is_some() {
                return Err(Error::unsupported(
                    "a folder converts into a folder, and this name looks like a file; name a folder (and pick the type with --to), or a .glb for one component",
                )
                .in_file(output));
            }
            return batch(&GameView::folder(input)?, "");
        }
    }
    let mut opened = open(input)?;
    let mut warnings = vec![(input.to_path_buf(), opened.warnings().to_vec())];
    for m in motions {
        let motion = open(m.as_path())?;
        warnings.push((m.clone(), motion.warnings().to_vec()));
        opened.add_motion(motion);
    }
    let mut wrote = opened.write_to(output, options)?;
    warnings.push((input.to_path_buf(), std::mem::take(&mut wrote.warnings)));
    Ok(Outcome::File {
        output: output.to_path_buf(),
        wrote,
        warnings,
    })
}
