//! The largest corpus component (by data folder size) to GLB and back to XML + XMFs + .ani, beside the
//! sum of its XMF conversions alone: the scene work should cost little beyond the meshes.
//!
//! Input: $HANGAR_CORPUS/x4-components (skipped when unset). Run: `cargo bench -p hangar --bench component`.

use criterion::{black_box, criterion_group, Criterion};
mod common;

use hangar::formats::xmf::{self, mesh};
use hangar::model::Role;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn xmls(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            xmls(&p, out);
        } else if p.extension().is_some_and(|e| e.eq_ignore_ascii_case("xml")) {
            out.push(p);
        }
    }
}

fn data_files(xml: &Path) -> Vec<PathBuf> {
    let stem = xml.file_stem().unwrap().to_string_lossy().to_lowercase();
    let dir = xml.parent().unwrap();
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir()
            && p.file_name().unwrap().to_string_lossy().to_lowercase() == format!("{stem}_data")
        {
            for f in std::fs::read_dir(&p).unwrap() {
                let f = f.unwrap().path();
                if f.extension().is_some_and(|e| e.eq_ignore_ascii_case("xmf")) {
                    out.push(f);
                }
            }
        }
    }
    out
}

fn bench(c: &mut Criterion) {
    let Some(root) = std::env::var_os("HANGAR_CORPUS") else {
        eprintln!("skipped: HANGAR_CORPUS is not set");
        return;
    };
    let mut all = Vec::new();
    xmls(&Path::new(&root).join("x4-components"), &mut all);
    let size = |x: &PathBuf| -> u64 {
        data_files(x)
            .iter()
            .map(|f| f.metadata().unwrap().len())
            .sum()
    };
    let Some(xml) = all.into_iter().max_by_key(size) else {
        return;
    };
    let files: Vec<Vec<u8>> = data_files(&xml)
        .iter()
        .map(|f| std::fs::read(f).unwrap())
        .collect();
    let out = std::env::temp_dir()
        .join("hangar-bench-component")
        .join("back.xml");
    let mut g = c.benchmark_group("component");
    g.measurement_time(Duration::from_secs(8)).sample_size(10);
    g.bench_function("xml_to_glb_and_back", |b| {
        b.iter(|| {
            let (scene, _) = hangar::open(xml.as_path()).unwrap().to_scene().unwrap();
            let (glb, _) = common::to_glb(&scene).unwrap();
            let back = common::from_glb(&glb);
            black_box(
                hangar::write_scene(&back, &out, &Default::default())
                    .unwrap()
                    .files
                    .len(),
            )
        })
    });
    g.bench_function("sum_of_xmf_to_glb_and_back", |b| {
        b.iter(|| {
            for bytes in &files {
                let (x, _) = xmf::read::read(bytes).unwrap();
                let (s, _) = mesh::to_scene(&x, "m", Role::Visual).unwrap();
                let (glb, _) = common::to_glb(&s).unwrap();
                let back = common::from_glb(&glb);
                let m = back.meshes.first().unwrap();
                let (x, _) =
                    mesh::from_mesh(m, &back.materials, xmf::write::Target::Visual).unwrap();
                black_box(xmf::write::write(&x).unwrap().len());
            }
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
