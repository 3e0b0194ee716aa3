//! The corpus for unit tests that need real files (as the integration tests' `common::corpus`):
//! the files of folder `sub` ending in `ext`, or `None` without HANGAR_CORPUS.

use std::path::PathBuf;

pub(crate) fn corpus(sub: &str, ext: &str) -> Option<Vec<PathBuf>> {
    let dir = PathBuf::from(std::env::var_os("HANGAR_CORPUS")?).join(sub);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension()
                .is_some_and(|e| e.to_string_lossy().eq_ignore_ascii_case(ext))
        })
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no .{ext} files in {}", dir.display());
    Some(files)
}
