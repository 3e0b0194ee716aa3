//! X4 / X Rebirth catalogs: a `.cat` text index (`path size mtime md5` a line) and a `.dat` holding
//! the files back to back in index order, so an entry's offset is the sum of the sizes before it.
//!
//! The `.dat` is never read whole: it is memory-mapped and entries are sliced out of the map.

use crate::error::{Error, ErrorKind, Result, Warning};
use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

mod read;
mod verify;
mod write;

pub use read::{read, read_indexed};
pub use verify::{diagnose_line_endings, verify, Damage, Verdict, GITATTRIBUTES};
pub use verify::{md5_hex, md5_matches, LineEndings};
pub(crate) use write::walk;
pub use write::{
    destination, extract, glob_matches, pack, pack_bytes, pack_name, safe_destination, write_index,
    Extracted,
};

/// One line of a `.cat`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Entry {
    /// The path as the catalog spells it (may use `\`, any case, spaces).
    pub path: String,
    pub size: u64,
    /// Unix seconds.
    pub mtime: i64,
    /// 32 hex digits as written (Egosoft writes 32 zeros for an empty file).
    pub md5: String,
    /// Where the entry starts in the `.dat`: the sum of the sizes before it.
    pub offset: u64,
    /// 1-based line in the `.cat`, for messages.
    pub line: usize,
}

impl Entry {
    /// The error for an entry whose bytes run past the end of a `.dat` of `dat_len` bytes.
    pub fn past_the_end(&self, dat_len: u64) -> Error {
        Error::new(
            ErrorKind::Truncated,
            Some(self.offset),
            format!("line {}", self.line),
            format!(
                "{}: its {} bytes run past the end of the .dat ({dat_len} bytes)",
                self.path, self.size
            ),
        )
    }
}

/// A line of the `.cat` that could not be read as an entry.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct BadLine {
    pub line: usize,
    pub message: String,
}

/// A parsed `.cat`.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    pub entries: Vec<Entry>,
    /// Lines that do not parse: the entries after one may sit at wrong offsets.
    pub bad_lines: Vec<BadLine>,
    /// True when lines end in CR LF (a `.cat` that went through git's line-ending conversion).
    pub crlf: bool,
}

impl Catalog {
    /// Sum of all sizes: how long the `.dat` must be.
    pub fn data_len(&self) -> u64 {
        self.entries
            .last()
            .map_or(0, |e| e.offset.saturating_add(e.size))
    }

    /// The index of each normalized game path; a later duplicate wins, as in the game.
    pub fn by_path(&self) -> HashMap<String, usize> {
        let mut map = HashMap::with_capacity(self.entries.len());
        for (i, e) in self.entries.iter().enumerate() {
            if let Ok(n) = crate::gamepath::normalize(&e.path) {
                map.insert(n, i);
            }
        }
        map
    }
}

/// A catalog's entries by game path, sorted: found by binary search and listed in order. Built
/// without hashing or copying the paths already in the game's form (nearly all of a game's
/// 300,000), which made a game's catalogs slow to open in the browser.
#[derive(Debug, Default, Clone)]
pub struct PathIndex {
    /// (entry, its game path when that differs from the path as written), sorted by game path,
    /// one per path: the later duplicate, as in the game.
    keys: Vec<(usize, Option<Box<str>>)>,
}

impl PathIndex {
    /// The index, and what it leaves out (see [`Left`]).
    pub fn build(entries: &[Entry]) -> (PathIndex, Left) {
        let mut left = Left::default();
        // Sorted as (path, entry) pairs, not through the entries: one pointer less to follow
        // per comparison of the sort.
        let mut normal: Vec<(usize, Cow<str>)> = Vec::with_capacity(entries.len());
        for (i, e) in entries.iter().enumerate() {
            match crate::gamepath::normalize_cow(&e.path) {
                Ok(n) => normal.push((i, n)),
                Err(_) => left.outside.push(i),
            }
        }
        let mut sorted: Vec<(&str, usize, bool)> = normal
            .iter()
            .map(|(i, n)| (n.as_ref(), *i, matches!(n, Cow::Owned(_))))
            .collect();
        // Of equal paths the later entry comes last, and is the one kept.
        sorted.sort_unstable_by(|a, b| path_order(a.0, b.0).then(a.1.cmp(&b.1)));
        let mut keys: Vec<(usize, Option<Box<str>>)> = Vec::with_capacity(sorted.len());
        let mut last: Option<&str> = None;
        for (path, i, owned) in sorted {
            // A path the game spells otherwise keeps its game form (few do).
            let k = (i, owned.then(|| Box::from(path)));
            match keys.last_mut() {
                Some(prev) if last == Some(path) => {
                    left.hidden.push((i, prev.0));
                    *prev = k;
                }
                _ => keys.push(k),
            }
            last = Some(path);
        }
        (PathIndex { keys }, left)
    }

    /// The entry at the game path `norm`.
    pub fn get(&self, entries: &[Entry], norm: &str) -> Option<usize> {
        let at = self
            .keys
            .binary_search_by(|k| path_order(key(entries, k), norm))
            .ok()?;
        self.keys.get(at).map(|k| k.0)
    }

