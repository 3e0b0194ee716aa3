//! Two archives compared file by file, as `hangar cat diff` compares two catalogs.

use super::Opened;
use crate::error::Result;
use crate::formats::catalog::Diff;
use rayon::prelude::*;
use std::collections::HashSet;

/// What changed from archive `a` to archive `b`, by game path (letter case and separators
/// ignored; the archives' own `(listfile)`, `(attributes)` and `(signature)` left out, as they
/// change whenever anything does). A file of both is changed when its size or its bytes differ:
/// an archive keeps no checksum every writer fills, so both are read; a file that cannot be read
/// is an error naming it.
pub fn diff(a: &Opened, b: &Opened) -> Result<Diff> {
    let pa: HashSet<&str> = a.archive.paths().collect();
    let pb: HashSet<&str> = b.archive.paths().collect();
    let mut d = Diff {
        added: pb.difference(&pa).map(|p| p.to_string()).collect(),
        removed: pa.difference(&pb).map(|p| p.to_string()).collect(),
        changed: Vec::new(),
    };
    let both: Vec<&str> = pa.intersection(&pb).copied().collect();
    let changed: Vec<Option<String>> = both
        .par_iter()
        .map(|p| {
            let (Some(ea), Some(eb)) = (a.archive.find(p), b.archive.find(p)) else {
                return Ok(Some(p.to_string()));
            };
            let same = ea.size == eb.size && a.read(&ea)? == b.read(&eb)?;
            Ok((!same).then(|| p.to_string()))
        })
        .collect::<Result<_>>()?;
    d.changed = changed.into_iter().flatten().collect();
    d.added.sort();
    d.changed.sort();
    d.removed.sort();
    Ok(d)
}
