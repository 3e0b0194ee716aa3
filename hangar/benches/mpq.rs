//! MPQ archives: a map of about 100 MB (archive size, from 281 MB of files; HANGAR_BENCH_MPQ_MB=140,
//! the files' size in MB before the textures and sounds are added, sets it) packed by hangar's
//! own writer in a temp dir from files of StarCraft II kinds and sizes: the corpus archives' own files
//! repeated (terrain, scripts, XML, models, sounds: compressible, as SC2 maps are; with
//! HANGAR_CORPUS, otherwise stand-ins of the same kinds), DXT textures (barely compressible) and
//! encoded sounds (incompressible, stored as they are). Measured in the same run, alternated round
//! by round, best of each:
//! - `list` (what `hangar cat list` does: open, the tables and the `(listfile)`) against reading the
//!   header and the two tables' bytes alone;
//! - `extract` (what `hangar cat extract` does: `archives::extract`, every file written whole
//!   through a temporary file and a rename) against disk speed: the same files, already in memory,
//!   written with one `std::fs::write` each, in parallel, into the same folders; also beside the
//!   same written through a map of each output, a plain parallel copy of the loose files, and the
//!   read + inflate alone (`archives::verify`). Every run is timed twice: "cached", when its files
//!   are in the page cache (memcpy speed, which no extraction that inflates can match on 2 cores),
//!   and "durable", when every file and folder it wrote is also fsynced (the storage device's
//!   speed: what "extracting runs at disk speed" means). Each run starts after an untimed `sync`,
//!   with its input in memory (the archive, or the loose files, read whole just before; the
//!   disk-speed runs hold their bytes). Best and median of the rounds, and the load average.
//!
//! Run: `cargo bench -p hangar --bench mpq` (HANGAR_BENCH_MPQ_ROUNDS rounds, 5 by default).

use hangar::archives;
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::time::Instant;

mod common;

/// The files of every MPQ archive under the corpus's `sc2-archives`, by name (`/` separated).
fn corpus_files() -> Option<Vec<(String, Vec<u8>)>> {
    let root = PathBuf::from(std::env::var_os("HANGAR_CORPUS")?).join("sc2-archives");
    let mut stack = vec![root];
    let mut archives_found = Vec::new();
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).ok()?.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if archives::is_archive_file(&p) {
                archives_found.push(p);
            }
        }
    }
    archives_found.sort();
    let mut files = Vec::new();
    for (k, a) in archives_found.iter().enumerate() {
        let o = archives::open(a).ok()?;
        for e in o
            .archive
            .entries
            .iter()
            .filter(|e| !e.path.starts_with('('))
        {
            if let Ok(bytes) = o.read(e) {
                files.push((format!("m{k}/{}", e.path.replace('\\', "/")), bytes));
            }
        }
    }
    (!files.is_empty()).then_some(files)
}

/// Stand-ins for the corpus files: XML and script text (compresses 5-10x) and terrain layers
/// (height ramps, masks mostly zero).
fn stand_ins(next: &mut impl FnMut() -> u64) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    for i in 0..120u64 {
        let size = 1024 + (next() % (60 << 10)) as usize;
        let mut text = String::with_capacity(size + 100);
        while text.len() < size {
            let n = next();
            text.push_str(&format!(
                "<CUnit id=\"Unit{}\"><LifeMax value=\"{}\"/><Speed value=\"{}.{}\"/></CUnit>\n",
                n % 400,
                n % 997,
                n % 5,
                n % 100
            ));
        }
        files.push((format!("Base.SC2Data/GameData/x{i}.xml"), text.into_bytes()));
    }
    for (i, size) in [16 << 20, 4 << 20, 1 << 20, 512 << 10, 256 << 10]
        .into_iter()
        .enumerate()
    {
        let mut t = vec![0u8; size];
        for (k, b) in t.iter_mut().enumerate() {
            *b = if i % 2 == 0 {
                ((k >> 9) as u8) & 0x0F
            } else {
                (k % 251) as u8 ^ ((k >> 12) as u8)
            };
        }
        files.push((format!("t3Layer{i}"), t));
    }
    files
}

