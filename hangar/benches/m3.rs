//! M3 parse and M3 -> GLB throughput (MB/s of input file bytes) over the whole corpus, beside a
//! plain memcpy of the same files. Files are taken one after the other (one core) and as a batch
//! in parallel (rayon, as `hangar convert FOLDER` does). The summary's ratio line races every file
//! read from disk (the page cache) and converted to GLB in memory against the in-process baseline
//! of the same files read and their bytes copied once, in the same rounds.
//!
//! Input: every .m3 and .m3a in $HANGAR_CORPUS/m3. Run: `cargo bench -p hangar --bench m3`.

use criterion::{black_box, criterion_group, Criterion, Throughput};
use hangar::formats::m3;
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::time::Duration;

mod common;
use common::{load_average, race};

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

/// The baseline: every file read from disk and its bytes copied once (what any converter must at least do).
fn read_copy(files: &Files) -> usize {
    files
        .iter()
        .map(|(p, _)| black_box(std::fs::read(p).unwrap().to_vec()).len())
        .sum()
}

/// Every file read from disk and converted to a GLB in memory, one after the other.
fn read_glb(files: &Files) -> usize {
    files
        .iter()
        .map(|(p, _)| glb_one(&std::fs::read(p).unwrap()))
        .sum()
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
    let mb = |secs: f64| total as f64 / 1e6 / secs;
    let t = race(
        10,
        &[
            &|| memcpy(&files),
            &|| serial(&files, parse_one),
            &|| serial(&files, scene_one),
            &|| serial(&files, glb_one),
            &|| parallel(&files, glb_one),
            &|| read_copy(&files),
            &|| read_glb(&files),
        ],
    );
    let [copy, parse, scene, glb, glb_par, base, whole] = t[..] else {
        unreachable!()
    };
    println!(
        "\nM3 summary over {} files, {:.2} MB of input, best of 10 rounds, load average {}:",
        files.len(),
        total as f64 / 1e6,
        load_average()
    );
    println!("  memcpy              {:9.1} MB/s", mb(copy));
    for (what, secs) in [("parse", parse), ("M3 -> scene", scene), ("M3 -> GLB", glb)] {
        println!(
            "  {what:<19} {:9.1} MB/s  ({:.3} x memcpy)",
            mb(secs),
            copy / secs
        );
    }
    println!(
        "  M3 -> GLB, batch    {:9.1} MB/s  ({:.3} x memcpy, {} threads)",
        mb(glb_par),
        copy / glb_par,
        rayon::current_num_threads()
    );
    println!(
        "  ratio: read + M3 -> GLB {:.1} ms, baseline read + copy {:.1} ms: the conversion costs {:.2} x the baseline",
        whole * 1e3,
        base * 1e3,
        whole / base
    );
}

criterion_group!(benches, bench);

fn main() {
    hangar::keep_freed_memory(); // as the CLI does
    benches();
    Criterion::default().configure_from_args().final_summary();
    summary();
}
