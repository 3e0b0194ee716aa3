//! One batch, two sources: the corpus M3s and XMFs converted to GLB from a plain folder and from a
//! `.cat`/`.dat` packed from that folder, with one job and with every core. Prints MB/s of input
//! for each and the catalog's ratio to the folder (goal: at least 0.9).
//! Run: `HANGAR_CORPUS=../shared/corpus cargo bench -p hangar --bench batch`.

use hangar::formats::catalog;
use hangar::GameView;
use std::path::{Path, PathBuf};

mod common;
use common::mbps;

/// The corpus's M3s and XMFs copied into a fresh folder, and a catalog packed from it.
fn inputs(corpus: &Path) -> (PathBuf, PathBuf, u64) {
    let root = std::env::temp_dir().join("hangar-bench-batch");
    let _ = std::fs::remove_dir_all(&root);
    let src = root.join("src/assets");
    std::fs::create_dir_all(&src).unwrap();
    let mut bytes = 0;
    for (dir, ext) in [("m3", "m3"), ("x4", "xmf")] {
        let Ok(list) = std::fs::read_dir(corpus.join(dir)) else {
            continue;
        };
        for e in list.flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x.eq_ignore_ascii_case(ext)) {
                bytes += std::fs::copy(&p, src.join(e.file_name())).unwrap();
            }
        }
    }
    let cat = root.join("game/01.cat");
    std::fs::create_dir_all(cat.parent().unwrap()).unwrap();
    catalog::pack(&root.join("src"), &cat, &|_| {}).unwrap();
    (root.join("src"), cat, bytes)
}

fn main() {
    let Ok(corpus) = std::env::var("HANGAR_CORPUS") else {
        println!("batch bench skipped: set HANGAR_CORPUS to the corpus folder");
        return;
    };
    let (folder, cat, bytes) = inputs(Path::new(&corpus));
    let out = std::env::temp_dir().join("hangar-bench-batch/out");
    let folder_view = GameView::folder(&folder).unwrap();
    let cat_view = GameView::open(&cat).unwrap();
    let run = |view: &GameView, prefix: &str| {
        let _ = std::fs::remove_dir_all(&out);
        let r =
            hangar::batch::run(view, prefix, &out, "glb", &Default::default(), &|_| {}).unwrap();
        assert!(r.failed.is_empty(), "{:?}", r.failed);
        r.converted
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    for jobs in [1, cores] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(jobs)
            .build()
            .unwrap();
        let (f, c) = pool.install(|| {
            // Alternated, best of five each: the same disk cache state for both.
            let mut f = 0f64;
            let mut c = 0f64;
            for _ in 0..5 {
                f = f.max(mbps(bytes, 1, || run(&folder_view, "assets")));
                c = c.max(mbps(bytes, 1, || run(&cat_view, "assets")));
            }
            (f, c)
        });
        println!(
            "batch to GLB, {jobs} job(s), {:.1} MB: folder {f:.0} MB/s, catalog {c:.0} MB/s, catalog/folder {:.2}",
            bytes as f64 / 1e6,
            c / f
        );
    }
}