/// A DXT5 texture of `side` x `side`: 128-byte header, then 16-byte blocks whose endpoints change
/// slowly and whose indices are noise (as real ones: libdeflate packs them by about a quarter).
fn dds(side: usize, next: &mut impl FnMut() -> u64) -> Vec<u8> {
    let mut d = vec![0u8; 128];
    d[..4].copy_from_slice(b"DDS ");
    let blocks = (side / 4) * (side / 4);
    d.reserve(blocks * 16);
    for b in 0..blocks {
        let n = next();
        let e = (b / 64) as u8;
        d.extend_from_slice(&[0xFF, e, 0x49, 0x92, 0x24, 0x49, 0x92, 0x24]);
        d.extend_from_slice(&[e, 0x84, e.wrapping_add(9), 0x31]);
        d.extend_from_slice(&(n as u32 & 0x5555_5555 | (b as u32 & 0x0101_0101)).to_le_bytes());
    }
    d
}

/// The map's files: compressible ones to `mb * 0.9` MB, textures to `mb * 0.45`, sounds to `mb * 0.5`.
fn map_files(mb: u64) -> (Vec<(String, Vec<u8>)>, &'static str) {
    let mut next = common::xorshift();
    let (base, kind) = match corpus_files() {
        Some(f) => (f, "the corpus archives' files"),
        None => (
            stand_ins(&mut next),
            "stand-ins (set HANGAR_CORPUS for the corpus archives' files)",
        ),
    };
    let mut files = Vec::new();
    let mut total = 0u64;
    for round in 0.. {
        for (name, bytes) in &base {
            if total >= (mb << 20) * 9 / 10 {
                break;
            }
            total += bytes.len() as u64;
            files.push((format!("Copies/c{round}/{name}"), bytes.clone()));
        }
        if total >= (mb << 20) * 9 / 10 {
            break;
        }
    }
    let mut textures = 0u64;
    let mut i = 0;
    while textures < (mb << 20) * 45 / 100 {
        let side = [128, 256, 512, 512, 1024, 1024, 2048][(next() % 7) as usize];
        let t = dds(side, &mut next);
        textures += t.len() as u64;
        files.push((format!("Assets/Textures/t{i}_diff.dds"), t));
        i += 1;
    }
    let mut sounds = 0u64;
    let mut i = 0;
    while sounds < (mb << 20) / 2 {
        let size = (32 << 10) + (next() % (2 << 20)) as usize;
        let s: Vec<u8> = (0..size).map(|_| next() as u8).collect();
        sounds += s.len() as u64;
        files.push((format!("Assets/Sounds/s{i}.ogg"), s));
        i += 1;
    }
    (files, kind)
}

/// Makes the folders of `files` under `dir`.
fn make_folders(dir: &Path, files: &[(String, Vec<u8>)]) {
    let folders: std::collections::BTreeSet<&str> = files
        .iter()
        .filter_map(|(n, _)| n.rsplit_once('/').map(|(d, _)| d))
        .collect();
    for f in folders {
        std::fs::create_dir_all(dir.join(f)).unwrap();
    }
}

/// Writes `files` under `dir` in parallel, each with one `std::fs::write` (`step` 0) or in writes
/// of `step` bytes: disk speed.
fn write_all(dir: &Path, files: &[(String, Vec<u8>)], step: usize) -> usize {
    make_folders(dir, files);
    files
        .par_iter()
        .map(|(n, b)| {
            if step == 0 {
                std::fs::write(dir.join(n), b).unwrap();
            } else {
                use std::io::Write;
                let mut f = std::fs::File::create(dir.join(n)).unwrap();
                b.chunks(step).for_each(|c| f.write_all(c).unwrap());
            }
            1
        })
        .sum()
}

/// CPU time this process has used, user and system, all threads (Linux; 0 elsewhere), in seconds:
/// what a run costs whatever the other programs on the machine are doing.
fn cpu_time() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map_or("", |x| x.1);
    let f: Vec<f64> = after
        .split_whitespace()
        .map(|v| v.parse().unwrap_or(0.0))
        .collect();
    // utime and stime, fields 14 and 15 (11 and 12 after the name), in ticks of 1/100 s.
    (f.get(11).unwrap_or(&0.0) + f.get(12).unwrap_or(&0.0)) / 100.0
}

