//! Game paths as the game compares them. Below the catalogs and the game view, which both key
//! their files by them.

use crate::error::{Error, ErrorKind, Result};

/// A game path in the form the game compares: lower case, `/`-separated, no leading `/`, no `.` or
/// `..` parts. A path that climbs above the root is refused: a file must not reach outside its view.
pub fn normalize(path: &str) -> Result<String> {
    // Most paths (a catalog's, hundreds of thousands of them) are already in this form.
    if is_normal(path) {
        return Ok(path.to_string());
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
    Ok(parts.join("/").to_lowercase())
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
    !path.is_empty()
        && path
            .bytes()
            .all(|b| b.is_ascii() && !b.is_ascii_uppercase() && b != b'\\')
        && path
            .split('/')
            .all(|p| !p.is_empty() && p != "." && p != "..")
        && !path.split('/').next().is_some_and(|p| p.ends_with(':'))
}
