//! XMF read+decode and XMF -> GLB throughput (MB/s of input file bytes), beside zlib inflate alone
//! on the same buffers and a plain memcpy of the files.
//!
//! Input: every .xmf in $HANGAR_CORPUS/x4, else the samples. Run: `cargo bench -p hangar --bench xmf`.

use criterion::{black_box, criterion_group, Criterion, Throughput};
use hangar::formats::xmf::{self, mesh};
use hangar::model::Role;
use std::path::{Path, PathBuf};
use std::time::Duration;

mod common;
use common::mbps;

fn inputs() -> Vec<(PathBuf, Vec<u8>)> {
    let dir = std::env::var_os("HANGAR_CORPUS")
        .map(|c| Path::new(&c).join("x4"))
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples"));
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("xmf")))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| (p.clone(), std::fs::read(&p).unwrap()))
        .collect()
}

fn inflate_all(files: &[(PathBuf, Vec<u8>)]) -> usize {
    let mut n = 0;
    for (_, b) in files {
        let (x, _) = xmf::read::read(b).unwrap();
        for (i, buf) in x.buffers.iter().enumerate() {
            n += mesh::inflate(buf, i).unwrap().len();
        }
    }
    n
}

fn read_decode(files: &[(PathBuf, Vec<u8>)]) -> usize {
    files
        .iter()
        .map(|(_, b)| {
            let (x, _) = xmf::read::read(b).unwrap();
            mesh::to_mesh(&x, "m").unwrap().0.vertices.len()
        })
        .sum()
}

fn to_glb(files: &[(PathBuf, Vec<u8>)]) -> usize {
    files
        .iter()
        .map(|(_, b)| {
            let (x, _) = xmf::read::read(b).unwrap();
            let (scene, _) = mesh::to_scene(&x, "m", Role::Visual).unwrap();
            common::to_glb(&scene).unwrap().0.len()
        })
        .sum()
}

fn memcpy(files: &[(PathBuf, Vec<u8>)]) -> usize {
    files.iter().map(|(_, b)| black_box(b.to_vec()).len()).sum()
}

fn bench(c: &mut Criterion) {
    let files = inputs();
    let total: u64 = files.iter().map(|(_, b)| b.len() as u64).sum();
    let mut g = c.benchmark_group("xmf");
    g.throughput(Throughput::Bytes(total));
    g.measurement_time(Duration::from_secs(4));
    g.bench_function("memcpy", |b| b.iter(|| black_box(memcpy(&files))));
    g.bench_function("inflate_only", |b| {
        b.iter(|| black_box(inflate_all(&files)))
    });
    g.bench_function("read_decode", |b| b.iter(|| black_box(read_decode(&files))));
    g.bench_function("xmf_to_glb", |b| b.iter(|| black_box(to_glb(&files))));
    g.finish();
}

fn summary() {
    let files = inputs();
    let total: u64 = files.iter().map(|(_, b)| b.len() as u64).sum();
    let copy = mbps(total, 20, || memcpy(&files));
    let inflate = mbps(total, 10, || inflate_all(&files));
    let decode = mbps(total, 10, || read_decode(&files));
    let glb = mbps(total, 10, || to_glb(&files));
    println!(
        "\nXMF summary over {} files, {:.2} MB of input:",
        files.len(),
        total as f64 / 1e6
    );
    println!("  memcpy        {copy:9.1} MB/s");
    println!("  inflate only  {inflate:9.1} MB/s");
    println!(
        "  read+decode   {decode:9.1} MB/s  ({:.2} x inflate alone)",
        decode / inflate
    );
    println!(
        "  XMF -> GLB    {glb:9.1} MB/s  ({:.2} x inflate alone, {:.4} x memcpy)",
        glb / inflate,
        glb / copy
    );
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    summary();
}
