//! Texture throughput: every .dds and .gz under $HANGAR_CORPUS/textures decoded and encoded as PNG
//! (fast compression, as model conversion does), one file after the other and as a batch on all
//! cores (rayon). Decoded pixels per second are reported beside the criterion figures.
//! Run: `cargo bench -p hangar --bench textures`.

use criterion::{black_box, criterion_group, Criterion, Throughput};
use hangar::formats::dds::{self, PngCompression};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            walk(&p, out);
        } else if p
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("dds") || e.eq_ignore_ascii_case("gz"))
        {
            out.push(p);
        }
    }
}

fn inputs() -> Option<Vec<Vec<u8>>> {
    let dir = Path::new(&std::env::var_os("HANGAR_CORPUS")?).join("textures");
    let mut files = Vec::new();
    walk(&dir, &mut files);
    files.sort();
    Some(files.iter().map(|p| std::fs::read(p).unwrap()).collect())
}

/// Pixels of one texture decoded and encoded.
fn one(b: &[u8], level: PngCompression) -> u64 {
    let png = dds::to_png(b, level).unwrap();
    u64::from(png.width) * u64::from(png.height)
}

fn serial(files: &[Vec<u8>], level: PngCompression) -> u64 {
    files.iter().map(|b| one(b, level)).sum()
}

fn parallel(files: &[Vec<u8>], level: PngCompression) -> u64 {
    files.par_iter().map(|b| one(b, level)).sum()
}

fn bench(c: &mut Criterion) {
    let Some(files) = inputs() else { return };
    let pixels = serial(&files, PngCompression::Fast);
    let mut g = c.benchmark_group("textures");
    g.throughput(Throughput::Elements(pixels));
    g.measurement_time(Duration::from_secs(5));
    g.sample_size(10);
    g.bench_function("dds_to_png", |b| {
        b.iter(|| black_box(serial(&files, PngCompression::Fast)))
    });
    g.bench_function("dds_to_png_parallel", |b| {
        b.iter(|| black_box(parallel(&files, PngCompression::Fast)))
    });
    g.bench_function("dds_to_png_best_parallel", |b| {
        b.iter(|| black_box(parallel(&files, PngCompression::Best)))
    });
    g.finish();
}

fn summary() {
    let Some(files) = inputs() else {
        println!("HANGAR_CORPUS is not set: the texture benchmark needs HANGAR_CORPUS/textures");
        return;
    };
    let rate = |f: &dyn Fn() -> u64| {
        let t = Instant::now();
        let n = f();
        n as f64 / t.elapsed().as_secs_f64() / 1e6
    };
    let s = rate(&|| serial(&files, PngCompression::Fast));
    let p = rate(&|| parallel(&files, PngCompression::Fast));
    println!(
        "\ntextures: {} files; DDS -> PNG {s:.1} Mpixel/s on one core, {p:.1} Mpixel/s on {} threads",
        files.len(),
        rayon::current_num_threads()
    );
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    summary();
}
