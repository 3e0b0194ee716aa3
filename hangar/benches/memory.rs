//! Peak heap per corpus file (issue 10's memory rule: under 64 MiB + 16 x the input), measured by a
//! counting allocator while the file is opened, described, checked, dumped and converted to GLB.
//! Not timed: `HANGAR_CORPUS=../shared/corpus cargo bench -p hangar --bench memory`.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

struct Counting;
static NOW: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            let now = NOW.fetch_add(l.size(), Relaxed) + l.size();
            PEAK.fetch_max(now, Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) };
        NOW.fetch_sub(l.size(), Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, l, new) };
        if !q.is_null() {
            if new >= l.size() {
                let now = NOW.fetch_add(new - l.size(), Relaxed) + new - l.size();
                PEAK.fetch_max(now, Relaxed);
            } else {
                NOW.fetch_sub(l.size() - new, Relaxed);
            }
        }
        q
    }
}

#[global_allocator]
static A: Counting = Counting;

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else if [
            "xmf", "xac", "xsm", "xpm", "ani", "m3", "m3a", "glb", "gltf",
        ]
        .iter()
        .any(|x| common::has_ext(&p, x))
        {
            out.push(p);
        }
    }
}

/// Everything the CLI does with one file, so the peak is the worst of its commands; returns the
/// command that reached it.
fn exercise(bytes: &[u8], path: &Path) -> &'static str {
    let Ok(opened) = common::open(bytes, path) else {
        return "open";
    };
    let mut worst = ("open", PEAK.load(Relaxed));
    let mut step = |name: &'static str, run: &dyn Fn()| {
        let before = PEAK.swap(NOW.load(Relaxed), Relaxed);
        run();
        let peak = PEAK.load(Relaxed);
        if peak > worst.1 {
            worst = (name, peak);
        }
        PEAK.fetch_max(before, Relaxed);
    };
    step("info", &|| drop(opened.info()));
    step("validate", &|| drop(opened.validate()));
    step("dump", &|| drop(opened.dump()));
    let out = std::env::temp_dir().join("hangar-memory-bench.glb");
    step("convert", &|| drop(common::convert(&opened, &out)));
    worst.0
}

fn main() {
    let Some(root) = std::env::var_os("HANGAR_CORPUS") else {
        println!("memory: HANGAR_CORPUS is not set: nothing measured");
        return;
    };
    let mut all = Vec::new();
    files(Path::new(&root), &mut all);
    all.sort();
    let (mut worst, mut worst_file, mut over) = (0f64, String::new(), 0);
    println!(
        "{:>12} {:>12} {:>8}  {:<8} file",
        "input", "peak heap", "ratio", "worst at"
    );
    for f in &all {
        let Ok(bytes) = std::fs::read(f) else {
            continue;
        };
        let base = NOW.load(Relaxed);
        PEAK.store(base, Relaxed);
        let step = exercise(&bytes, f);
        let peak = PEAK.load(Relaxed).saturating_sub(base);
        let ratio = peak as f64 / bytes.len().max(1) as f64;
        let limit = (64usize << 20) + 16 * bytes.len();
        over += usize::from(peak > limit);
        if ratio > worst {
            (worst, worst_file) = (ratio, f.display().to_string());
        }
        println!(
            "{:>12} {:>12} {:>8.1}  {:<8} {}{}",
            bytes.len(),
            peak,
            ratio,
            step,
            f.display(),
            if peak > limit {
                "  OVER 64 MiB + 16 x"
            } else {
                ""
            }
        );
    }
    println!(
        "memory: {} files; worst ratio {worst:.1} x input ({worst_file}); {over} over 64 MiB + 16 x input",
        all.len()
    );
}
