//! Catalogs out: pack a folder into `.cat` + `.dat`, extract entries into a folder (never outside
//! it), and the `.cat` text itself.

use super::verify::md5_hex;
use super::{refused, Catalog, Entry, Opened};
use crate::error::{Error, Result};
use md5::{Digest, Md5};
use rayon::prelude::*;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The `.cat` text for `entries`, in their order, `\n` line ends as the game writes them.
pub fn write_index(cat: &Catalog) -> Vec<u8> {
    let mut out = Vec::new();
    for e in &cat.entries {
        let _ = writeln!(out, "{} {} {} {}", e.path, e.size, e.mtime, e.md5);
    }
    out
}

/// A catalog of files held in memory (`/`-separated paths, in the order given): the `.cat` text
/// and the `.dat` bytes, every entry dated `mtime` (Unix seconds) so the same files give the same
/// bytes.
pub fn pack_bytes(files: &[(String, &[u8])], mtime: i64) -> (Vec<u8>, Vec<u8>) {
    let mut catalog = Catalog::default();
    let mut dat = Vec::with_capacity(files.iter().map(|f| f.1.len()).sum());
    for (line, (path, bytes)) in files.iter().enumerate() {
        catalog.entries.push(Entry {
            path: path.clone(),
            size: bytes.len() as u64,
            mtime,
            md5: md5_hex(bytes),
            offset: dat.len() as u64,
            line: line + 1,
        });
        dat.extend_from_slice(bytes);
    }
    (write_index(&catalog), dat)
}

/// The first free `PREFIXNN.cat` in `folder` (`ext_01.cat`, `subst_02.cat`, ...).
pub fn pack_name(folder: &Path, prefix: &str) -> PathBuf {
    (1..100)
        .map(|n| folder.join(format!("{prefix}{n:02}.cat")))
        .find(|p| !p.exists() && !super::dat_path(p).exists())
        .unwrap_or_else(|| folder.join(format!("{prefix}99.cat")))
}

/// Packs every file under `dir` into `cat` and the `.dat` beside it: `/` separators, paths sorted,
/// md5 and mtime of each file. The `.dat` is streamed; both files appear whole or not at all.
pub fn pack(dir: &Path, cat: &Path, progress: &(dyn Fn(u64) + Sync)) -> Result<Catalog> {
    let dat = super::dat_path(cat);
    let mut files = Vec::new();
    walk(dir, dir, &mut files)?;
    // The outputs may lie inside the folder being packed: never pack them into themselves.
    files.retain(|(_, p)| !crate::io::same_file(p, cat) && !crate::io::same_file(p, &dat));
    files.sort_by(|a, b| a.0.cmp(&b.0));
    let mut catalog = Catalog::default();
    let mut offset = 0u64;
    crate::io::write_output_with(&dat, |out| {
        let mut buf = vec![0u8; 1 << 20];
        for (line, (name, path)) in files.iter().enumerate() {
            let mut f = std::fs::File::open(path)?;
            let mtime = f
                .metadata()?
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
            let mut md5 = Md5::new();
            let mut size = 0u64;
            loop {
                let n = f.read(&mut buf)?;
                let Some(chunk) = buf.get(..n).filter(|c| !c.is_empty()) else {
                    break;
                };
                md5.update(chunk);
                out.write_all(chunk)?;
                size = size.saturating_add(n as u64);
                progress(n as u64);
            }
            let digest = md5.finalize();
            catalog.entries.push(Entry {
                path: name.clone(),
                size,
                mtime,
                md5: if size == 0 {
                    md5_hex(&[])
                } else {
                    digest.iter().map(|b| format!("{b:02x}")).collect()
                },
                offset,
                line: line.saturating_add(1),
            });
            offset = offset.saturating_add(size);
        }
        Ok(())
    })?;
    crate::io::write_output(cat, &write_index(&catalog))?;
    Ok(catalog)
}

/// Regular files under `dir` (links not followed), with their `/`-separated path inside `root`.
pub(crate) fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) -> Result<()> {
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    for e in entries {
        let e = e.map_err(|err| Error::io(dir, err))?;
        let ty = e.file_type().map_err(|err| Error::io(&e.path(), err))?;
        let path = e.path();
        if ty.is_dir() {
            walk(root, &path, out)?;
        } else if ty.is_file() {
            let rel = path.strip_prefix(root).unwrap_or(&path);
            let name: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            out.push((name.join("/"), path));
        }
    }
    Ok(())
}

/// Where entry `e` goes under `dir`, or a refusal naming its line when its path is absolute, names
/// a drive, or climbs with `..`.
pub fn safe_destination(dir: &Path, e: &Entry) -> Result<PathBuf> {
    destination(dir, &e.path).map_err(|why| {
        refused(
            e.line,
            format!("entry {:?} on line {} {why}: it would be written outside the output folder; refused", e.path, e.line),
        )
    })
}

