//! XAC and XSM end to end on the corpus (HANGAR_CORPUS/emfx): every chunk where CHUNKS.tsv says,
//! declared-length mismatches reported, byte-exact rewrite and JSON round trip.

mod common;

use common::{corpus, name};
use hangar::formats::emfx;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn files() -> Option<Vec<PathBuf>> {
    let mut f = corpus("emfx", "xac")?;
    f.extend(corpus("emfx", "xsm")?);
    Some(f)
}

/// One row of CHUNKS.tsv: offset, id, version, declared length, structural length.
type Row = (u64, u32, u32, u64, u64);

/// CHUNKS.tsv by file.
fn chunk_table() -> BTreeMap<String, Vec<Row>> {
    let root = std::env::var_os("HANGAR_CORPUS").unwrap();
    let text =
        std::fs::read_to_string(std::path::Path::new(&root).join("emfx/CHUNKS.tsv")).unwrap();
    let mut m: BTreeMap<String, Vec<_>> = BTreeMap::new();
    for line in text.lines().skip(1) {
        let c: Vec<&str> = line.split('\t').collect();
        m.entry(c[0].to_string()).or_default().push((
            c[1].parse().unwrap(),
            u32::from_str_radix(c[2].trim_start_matches("0x"), 16).unwrap(),
            c[3].parse().unwrap(),
            c[4].parse().unwrap(),
            c[5].parse().unwrap(),
        ));
    }
    m
}

#[test]
fn every_chunk_is_where_chunks_tsv_says_and_the_files_rewrite_exactly() {
    let Some(files) = files() else { return };
    assert_eq!(files.len(), 54, "33 XAC and 21 XSM");
    let table = chunk_table();
    let mut mismatches = 0;
    let mut warned = 0;
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        let (file, warnings) = emfx::read(&bytes).unwrap_or_else(|e| panic!("{}: {e}", name(f)));
        assert!(file.tail.is_empty(), "{}: parsed to the end", name(f));
        let got: Vec<Row> = file
            .chunks
            .iter()
            .map(|c| {
                (
                    c.offset,
                    c.id,
                    c.version,
                    c.declared.map_or(c.length, u64::from),
                    c.length,
                )
            })
            .collect();
        assert_eq!(&got, &table[&name(f)], "{}", name(f));
        mismatches += got.iter().filter(|c| c.3 != c.4).count();
        // Nested LOD actors (chunk 0x8) report their own chunks under `.actor.`.
        warned += warnings
            .iter()
            .filter(|w| w.message.contains("declared length") && !w.path.contains(".actor."))
            .count();
        assert!(
            file.chunks.iter().all(|c| c.fields().is_some()),
            "{}: a chunk kept raw",
            name(f)
        );
        let again = emfx::write(&file).unwrap();
        assert!(again == bytes, "{}: rewrite differs", name(f));
        // The dump as the CLI writes it, and back.
        let opened = common::open(&bytes, f).unwrap();
        let dump = opened.dump().unwrap();
        let json_path = std::path::Path::new("d.json");
        let back = common::open(dump.as_bytes(), json_path).unwrap();
        let ext = f.extension().unwrap().to_string_lossy().to_string();
        let out = std::path::PathBuf::from(format!("out.{ext}"));
        let (from_json, _) = common::convert(&back, &out).unwrap();
        assert!(from_json == bytes, "{}: JSON round trip differs", name(f));
    }
    assert_eq!(mismatches, 76);
    assert_eq!(warned, mismatches);
}

/// The actor and motion pairs of the corpus: each converts to a valid .glb with a skin and an
/// animation that moves the actor's nodes.
#[test]
fn actors_with_their_motions_convert_to_skinned_animated_glb() {
    let Some(files) = files() else { return };
    let pairs = [
        ("vic2vl__Zulu_Infantry.xac", "vic2vl__Zulu_Idle.xsm"),
        ("vic2vl__Zulu_Infantry.xac", "vic2vl__Zulu_Attack.xsm"),
        ("vic2vl__Zulu_Infantry.xac", "vic2vl__Zulu_Moving.xsm"),
        ("vic2vl__German_Tank.xac", "vic2vl__German_Tank_Idle.xsm"),
        (
            "vic2vl__Generic_Battleship.xac",
            "vic2vl__battleship_attack.xsm",
        ),
        (
            "vic2vl__Generic_Battleship.xac",
            "vic2vl__battleship_move.xsm",
        ),
        ("vic2vl__flag.xac", "vic2vl__flag_anim.xsm"),
        ("eu3cq__flag.xac", "eu3cq__flag_anim.xsm"),
        ("eu3cq__jap_flag.xac", "eu3cq__jap_flag_anim.xsm"),
    ];
    let out = common::gltf_out("emfx_pairs");
    for (actor, motion) in pairs {
        let (a, ab) = common::pick(&files, actor);
        let (m, mb) = common::pick(&files, motion);
        let mut oa = common::open(&ab, &a).unwrap();
        let om = common::open(&mb, &m).unwrap();
        let dest = out.join(format!("{actor}+{motion}.glb"));
        oa.add_motion(om);
        let (glb, warnings) = common::convert(&oa, &dest).unwrap();
        std::fs::write(&dest, &glb).unwrap();
        let (doc, _) = common::load_glb(&glb);
        let skin = doc
            .skins()
            .next()
            .unwrap_or_else(|| panic!("{actor}: no skin"));
        assert!(skin.joints().count() >= 2, "{actor}");
        assert!(doc.meshes().any(|m| m
            .primitives()
            .any(|p| p.get(&gltf::Semantic::Joints(0)).is_some())));
        let anims: Vec<_> = doc.animations().collect();
        assert_eq!(anims.len(), 1, "{actor} + {motion}: {warnings:?}");
        assert!(anims[0].channels().count() >= 2, "{actor} + {motion}");
    }
}

