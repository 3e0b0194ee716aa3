#![allow(dead_code)]
//! Shared test helpers: the corpus (through HANGAR_CORPUS) and the folder glTF files go to for the
//! validator run in `.ci/run`.

use std::path::{Path, PathBuf};

/// The files of corpus folder `sub` ending in `ext` (case-insensitive), or `None` when HANGAR_CORPUS
/// is unset (a user's fresh clone: the test says it is skipped). With HANGAR_CORPUS set, a missing
/// folder or an empty listing fails.
pub fn corpus(sub: &str, ext: &str) -> Option<Vec<PathBuf>> {
    let Some(root) = std::env::var_os("HANGAR_CORPUS") else {
        eprintln!("skipped: HANGAR_CORPUS is not set, so the corpus tests do not run");
        return None;
    };
    let dir = Path::new(&root).join(sub);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| {
            panic!(
                "HANGAR_CORPUS is set but {} cannot be read: {e}",
                dir.display()
            )
        })
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

/// Where a test writes glTF files; `.ci/run` validates everything under `target/tmp/gltf`.
pub fn gltf_out(test: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("gltf")
        .join(test);
    std::fs::create_dir_all(&d).unwrap();
    d
}

pub fn name(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

/// Reads a .glb with the `gltf` crate: the document and its binary chunk.
pub fn load_glb(bytes: &[u8]) -> (gltf::Document, Vec<u8>) {
    let g = gltf::Gltf::from_slice(bytes).expect("a valid glb");
    let blob = g.blob.clone().unwrap_or_default();
    (g.document, blob)
}

/// A small seeded generator (xorshift64) for reproducible bit flips.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// The file of `files` whose name ends in `suffix`, and its bytes.
pub fn pick(files: &[PathBuf], suffix: &str) -> (PathBuf, Vec<u8>) {
    let f = files
        .iter()
        .find(|f| name(f).ends_with(suffix))
        .unwrap_or_else(|| panic!("no corpus file ends in {suffix}"))
        .clone();
    let bytes = std::fs::read(&f).unwrap();
    (f, bytes)
}
