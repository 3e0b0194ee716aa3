//! A whole folder or game at once (`hangar convert DIR OUT --to glb`, `hangar convert "GAME::dir"
//! OUT --to glb`): one code for both, since a folder is a game view. Which files take part, where
//! each output goes (mirroring the input tree, never two inputs on one output), which motions go
//! with which actor; each file converted in parallel, failures named in `OUT/report.json`.

use crate::any;
use crate::api::{ConvertOptions, Opened};
use crate::detect::Format;
use crate::error::{Error, ErrorKind, Result};
use crate::io::Input;
use crate::vfs::{Entry, GameView};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// How far a batch has come: `done` of `total` files.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    pub done: usize,
    pub total: usize,
}

/// One conversion of a batch.
#[derive(Debug, Clone, Serialize)]
pub struct Job {
    /// The model (a path on disk, or a game path inside a catalog).
    pub input: String,
    /// Motion files whose clips go into this actor's output.
    pub motions: Vec<String>,
    pub output: PathBuf,
}

/// A file that failed, and why.
#[derive(Debug, Clone, Serialize)]
pub struct Failure {
    pub file: String,
    /// The same as `file` (the key a game view's report used).
    pub path: String,
    pub error: String,
}

/// What a batch did; also written as `report.json` in the output folder.
#[derive(Debug, Serialize)]
pub struct Report {
    /// What was converted: the folder, or `GAME::path`.
    pub input: String,
    pub to: String,
    /// How many models were converted or tried (a motion that went into its actor is not one).
    pub models: usize,
    pub converted: usize,
    pub failed: Vec<Failure>,
    /// Every warning (not notes), `file: message`.
    pub warnings: Vec<String>,
    pub outputs: Vec<Job>,
    /// Temporary files of an interrupted run that were removed first.
    pub stale_removed: usize,
    #[serde(skip)]
    pub report: PathBuf,
}

impl Report {
    /// True when every file converted.
    pub fn ok(&self) -> bool {
        self.failed.is_empty()
    }
}