/// Faces wind counter-clockwise around their stored normals after the mirror and the swap.
#[test]
fn actor_faces_wind_counter_clockwise_around_their_normals() {
    let Some(files) = files() else { return };
    let (mut ccw, mut total) = (0u64, 0u64);
    for f in files.iter().filter(|f| f.extension().unwrap() == "xac") {
        let bytes = std::fs::read(f).unwrap();
        let o = common::open(&bytes, f).unwrap();
        let (scene, _) = o.to_scene().unwrap();
        for m in &scene.meshes {
            let Some(ns) = &m.vertices.normals else {
                continue;
            };
            let p = |i: u32| glam::Vec3::from(m.vertices.positions[i as usize]);
            for prim in &m.primitives {
                for t in prim.indices.chunks_exact(3) {
                    let face = (p(t[1]) - p(t[0])).cross(p(t[2]) - p(t[0]));
                    let n: glam::Vec3 = t.iter().map(|&i| glam::Vec3::from(ns[i as usize])).sum();
                    total += 1;
                    if face.dot(n) > 0.0 {
                        ccw += 1;
                    }
                }
            }
        }
    }
    let share = ccw as f64 / total as f64;
    println!("{ccw} of {total} actor triangles wind counter-clockwise ({share:.4})");
    assert!(total > 50_000 && share > 0.95, "{share}");
}

/// An actor with LODs back from a glb with `--original`: untouched, the original's bytes; with one
/// vertex moved, the mesh written into the original (its 5 LOD chunks kept); with a mesh node
/// added, rebuilt with the original's 5 LOD chunks carried as stored.
#[test]
fn an_actor_back_with_its_original_keeps_its_lods() {
    let Some(root) = std::env::var_os("HANGAR_CORPUS") else {
        return;
    };
    let src = Path::new(&root).join("emfx/vic2vl__Zulu_Infantry.xac");
    let Ok(bytes) = std::fs::read(&src) else {
        return;
    };
    let lods = |b: &[u8]| {
        let (f, _) = emfx::read(b).unwrap();
        f.chunks
            .iter()
            .filter(|c| c.name(f.kind) == "meshLod")
            .count()
    };
    assert_eq!(lods(&bytes), 5);
    let (glb, _) =
        common::convert(&common::open(&bytes, &src).unwrap(), Path::new("z.glb")).unwrap();
    let options = hangar::ConvertOptions {
        original: Some(src.clone()),
        ..Default::default()
    };
    let g = common::open(&glb, Path::new("z.glb")).unwrap();
    assert!(g.write_as("z.xac", &options).unwrap().bytes == bytes);
    let (mut scene, _) = g.to_scene().unwrap();
    scene.meshes[0].vertices.positions[0][1] += 0.25;
    let edited = hangar::write_scene(&scene, "e.glb", &Default::default()).unwrap();
    let e = common::open(&edited.bytes, Path::new("e.glb")).unwrap();
    let out = e.write_as("z.xac", &options).unwrap();
    assert!(out.bytes != bytes);
    assert_eq!(lods(&out.bytes), 5);
    assert!(out.warnings.iter().any(|w| w
        .message
        .starts_with("the meshes rebuilt from the glTF, every other part kept")));
    // A mesh node added: the actor is rebuilt, its LOD chunks carried.
    let (mut scene, _) = g.to_scene().unwrap();
    let mut extra = scene
        .nodes
        .iter()
        .find(|n| n.mesh.is_some())
        .unwrap()
        .clone();
    extra.name = "extra".into();
    scene.nodes.push(extra);
    let edited = hangar::write_scene(&scene, "e.glb", &Default::default()).unwrap();
    let e = common::open(&edited.bytes, Path::new("e.glb")).unwrap();
    let out = e.write_as("z.xac", &options).unwrap();
    assert_eq!(lods(&out.bytes), 5);
    assert!(out
        .warnings
        .iter()
        .any(|w| w.message == "5 LOD chunks carried from the original as stored"));
}
