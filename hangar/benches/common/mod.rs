//! Shared by the benchmarks: the best-of timing the printed summaries use.

use criterion::black_box;
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
