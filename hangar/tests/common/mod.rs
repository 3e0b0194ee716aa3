#![allow(dead_code)]
//! Shared test helpers: the corpus (through HANGAR_CORPUS) and the folder glTF files go to for the
//! validator run in `.ci/run`.

mod door;
#[allow(unused_imports)]
pub use door::{convert, open};
use std::path::{Path, PathBuf};

/// The files of corpus folder `sub` ending in `ext` (case-insensitive), or `None` when HANGAR_CORPUS
/// is unset (a user's fresh clone: the test says it is skipped). With HANGAR_CORPUS set, a missing
/// folder or an empty listing fails.
pub fn corpus(sub: &str, ext: &str) -> Option<Vec<PathBuf>> {
    let root = corpus_root()?;
    let dir = root.join(sub);
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

/// The corpus folder (HANGAR_CORPUS), or `None` when unset. Either way the calling test leaves a
/// mark in `target/tmp/corpus-tests/` (`NAME.ran` or `NAME.skipped`), which `.ci/run` counts in its
/// last lines.
pub fn corpus_root() -> Option<PathBuf> {
    let root = std::env::var_os("HANGAR_CORPUS").map(PathBuf::from);
    let marks = Path::new(env!("CARGO_TARGET_TMPDIR")).join("corpus-tests");
    let test = std::thread::current()
        .name()
        .unwrap_or("unnamed")
        .replace("::", "-");
    let _ = std::fs::create_dir_all(&marks);
    let kind = if root.is_some() { "ran" } else { "skipped" };
    let _ = std::fs::write(marks.join(format!("{}.{kind}", test)), b"");
    if root.is_none() {
        eprintln!("skipped: HANGAR_CORPUS is not set, so this real-file test does not run");
    }
    root
}

/// Where a test writes glTF files; `.ci/run` validates everything under `target/tmp/gltf`.
/// Writes `text` at `rel` below `root`, making its folders (a mod or a game built by a test).
pub fn write_text(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

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

/// Floats as little-endian bytes, as glTF buffers hold them.
pub fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// u16s as little-endian bytes.
pub fn u16s(v: &[u16]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// `bytes` as a glTF buffer URI (`data:application/octet-stream;base64,...`).
pub fn octet_uri(bytes: &[u8]) -> String {
    use base64::Engine;
    format!(
        "data:application/octet-stream;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    )
}

/// A glTF buffer URI holding `floats` then `indices` (u16), and its length in bytes, as tests
/// build tiny meshes.
pub fn data_uri(floats: &[f32], indices: &[u16]) -> (String, usize) {
    let blob = [f32s(floats), u16s(indices)].concat();
    (octet_uri(&blob), blob.len())
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

/// The files of `all` whose names end in one of `suffixes` (each must be there).
pub fn choose(all: Vec<PathBuf>, suffixes: &[&str]) -> Vec<PathBuf> {
    let chosen: Vec<PathBuf> = all
        .into_iter()
        .filter(|f| suffixes.iter().any(|p| name(f).ends_with(p)))
        .collect();
    assert_eq!(chosen.len(), suffixes.len(), "missing corpus files");
    chosen
}

/// Everything a robustness test asks of a file; returns the first error.
pub type Exercise = fn(&[u8], &Path) -> Result<(), hangar::Error>;

fn placed(e: &hangar::Error, what: &str) {
    assert!(
        e.offset.is_some() || !e.path.is_empty(),
        "{what}: error without a place: {e}"
    );
}

/// Each file cut at the lengths `cuts` gives for its size: every error has a place. Returns how
/// many cuts failed.
pub fn check_cuts(files: &[PathBuf], cuts: fn(usize) -> Vec<usize>, exercise: Exercise) -> usize {
    let mut failed = 0;
    for f in files {
        let bytes = std::fs::read(f).unwrap();
        for cut in cuts(bytes.len()).into_iter().filter(|&c| c < bytes.len()) {
            if let Err(e) = exercise(&bytes[..cut], f) {
                placed(&e, &format!("{} cut at {cut}", name(f)));
                failed += 1;
            }
        }
    }
    failed
}

/// `rounds` copies of each file with 1 to 3 bits flipped, where `span(round, len)` says (the
/// bytes from its start to its end): no panic, and every error has a place. Returns (failed, total).
pub fn check_flips(
    files: &[PathBuf],
    seed: u64,
    rounds: usize,
    span: fn(usize, &[u8]) -> std::ops::Range<usize>,
    exercise: Exercise,
) -> (usize, usize) {
    let mut rng = Rng(seed);
    let (mut failed, mut total) = (0, 0);
    for f in files {
        let bytes = std::fs::read(f).unwrap();
        for round in 0..rounds {
            let mut b = bytes.clone();
            let r = span(round, &bytes);
            for _ in 0..1 + round % 3 {
                let at = r.start + (rng.next() as usize) % (r.end - r.start).max(1);
                b[at] ^= 1 << (rng.next() % 8);
            }
            total += 1;
            if let Err(e) = exercise(&b, f) {
                placed(&e, &name(f));
                failed += 1;
            }
        }
    }
    (failed, total)
}

/// Every file under `dir` (recursively) whose extension is one of `exts` (lower case), appended to
/// `out`.
pub fn walk(dir: &Path, exts: &[&str], out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            walk(&p, exts, out);
        } else if p
            .extension()
            .is_some_and(|e| exts.contains(&e.to_string_lossy().to_ascii_lowercase().as_str()))
        {
            out.push(p);
        }
    }
}

/// What hangar's own reader sees in an M3: the figures `.ci/check-m3.mjs` compares with what
/// mdx-m3-viewer sees in the same file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct M3Counts {
    pub modl_version: u32,
    pub vertices: usize,
    pub triangles: usize,
    pub bones: usize,
    pub sequences: usize,
    pub sequence_names: Vec<String>,
    pub attachment_points: usize,
    pub cameras: usize,
    pub lights: usize,
}

/// Reads `bytes` as an M3 with hangar's reader and counts what a viewer would show.
pub fn m3_counts(bytes: &[u8]) -> M3Counts {
    use hangar::formats::m3::{dump, read, scene};
    let (m3, _) = read::read(bytes).expect("hangar reads the M3 it wrote");
    let json = dump::to_json(&m3);
    let modl_version = json["sections"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["tag"] == "MODL"))
        .and_then(|s| s["version"].as_u64())
        .expect("a MODL section") as u32;
    let (s, _) = scene::to_scene(&m3, "x", &[]).expect("hangar makes a scene of the M3 it wrote");
    let marked = |key: &str| {
        s.nodes
            .iter()
            .filter(|n| n.extras.get("m3").is_some_and(|m| m.get(key).is_some()))
            .count()
    };
    M3Counts {
        modl_version,
        vertices: s.meshes.iter().map(|m| m.vertices.len()).sum(),
        triangles: s.meshes.iter().map(|m| m.triangle_count()).sum(),
        bones: s.skins.first().map_or(0, |k| k.joints.len()),
        sequences: s.animations.len(),
        sequence_names: s.animations.iter().map(|a| a.name.clone()).collect(),
        attachment_points: marked("attachmentPoint"),
        cameras: marked("camera"),
        lights: marked("light"),
    }
}

/// Where a test writes M3 files; `.ci/run` loads everything under `target/tmp/m3` with
/// mdx-m3-viewer (`.ci/check-m3.mjs`) and compares it with the `.m3.json` written beside each.
pub fn m3_out(test: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("m3").join(test);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Writes `bytes` as `dir/name` with hangar's counts of it beside (`name.json`); returns them.
pub fn write_m3_checked(dir: &Path, name: &str, bytes: &[u8]) -> M3Counts {
    let counts = m3_counts(bytes);
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    let mut exp = path.into_os_string();
    exp.push(".json");
    let c = &counts;
    let json = serde_json::json!({
        "modl_version": c.modl_version,
        "vertices": c.vertices,
        "triangles": c.triangles,
        "bones": c.bones,
        "sequences": c.sequences,
        "sequence_names": c.sequence_names,
        "attachment_points": c.attachment_points,
        "cameras": c.cameras,
        "lights": c.lights,
    });
    std::fs::write(exp, serde_json::to_vec_pretty(&json).unwrap()).unwrap();
    counts
}

/// Options that write a scene's glTF encoded as `gltf` says, without looking for its textures.
fn no_textures(gltf: hangar::GltfOptions) -> hangar::ConvertOptions {
    hangar::ConvertOptions {
        gltf,
        ..hangar::TextureOptions {
            mode: hangar::TextureMode::None,
            ..Default::default()
        }
        .into()
    }
}

/// `scene` as a .glb (no images) and the warnings.
pub fn to_glb(scene: &hangar::model::Scene) -> hangar::Result<(Vec<u8>, Vec<hangar::Warning>)> {
    to_glb_with(scene, Default::default())
}

/// [`to_glb`] encoded as `gltf` says (`--quantize`, `--compress`).
pub fn to_glb_with(
    scene: &hangar::model::Scene,
    gltf: hangar::GltfOptions,
) -> hangar::Result<(Vec<u8>, Vec<hangar::Warning>)> {
    hangar::write_scene(scene, "scene.glb", &no_textures(gltf)).map(|c| (c.bytes, c.warnings))
}

/// The glTF JSON of a .glb, unchecked (extensions and all).
pub fn glb_root(glb: &[u8]) -> gltf::json::Root {
    let g = gltf::Glb::from_slice(glb).expect("a glb");
    gltf::json::Root::from_slice(&g.json).expect("glTF JSON")
}

/// `scene` as a .gltf text (no images) and the warnings.
pub fn to_gltf_text(scene: &hangar::model::Scene) -> hangar::Result<String> {
    let c = hangar::write_scene(scene, "scene.gltf", &no_textures(Default::default()))?;
    Ok(String::from_utf8(c.bytes).expect("glTF text is UTF-8"))
}

/// The neutral scene of a .glb's bytes.
pub fn from_glb(glb: &[u8]) -> hangar::Result<hangar::model::Scene> {
    Ok(import(glb, Path::new("scene.glb"))?.scene)
}

/// A component written from `scene` as `xml` (and its `_data/` files, its .ani): every file by
/// its full path (the XML among them) and the warnings.
#[derive(Debug)]
pub struct Written {
    pub files: Vec<(PathBuf, Vec<u8>)>,
    pub warnings: Vec<hangar::Warning>,
}

pub fn from_scene(scene: &hangar::model::Scene, xml: &Path) -> hangar::Result<Written> {
    let c = hangar::write_scene(scene, xml, &hangar::ConvertOptions::default())?;
    let dir = xml.parent().unwrap_or(Path::new(""));
    let mut files: Vec<(PathBuf, Vec<u8>)> =
        c.files.into_iter().map(|(p, b)| (dir.join(p), b)).collect();
    files.push((xml.to_path_buf(), c.bytes));
    Ok(Written {
        files,
        warnings: c.warnings,
    })
}

/// The neutral scene of a component (its XML, or `GAME::path`) and the warnings.
pub fn component_scene(xml: &Path) -> hangar::Result<(hangar::model::Scene, Vec<hangar::Warning>)> {
    hangar::open(xml)?.to_scene()
}

/// True when `p`'s extension is `ext` (any case).
pub fn has_ext(p: &Path, ext: &str) -> bool {
    p.extension()
        .is_some_and(|e| e.to_string_lossy().eq_ignore_ascii_case(ext))
}

/// A glTF (.glb or text) read through the door: its neutral scene and the reader's warnings.
pub struct Imported {
    pub scene: hangar::model::Scene,
    pub warnings: Vec<hangar::Warning>,
}

/// `bytes` named `path` (its folder holds what a text glTF names) read as [`Imported`].
pub fn import(bytes: &[u8], path: &Path) -> hangar::Result<Imported> {
    let opened = open(bytes, path)?;
    let (scene, mut warnings) = opened.to_scene()?;
    warnings.splice(0..0, opened.warnings().iter().cloned());
    Ok(Imported { scene, warnings })
}

/// Every file under `dir`, recursively, appended to `out`.
pub fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files_under(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// `hangar::check_mod` on `dir` (no game): the check, and its findings of severity error.
pub fn mod_errors(dir: &Path) -> (hangar::ModCheck, Vec<hangar::Finding>) {
    let check = hangar::check_mod(dir, None).unwrap();
    let errors = check
        .findings
        .iter()
        .filter(|f| f.severity == hangar::Severity::Error)
        .cloned()
        .collect();
    (check, errors)
}
