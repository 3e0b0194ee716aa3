#![allow(dead_code)]
//! Shared by the benchmarks: the best-of timing the printed summaries use.

#[path = "../../tests/common/door.rs"]
mod door;
use criterion::black_box;
#[allow(unused_imports)]
pub use door::{convert, open};
use std::path::Path;
use std::time::Instant;

/// Best of `runs` timings, in MB/s of `bytes`.
pub fn mbps(bytes: u64, runs: usize, f: impl Fn() -> usize) -> f64 {
    let best = (0..runs)
        .map(|_| {
            let t = Instant::now();
            black_box(f());
            t.elapsed()
        })
        .min()
        .unwrap();
    bytes as f64 / 1e6 / best.as_secs_f64()
}

/// The best time of each of `fs`, in seconds, over `rounds` rounds that run each once in turn: load
/// from other programs falls on all of them alike, so their ratios hold on a busy machine.
pub fn race(rounds: usize, fs: &[&dyn Fn() -> usize]) -> Vec<f64> {
    let mut best = vec![f64::MAX; fs.len()];
    for _ in 0..rounds {
        for (b, f) in best.iter_mut().zip(fs) {
            let t = Instant::now();
            black_box(f());
            *b = b.min(t.elapsed().as_secs_f64());
        }
    }
    best
}

/// The machine's 1-minute load average (Linux), to read the figures by; "?" elsewhere.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

/// `scene` as a .glb with no images (the textures are not the point) and the warnings.
pub fn to_glb(scene: &hangar::model::Scene) -> hangar::Result<(Vec<u8>, Vec<hangar::Warning>)> {
    let opts = hangar::TextureOptions {
        mode: hangar::TextureMode::None,
        ..Default::default()
    };
    hangar::write_scene(scene, "scene.glb", &opts.into()).map(|c| (c.bytes, c.warnings))
}

/// The neutral scene of a .glb's bytes.
pub fn from_glb(glb: &[u8]) -> hangar::model::Scene {
    open(glb, Path::new("scene.glb"))
        .unwrap()
        .to_scene()
        .unwrap()
        .0
}

/// True when `p`'s extension is `ext` (any case).
pub fn has_ext(p: &Path, ext: &str) -> bool {
    p.extension()
        .is_some_and(|e| e.to_string_lossy().eq_ignore_ascii_case(ext))
}

/// A seeded xorshift64 generator: the same synthetic files on every run.
pub fn xorshift() -> impl FnMut() -> u64 {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    }
}
