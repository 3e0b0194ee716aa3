//! An edited actor written over the XAC it came from (`hangar convert edited.glb out.xac --original
//! SRC.xac`, the Blender export): only the meshes the edit changed are written anew; every other
//! chunk (nodes, materials, morph targets, LODs, metadata, groups, limits) keeps its bytes.

mod common;

use common::{corpus, name};
use hangar::formats::emfx;
use hangar::model::Scene;
use std::path::{Path, PathBuf};

fn work(test: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("xac-edit")
        .join(test);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The scene of `src` through its GLB, as `hangar convert SRC.xac x.glb` writes it.
fn glb_scene(src: &Path, bytes: &[u8]) -> Scene {
    let opened = common::open(bytes, src).unwrap();
    let (glb, _) = common::convert(&opened, Path::new("x.glb")).unwrap();
    common::from_glb(&glb).unwrap()
}

/// Each chunk's bytes in the file (header and data) with its name.
fn chunk_bytes<'a>(f: &emfx::File, bytes: &'a [u8]) -> Vec<(&'static str, &'a [u8])> {
    f.chunks
        .iter()
        .map(|c| {
            let start = c.offset as usize;
            (
                c.name(f.kind),
                &bytes[start..start + 12 + c.length as usize],
            )
        })
        .collect()
}

/// The chunk index of each mesh chunk read by its layout (the scene's first meshes, in order).
fn mesh_chunks(f: &emfx::File) -> Vec<usize> {
    (0..f.chunks.len())
        .filter(|&i| f.chunks[i].name(f.kind) == "mesh" && f.chunks[i].fields().is_some())
        .collect()
}

/// Each actor with a mesh: its path, bytes, file, first mesh chunk and glb scene.
fn with_a_mesh(
    files: &[PathBuf],
) -> impl Iterator<Item = (PathBuf, Vec<u8>, emfx::File, usize, Scene)> + '_ {
    files.iter().filter_map(|f| {
        let bytes = std::fs::read(f).unwrap();
        let was = read(&bytes);
        let first = *mesh_chunks(&was).first()?;
        let scene = glb_scene(f, &bytes);
        Some((f.clone(), bytes, was, first, scene))
    })
}

fn read(bytes: &[u8]) -> emfx::File {
    emfx::read(bytes).unwrap().0
}

/// Every corpus actor, the first vertex of its first mesh moved by 0.05 in x in the glTF scene and
/// written with the original: every chunk but that mesh's byte for byte in its place, and in the
/// mesh chunk only that vertex's position bytes; read back, the vertex moved and nothing else.
#[test]
fn every_corpus_xac_with_a_vertex_moved_keeps_every_other_chunk() {
    let Some(files) = corpus("emfx", "xac") else {
        return;
    };
    let dir = work("vertex_moved");
    let (mut done, mut kept) = (0, 0);
    for (f, bytes, was, first, mut edited) in with_a_mesh(&files) {
        let f = &f;
        edited.meshes[0].vertices.positions[0][0] += 0.05;
        let out = dir.join(name(f));
        let wrote = hangar::write_scene_to(&edited, &out, Some(f))
            .unwrap_or_else(|e| panic!("{}: {e}", name(f)));
        assert!(
            wrote.warnings.iter().any(|w| w
                .message
                .starts_with("the meshes rebuilt from the glTF, every other part kept")),
            "{}: {:?}",
            name(f),
            wrote.warnings
        );
        let written = std::fs::read(&out).unwrap();
        let now = read(&written);
        let (a, b) = (chunk_bytes(&was, &bytes), chunk_bytes(&now, &written));
        assert_eq!(a.len(), b.len(), "{}: chunks", name(f));
        for (i, (x, y)) in a.iter().zip(&b).enumerate() {
            assert_eq!(x.0, y.0, "{}: chunk {i}", name(f));
            if i != first {
                assert!(x.1 == y.1, "{}: chunk {i} ({}) changed", name(f), x.0);
                kept += 1;
            }
        }
        // In the mesh chunk, only the 4 bytes of vertex 0's x (mirrored in the file) differ.
        let (x, y) = (a[first].1, b[first].1);
        assert_eq!(x.len(), y.len(), "{}: mesh chunk length", name(f));
        let differ: Vec<usize> = (0..x.len()).filter(|&k| x[k] != y[k]).collect();
        assert!(
            !differ.is_empty() && differ.len() <= 4 && differ[differ.len() - 1] - differ[0] < 4,
            "{}: mesh bytes {differ:?} differ",
            name(f)
        );
        let before = emfx::scene::to_scene(&was, "a").unwrap().0;
        let after = emfx::scene::to_scene(&now, "a").unwrap().0;
        let (p0, p1) = (
            before.meshes[0].vertices.positions[0],
            after.meshes[0].vertices.positions[0],
        );
        assert!(
            (p1[0] - p0[0] - 0.05).abs() < 1e-5 && p1[1] == p0[1] && p1[2] == p0[2],
            "{}: {p0:?} -> {p1:?}",
            name(f)
        );
        done += 1;
    }
    println!("{done} actors edited, {kept} chunks kept byte for byte");
    assert!(done >= 30, "{done} actors edited");
    assert!(kept > 300, "{kept} chunks kept");
}

