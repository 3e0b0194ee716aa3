//! The `.cat` index: one entry a line, split from the right because paths may hold spaces.

use super::{BadLine, Catalog, Entry, PathIndex};
use crate::error::{Result, Warning};
use std::borrow::Cow;
use std::collections::HashMap;

/// Reads a `.cat`. Tolerant: a line that does not parse is kept in `bad_lines` (with its number)
/// and reading goes on, so list and verify can still report everything else.
pub fn read(text: &[u8]) -> Result<(Catalog, Vec<Warning>)> {
    read_indexed(text).map(|(cat, _, warnings)| (cat, warnings))
}

/// [`read`], with the entries' [`PathIndex`]: duplicates are found by the sort that builds it,
/// so a game's 300,000 paths are neither hashed nor copied.
pub fn read_indexed(text: &[u8]) -> Result<(Catalog, PathIndex, Vec<Warning>)> {
    let mut cat = Catalog::default();
    let mut warnings = Vec::new();
    let mut offset: u64 = 0;
    // Where each entry's line starts, for the duplicates' messages.
    let mut starts: Vec<u64> = Vec::new();
    let mut line_start: u64 = 0;
    let lines = text.iter().filter(|&&b| b == b'\n').count();
    cat.entries.reserve(lines);
    starts.reserve(lines);
    for (i, raw) in text.split(|&b| b == b'\n').enumerate() {
        let line_no = i.saturating_add(1);
        let at = line_start;
        line_start = line_start
            .saturating_add(raw.len() as u64)
            .saturating_add(1);
        let raw = match raw.strip_suffix(b"\r") {
            Some(r) => {
                cat.crlf = true;
                r
            }
            None => raw,
        };
        if raw.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let line = match std::str::from_utf8(raw) {
            Ok(s) => Cow::Borrowed(s),
            Err(_) => {
                warnings.push(Warning::new(
                    Some(at),
                    format!("line {line_no}"),
                    "the path is not UTF-8; unreadable bytes shown as U+FFFD",
                ));
                String::from_utf8_lossy(raw)
            }
        };
        match parse_line(&line) {
            Ok((path, size, mtime, md5)) => {
                cat.entries.push(Entry {
                    path: path.to_string(),
                    size,
                    mtime,
                    md5: md5.to_ascii_lowercase(),
                    offset,
                    line: line_no,
                });
                offset = offset.saturating_add(size);
                starts.push(at);
            }
            Err(message) => {
                warnings.push(Warning::new(
                    Some(at),
                    format!("line {line_no}"),
                    message.clone(),
                ));
                cat.bad_lines.push(BadLine {
                    line: line_no,
                    message,
                });
            }
        }
    }
    let (index, built) = PathIndex::build(&cat.entries);
    let mut duplicates = built.hidden;
    // Paths that lead out of the game folder are in no index (few: their duplicates by name).
    let mut outside: HashMap<String, usize> = HashMap::new();
    for i in built.outside {
        if let Some(e) = cat.entries.get(i) {
            if let Some(first) = outside.insert(e.path.to_lowercase(), i) {
                duplicates.push((i, first));
            }
        }
    }
    for (later, first) in duplicates {
        if let (Some(e), Some(f)) = (cat.entries.get(later), cat.entries.get(first)) {
            let at = starts.get(later).copied().unwrap_or(0);
            warnings.push(listed_again(&e.path, e.line, f.line, at));
        }
    }
    // In line order, as one pass would have found them.
    warnings.sort_by_key(|w| w.offset);
    if cat.crlf {
        warnings.push(Warning::new(
            None,
            "",
            format!(
                "lines end in CR LF: the .cat went through a line-ending conversion (add `{}` to .gitattributes)",
                super::GITATTRIBUTES.join("` and `")
            ),
        ));
    }
    Ok((cat, index, warnings))
}

fn listed_again(path: &str, line: usize, first: usize, at: u64) -> Warning {
    Warning::new(
        Some(at),
        format!("line {line}"),
        format!("{path} is listed again (first on line {first}); the later one wins"),
    )
}

fn parse_line(line: &str) -> std::result::Result<(&str, u64, i64, &str), String> {
    let mut parts = line.rsplitn(4, ' ');
    let (Some(md5), Some(mtime), Some(size), Some(path)) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(format!(
            "expected `path size mtime md5`, found {:?}",
            short(line)
        ));
    };
    if path.is_empty() {
        return Err("empty path".into());
    }
    let size = size
        .parse::<u64>()
        .map_err(|_| format!("size {:?} is not a number", short(size)))?;
    let mtime = mtime
        .parse::<i64>()
        .map_err(|_| format!("mtime {:?} is not a number", short(mtime)))?;
    if md5.len() != 32 || !md5.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!("md5 {:?} is not 32 hex digits", short(md5)));
    }
    Ok((path, size, mtime, md5))
}

fn short(s: &str) -> String {
    s.chars().take(80).collect()
}
