//! `hangar cat list|verify|extract|pack` on MPQ archives (StarCraft II maps and mods): an archive
//! is known by its magic, a pack by the output's name. The work is done by `hangar::archives`.

use crate::cat::{bytes_bar, extracted, CatCommand};
use anyhow::{bail, Result};
use hangar::archives;
use std::path::{Path, PathBuf};

/// The names `cat pack` writes as an MPQ archive.
fn archive_name(p: &Path) -> bool {
    p.extension().is_some_and(|e| {
        ["sc2mod", "sc2map", "sc2components", "mpq"]
            .iter()
            .any(|x| e.eq_ignore_ascii_case(x))
    })
}

/// `-o DIR`, or the first argument after the catalog or archive.
pub fn out_dir(out: Option<PathBuf>, patterns: &mut Vec<String>) -> Result<PathBuf> {
    match out {
        Some(o) => Ok(o),
        None if !patterns.is_empty() => Ok(PathBuf::from(patterns.remove(0))),
        None => bail!("name the folder to extract into: `-o DIR` or after the catalog"),
    }
}

/// The command run on an archive, or `None` when it is about a catalog.
pub fn run(cmd: &CatCommand) -> Option<Result<bool>> {
    match cmd {
        CatCommand::List { cat, json } if archives::is_archive_file(cat) => Some(list(cat, *json)),
        CatCommand::Verify { cats, json } if cats.iter().any(|c| archives::is_archive_file(c)) => {
            Some(verify(cats, *json))
        }
        CatCommand::Extract { cat, out, patterns } if archives::is_archive_file(cat) => {
            let mut patterns = patterns.clone();
            Some(out_dir(out.clone(), &mut patterns).and_then(|o| extract(cat, &o, &patterns)))
        }
        CatCommand::Pack { dir, out, .. } if archive_name(out) => Some(pack(dir, out)),
        _ => None,
    }
}

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

fn list(path: &Path, json: bool) -> Result<bool> {
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

fn verify(paths: &[PathBuf], json: bool) -> Result<bool> {
    let mut ok = true;
    let mut all = Vec::new();
    for path in paths {
        let o = match open(path) {
            Ok(o) => o,
            Err(e) => {
                eprintln!("error: {e:#}");
                ok = false;
                continue;
            }
        };
        let bar = bytes_bar(o.archive.entries.iter().map(|e| u64::from(e.size)).sum());
        let (read, bad) = archives::verify(&o, &|n| bar.inc(n));
        bar.finish_and_clear();
        ok &= bad.is_empty();
        if json {
            all.push(serde_json::json!({
                "archive": path.display().to_string(), "ok": bad.is_empty(), "entries": read + bad.len(),
                "damage": bad.iter().map(|e| e.to_string()).collect::<Vec<_>>(),
            }));
        } else if bad.is_empty() {
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
    }
    if json {
        out!("{}", serde_json::to_string_pretty(&all)?);
    }
    Ok(ok)
}

fn extract(path: &Path, dir: &Path, patterns: &[String]) -> Result<bool> {
    let o = open(path)?;
    std::fs::create_dir_all(dir)?;
    let bar = bytes_bar(o.archive.entries.iter().map(|e| u64::from(e.size)).sum());
    let x = archives::extract(&o, dir, patterns, &|n| bar.inc(n));
    bar.finish_and_clear();
    Ok(extracted(&x, dir))
}

fn pack(dir: &Path, out: &Path) -> Result<bool> {
    if !dir.is_dir() {
        bail!("{}: not a folder", dir.display());
    }
    if let Some(d) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(d)
            .map_err(|e| anyhow::anyhow!("{}: cannot make the folder: {e}", d.display()))?;
    }
    let p = archives::pack(dir, out)?;
    eprintln!(
        "wrote {} ({} files, {} bytes in {} bytes)",
        out.display(),
        p.files,
        p.bytes,
        p.archive_bytes
    );
    Ok(true)
}