/// A triangle taken out of the first mesh: that mesh (and its skin) is written anew on the
/// original's node, with the attribute layer kinds it had and its sub-meshes' bone lists; every
/// other chunk keeps its bytes, and the mesh has one triangle fewer.
#[test]
fn every_corpus_xac_with_a_triangle_removed_rebuilds_that_mesh_alone() {
    let Some(files) = corpus("emfx", "xac") else {
        return;
    };
    let dir = work("triangle_removed");
    let mut done = 0;
    for (f, bytes, was, first, mut edited) in with_a_mesh(&files) {
        let f = &f;
        let prim = &mut edited.meshes[0].primitives[0];
        if prim.indices.len() < 6 {
            continue;
        }
        prim.indices.truncate(prim.indices.len() - 3);
        let out = dir.join(name(f));
        hangar::write_scene_to(&edited, &out, Some(f))
            .unwrap_or_else(|e| panic!("{}: {e}", name(f)));
        let written = std::fs::read(&out).unwrap();
        let now = read(&written);
        let (a, b) = (chunk_bytes(&was, &bytes), chunk_bytes(&now, &written));
        assert_eq!(a.len(), b.len(), "{}: chunks", name(f));
        let owner = was.chunks[first].fields().unwrap()["node"].clone();
        let collision = was.chunks[first].fields().unwrap()["isCollision"].clone();
        let skin_of = |file: &emfx::File| {
            (0..file.chunks.len()).find(|&i| {
                file.chunks[i].name(file.kind) == "skinning"
                    && file.chunks[i]
                        .fields()
                        .is_some_and(|s| s["node"] == owner && s["isCollision"] == collision)
            })
        };
        let skin = skin_of(&was);
        assert_eq!(skin, skin_of(&now), "{}: the skin chunk's place", name(f));
        for (i, (x, y)) in a.iter().zip(&b).enumerate() {
            assert_eq!(x.0, y.0, "{}: chunk {i}", name(f));
            if i != first && Some(i) != skin {
                assert!(x.1 == y.1, "{}: chunk {i} ({}) changed", name(f), x.0);
            }
        }
        let (m0, m1) = (
            was.chunks[first].fields().unwrap(),
            now.chunks[first].fields().unwrap(),
        );
        assert_eq!(m0["node"], m1["node"], "{}", name(f));
        let kinds = |m: &serde_json::Value| {
            let mut k: Vec<(i64, i64)> = m["layers"]
                .as_array()
                .unwrap()
                .iter()
                .map(|l| {
                    (
                        l["type"].as_i64().unwrap(),
                        l["attribSize"].as_i64().unwrap(),
                    )
                })
                .filter(|k| matches!(k, (0..=5, _)))
                .collect();
            k.sort();
            k.dedup();
            k
        };
        assert_eq!(kinds(m0), kinds(m1), "{}: layer kinds", name(f));
        let listed = |m: &serde_json::Value| {
            m["subMeshes"]
                .as_array()
                .unwrap()
                .iter()
                .any(|s| s["numBones"].as_i64().unwrap() > 0)
        };
        assert_eq!(listed(m0), listed(m1), "{}: sub-mesh bone lists", name(f));
        let triangles = |file: &emfx::File| {
            let s = emfx::scene::to_scene(file, "a").unwrap().0;
            s.meshes[0]
                .primitives
                .iter()
                .map(|p| p.indices.len() / 3)
                .sum::<usize>()
        };
        assert_eq!(triangles(&now), triangles(&was) - 1, "{}", name(f));
        done += 1;
    }
    assert!(done >= 30, "{done} actors edited");
}

