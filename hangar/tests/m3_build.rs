//! The M3 builder: a neutral scene (what glTF import gives) becomes an M3 the reader reads back
//! with the same geometry, bones and sequences; every corpus M3 survives M3 -> scene -> M3.

mod common;

use common::{corpus, name};
use hangar::formats::m3::{build, read, scene};
use hangar::model::{Animation, Channel, Interpolation, Mesh, Node, Primitive, Property, Scene};

fn counts(s: &Scene) -> (usize, usize, usize, Vec<String>) {
    let v = s.meshes.iter().map(|m| m.vertices.len()).sum();
    let t = s.meshes.iter().map(|m| m.triangle_count()).sum();
    let bones = s.skins.first().map_or(0, |k| k.joints.len());
    let names = s.animations.iter().map(|a| a.name.clone()).collect();
    (v, t, bones, names)
}

fn reread(bytes: &[u8]) -> Scene {
    let (m3, _) = read::read(bytes).unwrap();
    scene::to_scene(&m3, "x", &[]).unwrap().0
}

#[test]
fn a_static_quad_becomes_one_region_bound_to_one_root_bone() {
    let mut s = Scene::default();
    let mut mesh = Mesh::default();
    mesh.vertices.positions = vec![
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [1.0, 2.0, 0.0],
        [0.0, 2.0, 0.0],
    ];
    mesh.vertices.uvs = vec![vec![[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]];
    mesh.primitives = vec![Primitive {
        indices: vec![0, 1, 2, 0, 2, 3],
        material: None,
    }];
    s.meshes.push(mesh);
    let mut n = Node::new("quad");
    n.mesh = Some(0);
    s.nodes.push(n);
    s.animations.push(Animation {
        name: "Stand".into(),
        channels: vec![Channel {
            node: 0,
            property: Property::Translation,
            interpolation: Interpolation::Linear,
            times: vec![0.0, 1.0],
            values: vec![0.0, 0.0, 0.0, 0.0, 1.0, 0.0],
        }],
        extras: Default::default(),
    });
    let (bytes, warnings) = build::build(&s, &build::Options::default()).unwrap();
    // Normals were missing: computed, and said so.
    assert!(warnings.iter().any(|w| w.message.contains("normals")));
    let back = reread(&bytes);
    assert_eq!(counts(&back), (4, 2, 1, vec!["Stand".to_string()]));
    // glTF +Y up is M3 +Z up: (1, 2, 0) is stored as (1, 0, 2).
    let (m3, _) = read::read(&bytes).unwrap();
    let json = hangar::formats::m3::dump::to_json(&m3);
    let modl = &json["sections"][1]["entries"][0];
    assert_eq!(modl["vertexFlags"], 0x182_0061);
    let p = &back.meshes[0].vertices.positions[2];
    assert!(
        (p[0] - 1.0).abs() < 1e-5 && p[1].abs() < 1e-5 && (p[2] - 2.0).abs() < 1e-5,
        "{p:?}"
    );
    // UVs within 1/2048 of the input.
    let uv = back.meshes[0].vertices.uvs[0][2];
    assert!((uv[0] - 1.0).abs() < 1e-3 && (uv[1] - 1.0).abs() < 1e-3);
    // The translation track comes back, turned into M3 space.
    let c = &back.animations[0].channels[0];
    assert_eq!(c.times, vec![0.0, 1.0]);
    assert!((c.values[5] - 1.0).abs() < 1e-5, "{:?}", c.values);
}

#[test]
fn morph_targets_are_refused() {
    let mut s = Scene::default();
    let mut mesh = Mesh::default();
    mesh.vertices.positions = vec![[0.0; 3]; 3];
    mesh.primitives = vec![Primitive {
        indices: vec![0, 1, 2],
        material: None,
    }];
    mesh.morph_targets.push(hangar::model::MorphTarget {
        name: "smile".into(),
        positions: vec![[0.0; 3]; 3],
        normals: None,
    });
    s.meshes.push(mesh);
    let e = build::build(&s, &build::Options::default()).unwrap_err();
    assert!(e.message.contains("morph"), "{}", e.message);
}

#[test]
fn every_corpus_m3_goes_through_a_scene_and_back_with_its_counts() {
    let Some(files) = corpus("m3", "m3") else {
        return;
    };
    let mut done = 0;
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        let Ok((m3, _)) = read::read(&bytes) else {
            continue;
        };
        let Ok((first, _)) = scene::to_scene(&m3, "x", &[]) else {
            continue;
        };
        let (out, _) = build::build(&first, &build::Options::default())
            .unwrap_or_else(|e| panic!("{}: {e}", name(f)));
        let second = reread(&out);
        assert_eq!(counts(&first), counts(&second), "{}", name(f));
        // Same geometry: positions agree.
        for (a, b) in first.meshes.iter().zip(&second.meshes) {
            for (p, q) in a.vertices.positions.iter().zip(&b.vertices.positions) {
                for k in 0..3 {
                    assert!(
                        (p[k] - q[k]).abs() <= 1e-3 * (1.0 + p[k].abs()),
                        "{}: {p:?} {q:?}",
                        name(f)
                    );
                }
            }
        }
        done += 1;
    }
    assert!(done >= 80, "{done} files round-tripped");
}
