//! The `.cat` index: one entry a line, split from the right because paths may hold spaces.

use super::{BadLine, Catalog, Entry};
use crate::error::{Result, Warning};
use std::collections::HashMap;

/// Reads a `.cat`. Tolerant: a line that does not parse is kept in `bad_lines` (with its number)
/// and reading goes on, so list and verify can still report everything else.
pub fn read(text: &[u8]) -> Result<(Catalog, Vec<Warning>)> {
    let mut cat = Catalog::default();
    let mut warnings = Vec::new();
    let mut offset: u64 = 0;
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut line_start: u64 = 0;
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
            Ok(s) => std::borrow::Cow::Borrowed(s),
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
                let key = crate::gamepath::normalize(path).unwrap_or_else(|_| path.to_lowercase());
                if let Some(first) = seen.insert(key, line_no) {
                    warnings.push(Warning::new(
                        Some(at),
                        format!("line {line_no}"),
                        format!(
                            "{path} is listed again (first on line {first}); the later one wins"
                        ),
                    ));
                }
                cat.entries.push(Entry {
                    path: path.to_string(),
                    size,
                    mtime,
                    md5: md5.to_ascii_lowercase(),
                    offset,
                    line: line_no,
                });
                offset = offset.saturating_add(size);
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
    Ok((cat, warnings))
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