/// An actor made in code with a morph target on its mesh, written as an XAC; back from its glb
/// with the mesh's last triangle taken out (and with it the vertex the target moves): the morph
/// target chunk is kept byte for byte and named in a warning saying its vertices are gone.
#[test]
fn a_kept_morph_target_on_vertices_that_are_gone_is_named_in_a_warning() {
    use hangar::model::{Mesh, MorphTarget, Node, Primitive, Vertices};
    let mut scene = Scene::default();
    scene.nodes.push(Node::new("root"));
    let mut body = Node::new("body");
    (body.parent, body.mesh) = (Some(0), Some(0));
    scene.nodes.push(body);
    let positions = vec![
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0],
        [1.0, 1.0, 0.0],
        [2.0, 1.0, 0.0],
    ];
    let mut offsets = vec![[0.0; 3]; 5];
    offsets[4] = [0.0, 0.0, 0.5];
    offsets[1] = [0.0, 0.0, 0.25];
    scene.meshes.push(Mesh {
        name: "body".into(),
        vertices: Vertices {
            positions,
            ..Default::default()
        },
        primitives: vec![Primitive {
            indices: vec![0, 1, 2, 1, 3, 2, 1, 4, 3],
            material: None,
        }],
        morph_targets: vec![MorphTarget {
            name: "bulge".into(),
            positions: offsets,
            normals: None,
        }],
        ..Default::default()
    });
    let dir = work("morph_gone");
    let src = dir.join("actor.xac");
    let made = hangar::write_scene(&scene, &src, &Default::default()).unwrap();
    std::fs::write(&src, &made.bytes).unwrap();
    let morphs = |bytes: &[u8]| {
        let f = read(bytes);
        let at = (0..f.chunks.len())
            .find(|&i| f.chunks[i].name(f.kind) == "morphTargets")
            .unwrap();
        chunk_bytes(&f, bytes)[at].1.to_vec()
    };

    let mut edited = glb_scene(&src, &made.bytes);
    let m = edited.nodes.iter().find_map(|n| n.mesh).unwrap();
    edited.meshes[m].primitives[0].indices.truncate(6);
    let out = dir.join("edited.xac");
    let wrote = hangar::write_scene_to(&edited, &out, Some(&src)).unwrap();
    let written = std::fs::read(&out).unwrap();
    assert_eq!(morphs(&written), morphs(&made.bytes));
    let w = wrote
        .warnings
        .iter()
        .find(|w| w.path == "XAC.morphTargets[0].deformations[0]")
        .unwrap_or_else(|| panic!("no warning on the morph target: {:?}", wrote.warnings));
    assert!(
        w.message.contains("\"bulge\"")
            && w.message.contains("1 of the 2 vertices it moves are gone"),
        "{}",
        w.message
    );
    // The mesh has the four vertices its two triangles use.
    let now = emfx::scene::to_scene(&read(&written), "a").unwrap().0;
    assert_eq!(now.meshes[0].vertices.len(), 4);
    assert_eq!(now.meshes[0].primitives[0].indices.len(), 6);
}