/// Where an archive's file named `p` goes under `dir`, or why it may not (it is absolute, names a
/// drive, or climbs with `..`).
pub fn destination(dir: &Path, p: &str) -> std::result::Result<PathBuf, &'static str> {
    if p.starts_with(['/', '\\']) {
        return Err("is absolute");
    } else if p.split(['/', '\\']).any(|c| c == "..") {
        return Err("climbs with `..`");
    } else if p.contains(':') || p.contains('\0') {
        return Err("names a drive or holds `:`");
    }
    let mut out = dir.to_path_buf();
    for part in p.split(['/', '\\']).filter(|c| !c.is_empty() && *c != ".") {
        out.push(part);
    }
    Ok(out)
}

/// `*` (any run of characters, `/` included) and `?` (one character), case-insensitive, `\` as
/// `/`; a pattern without wildcards also selects everything below it as a folder.
pub fn glob_matches(pattern: &str, path: &str) -> bool {
    let p: Vec<char> = pattern.replace('\\', "/").to_lowercase().chars().collect();
    let s: Vec<char> = path.replace('\\', "/").to_lowercase().chars().collect();
    if !p.iter().any(|c| *c == '*' || *c == '?') {
        let pre: String = p.iter().collect::<String>();
        let pre = pre.trim_end_matches('/');
        let s: String = s.iter().collect();
        return s == pre || s.starts_with(&format!("{pre}/"));
    }
    // Iterative matcher with one backtrack point for the last `*`.
    let (mut i, mut j) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while j < s.len() {
        match (p.get(i), s.get(j)) {
            (Some('*'), _) => {
                star = Some((i, j));
                i += 1;
            }
            (Some(pc), Some(sc)) if *pc == '?' || pc == sc => {
                i += 1;
                j += 1;
            }
            _ => match star {
                Some((si, sj)) => {
                    i = si + 1;
                    j = sj + 1;
                    star = Some((si, sj + 1));
                }
                None => return false,
            },
        }
    }
    p.get(i..)
        .is_some_and(|rest| rest.iter().all(|c| *c == '*'))
}

/// What an extraction did.
#[derive(Debug, Default, serde::Serialize)]
pub struct Extracted {
    pub written: usize,
    pub bytes: u64,
    /// Entries not written, and why (refused paths, bytes past the end, write errors).
    pub failed: Vec<Error>,
}

impl Extracted {
    /// The sum of each entry's extraction: its byte count written, or why it was not.
    pub(crate) fn tally(results: Vec<Result<u64>>) -> Self {
        let mut done = Extracted::default();
        for r in results {
            match r {
                Ok(n) => {
                    done.written += 1;
                    done.bytes = done.bytes.saturating_add(n);
                }
                Err(e) => done.failed.push(e),
            }
        }
        done
    }
}

/// Writes the entries of `c` that match `patterns` (all when empty) under `dir` with their mtimes.
/// Entries are sliced from the mapped `.dat` and written in parallel; a later duplicate wins.
pub fn extract(
    c: &Opened,
    dir: &Path,
    patterns: &[String],
    progress: &(dyn Fn(u64) + Sync),
) -> Extracted {
    let mut chosen: Vec<&Entry> = Vec::new();
    let mut index = std::collections::HashMap::new();
    for e in &c.catalog.entries {
        if !patterns.is_empty() && !patterns.iter().any(|p| glob_matches(p, &e.path)) {
            continue;
        }
        let key = crate::gamepath::normalize(&e.path).unwrap_or_else(|_| e.path.clone());
        match index.get(&key) {
            Some(&i) => {
                if let Some(slot) = chosen.get_mut(i) {
                    *slot = e;
                }
            }
            None => {
                index.insert(key, chosen.len());
                chosen.push(e);
            }
        }
    }
    let results: Vec<Result<u64>> = chosen
        .par_iter()
        .map(|e| {
            let r = extract_one(c, dir, e);
            progress(e.size);
            r
        })
        .collect();
    Extracted::tally(results)
}

fn extract_one(c: &Opened, dir: &Path, e: &Entry) -> Result<u64> {
    let dest = safe_destination(dir, e).map_err(|err| err.in_file(&c.cat_path))?;
    let bytes = c.dat.entry(e).ok_or_else(|| {
        e.past_the_end(c.dat.bytes().len() as u64)
            .in_file(&c.dat_path)
    })?;
    crate::io::create_parent(&dest)?;
    crate::io::write_output(&dest, bytes)?;
    if let Ok(secs) = u64::try_from(e.mtime) {
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs);
        // A file whose time cannot be set is still extracted whole.
        let _ = std::fs::File::options()
            .write(true)
            .open(&dest)
            .and_then(|f| f.set_modified(t));
    }
    Ok(bytes.len() as u64)
}