/// [`write_all`], each file's writeback started as soon as it is written (`sync_file_range`, as
/// the extraction does): the device's speed when the writing goes to it as it happens.
fn write_behind_all(dir: &Path, files: &[(String, Vec<u8>)]) -> usize {
    use std::io::Write;
    use std::os::fd::AsRawFd;
    make_folders(dir, files);
    files
        .par_iter()
        .map(|(n, b)| {
            let mut f = std::fs::File::create(dir.join(n)).unwrap();
            f.write_all(b).unwrap();
            // SAFETY: sync_file_range reads its integer arguments only; the file is open.
            unsafe { libc::sync_file_range(f.as_raw_fd(), 0, 0, libc::SYNC_FILE_RANGE_WRITE) };
            1
        })
        .sum()
}

/// Writes `files` under `dir` in parallel, each through a writable map of its output (sized
/// first): the bytes land in the page cache with no `write` call, the way an extraction inflating
/// straight into a map of its output would.
fn write_mapped(dir: &Path, files: &[(String, Vec<u8>)]) -> usize {
    make_folders(dir, files);
    files
        .par_iter()
        .map(|(n, b)| {
            let f = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(true)
                .open(dir.join(n))
                .unwrap();
            f.set_len(b.len() as u64).unwrap();
            if !b.is_empty() {
                // SAFETY: the file was made by this run and nothing else changes its length.
                let mut m = unsafe { memmap2::MmapMut::map_mut(&f) }.unwrap();
                m.copy_from_slice(b);
            }
            1
        })
        .sum()
}

/// Reads `paths` whole (into the page cache), in parallel.
fn warm(paths: &[PathBuf]) {
    paths.par_iter().for_each(|p| {
        criterion::black_box(std::fs::read(p).unwrap().len());
    });
}

/// Every file under `dir` flushed to the storage device, then every folder (their names), in
/// parallel: what makes a finished extraction durable.
fn sync_tree(dir: &Path) {
    let (mut files, mut dirs, mut stack) = (Vec::new(), Vec::new(), vec![dir.to_path_buf()]);
    while let Some(d) = stack.pop() {
        let Ok(read) = std::fs::read_dir(&d) else {
            continue;
        };
        dirs.push(d);
        for e in read.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(e.path());
            } else {
                files.push(e.path());
            }
        }
    }
    files
        .par_iter()
        .for_each(|f| std::fs::File::open(f).unwrap().sync_data().unwrap());
    dirs.par_iter()
        .for_each(|d| std::fs::File::open(d).unwrap().sync_all().unwrap());
}

/// The machine's load averages over 1, 5 and 15 minutes (Linux; "?" elsewhere).
fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| "?".into())
}