    /// The game paths, sorted.
    pub fn paths<'a>(&'a self, entries: &'a [Entry]) -> impl Iterator<Item = &'a str> {
        self.keys.iter().map(move |k| key(entries, k))
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

/// `a.cmp(b)`, eight bytes at a time: paths share long beginnings (`assets/units/size_s/`), and
/// in WebAssembly a plain comparison goes byte by byte (sorting a game's index took most of the
/// time it took to open in the browser).
fn path_order(a: &str, b: &str) -> std::cmp::Ordering {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let word = |c: &[u8]| c.try_into().map_or(0, u64::from_be_bytes);
    let mut done = 0;
    for (x, y) in a.chunks_exact(8).zip(b.chunks_exact(8)) {
        let (x, y) = (word(x), word(y));
        if x != y {
            return x.cmp(&y);
        }
        done += 8;
    }
    a.get(done..).cmp(&b.get(done..))
}

/// The entries a [`PathIndex`] leaves out.
#[derive(Debug, Default)]
pub struct Left {
    /// Entries a later one of the same game path hides: (later, earlier).
    pub hidden: Vec<(usize, usize)>,
    /// Entries whose path leads out of the game folder.
    pub outside: Vec<usize>,
}

fn key<'a>(entries: &'a [Entry], k: &'a (usize, Option<Box<str>>)) -> &'a str {
    match &k.1 {
        Some(n) => n,
        None => entries.get(k.0).map_or("", |e| e.path.as_str()),
    }
}

/// The `.dat` beside a `.cat` (same name, same case of the extension when it exists).
pub fn dat_path(cat: &Path) -> PathBuf {
    let upper = cat
        .extension()
        .is_some_and(|e| e.to_string_lossy() == "CAT");
    cat.with_extension(if upper { "DAT" } else { "dat" })
}

/// A memory-mapped `.dat` (an empty one is not mapped: a zero-length map is an error on some
/// systems; without the `native` feature it is read whole, see `io::map`).
pub struct Dat {
    map: Option<crate::io::Mapped>,
}

impl Dat {
    pub fn open(path: &Path) -> Result<Dat> {
        let f = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
        let len = f.metadata().map_err(|e| Error::io(path, e))?.len();
        if len == 0 {
            return Ok(Dat { map: None });
        }
        // A .dat changed by another program while mapped gives wrong bytes, which the md5 check reports.
        let map = crate::io::map(&f).map_err(|e| Error::io(path, e))?;
        Ok(Dat { map: Some(map) })
    }

    pub fn bytes(&self) -> &[u8] {
        self.map.as_deref().unwrap_or(&[])
    }

    /// The bytes of `e`, or `None` when they run past the end of the `.dat`.
    pub fn entry(&self, e: &Entry) -> Option<&[u8]> {
        self.bytes().get(self.range(e)?)
    }

    /// Where `e`'s bytes lie in the `.dat`, or `None` when they run past its end.
    pub fn range(&self, e: &Entry) -> Option<std::ops::Range<usize>> {
        let start = usize::try_from(e.offset).ok()?;
        let end = start.checked_add(usize::try_from(e.size).ok()?)?;
        (end <= self.bytes().len()).then_some(start..end)
    }
}

/// A `.cat` with its `.dat`: what the commands and the game view work on.
pub struct Opened {
    pub cat_path: PathBuf,
    pub dat_path: PathBuf,
    pub catalog: Catalog,
    /// The entries by game path.
    pub index: PathIndex,
    pub warnings: Vec<Warning>,
    pub dat: Dat,
}

/// A catalog's entries are slices of its `.dat` (an input that is a range of something shared).
impl AsRef<[u8]> for Opened {
    fn as_ref(&self) -> &[u8] {
        self.dat.bytes()
    }
}

/// Opens `cat` and maps the `.dat` beside it.
pub fn open(cat: &Path) -> Result<Opened> {
    let text = std::fs::read(cat).map_err(|e| Error::io(cat, e))?;
    let (catalog, index, warnings) = read_indexed(&text).map_err(|e| e.in_file(cat))?;
    let dat_path = dat_path(cat);
    let dat = Dat::open(&dat_path)?;
    Ok(Opened {
        cat_path: cat.to_path_buf(),
        dat_path,
        catalog,
        index,
        warnings,
        dat,
    })
}

/// What changed from catalog `a` to catalog `b`, by game path (case and separators ignored).
#[derive(Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Diff {
    pub added: Vec<String>,
    pub changed: Vec<String>,
    pub removed: Vec<String>,
}

/// Compares two catalogs by size and md5 (the bytes are not read).
pub fn diff(a: &Catalog, b: &Catalog) -> Diff {
    let (ma, mb) = (a.by_path(), b.by_path());
    let mut d = Diff::default();
    for (path, &ib) in &mb {
        match ma.get(path) {
            None => d.added.push(path.clone()),
            Some(&ia) => {
                let (ea, eb) = (a.entries.get(ia), b.entries.get(ib));
                let same = ea
                    .zip(eb)
                    .is_some_and(|(x, y)| x.size == y.size && x.md5.eq_ignore_ascii_case(&y.md5));
                if !same {
                    d.changed.push(path.clone());
                }
            }
        }
    }
    d.removed = ma
        .keys()
        .filter(|p| !mb.contains_key(*p))
        .cloned()
        .collect();
    d.added.sort();
    d.changed.sort();
    d.removed.sort();
    d
}

/// True when `name` is a catalog the game reads as data (not a `_sig.cat` signature).
pub fn is_data_catalog(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.ends_with(".cat") && !n.ends_with("_sig.cat")
}

fn refused(line: usize, message: String) -> Error {
    Error::new(ErrorKind::Refused, None, format!("line {line}"), message)
}

#[cfg(test)]
mod tests;
