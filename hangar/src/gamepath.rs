//! Game paths as the game compares them. Below the catalogs and the game view, which both key
//! their files by them.

use crate::error::{Error, ErrorKind, Result};
use std::borrow::Cow;

/// A game path in the form the game compares: lower case, `/`-separated, no leading `/`, no `.` or
/// `..` parts. A path that climbs above the root is refused: a file must not reach outside its view.
pub fn normalize(path: &str) -> Result<String> {
    normalize_cow(path).map(Cow::into_owned)
}

/// [`normalize`], borrowing `path` when it is already in that form: most of a catalog's
/// hundreds of thousands of paths are, and indexing them then copies nothing.
pub fn normalize_cow(path: &str) -> Result<Cow<'_, str>> {
    if is_normal(path) {
        return Ok(Cow::Borrowed(path));
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split(['/', '\\']) {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err(outside(path));
                }
            }
            p => parts.push(p),
        }
    }
    if parts.first().is_some_and(|p| p.ends_with(':')) {
        // `C:\x`: a drive, not a path inside the game.
        return Err(outside(path));
    }
    Ok(Cow::Owned(parts.join("/").to_lowercase()))
}

pub(crate) fn outside(path: &str) -> Error {
    Error::new(
        ErrorKind::Refused,
        None,
        "",
        format!("{path:?} leads outside the game folder: refused"),
    )
}

/// True when [`normalize`] would give `path` back unchanged: lower-case ASCII parts, none empty,
/// `.` or `..`, the first not a drive.
fn is_normal(path: &str) -> bool {
    // One pass over the bytes: a game's catalogs hold 300,000 paths.
    let b = path.as_bytes();
    let mut part = 0; // where the current part starts
    let mut first = true;
    for i in 0..=b.len() {
        let c = b.get(i).copied().unwrap_or(b'/');
        if c == b'/' {
            let p = b.get(part..i).unwrap_or_default();
            if matches!(p, b"" | b"." | b"..") || (first && p.ends_with(b":")) {
                return false;
            }
            first = false;
            part = i + 1;
        } else if !c.is_ascii() || c.is_ascii_uppercase() || c == b'\\' {
            return false;
        }
    }
    true
}
