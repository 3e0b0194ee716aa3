//! `hangar::new_ship` on a synthetic 300-part ship (each part a bumpy sphere of 960 triangles with a
//! hardpoint on it), two LODs and a collision mesh made for every part, on one core; beside it, the
//! same parts' lod0 written alone as XMFs (the baseline measured in the same run). The issue asks for
//! under 5 s. Prints the figures and the ratio to the baseline.
//!
//! Run: `cargo bench -p hangar --bench newship`.

use hangar::model::{Mesh, Node, Primitive, Scene, Vertices};
use std::time::Instant;

const PARTS: usize = 300;

/// A sphere of `rings` x `segments` quads with bumps, radius 2.
fn sphere(rings: u32, segments: u32, seed: u32) -> Mesh {
    let mut positions = Vec::new();
    let mut normals = Vec::new();
    for r in 0..=rings {
        let v = r as f32 / rings as f32 * std::f32::consts::PI;
        for s in 0..=segments {
            let u = s as f32 / segments as f32 * std::f32::consts::TAU;
            let n = [v.sin() * u.cos(), v.cos(), v.sin() * u.sin()];
            let bump = 2.0 + 0.05 * (((r * 7 + s * 13 + seed) % 11) as f32 / 11.0);
            positions.push(n.map(|c| c * bump));
            normals.push(n);
        }
    }
    let mut indices = Vec::new();
    for r in 0..rings {
        for s in 0..segments {
            let i = r * (segments + 1) + s;
            let j = i + segments + 1;
            indices.extend([i, j, i + 1, i + 1, j, j + 1]);
        }
    }
    Mesh {
        name: format!("part{seed}"),
        vertices: Vertices {
            positions,
            normals: Some(normals),
            ..Default::default()
        },
        primitives: vec![Primitive {
            indices,
            material: None,
        }],
        ..Default::default()
    }
}

fn main() {
    let dir = std::env::temp_dir().join(format!("hangar-bench-newship-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let macros = dir.join("template/assets/units/size_m/macros");
    std::fs::create_dir_all(&macros).unwrap();
    std::fs::write(
        dir.join("template/content.xml"),
        "<content id=\"template\"/>",
    )
    .unwrap();
    let template = macros.join("ship_bench_macro.xml");
    std::fs::write(
        &template,
        "<macros><macro name=\"ship_bench_macro\" class=\"ship_m\"><component ref=\"ship_bench\"/><properties><identification name=\"{1,1}\"/></properties></macro></macros>",
    )
    .unwrap();
    let mut scene = Scene::default();
    for p in 0..PARTS {
        scene.meshes.push(sphere(20, 24, p as u32));
        let mut n = Node::new(format!("part_{p:03}"));
        n.mesh = Some(p);
        n.translation = glam::Vec3::new((p % 20) as f32 * 5.0, (p / 20) as f32 * 5.0, 0.0);
        n.parent = (p > 0).then_some(0);
        scene.nodes.push(n);
    }
    for p in 0..PARTS {
        let mut h = Node::new(format!("con_weapon_{p:03}"));
        h.parent = Some(p);
        h.translation = glam::Vec3::new(0.0, 2.5, 0.0);
        scene.nodes.push(h);
    }
    let triangles: usize = scene.meshes.iter().map(|m| m.triangle_count()).sum();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let spec = hangar::NewShip::new(template.to_string_lossy(), "ship_bench_new");
    let (ext, whole) = pool.install(|| {
        let t = Instant::now();
        let ext = hangar::new_ship(&scene, &spec, None).unwrap();
        (ext, t.elapsed())
    });
    let baseline = pool.install(|| {
        let t = Instant::now();
        for m in &scene.meshes {
            let (x, _) = hangar::formats::xmf::mesh::from_mesh(
                m,
                &[],
                hangar::formats::xmf::write::Target::Visual,
            )
            .unwrap();
            std::hint::black_box(hangar::formats::xmf::write::write(&x).unwrap());
        }
        t.elapsed()
    });
    let t = Instant::now();
    ext.write_to(&dir.join("out"), false).unwrap();
    let write = t.elapsed();
    println!(
        "newship: {PARTS} parts ({triangles} triangles), {} files, {} LODs and {} collision meshes made: {:.2} s on one core (limit 5 s); lod0 XMFs alone {:.2} s, ratio {:.1}; written to disk {:.2} s",
        ext.files().len(),
        ext.lods_made,
        ext.collisions_made,
        whole.as_secs_f64(),
        baseline.as_secs_f64(),
        whole.as_secs_f64() / baseline.as_secs_f64().max(1e-9),
        write.as_secs_f64()
    );
    let _ = std::fs::remove_dir_all(&dir);
    assert!(whole.as_secs_f64() < 5.0, "over the 5 s the issue allows");
}
