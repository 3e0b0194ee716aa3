//! File access: inputs are mapped (big dumps are never copied), outputs are written whole or not at all.

use crate::error::{Error, Result};
use std::io::Write;
use std::path::Path;

/// The bytes of an input file: mapped when large, read when small.
pub enum Input {
    Mapped(memmap2::Mmap),
    Read(Vec<u8>),
}

impl std::ops::Deref for Input {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Input::Mapped(m) => m,
            Input::Read(v) => v,
        }
    }
}

const MAP_FROM: u64 = 1 << 20;

pub fn read_input(path: &Path) -> Result<Input> {
    let f = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let len = f.metadata().map_err(|e| Error::io(path, e))?.len();
    if len >= MAP_FROM {
        // SAFETY: the map is read-only; hangar never writes to an input (see `write_output`), and a file
        // changed by another program while mapped gives wrong bytes, not undefined behaviour in practice.
        if let Ok(m) = unsafe { memmap2::Mmap::map(&f) } {
            return Ok(Input::Mapped(m));
        }
    }
    std::fs::read(path)
        .map(Input::Read)
        .map_err(|e| Error::io(path, e))
}

/// True when `a` and `b` name the same existing file.
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// Writes `bytes` to `path` through a temporary file in the same folder and a rename, so a reader
/// never sees half a file and a failed run leaves no file behind.
pub fn write_output(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.hangar-{}.tmp", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(Error::io(path, e));
    }
    Ok(())
}

/// True when `p` ends in `.ext` (any case).
pub fn has_ext(p: &Path, ext: &str) -> bool {
    p.extension().is_some_and(|e| e.eq_ignore_ascii_case(ext))
}
