//! XMF read+decode and XMF -> GLB throughput (MB/s of input file bytes), beside zlib inflate alone
//! on the same buffers and a plain memcpy of the files. The summary's ratio line is the acceptance
//! check's in-process: flate2 (zlib-rs) inflating the files' compressed buffers, taken out of the files
//! beforehand, against hangar's whole XMF -> GLB from the files' bytes, raced in the same rounds
//! (goal: inflate time / hangar time >= 1.1).
//!
//! Input: every .xmf in $HANGAR_CORPUS/x4, else the samples. Run: `cargo bench -p hangar --bench xmf`.

use criterion::{black_box, criterion_group, Criterion, Throughput};
use hangar::formats::xmf::{self, mesh};
use hangar::model::Role;
use std::path::{Path, PathBuf};
use std::time::Duration;

mod common;
use common::{load_average, race};

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

/// The files' zlib-compressed buffers, as the baseline inflates them, each with its inflated size.
fn zlib_buffers(files: &[(PathBuf, Vec<u8>)]) -> Vec<(Vec<u8>, usize)> {
    let mut out = Vec::new();
    for (_, b) in files {
        let (x, _) = xmf::read::read(b).unwrap();
        for buf in x.buffers.iter().filter(|b| b.compressed != 0) {
            out.push((buf.data.to_vec(), buf.decoded_len().unwrap()));
        }
    }
    out
}

/// The baseline: flate2 (zlib-rs) inflating each buffer into a vector of its size.
fn zlib_inflate(bufs: &[(Vec<u8>, usize)]) -> usize {
    bufs.iter()
        .map(|(z, n)| {
            let mut out = Vec::with_capacity(*n);
            flate2::Decompress::new(true)
                .decompress_vec(z, &mut out, flate2::FlushDecompress::Finish)
                .unwrap();
            black_box(out).len()
        })
        .sum()
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
    let bufs = zlib_buffers(&files);
    let mb = |secs: f64| total as f64 / 1e6 / secs;
    let t = race(
        10,
        &[
            &|| memcpy(&files),
            &|| inflate_all(&files),
            &|| zlib_inflate(&bufs),
            &|| read_decode(&files),
            &|| to_glb(&files),
        ],
    );
    let [copy, inflate, zlib, decode, glb] = t[..] else {
        unreachable!()
    };
    println!(
        "\nXMF summary over {} files ({} zlib buffers), {:.2} MB of input, best of 10 rounds, load average {}:",
        files.len(),
        bufs.len(),
        total as f64 / 1e6,
        load_average()
    );
    println!("  memcpy                    {:9.1} MB/s", mb(copy));
    println!("  zlib (flate2) inflate     {:9.1} MB/s", mb(zlib));
    println!("  hangar's inflate alone    {:9.1} MB/s", mb(inflate));
    println!(
        "  read+decode               {:9.1} MB/s  ({:.2} x hangar's inflate alone)",
        mb(decode),
        inflate / decode
    );
    println!("  XMF -> GLB                {:9.1} MB/s", mb(glb));
    println!(
        "  ratio: zlib inflate {:.2} ms / hangar XMF -> GLB {:.2} ms = {:.2} (goal >= 1.1)",
        zlib * 1e3,
        glb * 1e3,
        zlib / glb
    );
}

criterion_group!(benches, bench);

fn main() {
    hangar::keep_freed_memory(); // as the CLI does
    benches();
    Criterion::default().configure_from_args().final_summary();
    summary();
}