/// Converts every model at or below `prefix` in `view` (`""`: all of it) into `.{to}` files
/// under `out`, `progress` told after each file. A folder is [`GameView::folder`] with prefix `""`.
///
/// ```no_run
/// let view = hangar::GameView::folder("extracted/assets".as_ref())?;
/// let report = hangar::batch::run(&view, "", "out".as_ref(), "glb", &Default::default(), &|_| {})?;
/// println!("{} converted, {} failed", report.converted, report.failed.len());
/// # Ok::<(), hangar::Error>(())
/// ```
pub fn run(
    view: &GameView,
    prefix: &str,
    out: &Path,
    to: &str,
    options: &ConvertOptions,
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<Report> {
    any::check_output(Path::new(&format!("x.{to}")))?;
    // One clear error for an output folder that cannot be written, before any work.
    let made = crate::io::create_dirs(out)
        .and_then(|made| {
            let probe = out.join(format!(".hangar-probe-{}", crate::io::own_pid()));
            let written = std::fs::write(&probe, b"").and_then(|_| std::fs::remove_file(&probe));
            if written.is_err() {
                crate::io::remove_made(&made);
            }
            written.map(|_| made)
        })
        .map_err(|e| {
            Error::new(
                ErrorKind::Io,
                None,
                "",
                format!("cannot write into the output folder: {e}"),
            )
            .in_file(out)
        })?;
    // A run that fails as a whole (no file to convert, a report that cannot be written) leaves
    // no folder it made behind: outputs whole or not at all.
    let report = run_into(view, prefix, out, to, options, progress);
    if report.is_err() {
        crate::io::remove_made(&made);
    }
    report
}

/// [`run`] once the output folder is there.
fn run_into(
    view: &GameView,
    prefix: &str,
    out: &Path,
    to: &str,
    options: &ConvertOptions,
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<Report> {
    let stale_removed = crate::io::remove_stale_temps(out);
    let input = view.label_of(prefix);
    let entries = view.entries(prefix, Some(out))?;
    let anything = !entries.is_empty();
    let files: Vec<Found> = entries
        .into_par_iter()
        .filter_map(|entry| {
            let (head, len) = view.head(&entry, 64)?;
            let format = any::detect(&head, Some(Path::new(&entry.shown)));
            let model =
                format.supported() && !matches!(format, Format::HangarJson | Format::GltfText);
            model.then_some(Found { entry, format, len })
        })
        .collect();
    if files.is_empty() {
        let why = if anything || prefix.is_empty() {
            "no file hangar can convert in this folder"
        } else {
            "no such file or folder"
        };
        return Err(Error::new(ErrorKind::Invalid, None, "", why).in_file(Path::new(&input)));
    }
    let jobs = plan(view, &files, out, to);
    let total = jobs.len();
    let done = AtomicUsize::new(0);
    // Largest first, one job at a time to each free core: the last job to end is then a small one,
    // where in file order a core could sit idle while the other finishes a large model.
    let mut order: Vec<usize> = (0..total).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(jobs[i].bytes()));
    let mut results: Vec<(usize, Result<Vec<String>>)> = order
        .par_iter()
        .with_max_len(1)
        .map(|&i| {
            let r = convert(view, &jobs[i], options);
            let d = done.fetch_add(1, Ordering::Relaxed) + 1;
            progress(Progress { done: d, total });
            (i, r)
        })
        .collect();
    results.sort_by_key(|(i, _)| *i);
    let results: Vec<(&Planned<'_>, Result<Vec<String>>)> =
        results.into_iter().map(|(i, r)| (&jobs[i], r)).collect();
    let failed: Vec<Failure> = results
        .iter()
        .filter_map(|(j, r)| {
            r.as_ref().err().map(|e| Failure {
                file: j.input.entry.name(),
                path: j.input.entry.name(),
                error: e.to_string(),
            })
        })
        .collect();
    let warnings: Vec<String> = results
        .iter()
        .filter_map(|(_, r)| r.as_ref().ok())
        .flatten()
        .cloned()
        .collect();
    let outputs: Vec<Job> = results
        .iter()
        .filter(|(_, r)| r.is_ok())
        .map(|(j, _)| Job {
            input: j.input.entry.name(),
            motions: j.motions.iter().map(|m| m.entry.name()).collect(),
            output: j.output.clone(),
        })
        .collect();
    let report = Report {
        input,
        to: to.to_string(),
        models: total,
        converted: total - failed.len(),
        failed,
        warnings,
        outputs,
        stale_removed,
        report: out.join("report.json"),
    };
    let text = serde_json::to_string_pretty(&report)
        .map_err(|e| Error::new(ErrorKind::Invalid, None, "report", e.to_string()))?;
    crate::io::write_output(&report.report, text.as_bytes())?;
    Ok(report)
}

/// A file of the view that takes part: its format and length told from its first bytes.
struct Found {
    entry: Entry,
    format: Format,
    len: u64,
}

/// A job before it runs: files of the view.
struct Planned<'v> {
    input: &'v Found,
    motions: Vec<&'v Found>,
    output: PathBuf,
}

impl Planned<'_> {
    /// The input's and its motions' bytes: how long the job will take, roughly.
    fn bytes(&self) -> u64 {
        self.input.len + self.motions.iter().map(|m| m.len).sum::<u64>()
    }
}

/// Opens `e` from `view`: a file on disk by its path (textures are then found around it), a
/// catalog entry through the view.
fn open(view: &GameView, e: &Entry) -> Result<Opened> {
    match &e.disk {
        Some(p) => crate::api::open(p.as_path()),
        None => {
            let bytes: Input = view.read(&e.norm)?;
            Opened::read_in(bytes, view, &e.norm)
        }
    }
}

