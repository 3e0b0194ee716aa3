//! M3 parse and M3 -> GLB throughput (MB/s of input file bytes) over the whole corpus, beside a
//! plain memcpy of the same files. Files are taken one after the other (one core) and as a batch
//! in parallel (rayon, as `hangar convert FOLDER` does).
//!
//! Input: every .m3 and .m3a in $HANGAR_CORPUS/m3. Run: `cargo bench -p hangar --bench m3`.

use criterion::{black_box, criterion_group, Criterion, Throughput};
use hangar::formats::m3;
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::time::Duration;

mod common;
use common::mbps;

fn inputs() -> Option<Vec<(PathBuf, Vec<u8>)>> {
    let dir = Path::new(&std::env::var_os("HANGAR_CORPUS")?).join("m3");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("m3") || e.eq_ignore_ascii_case("m3a"))
        })
        .collect();
    files.sort();
    Some(
        files
            .into_iter()
            .map(|p| (p.clone(), std::fs::read(&p).unwrap()))
            .collect(),
    )
}

type Files = [(PathBuf, Vec<u8>)];

fn parse_one(b: &[u8]) -> usize {
    m3::read::read(b).unwrap().0.sections.len()
}

/// Parse and the neutral scene: the part of a conversion any writer starts from.
fn scene(b: &[u8]) -> hangar::model::Scene {
    let (file, _) = m3::read::read(b).unwrap();
    m3::scene::to_scene(&file, "m", &[]).unwrap().0
}

fn scene_one(b: &[u8]) -> usize {
    scene(b).nodes.len()
}

fn glb_one(b: &[u8]) -> usize {
    common::to_glb(&scene(b)).unwrap().0.len()
}

fn serial(files: &Files, f: fn(&[u8]) -> usize) -> usize {
    files.iter().map(|(_, b)| f(b)).sum()
}

fn parallel(files: &Files, f: fn(&[u8]) -> usize) -> usize {
    files.par_iter().map(|(_, b)| f(b)).sum()
}

fn memcpy(files: &Files) -> usize {
    files.iter().map(|(_, b)| black_box(b.to_vec()).len()).sum()
}

fn bench(c: &mut Criterion) {
    let Some(files) = inputs() else { return };
    let total: u64 = files.iter().map(|(_, b)| b.len() as u64).sum();
    let mut g = c.benchmark_group("m3");
    g.throughput(Throughput::Bytes(total));
    g.measurement_time(Duration::from_secs(4));
    g.bench_function("memcpy", |b| b.iter(|| black_box(memcpy(&files))));
    g.bench_function("parse", |b| b.iter(|| black_box(serial(&files, parse_one))));
    g.bench_function("m3_to_scene", |b| {
        b.iter(|| black_box(serial(&files, scene_one)))
    });
    g.bench_function("m3_to_glb", |b| {
        b.iter(|| black_box(serial(&files, glb_one)))
    });
    g.bench_function("m3_to_glb_parallel", |b| {
        b.iter(|| black_box(parallel(&files, glb_one)))
    });
    g.finish();
}

fn summary() {
    let Some(files) = inputs() else {
        println!("HANGAR_CORPUS is not set: the M3 benchmark needs the corpus (HANGAR_CORPUS/m3)");
        return;
    };
    let total: u64 = files.iter().map(|(_, b)| b.len() as u64).sum();
    let copy = mbps(total, 20, || memcpy(&files));
    let parse = mbps(total, 10, || serial(&files, parse_one));
    let scene = mbps(total, 5, || serial(&files, scene_one));
    let glb = mbps(total, 5, || serial(&files, glb_one));
    let glb_par = mbps(total, 5, || parallel(&files, glb_one));
    println!(
        "\nM3 summary over {} files, {:.2} MB of input:",
        files.len(),
        total as f64 / 1e6
    );
    println!("  memcpy              {copy:9.1} MB/s");
    println!(
        "  parse               {parse:9.1} MB/s  ({:.3} x memcpy)",
        parse / copy
    );
    println!(
        "  M3 -> scene         {scene:9.1} MB/s  ({:.3} x memcpy)",
        scene / copy
    );
    println!(
        "  M3 -> GLB           {glb:9.1} MB/s  ({:.3} x memcpy)",
        glb / copy
    );
    println!(
        "  M3 -> GLB, batch    {glb_par:9.1} MB/s  ({:.3} x memcpy, {} threads)",
        glb_par / copy,
        rayon::current_num_threads()
    );
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    summary();
}
