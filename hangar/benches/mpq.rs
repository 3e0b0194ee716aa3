//! MPQ archives on a synthetic map made by the bench in a temp dir (100 MB by default, size with
//! HANGAR_BENCH_MPQ_MB: nine of ten files small and text-like, the rest 1-8 MB, half of those
//! compressible): `pack` (MB/s), `list` (opening reads the tables only), and `extract` against a
//! plain parallel copy of the same files measured in the same run (the ratio is printed).
//! Run: `cargo bench -p hangar --bench mpq`.

use hangar::archives;
use rayon::prelude::*;
use std::path::PathBuf;
use std::time::Instant;

mod common;

fn synthetic(mb: u64) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hangar-bench-mpq-{mb}/Map.SC2Map"));
    if dir.exists() {
        return dir;
    }
    let mut next = common::xorshift();
    let (mut total, mut i) = (0u64, 0u64);
    while total < mb << 20 {
        let (size, path) = if i % 10 == 9 {
            (
                (1 << 20) + next() % (7 << 20),
                format!("Assets/Textures/t{i}.dds"),
            )
        } else {
            (
                1024 + next() % (15 << 10),
                format!("Base.SC2Data/GameData/d{}/x{i}.xml", i % 13),
            )
        };
        let random = i % 20 == 9;
        let bytes: Vec<u8> = if random {
            (0..size).map(|_| next() as u8).collect()
        } else {
            let words = [
                &b"<CUnit id=\"Marine\">"[..],
                b"<LifeMax value=\"45\"/>",
                b"</CUnit>\n",
            ];
            (0..size)
                .map(|k| {
                    let w = words[(k / 64 % 3) as usize];
                    w[(k as usize) % w.len()].wrapping_add((next() % 4) as u8)
                })
                .collect()
        };
        let p = dir.join(&path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
        total += size;
        i += 1;
    }
    dir
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let mb: u64 = std::env::var("HANGAR_BENCH_MPQ_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    let dir = synthetic(mb);
    let root = dir.parent().unwrap().to_path_buf();
    let archive = root.join("bench.SC2Map");
    let t = Instant::now();
    let p = archives::pack(&dir, &archive).unwrap();
    let pack = t.elapsed().as_secs_f64();
    let bytes = p.bytes;
    let mbs = |s: f64| bytes as f64 / (1 << 20) as f64 / s;
    println!(
        "mpq pack: {} files, {:.0} MB -> {:.0} MB in {:.2} s ({:.0} MB/s)",
        p.files,
        bytes as f64 / 1048576.0,
        p.archive_bytes as f64 / 1048576.0,
        pack,
        mbs(pack)
    );

    let t = Instant::now();
    let o = archives::open(&archive).unwrap();
    let list = t.elapsed().as_secs_f64();
    println!(
        "mpq list: {} entries in {:.2} ms",
        o.archive.entries.len(),
        list * 1000.0
    );

    // The same files loose, for the plain copy.
    let loose: Vec<PathBuf> = (o.archive.entries.iter())
        .filter(|e| !e.path.starts_with('('))
        .map(|e| dir.join(e.path.replace('\\', "/")))
        .collect();
    for round in 0..3 {
        let out = root.join("x");
        let copy = root.join("copy");
        let _ = std::fs::remove_dir_all(&out);
        let _ = std::fs::remove_dir_all(&copy);
        let t = Instant::now();
        let x = archives::extract(&o, &out, &[], &|_| {});
        let extract = t.elapsed().as_secs_f64();
        assert!(x.failed.is_empty());
        let t = Instant::now();
        loose.par_iter().for_each(|p| {
            let d = copy.join(p.strip_prefix(&dir).unwrap());
            std::fs::create_dir_all(d.parent().unwrap()).unwrap();
            std::fs::copy(p, d).unwrap();
        });
        let plain = t.elapsed().as_secs_f64();
        println!(
            "mpq extract (round {round}): {:.0} MB/s, plain copy of the same files {:.0} MB/s: extract/copy {:.2}",
            mbs(extract),
            mbs(plain),
            plain / extract
        );
    }
}