/// Converts one job; its warnings (the reader's, the motions', the conversion's; not notes).
fn convert(view: &GameView, j: &Planned<'_>, options: &ConvertOptions) -> Result<Vec<String>> {
    let mut opened = open(view, &j.input.entry)?;
    let mut warnings: Vec<String> = Vec::new();
    let mut keep = |name: &str, w: &[crate::error::Warning]| {
        warnings.extend(w.iter().filter(|w| !w.note).map(|w| format!("{name}: {w}")))
    };
    keep(&j.input.entry.name(), opened.warnings());
    for m in &j.motions {
        let motion = open(view, &m.entry)?;
        keep(&m.entry.name(), motion.warnings());
        opened.add_motion(motion);
    }
    let wrote = opened.write_to(&j.output, options)?;
    keep(&j.input.entry.name(), &wrote.warnings);
    Ok(warnings)
}

/// Plans the conversion of `files` into `out` as `.ext` files. Each motion goes with the actor in
/// its folder (else the nearest folder above) whose nodes it moves, by the most names in common; a
/// motion that fits no actor gets its own output.
fn plan<'v>(view: &GameView, files: &'v [Found], out: &Path, ext: &str) -> Vec<Planned<'v>> {
    let is_motion = |f: &Found| matches!(f.format, Format::Xsm | Format::Xpm);
    let names = |e: &Entry| {
        open(view, e)
            .ok()
            .map(|o| o.binding_names())
            .unwrap_or_default()
    };
    let actors: Vec<(&Found, Vec<String>)> = files
        .iter()
        .filter(|f| f.format == Format::Xac)
        .map(|f| (f, names(&f.entry)))
        .collect();
    let mut attached: HashMap<&str, Vec<&Found>> = HashMap::new();
    let mut alone: Vec<&str> = Vec::new();
    for f in files.iter().filter(|f| is_motion(f)) {
        let shown = f.entry.shown.as_str();
        match best_actor(shown, &names(&f.entry), &actors) {
            Some(a) => attached.entry(a.entry.shown.as_str()).or_default().push(f),
            None => alone.push(shown),
        }
    }
    // Inputs that share a folder and a stem keep their own extension in the output's name.
    let key = |shown: &str| {
        let p = Path::new(shown);
        (
            p.parent().map(Path::to_path_buf).unwrap_or_default(),
            p.file_stem()
                .map(|s| s.to_string_lossy().to_lowercase())
                .unwrap_or_default(),
        )
    };
    let outputs: Vec<&Found> = files
        .iter()
        .filter(|f| !is_motion(f) || alone.contains(&f.entry.shown.as_str()))
        .collect();
    let mut stems: HashMap<(PathBuf, String), usize> = HashMap::new();
    for f in &outputs {
        *stems.entry(key(&f.entry.shown)).or_default() += 1;
    }
    outputs
        .into_iter()
        .map(|f| {
            let rel = Path::new(&f.entry.shown);
            let shared = stems.get(&key(&f.entry.shown)).copied().unwrap_or(0) > 1;
            let name = if shared {
                rel.file_name()
            } else {
                rel.file_stem()
            }
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
            Planned {
                input: f,
                motions: attached
                    .get(f.entry.shown.as_str())
                    .cloned()
                    .unwrap_or_default(),
                output: out.join(rel).with_file_name(format!("{name}.{ext}")),
            }
        })
        .collect()
}

/// The actor a motion driving `driven` goes with: in the motion's folder first, then each folder
/// above; among those, the one sharing the most names (at least half of the motion's).
fn best_actor<'a>(
    motion: &str,
    driven: &[String],
    actors: &[(&'a Found, Vec<String>)],
) -> Option<&'a Found> {
    if driven.is_empty() {
        return None;
    }
    let mut dir = Path::new(motion).parent();
    while let Some(d) = dir {
        let best = actors
            .iter()
            .filter(|(a, _)| Path::new(&a.entry.shown).starts_with(d))
            .map(|(a, offered)| (*a, driven.iter().filter(|n| offered.contains(n)).count()))
            .filter(|&(_, common)| common * 2 >= driven.len() && common > 0)
            .max_by_key(|&(a, common)| {
                (
                    common,
                    std::cmp::Reverse(Path::new(&a.entry.shown).components().count()),
                )
            });
        if let Some((a, _)) = best {
            return Some(a);
        }
        dir = d.parent();
    }
    None
}
