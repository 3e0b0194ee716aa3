//! File access: inputs are mapped (big dumps are never copied), outputs are written whole or not at all.

use crate::error::{Error, Result};
use std::io::Write;
use std::path::Path;

/// The bytes of an input file: mapped when large, read when small.
pub enum Input {
    Mapped(memmap2::Mmap),
    Read(Vec<u8>),
    /// One entry of a catalog, sliced from its mapped `.dat` (the index of the entry).
    Entry(std::sync::Arc<crate::formats::catalog::Opened>, usize),
}

impl std::ops::Deref for Input {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Input::Mapped(m) => m,
            Input::Read(v) => v,
            Input::Entry(c, i) => c
                .catalog
                .entries
                .get(*i)
                .and_then(|e| c.dat.entry(e))
                .unwrap_or(&[]),
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
    write_output_with(path, |f| f.write_all(bytes))
}

/// [`write_output`] for outputs written piece by piece (a catalog's `.dat`): `fill` writes into the
/// temporary file, which replaces `path` only when it succeeds.
pub fn write_output_with(
    path: &Path,
    fill: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
) -> Result<()> {
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
        fill(&mut f)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(Error::io(path, e));
    }
    Ok(())
}

/// Where the textures of a model `input` converted to `output` are looked for: beside the output,
/// then under each folder above the input (a mod's root holds `Assets/`). The folders are worked
/// out once for all of a model's textures.
pub struct TextureSearch {
    out_dir: Option<std::path::PathBuf>,
    roots: Vec<std::path::PathBuf>,
}

impl TextureSearch {
    pub fn new(input: &Path, output: &Path) -> Self {
        let out_dir = absolute(output.parent().unwrap_or(Path::new(".")));
        let mut roots: Vec<std::path::PathBuf> = out_dir.iter().cloned().collect();
        let mut dir = absolute(input.parent().unwrap_or(Path::new(".")));
        while let Some(d) = dir {
            roots.push(d.clone());
            dir = d.parent().map(Path::to_path_buf);
        }
        TextureSearch { out_dir, roots }
    }

    /// The texture the game names by `game_path` (relative to the game's data root, e.g.
    /// `Assets/Textures/marine_diff.dds`), as is or as `.png` (a converted copy): its path relative
    /// to the output's folder, with `/` separators.
    pub fn find(&self, game_path: &str) -> Option<String> {
        let out_dir = self.out_dir.as_ref()?;
        let rel = game_path.replace('\\', "/");
        let rel = rel.trim_start_matches('/');
        let png = Path::new(rel).with_extension("png");
        for root in &self.roots {
            for candidate in [root.join(rel), root.join(&png)] {
                if candidate.is_file() {
                    return relative(out_dir, &candidate);
                }
            }
        }
        None
    }
}

fn absolute(p: &Path) -> Option<std::path::PathBuf> {
    let p = if p.as_os_str().is_empty() {
        Path::new(".")
    } else {
        p
    };
    std::fs::canonicalize(p).ok()
}

/// `to` relative to the folder `from` (both absolute), `/`-separated.
fn relative(from: &Path, to: &Path) -> Option<String> {
    let to = std::fs::canonicalize(to).ok()?;
    let a: Vec<_> = from.components().collect();
    let b: Vec<_> = to.components().collect();
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    if common == 0 {
        return None;
    }
    let mut parts: Vec<String> = vec!["..".into(); a.len() - common];
    parts.extend(
        b[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    Some(parts.join("/"))
}

/// True when `p` ends in `.ext` (any case).
pub fn has_ext(p: &Path, ext: &str) -> bool {
    p.extension().is_some_and(|e| e.eq_ignore_ascii_case(ext))
}
