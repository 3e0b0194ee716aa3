//! The index kept between runs, in the user's cache folder (`$HANGAR_CACHE_DIR`, else
//! `$XDG_CACHE_HOME/hangar`, `~/.cache/hangar` or `%LOCALAPPDATA%\hangar`), one file per set of
//! game folders and language. It stays valid while every file it was made from keeps its size and
//! modification time: the catalogs (`.cat`, `.dat`) of the game and of each extension, the loose
//! files read, and the folders holding them (a file added changes its folder's time).
//!
//! The file is text: a header line, one `F size mtime path` line a file checked, then one line an
//! entry, fields separated by tabs (tabs, newlines and backslashes escaped).

use super::{Found, Index, Item, Kind};
use crate::vfs::GameView;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

// 2: components carry the name of a macro building them.
const HEADER: &str = "hangar find index 2";

/// Where the index of `dirs` in `lang` is kept, and the names it was made for.
pub struct Signature {
    file: Option<PathBuf>,
    /// `canonical dirs + lang`, the first line after the header.
    key: String,
    /// Files and folders whose size and time decide (catalogs, folders), beside the loose files
    /// read, which are known once the index is made.
    watched: BTreeSet<PathBuf>,
}

/// The cache folder, when the environment names one.
fn cache_dir() -> Option<PathBuf> {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(d) = var("HANGAR_CACHE_DIR") {
        return Some(d);
    }
    if let Some(d) = var("XDG_CACHE_HOME") {
        return Some(d.join("hangar"));
    }
    if cfg!(windows) {
        if let Some(d) = var("LOCALAPPDATA") {
            return Some(d.join("hangar"));
        }
    }
    var("HOME").map(|h| h.join(".cache").join("hangar"))
}

/// What decides whether a kept index of `dirs` still holds.
pub fn signature(dirs: &[PathBuf], lang: u32, texts: bool) -> Signature {
    let canon: Vec<PathBuf> = dirs
        .iter()
        .map(|d| crate::io::canonical(d).unwrap_or_else(|_| d.clone()))
        .collect();
    let key = format!(
        "lang {lang}{} {}",
        if texts { " texts" } else { "" },
        canon
            .iter()
            .map(|d| d.display().to_string())
            .collect::<Vec<_>>()
            .join(" | ")
    );
    let mut watched = BTreeSet::new();
    for d in &canon {
        watched.insert(d.clone());
        if d.is_file() {
            // One `.cat`: it and its `.dat`.
            watched.insert(crate::formats::catalog::dat_path(d));
            continue;
        }
        let mut folders = vec![d.clone()];
        let ext = d.join("extensions");
        if let Ok(r) = std::fs::read_dir(&ext) {
            watched.insert(ext);
            folders.extend(
                r.filter_map(|e| e.ok())
                    .map(|e| e.path())
                    .filter(|p| p.is_dir()),
            );
        }
        for f in folders {
            for cat in crate::vfs::catalogs_in(&f) {
                watched.insert(crate::formats::catalog::dat_path(&cat));
                watched.insert(cat);
            }
            watched.insert(f.clone());
            let content = f.join("content.xml");
            if content.is_file() {
                watched.insert(content);
            }
            // The loose index, library and text files (few) each by its own time.
            for sub in ["index", "libraries", "t"] {
                let Some(p) = crate::assemble::read::find_in(&f, sub) else {
                    continue;
                };
                if let Ok(r) = std::fs::read_dir(&p) {
                    watched.extend(r.filter_map(|e| e.ok()).map(|e| e.path()));
                    watched.insert(p);
                }
            }
        }
    }
    let file = cache_dir().map(|c| {
        let hash = crate::formats::catalog::md5_hex(key.as_bytes());
        c.join("find").join(format!("{hash}.idx"))
    });
    Signature { file, key, watched }
}

/// `F size mtime path` for a file or folder on disk, none when it is gone.
fn stamp(p: &Path) -> Option<String> {
    let m = std::fs::metadata(p).ok()?;
    let t = m
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    let size = if m.is_dir() { 0 } else { m.len() };
    Some(format!("F\t{size}\t{t}\t{}", escape(&p.to_string_lossy())))
}

fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => o.push_str("\\\\"),
            '\t' => o.push_str("\\t"),
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            c => o.push(c),
        }
    }
    o
}

fn unescape(s: &str) -> String {
    if !s.contains('\\') {
        return s.to_string();
    }
    let mut o = String::with_capacity(s.len());
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c != '\\' {
            o.push(c);
            continue;
        }
        match it.next() {
            Some('t') => o.push('\t'),
            Some('n') => o.push('\n'),
            Some('r') => o.push('\r'),
            Some(x) => o.push(x),
            None => {}
        }
    }
    o
}

/// The kept index for `sig`, when there is one and every file it was made from is unchanged.
pub fn load(sig: &Signature) -> Option<Index> {
    let text = std::fs::read_to_string(sig.file.as_ref()?).ok()?;
    let mut lines = text.lines();
    if lines.next()? != HEADER || lines.next()? != escape(&sig.key) {
        return None;
    }
    let mut items = Vec::new();
    let mut texts = Vec::new();
    let mut checked = BTreeSet::new();
    for line in lines {
        let mut f = line.split('\t');
        let tag = f.next()?;
        if tag == "F" {
            let path = PathBuf::from(unescape(line.splitn(4, '\t').nth(3)?));
            if stamp(&path).as_deref() != Some(line) {
                return None;
            }
            checked.insert(path);
            continue;
        }
        let kind = match tag {
            "m" => Kind::Macro,
            "c" => Kind::Component,
            "w" => Kind::Ware,
            "t" => Kind::Text,
            _ => return None,
        };
        let (id, name, file, ext, also) = (f.next()?, f.next()?, f.next()?, f.next()?, f.next()?);
        let item = Item {
            found: Found {
                kind,
                id: unescape(id),
                name: unescape(name),
                file: unescape(file),
                extension: ext.strip_prefix('=').map(unescape),
            },
            also: unescape(also),
        };
        if kind == Kind::Text {
            texts.push(item);
        } else {
            items.push(item);
        }
    }
    // A catalog or folder added since (a new extension) is not among the files checked.
    if !sig.watched.iter().all(|w| checked.contains(w)) {
        return None;
    }
    Some(Index { items, texts })
}

/// Keeps `index` for `sig`: written whole (a temporary file renamed), never half.
pub fn store(sig: &Signature, index: &Index, views: &[GameView]) -> crate::error::Result<()> {
    let Some(file) = &sig.file else {
        return Ok(());
    };
    let mut watched = sig.watched.clone();
    // The loose files read, and their folders.
    let files: BTreeSet<&str> = index
        .items
        .iter()
        .chain(&index.texts)
        .map(|i| i.found.file.as_str())
        .collect();
    for file in files {
        for v in views {
            if let Some(p) = v.locate(file) {
                if let Some(d) = p.parent() {
                    watched.insert(d.to_path_buf());
                }
                watched.insert(p);
                break;
            }
        }
    }
    let mut s = format!("{HEADER}\n{}\n", escape(&sig.key));
    for w in &watched {
        if let Some(line) = stamp(w) {
            s.push_str(&line);
            s.push('\n');
        }
    }
    for i in index.items.iter().chain(&index.texts) {
        let tag = match i.found.kind {
            Kind::Macro => "m",
            Kind::Component => "c",
            Kind::Ware => "w",
            Kind::Text => "t",
        };
        let ext = i
            .found
            .extension
            .as_deref()
            .map_or(String::new(), |e| format!("={}", escape(e)));
        s.push_str(&format!(
            "{tag}\t{}\t{}\t{}\t{ext}\t{}\n",
            escape(&i.found.id),
            escape(&i.found.name),
            escape(&i.found.file),
            escape(&i.also)
        ));
    }
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).map_err(|e| crate::error::Error::io(dir, e))?;
    }
    crate::io::write_output(file, s.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_with_tabs_and_newlines_come_back() {
        for s in [
            "plain",
            "a\tb",
            "line\nnext\r",
            "back\\slash\\t",
            "",
            "é {1,2} \\(",
        ] {
            let e = escape(s);
            assert!(!e.contains('\t') && !e.contains('\n'), "{e:?}");
            assert_eq!(unescape(&e), s);
        }
    }
}