/// One contender of the extraction race, given the folder to write into.
type Run<'a> = dyn Fn(&Path) -> usize + 'a;

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    // As the CLI does first thing: freed buffers kept for the next file.
    hangar::keep_freed_memory();
    let env = |k: &str, d: u64| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let (mb, rounds) = (
        env("HANGAR_BENCH_MPQ_MB", 140),
        env("HANGAR_BENCH_MPQ_ROUNDS", 5),
    );
    let root = std::env::temp_dir().join(format!("hangar-bench-mpq2-{mb}"));
    let _ = std::fs::remove_dir_all(&root);
    let (files, kind) = map_files(mb);
    let bytes: u64 = files.iter().map(|f| f.1.len() as u64).sum();
    let loose = root.join("Map.SC2Map");
    write_all(&loose, &files, 0);
    let archive = root.join("bench.SC2Map");
    let t = Instant::now();
    let p = archives::pack(&loose, &archive).unwrap();
    let pack = t.elapsed().as_secs_f64();
    let mb_of = |n: u64| n as f64 / 1e6;
    println!(
        "mpq map: {} files, {:.0} MB ({kind}, DXT textures, sounds) packed into {:.0} MB in {pack:.2} s ({:.0} MB/s); load average {}",
        p.files,
        mb_of(bytes),
        mb_of(p.archive_bytes),
        mb_of(bytes) / pack,
        common::load_average()
    );

    // Listing against reading the header and the two tables alone.
    let o = archives::open(&archive).unwrap();
    let h = o.archive.header.clone();
    let tables = [
        (h.at, 32 + 0xD0),
        (
            h.at + h.hash_table_pos,
            u64::from(h.hash_table_entries) * 16,
        ),
        (
            h.at + h.block_table_pos,
            u64::from(h.block_table_entries) * 16,
        ),
    ];
    let times = common::race(
        20,
        &[
            &|| archives::open(&archive).unwrap().archive.entries.len(),
            &|| {
                use std::io::{Read, Seek, SeekFrom};
                let mut f = std::fs::File::open(&archive).unwrap();
                let len = f.metadata().unwrap().len();
                tables
                    .iter()
                    .map(|&(at, n)| {
                        let mut b = vec![0u8; n.min(len - at) as usize];
                        f.seek(SeekFrom::Start(at)).unwrap();
                        f.read_exact(&mut b).unwrap();
                        b.len()
                    })
                    .sum()
            },
        ],
    );
    println!(
        "mpq list: {} entries in {:.2} ms; the header and tables alone read in {:.2} ms: list/tables {:.1}",
        o.archive.entries.len(),
        times[0] * 1e3,
        times[1] * 1e3,
        times[0] / times[1]
    );

    // Extraction against disk speed, alternated round by round. Every run writes into a folder of
    // its own, after a `sync` (untimed), and nothing is removed until the end: this machine's ext4
    // (no journal) skips inodes freed in the last minutes when it makes a file, a scan that grew
    // with every removed round until it took a third of each run. Each run is timed twice: when
    // its files are written (in the page cache: "cached") and when they are on the storage device
    // too ("durable": every file it wrote and every folder fsynced, in parallel, the same walk for
    // every contender), as a user's extraction ends on disk.
    let out = root.join("out");
    let names: Vec<PathBuf> = files.iter().map(|(n, _)| loose.join(n)).collect();
    // What each contender reads, brought into the page cache before it runs (untimed): the archive
    // for the extractions, the loose files for the copy; the disk-speed run holds its input in
    // memory already. Every run starts from its input in memory, none from the device.
    let warm_archive = || warm(std::slice::from_ref(&archive));
    let warm_loose = || warm(&names);
    let nothing = || {};
    let runs: [(&str, &Run, &dyn Fn()); 6] = [
        (
            "extract",
            &|dir| {
                let x = archives::extract(&o, dir, &[], &|_| {});
                assert!(x.failed.is_empty(), "{:?}", x.failed.first());
                x.written
            },
            &warm_archive,
        ),
        ("disk speed", &|dir| write_all(dir, &files, 0), &nothing),
        (
            "disk speed, each file's writeback started",
            &|dir| write_behind_all(dir, &files),
            &nothing,
        ),
        (
            "disk speed through a map of each output",
            &|dir| write_mapped(dir, &files),
            &nothing,
        ),
        (
            "copy of the loose files",
            &|dir| {
                names
                    .par_iter()
                    .map(|p| {
                        let d = dir.join(p.strip_prefix(&loose).unwrap());
                        std::fs::create_dir_all(d.parent().unwrap()).unwrap();
                        std::fs::copy(p, d).unwrap();
                        1
                    })
                    .sum()
            },
            &warm_loose,
        ),
        (
            "read + inflate",
            &|_| archives::verify(&o, &|_| {}).0,
            &warm_archive,
        ),
    ];
    // HANGAR_BENCH_MPQ_ONLY=extract runs that one alone (for a profiler); "extract,disk speed"
    // those two.
    let only = std::env::var("HANGAR_BENCH_MPQ_ONLY").ok();
    let mut cached = vec![Vec::new(); runs.len()];
    let mut durable = vec![Vec::new(); runs.len()];
    let mut cpu = vec![Vec::new(); runs.len()];
    let load_before = load();
    for round in 0..rounds as usize {
        for k in 0..runs.len() {
            // Alternate the order, so that neither side always runs after the other.
            let k = if round % 2 == 0 {
                k
            } else {
                runs.len() - 1 - k
            };
            if only
                .as_ref()
                .is_some_and(|o| !o.split(',').any(|n| n == runs[k].0))
            {
                continue;
            }
            let dir = out.join(format!("{k}-{round}"));
            let _ = std::process::Command::new("sync").status();
            runs[k].2();
            let (t, c) = (Instant::now(), cpu_time());
            criterion::black_box(runs[k].1(&dir));
            cached[k].push(t.elapsed().as_secs_f64());
            cpu[k].push(cpu_time() - c);
            sync_tree(&dir);
            durable[k].push(t.elapsed().as_secs_f64());
        }
    }
    let load_after = load();
    let best = |v: &[Vec<f64>]| -> Vec<f64> {
        v.iter()
            .map(|t| t.iter().copied().reduce(f64::min).unwrap_or(f64::NAN))
            .collect()
    };
    let (best_cached, best_durable) = (best(&cached), best(&durable));
    // Each round's own ratio (the two ran a second apart, under the same load), their median.
    let per_round = |v: &[Vec<f64>], k: usize| {
        let mut r: Vec<f64> = v[k].iter().zip(&v[0]).map(|(o, x)| o / x).collect();
        format!("{:.2}", median(&mut r))
    };
    let (round_durable, round_behind, round_cached) = (
        per_round(&durable, 1),
        per_round(&durable, 2),
        per_round(&cached, 1),
    );
    let med_cached: Vec<f64> = cached.iter_mut().map(|t| median(t)).collect();
    let med_durable: Vec<f64> = durable.iter_mut().map(|t| median(t)).collect();
    let cpus: Vec<f64> = cpu.iter_mut().map(|t| median(t)).collect();
    for (k, (name, ..)) in runs.iter().enumerate() {
        println!(
            "mpq {name}: cached best {:.3} s ({:.0} MB/s), median {:.3} s; durable best {:.3} s ({:.0} MB/s), median {:.3} s; CPU time (median) {:.2} s",
            best_cached[k],
            mb_of(bytes) / best_cached[k],
            med_cached[k],
            best_durable[k],
            mb_of(bytes) / best_durable[k],
            med_durable[k],
            cpus[k]
        );
    }
    // Speed of extraction over speed of the other: 1.0 is as fast, above is faster.
    let ratio =
        |b: &[f64], m: &[f64], k: usize| format!("{:.2} (median {:.2})", b[k] / b[0], m[k] / m[0]);
    println!(
        "mpq extract of {:.0} MB from a {:.0} MB archive, {rounds} rounds, load average {load_before} before, {load_after} after:",
        mb_of(bytes),
        mb_of(p.archive_bytes),
    );
    println!(
        "mpq   durable (written and fsynced: the storage device's speed): extract {:.0} MB/s, disk speed {:.0} MB/s: extract/disk {}, round by round {round_durable}; against disk speed with each file's writeback started {:.0} MB/s: {}, round by round {round_behind}; extract/copy {}",
        mb_of(bytes) / best_durable[0],
        mb_of(bytes) / best_durable[1],
        ratio(&best_durable, &med_durable, 1),
        mb_of(bytes) / best_durable[2],
        ratio(&best_durable, &med_durable, 2),
        ratio(&best_durable, &med_durable, 4),
    );
    println!(
        "mpq   cached (written into the page cache, not yet on the device: memcpy speed): extract {:.0} MB/s, disk speed {:.0} MB/s: extract/disk {}, round by round {round_cached}; extract/copy {}; CPU time extract/disk {:.2}; writing through maps against write calls {:.2} (median {:.2})",
        mb_of(bytes) / best_cached[0],
        mb_of(bytes) / best_cached[1],
        ratio(&best_cached, &med_cached, 1),
        ratio(&best_cached, &med_cached, 4),
        cpus[1] / cpus[0],
        best_cached[1] / best_cached[3],
        med_cached[1] / med_cached[3],
    );
    let _ = std::fs::remove_dir_all(&root);
}
