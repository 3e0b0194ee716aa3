//! A whole folder converted at once: which files take part, where each output goes (mirroring the
//! input tree, never two inputs on one output), and which motions go with which actor.

use crate::detect::Format;
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// One conversion of a batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    pub input: PathBuf,
    /// Motion files whose clips go into this actor's output.
    pub motions: Vec<PathBuf>,
    pub output: PathBuf,
}

/// The format of a file by its first bytes, without reading it whole.
fn sniff(path: &Path) -> Format {
    use std::io::Read;
    let mut head = [0u8; 64];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .unwrap_or(0);
    crate::detect::detect(head.get(..n).unwrap_or_default(), Some(path))
}

/// Every file under `input` that hangar converts on its own (not dumps or glTF), sorted; the folder
/// `skip` (an output folder inside the input) is left out.
pub fn collect(input: &Path, skip: &Path) -> Result<Vec<(PathBuf, Format)>> {
    let skip = std::fs::canonicalize(skip).ok();
    let mut out = Vec::new();
    let mut stack = vec![input.to_path_buf()];
    while let Some(dir) = stack.pop() {
        if skip
            .as_ref()
            .is_some_and(|s| std::fs::canonicalize(&dir).is_ok_and(|d| &d == s))
        {
            continue;
        }
        let entries = std::fs::read_dir(&dir).map_err(|e| Error::io(&dir, e))?;
        for e in entries.filter_map(|e| e.ok()) {
            let Ok(ty) = e.file_type() else { continue };
            let p = e.path();
            if ty.is_dir() {
                stack.push(p);
            } else if ty.is_file() && !crate::io::is_temp(&p) {
                let f = sniff(&p);
                if f.supported() && !matches!(f, Format::HangarJson | Format::GltfText) {
                    out.push((p, f));
                }
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

/// Plans the conversion of `files` (from [`collect`] under `input`) into `output` as `.ext` files.
/// Each motion goes with the actor in its folder (else the nearest folder above) whose nodes it
/// moves, by the most names in common; a motion that fits no actor gets its own output.
pub fn plan(input: &Path, files: &[(PathBuf, Format)], output: &Path, ext: &str) -> Vec<Job> {
    let is_motion = |f: Format| matches!(f, Format::Xsm | Format::Xpm);
    let actors: Vec<(&PathBuf, Vec<String>)> = files
        .iter()
        .filter(|(_, f)| *f == Format::Xac)
        .map(|(p, _)| (p, names(p)))
        .collect();
    let mut attached: HashMap<&PathBuf, Vec<PathBuf>> = HashMap::new();
    let mut alone: Vec<&PathBuf> = Vec::new();
    for (p, _) in files.iter().filter(|(_, f)| is_motion(*f)) {
        match best_actor(p, &names(p), &actors) {
            Some(a) => attached.entry(a).or_default().push(p.clone()),
            None => alone.push(p),
        }
    }
    // Inputs that share a folder and a stem keep their own extension in the output's name.
    let mut stems: HashMap<(PathBuf, String), usize> = HashMap::new();
    let key = |p: &Path| {
        (
            p.parent().map(Path::to_path_buf).unwrap_or_default(),
            p.file_stem()
                .map(|s| s.to_string_lossy().to_lowercase())
                .unwrap_or_default(),
        )
    };
    let outputs: Vec<&PathBuf> = files
        .iter()
        .filter(|(p, f)| !is_motion(*f) || alone.contains(&p))
        .map(|(p, _)| p)
        .collect();
    for p in &outputs {
        *stems.entry(key(p)).or_default() += 1;
    }
    outputs
        .into_iter()
        .map(|p| {
            let rel = p.strip_prefix(input).unwrap_or(p);
            let shared = stems.get(&key(p)).copied().unwrap_or(0) > 1;
            let name = if shared {
                format!(
                    "{}.{ext}",
                    rel.file_name().unwrap_or_default().to_string_lossy()
                )
            } else {
                format!(
                    "{}.{ext}",
                    rel.file_stem().unwrap_or_default().to_string_lossy()
                )
            };
            Job {
                input: p.clone(),
                motions: attached.get(p).cloned().unwrap_or_default(),
                output: output.join(rel).with_file_name(name),
            }
        })
        .collect()
}

/// The names a file binds by (see [`crate::any::Document::binding_names`]); none when unreadable.
fn names(path: &Path) -> Vec<String> {
    crate::io::read_input(path)
        .ok()
        .and_then(|b| {
            crate::any::open(&b, path)
                .ok()
                .map(|o| o.document.binding_names())
        })
        .unwrap_or_default()
}

/// The actor a motion driving `driven` goes with: in the motion's folder first, then each folder
/// above; among those, the one sharing the most names (at least half of the motion's).
fn best_actor<'a>(
    motion: &Path,
    driven: &[String],
    actors: &[(&'a PathBuf, Vec<String>)],
) -> Option<&'a PathBuf> {
    if driven.is_empty() {
        return None;
    }
    let mut dir = motion.parent();
    while let Some(d) = dir {
        let best = actors
            .iter()
            .filter(|(a, _)| a.starts_with(d))
            .map(|(a, offered)| (*a, driven.iter().filter(|n| offered.contains(n)).count()))
            .filter(|&(_, common)| common * 2 >= driven.len() && common > 0)
            .max_by_key(|&(a, common)| (common, std::cmp::Reverse(a.components().count())));
        if let Some((a, _)) = best {
            return Some(a);
        }
        dir = d.parent();
    }
    None
}
