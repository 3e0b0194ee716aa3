//! `hangar cat list|verify|extract|pack|diff` on MPQ archives (StarCraft II maps and mods), called
//! by `cat.rs` for a file that is an archive by its magic or its name (`.SC2Map`, `.SC2Mod`...).
//! The work is done by `hangar::archives`.

use crate::shown::{bytes_bar, extracted};
use anyhow::{bail, Result};
use hangar::archives;
use std::path::Path;

fn open(path: &Path) -> Result<archives::Opened> {
    let o = archives::open(path)?;
    for w in &o.archive.warnings {
        eprintln!("warning: {}: {w}", path.display());
    }
    if o.archive.unnamed > 0 {
        eprintln!(
            "note: {}: {} files have no name in the (listfile) and are not listed",
            path.display(),
            o.archive.unnamed
        );
    }
    Ok(o)
}

pub fn list(path: &Path, json: bool) -> Result<bool> {
    let o = open(path)?;
    if json {
        out!("{}", serde_json::to_string(&o.archive.entries)?);
    } else {
        for e in &o.archive.entries {
            out!(
                "{} {} {} 0x{:08x} @{}",
                e.path,
                e.size,
                e.compressed_size,
                e.flags,
                e.offset
            );
        }
    }
    Ok(true)
}

/// One archive read whole: true when every file read; its JSON object with `--json`.
pub fn verify(path: &Path, json: bool) -> (bool, Option<serde_json::Value>) {
    let o = match open(path) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e:#}");
            let j = json.then(|| {
                serde_json::json!({
                    "archive": path.display().to_string(), "ok": false, "error": format!("{e:#}"),
                })
            });
            return (false, j);
        }
    };
    let bar = bytes_bar(o.archive.entries.iter().map(|e| u64::from(e.size)).sum());
    let (read, bad) = archives::verify(&o, &|n| bar.inc(n));
    bar.finish_and_clear();
    if json {
        let j = serde_json::json!({
            "archive": path.display().to_string(), "ok": bad.is_empty(), "entries": read + bad.len(),
            "damage": bad.iter().map(|e| e.to_string()).collect::<Vec<_>>(),
        });
        return (bad.is_empty(), Some(j));
    }
    if bad.is_empty() {
        out!("{}: ok ({read} files read whole)", path.display());
    } else {
        out!(
            "{}: DAMAGED ({} of {} files)",
            path.display(),
            bad.len(),
            read + bad.len()
        );
        for e in &bad {
            out!("  {e}");
        }
    }
    (bad.is_empty(), None)
}

pub fn extract(path: &Path, dir: &Path, patterns: &[String]) -> Result<bool> {
    let o = open(path)?;
    std::fs::create_dir_all(dir)?;
    let bar = bytes_bar(o.archive.entries.iter().map(|e| u64::from(e.size)).sum());
    let x = archives::extract(&o, dir, patterns, &|n| bar.inc(n));
    bar.finish_and_clear();
    Ok(extracted(&x, dir))
}

pub fn pack(dir: &Path, out: &Path, keep_listfile: bool) -> Result<bool> {
    if !dir.is_dir() {
        bail!("{}: not a folder", dir.display());
    }
    if let Some(d) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(d)
            .map_err(|e| anyhow::anyhow!("{}: cannot make the folder: {e}", d.display()))?;
    }
    let p = archives::pack_with(dir, out, archives::PackOptions { keep_listfile })?;
    if !p.replaced.is_empty() {
        let mut made = Vec::new();
        if !p.kept_listfile {
            made.push("a (listfile) naming the files packed (--keep-listfile keeps the folder's)");
        }
        if p.attributes {
            made.push("an (attributes) for them");
        }
        eprintln!(
            "note: {}: {} describe the archive the folder was extracted from: not packed back; made anew: {}",
            dir.display(),
            p.replaced.join(", "),
            if made.is_empty() { "nothing".to_string() } else { made.join(", ") },
        );
    }
    eprintln!(
        "wrote {} ({} files, {} bytes in {} bytes)",
        out.display(),
        p.files,
        p.bytes,
        p.archive_bytes
    );
    Ok(true)
}

pub fn diff(a: &Path, b: &Path, json: bool) -> Result<bool> {
    let d = archives::diff(&open(a)?, &open(b)?)?;
    crate::shown::diff(&d, json)?;
    Ok(true)
}
