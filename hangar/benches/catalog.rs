//! Catalogs on a synthetic game folder made by the bench itself in a temp dir (about 300 MB: many
//! small files and a few large ones): `cat list` (parse the index), `cat verify` (MB/s against a
//! plain parallel md5 of the same bytes) and `cat extract` (against a plain copy of the extracted
//! files). Size with HANGAR_BENCH_CAT_MB. Run: `cargo bench -p hangar --bench catalog`.

use criterion::{black_box, criterion_group, Criterion, Throughput};
use hangar::formats::catalog;
use md5::{Digest, Md5};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::time::Duration;

mod common;
use common::mbps;

/// Writes `NN.cat` + `.dat` by hand (not through `pack`, so the bench does not measure itself).
fn synthetic() -> (PathBuf, u64) {
    let mb: u64 = std::env::var("HANGAR_BENCH_CAT_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let dir = std::env::temp_dir().join(format!("hangar-bench-cat-{mb}"));
    let cat = dir.join("01.cat");
    if cat.exists() {
        let len = std::fs::metadata(dir.join("01.dat")).unwrap().len();
        return (cat, len);
    }
    std::fs::create_dir_all(&dir).unwrap();
    let mut next = common::xorshift();
    let mut text = String::new();
    let mut dat = std::io::BufWriter::new(std::fs::File::create(dir.join("01.dat")).unwrap());
    let (mut total, mut i) = (0u64, 0u64);
    let target = mb << 20;
    while total < target {
        // Nine of ten files are small (XML, 1-16 KB); the rest large (models, textures, 1-8 MB).
        let size = if i % 10 == 9 {
            (1 << 20) + next() % (7 << 20)
        } else {
            1024 + next() % (15 << 10)
        };
        let bytes: Vec<u8> = (0..size).map(|_| next() as u8).collect();
        use std::io::Write;
        dat.write_all(&bytes).unwrap();
        let md5: String = Md5::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        text.push_str(&format!(
            "assets/bench/d{}/file_{i}.bin {size} 1700000000 {md5}\n",
            i % 97
        ));
        total += size;
        i += 1;
    }
    std::fs::write(&cat, text).unwrap();
    (cat, total)
}

/// A 300,000-line index (the size of X4's biggest catalogs), parsed from memory.
fn big_index() -> Vec<u8> {
    let mut t = String::new();
    for i in 0..300_000 {
        t.push_str(&format!(
            "assets/units/size_s/ship_{i}_data/part main-lod{}.xmf {} 1700000000 0123456789abcdef0123456789abcdef\n",
            i % 4,
            i * 7 % 100_000
        ));
    }
    t.into_bytes()
}

fn plain_md5(dat: &[u8], cat: &catalog::Catalog) -> usize {
    cat.entries
        .par_iter()
        .filter(|e| {
            let b = &dat[e.offset as usize..(e.offset + e.size) as usize];
            Md5::digest(b)[0] == 0
        })
        .count()
}

fn copy_tree(from: &Path, to: &Path) -> usize {
    let mut files = Vec::new();
    let mut stack = vec![from.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                files.push(p);
            }
        }
    }
    files
        .par_iter()
        .map(|f| {
            let dest = to.join(f.strip_prefix(from).unwrap());
            std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
            std::fs::copy(f, dest).unwrap() as usize
        })
        .sum()
}

fn bench(c: &mut Criterion) {
    let index = big_index();
    let mut g = c.benchmark_group("catalog");
    g.measurement_time(Duration::from_secs(4));
    g.sample_size(10);
    g.bench_function("list_300k_entries", |b| {
        b.iter(|| black_box(catalog::read(&index).unwrap().0.entries.len()))
    });
    let (cat, total) = synthetic();
    let o = catalog::open(&cat).unwrap();
    g.throughput(Throughput::Bytes(total));
    g.bench_function("verify", |b| {
        b.iter(|| black_box(catalog::verify(&o, &|_| {}).ok()))
    });
    g.finish();
}

fn summary() {
    let index = big_index();
    let t = std::time::Instant::now();
    let n = catalog::read(&index).unwrap().0.entries.len();
    println!(
        "\ncatalog summary:\n  list of {n} entries: {:.0} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    let (cat, total) = synthetic();
    let o = catalog::open(&cat).unwrap();
    let md5 = mbps(total, 3, || plain_md5(o.dat.bytes(), &o.catalog));
    let verify = mbps(total, 3, || catalog::verify(&o, &|_| {}).entries);
    println!(
        "  {} entries, {:.0} MB: plain md5 on all cores {md5:.0} MB/s, verify {verify:.0} MB/s ({:.2} x)",
        o.catalog.entries.len(),
        total as f64 / 1e6,
        verify / md5
    );
    let out = cat.with_file_name("extracted");
    let copy_to = cat.with_file_name("copied");
    let extract = mbps(total, 2, || {
        let _ = std::fs::remove_dir_all(&out);
        catalog::extract(&o, &out, &[], &|_| {}).written
    });
    let copy = mbps(total, 2, || {
        let _ = std::fs::remove_dir_all(&copy_to);
        copy_tree(&out, &copy_to)
    });
    println!(
        "  extract {extract:.0} MB/s, plain copy of the extracted files {copy:.0} MB/s ({:.2} x)",
        extract / copy
    );
    let _ = std::fs::remove_dir_all(&out);
    let _ = std::fs::remove_dir_all(&copy_to);
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    summary();
}
