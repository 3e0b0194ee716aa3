//! Does a `.dat` hold what its `.cat` says? Sizes must add up to the `.dat`, every md5 must match
//! (hashed in parallel). When they do not, the usual culprit is tried: git's line-ending
//! conversion, which shortens (CR LF -> LF) or lengthens (LF -> CR LF) text entries.

use super::{Catalog, Dat, Entry, Opened};
use md5::{Digest, Md5};
use rayon::prelude::*;

/// The `.gitattributes` lines that keep git's hands off catalogs.
pub const GITATTRIBUTES: [&str; 2] = ["*.cat binary", "*.dat binary"];

/// One thing wrong with a catalog.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Damage {
    /// The `.cat` line, when the damage is one entry's.
    pub line: Option<usize>,
    pub path: String,
    pub message: String,
}

/// How git's line-ending conversion explains the damage.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LineEndings {
    /// `"CR LF -> LF"` (the .dat got shorter) or `"LF -> CR LF"` (longer).
    pub conversion: String,
    /// Entries whose bytes, converted back, match their md5 again.
    pub entries: Vec<String>,
    /// Line breaks converted, in all (the .dat's length is off by this).
    pub line_breaks: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Verdict {
    pub entries: usize,
    /// Sum of the sizes in the `.cat`.
    pub expected_len: u64,
    pub dat_len: u64,
    pub damage: Vec<Damage>,
    pub line_endings: Option<LineEndings>,
}

impl Verdict {
    pub fn ok(&self) -> bool {
        self.damage.is_empty()
    }
}

/// True when `md5` (lower-case hex) is the digest of `bytes`; 32 zeros stand for an empty file.
pub fn md5_matches(bytes: &[u8], md5: &str) -> bool {
    (bytes.is_empty() && md5.bytes().all(|b| b == b'0')) || hex(&Md5::digest(bytes)) == md5
}

pub fn md5_hex(bytes: &[u8]) -> String {
    hex(&Md5::digest(bytes))
}

fn hex(d: &[u8]) -> String {
    use std::fmt::Write;
    d.iter().fold(String::with_capacity(32), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// Checks every entry of `c`; `progress` is told the bytes hashed as they are.
pub fn verify(c: &Opened, progress: &(dyn Fn(u64) + Sync)) -> Verdict {
    let cat = &c.catalog;
    let dat = &c.dat;
    let mut damage: Vec<Damage> = cat
        .bad_lines
        .iter()
        .map(|b| Damage {
            line: Some(b.line),
            path: String::new(),
            message: format!(
                "{} (entries after it may sit at the wrong place)",
                b.message
            ),
        })
        .collect();
    if cat.crlf {
        damage.push(Damage {
            line: None,
            path: String::new(),
            message: "the .cat's lines end in CR LF: it went through git's line-ending conversion"
                .into(),
        });
    }
    let expected_len = cat.data_len();
    let dat_len = dat.bytes().len() as u64;
    if expected_len != dat_len {
        damage.push(Damage {
            line: None,
            path: String::new(),
            message: format!(
                "the .cat's sizes add up to {expected_len} bytes but the .dat holds {dat_len} ({:+})",
                i128::from(dat_len) - i128::from(expected_len)
            ),
        });
    }
    let mut per_entry: Vec<Damage> = cat
        .entries
        .par_iter()
        .filter_map(|e| {
            let r = check_entry(e, dat);
            progress(e.size);
            r
        })
        .collect();
    per_entry.sort_by_key(|d| d.line);
    let entry_damage = !per_entry.is_empty();
    damage.extend(per_entry);
    let line_endings = if entry_damage || expected_len != dat_len {
        diagnose_line_endings(cat, dat.bytes())
    } else {
        None
    };
    Verdict {
        entries: cat.entries.len(),
        expected_len,
        dat_len,
        damage,
        line_endings,
    }
}

fn check_entry(e: &Entry, dat: &Dat) -> Option<Damage> {
    let message = match dat.entry(e) {
        None => format!(
            "runs past the end of the .dat (bytes {}..{}, the .dat has {})",
            e.offset,
            e.offset.saturating_add(e.size),
            dat.bytes().len()
        ),
        Some(b) if md5_matches(b, &e.md5) => return None,
        Some(b) => format!(
            "md5 differs: the .cat says {}, the bytes at {} give {}",
            e.md5,
            e.offset,
            md5_hex(b)
        ),
    };
    Some(Damage {
        line: Some(e.line),
        path: e.path.clone(),
        message,
    })
}

/// Walks the `.dat` entry by entry, undoing a line-ending conversion where the bytes alone do not
/// match: when every entry then matches and the `.dat` is used up exactly, that conversion is what
/// damaged the catalog.
pub fn diagnose_line_endings(cat: &Catalog, dat: &[u8]) -> Option<LineEndings> {
    let mut pos = 0usize;
    let mut entries = Vec::new();
    let mut line_breaks = 0u64;
    let mut conversion = None;
    for e in &cat.entries {
        let rest = dat.get(pos..)?;
        let size = usize::try_from(e.size).ok()?;
        if rest.get(..size).is_some_and(|b| md5_matches(b, &e.md5)) {
            pos = pos.checked_add(size)?;
            continue;
        }
        let (used, breaks, kind) = if let Some((u, k)) = undo(rest, size, &e.md5, true) {
            (u, k, "CR LF -> LF")
        } else {
            let (u, k) = undo(rest, size, &e.md5, false)?;
            (u, k, "LF -> CR LF")
        };
        conversion.get_or_insert(kind);
        pos = pos.checked_add(used)?;
        line_breaks = line_breaks.saturating_add(breaks);
        entries.push(e.path.clone());
    }
    (pos == dat.len() && !entries.is_empty()).then(|| LineEndings {
        conversion: conversion.unwrap_or_default().to_string(),
        entries,
        line_breaks,
    })
}

/// Rebuilds `size` original bytes from the start of `damaged`: with `restore_cr`, each LF becomes
/// CR LF again; without, each CR LF becomes LF. Returns the damaged bytes used and the line breaks
/// changed when the result has the md5.
fn undo(damaged: &[u8], size: usize, md5: &str, restore_cr: bool) -> Option<(usize, u64)> {
    // The size comes from the .cat: no more than the damaged bytes can give back (fuzzing found a
    // terabyte entry allocated here).
    let most = if restore_cr {
        damaged.len().saturating_mul(2)
    } else {
        damaged.len()
    };
    if size > most {
        return None;
    }
    let mut out = Vec::with_capacity(size);
    let mut used = 0usize;
    let mut breaks = 0u64;
    let mut it = damaged.iter().copied().peekable();
    while out.len() < size {
        let b = it.next()?;
        used += 1;
        if restore_cr && b == b'\n' && out.last() != Some(&b'\r') {
            out.push(b'\r');
            breaks += 1;
        } else if !restore_cr && b == b'\r' && it.peek() == Some(&b'\n') {
            it.next();
            used += 1;
            out.push(b'\n');
            breaks += 1;
            continue;
        }
        out.push(b);
    }
    (breaks > 0 && out.len() == size && md5_matches(&out, md5)).then_some((used, breaks))
}
