//! Exports right the first time (issue 14): skins with one root, the region root for unweighted M3
//! vertices, 8-bit names, glTF -> XAC with skin and morphs, one LOD a written file, clip names.

mod common;

use std::path::{Path, PathBuf};

fn corpus_file(sub: &str, name: &str) -> Option<PathBuf> {
    let p = common::corpus_root()?.join(sub).join(name);
    assert!(
        p.is_file(),
        "HANGAR_CORPUS is set but {} is missing",
        p.display()
    );
    Some(p)
}

fn convert(input: &Path, out_name: &str) -> Vec<u8> {
    let bytes = std::fs::read(input).unwrap();
    let opened = common::open(&bytes, input).unwrap();
    let out = common::gltf_out("exports").join(out_name);
    let (glb, _) = common::convert(&opened, &out).unwrap();
    if out_name.ends_with(".glb") {
        std::fs::write(&out, &glb).unwrap();
    }
    glb
}

/// The top node above `i` in a glTF document.
fn top(doc: &gltf::Document, i: usize) -> usize {
    let parents: Vec<Option<usize>> = {
        let mut p = vec![None; doc.nodes().count()];
        for n in doc.nodes() {
            for c in n.children() {
                p[c.index()] = Some(n.index());
            }
        }
        p
    };
    let mut at = i;
    while let Some(p) = parents[at] {
        at = p;
    }
    at
}

#[test]
fn every_xac_alone_gives_skins_whose_joints_share_one_root() {
    let Some(files) = common::corpus("emfx", "xac") else {
        return;
    };
    let mut several_roots = 0;
    for f in &files {
        let glb = convert(f, &format!("{}.glb", common::name(f)));
        let (doc, _) = common::load_glb(&glb);
        for skin in doc.skins() {
            let tops: Vec<usize> = skin.joints().map(|j| top(&doc, j.index())).collect();
            assert!(
                tops.windows(2).all(|w| w[0] == w[1]),
                "{}: joints under {} roots",
                common::name(f),
                tops.len()
            );
            let root = doc.nodes().nth(tops[0]).unwrap();
            if root
                .extras()
                .as_ref()
                .is_some_and(|e| e.get().contains("actor_root"))
            {
                several_roots += 1;
            }
        }
    }
    // The corpus has actors with helpers beside the skeleton (10 of 33 failed the validator before).
    assert!(several_roots >= 10, "{several_roots}");
}

#[test]
fn unweighted_m3_vertices_follow_their_regions_first_lookup_bone() {
    let Some(f) = corpus_file("m3", "olsonpm_hashtag-defense_sc2__PlusTwelve.m3") else {
        return;
    };
    let bytes = std::fs::read(&f).unwrap();
    let opened = common::open(&bytes, &f).unwrap();
    let (scene, _) = opened.to_scene().unwrap();
    // Three regions, one bone each: lookup [3, 1, 2]; every vertex has one weight or none, so all
    // follow that bone (bone 0 moves none of them).
    let meshes: Vec<_> = scene
        .meshes
        .iter()
        .filter(|m| m.vertices.joints.is_some())
        .collect();
    assert_eq!(meshes.len(), 3);
    for (m, bone) in meshes.iter().zip([3u16, 1, 2]) {
        let joints = m.vertices.joints.as_ref().unwrap();
        let weights = m.vertices.weights.as_ref().unwrap();
        assert!(joints.iter().all(|j| j[0] == bone), "{}", m.name);
        assert!(weights.iter().all(|w| w[0] == 1.0));
    }
    assert_eq!(
        meshes.iter().map(|m| m.vertices.len()).sum::<usize>(),
        298 + 152 + 2255
    );
}

#[test]
fn names_in_the_8_bit_code_page_are_decoded_and_written_back_as_they_were() {
    let Some(f) = corpus_file("emfx", "eu3cq__Revolutionaryfrench_1700.xac") else {
        return;
    };
    let bytes = std::fs::read(&f).unwrap();
    let opened = common::open(&bytes, &f).unwrap();
    let nodes = opened.info().details["nodes"].clone();
    let names: Vec<&str> = nodes
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"Säbel") && names.contains(&"Perücke"),
        "{names:?}"
    );
    assert!(names.iter().all(|n| !n.trim().is_empty()));
    let (same, _) = common::convert(&opened, Path::new("again.xac")).unwrap();
    assert_eq!(same, bytes);
    let glb = convert(&f, "latin1.glb");
    let (doc, _) = common::load_glb(&glb);
    assert!(doc.nodes().any(|n| n.name() == Some("Säbel")));
}

#[test]
fn an_actor_through_gltf_keeps_its_skin_and_only_lod_0() {
    let Some(f) = corpus_file("emfx", "vic2vl__Zulu_Infantry.xac") else {
        return;
    };
    let bytes = std::fs::read(&f).unwrap();
    let original = common::open(&bytes, &f).unwrap().info();
    let glb = convert(&f, "zulu.glb");
    let g = Path::new("zulu.glb");
    let opened = common::open(&glb, g).unwrap();
    let (xac, _) = common::convert(&opened, Path::new("zulu.xac")).unwrap();
    let back = common::open(&xac, Path::new("zulu.xac")).unwrap().info();
    // Five nested LOD actors in the file; only the actor itself comes back.
    assert_eq!(original.triangles, 1936);
    assert_eq!(back.triangles, 1936);
    assert_eq!(back.vertices, original.vertices);
    let chunks = back.details["chunks"].as_array().unwrap();
    assert!(chunks
        .iter()
        .any(|c| c.as_str().unwrap().starts_with("0x2 ")));
    assert!(!chunks
        .iter()
        .any(|c| c.as_str().unwrap().starts_with("0x8 ")));
    // The bones come back by name (the root hangar added for glTF is left out).
    assert_eq!(back.details["nodes"], original.details["nodes"]);
}

/// A triangle with one morph target `bulge`, as Blender exports a shape key.
fn morph_gltf() -> Vec<u8> {
    let (uri, len) = common::data_uri(
        &[
            0.0, 0., 0., 1., 0., 0., 0., 1., 0., 0., 0., 0.5, 0., 0., 0.5, 0., 0., 0.5,
        ],
        &[0, 1, 2, 0],
    );
    serde_json::json!({
        "asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}],
        "nodes": [{"name": "tri", "mesh": 0}],
        "meshes": [{"name": "tri", "primitives": [{"attributes": {"POSITION": 0}, "indices": 2, "targets": [{"POSITION": 1}]}],
                    "weights": [0], "extras": {"targetNames": ["bulge"]}}],
        "buffers": [{"byteLength": len, "uri": uri}],
        "bufferViews": [{"buffer": 0, "byteOffset": 0, "byteLength": 36}, {"buffer": 0, "byteOffset": 36, "byteLength": 36},
                        {"buffer": 0, "byteOffset": 72, "byteLength": 6}],
        "accessors": [{"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3", "min": [0,0,0], "max": [1,1,0]},
                      {"bufferView": 1, "componentType": 5126, "count": 3, "type": "VEC3", "min": [0,0,0.5], "max": [0,0,0.5]},
                      {"bufferView": 2, "componentType": 5123, "count": 3, "type": "SCALAR"}]
    })
    .to_string()
    .into_bytes()
}

#[test]
fn a_gltf_shape_key_becomes_an_xac_morph_target() {
    let g = morph_gltf();
    let p = Path::new("tri.gltf");
    let opened = common::open(&g, p).unwrap();
    let (xac, _) = common::convert(&opened, Path::new("tri.xac")).unwrap();
    let back = common::open(&xac, Path::new("tri.xac")).unwrap();
    assert_eq!(
        back.info().details["morph_targets"],
        serde_json::json!(["bulge"])
    );
    let (scene, _) = back.to_scene().unwrap();
    let t = &scene.meshes[0].morph_targets[0];
    assert_eq!(t.name, "bulge");
    // Every vertex moves 0.5 along Z (quantised to 16 bits over the target's range).
    assert!(t
        .positions
        .iter()
        .all(|d| (d[2] - 0.5).abs() < 1e-3 && d[0].abs() < 1e-3));
}

#[test]
fn a_lod_file_takes_its_own_level_only() {
    let Some(files) = common::corpus("x4", "xmf") else {
        return;
    };
    let lods: Vec<&PathBuf> = files
        .iter()
        .filter(|f| common::name(f).contains("-lod0"))
        .take(2)
        .collect();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("exports-lods/part_data");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(lods[0], dir.join("hull-lod0.xmf")).unwrap();
    std::fs::copy(lods[1], dir.join("hull-lod1.xmf")).unwrap();
    let triangles = |p: &Path| triangles_of(&std::fs::read(p).unwrap(), &common::name(p));
    let (t0, t1) = (triangles(lods[0]), triangles(lods[1]));
    assert_ne!(t0, t1);
    let out = common::gltf_out("exports").join("hull.glb");
    let glb = hangar::open(&dir)
        .and_then(|o| o.write_as(&out, &Default::default()))
        .unwrap()
        .bytes;
    std::fs::write(&out, &glb).unwrap();
    let opened = common::open(&glb, &out).unwrap();
    for (name, want) in [("hull-lod0.xmf", t0), ("hull-lod1.xmf", t1)] {
        let (xmf, _) = common::convert(&opened, Path::new(name)).unwrap();
        assert_eq!(triangles_of(&xmf, name), want, "{name}");
    }
}

fn triangles_of(bytes: &[u8], name: &str) -> u64 {
    common::open(bytes, Path::new(name))
        .unwrap()
        .info()
        .triangles
}

#[test]
fn motion_clips_are_named_by_their_files_and_never_twice_the_same() {
    let (Some(actor), Some(idle), Some(attack)) = (
        corpus_file("emfx", "vic2vl__Zulu_Infantry.xac"),
        corpus_file("emfx", "vic2vl__Zulu_Idle.xsm"),
        corpus_file("emfx", "vic2vl__Zulu_Attack.xsm"),
    ) else {
        return;
    };
    let read = |p: &Path| std::fs::read(p).unwrap();
    let (a, i, k) = (read(&actor), read(&idle), read(&attack));
    let mut oa = common::open(&a, &actor).unwrap();
    // A clip is labelled by its file's stem: the same file added twice is told apart.
    for (bytes, name) in [
        (&i, "Zulu_Idle.xsm"),
        (&k, "Zulu_Attack.xsm"),
        (&i, "Zulu_Idle.xsm"),
    ] {
        oa.add_motion(common::open(bytes, Path::new(name)).unwrap());
    }
    let (scene, _) = oa.to_scene().unwrap();
    let names: Vec<&str> = scene.animations.iter().map(|a| a.name.as_str()).collect();
    // Every motion of the folder says "German" inside; the files tell them apart.
    assert_eq!(names, ["Zulu_Idle", "Zulu_Attack", "Zulu_Idle 2"]);
}

#[test]
fn a_motion_alone_is_an_animation_of_named_nodes() {
    let Some(idle) = corpus_file("emfx", "vic2vl__Zulu_Idle.xsm") else {
        return;
    };
    let glb = convert(&idle, "zulu_idle_alone.glb");
    let (doc, _) = common::load_glb(&glb);
    assert_eq!(doc.animations().count(), 1);
    let moved = doc.animations().next().unwrap().channels().count();
    assert!(moved >= 3 * 20, "{moved}");
    assert!(doc.nodes().any(|n| n.name() == Some("Hip")));
}

#[test]
fn a_component_folders_ani_beside_it_is_found_as_the_game_lays_it_out() {
    let Some(root) = common::corpus_root() else {
        return;
    };
    let x4 = root.join("x4");
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("exports-ani-beside");
    let _ = std::fs::remove_dir_all(&base);
    let dir = base.join("struct_bt_ut_omicron_superyard_data");
    std::fs::create_dir_all(&dir).unwrap();
    for (from, to) in [
        ("Cgettys__anim_to_ring-lod0.xmf", "anim_to_ring-lod0.xmf"),
        (
            "Cgettys__anim_to_ring-collision.xmf",
            "anim_to_ring-collision.xmf",
        ),
    ] {
        std::fs::copy(x4.join(from), dir.join(to)).unwrap();
    }
    // Beside the folder, in upper case as some mods ship it.
    std::fs::copy(
        x4.join("Cgettys__struct_bt_ut_omicron_superyard_data.ani"),
        base.join("STRUCT_BT_UT_OMICRON_SUPERYARD_DATA.ANI"),
    )
    .unwrap();
    let out = common::gltf_out("exports").join("superyard_folder.glb");
    let glb = hangar::open(&dir)
        .and_then(|o| o.write_as(&out, &Default::default()))
        .unwrap()
        .bytes;
    std::fs::write(&out, &glb).unwrap();
    let (doc, _) = common::load_glb(&glb);
    let names: Vec<&str> = doc.animations().filter_map(|a| a.name()).collect();
    assert_eq!(names, ["loop"]);
}

/// Any model written as `.xml` is a whole component: the XML, its data folder with the model's
/// mesh as a part's XMF; opened again from disk it draws the same vertices and triangles.
#[test]
fn a_model_written_as_xml_is_a_component_of_it() {
    let opened = hangar::open("../samples/wedge-lod0.xmf").unwrap();
    assert!(opened.outputs().contains(&"xml"));
    let out = common::gltf_out("exports").join("wedge-as-component/wedge.xml");
    let _ = std::fs::remove_dir_all(out.parent().unwrap());
    let c = opened.write_as(&out, &Default::default()).unwrap();
    let names: Vec<String> = c
        .files
        .iter()
        .map(|(p, _)| p.to_string_lossy().replace('\\', "/"))
        .collect();
    assert_eq!(names, ["wedge_data/wedge-lod0-lod0.xmf"]);
    let text = String::from_utf8(c.bytes.clone()).unwrap();
    assert!(
        text.contains("<component name=\"wedge\"") && text.contains("wedge_data"),
        "{text}"
    );
    c.write(&out).unwrap();
    let back = hangar::open(&out).unwrap().info();
    assert_eq!((back.vertices, back.triangles), (32, 14));
    // `--original` names the game file a glTF came from: for another input it is refused.
    let err = hangar::open("../samples/wedge-lod0.xmf")
        .unwrap()
        .write_as(
            "x.xml",
            &hangar::ConvertOptions {
                original: Some("a.glb".into()),
                ..Default::default()
            },
        )
        .unwrap_err();
    assert!(err.to_string().contains("--original"), "{err}");
}

/// A glTF that is no component becomes one whose every part lists its lod0 in `<lods>` (the game
/// finds `PART-lod0.xmf` through it) with the materials the XMF names, and a `<size>`: lod0's half
/// extents and centre in X4's frame, X mirrored from the glTF's.
#[test]
fn a_new_components_parts_list_their_lods_and_size() {
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/wedge-lod0.xmf");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("new-component-lods");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let glb = dir.join("wedge.glb");
    let opts = hangar::ConvertOptions::for_input(&sample, Vec::new()).unwrap();
    hangar::open(sample.as_path())
        .unwrap()
        .write_to(&glb, &opts)
        .unwrap();
    let xml_path = dir.join("ship.xml");
    let opts = hangar::ConvertOptions::for_input(&glb, Vec::new()).unwrap();
    hangar::open(glb.as_path())
        .unwrap()
        .write_to(&xml_path, &opts)
        .unwrap();
    let xml = std::fs::read_to_string(&xml_path).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let parts: Vec<_> = doc
        .descendants()
        .filter(|e| e.has_tag_name("part"))
        .collect();
    assert_eq!(parts.len(), 1, "{xml}");
    let lods: Vec<_> = parts[0]
        .descendants()
        .filter(|e| e.has_tag_name("lod"))
        .collect();
    assert_eq!(lods.len(), 1);
    assert_eq!(lods[0].attribute("index"), Some("0"));
    let name = parts[0].attribute("name").unwrap();
    let (wedge, _) = hangar::open(sample.as_path()).unwrap().to_scene().unwrap();
    let refs: Vec<_> = lods[0]
        .descendants()
        .filter(|e| e.has_tag_name("material"))
        .map(|m| m.attribute("ref").unwrap().to_string())
        .collect();
    let names: Vec<_> = wedge.materials.iter().map(|m| m.name.clone()).collect();
    assert!(!names.is_empty());
    assert_eq!(refs, names);
    // The size against the XMF written beside it, read back in X4's frame.
    let written = dir.join("ship_data").join(format!("{name}-lod0.xmf"));
    let (back, _) = hangar::open(written.as_path()).unwrap().to_scene().unwrap();
    let p = &back.meshes[0].vertices.positions;
    let axis = |k: usize, s: f32| p.iter().map(move |v| s * v[k]);
    let span = |k: usize, s: f32| {
        let lo = axis(k, s).fold(f32::INFINITY, f32::min);
        let hi = axis(k, s).fold(f32::NEG_INFINITY, f32::max);
        ((hi - lo) / 2.0, (hi + lo) / 2.0)
    };
    let (max, center) = (
        doc.descendants().find(|e| e.has_tag_name("max")).unwrap(),
        doc.descendants()
            .find(|e| e.has_tag_name("center"))
            .unwrap(),
    );
    for (k, a, s) in [(0, "x", -1.0), (1, "y", 1.0), (2, "z", 1.0)] {
        let (half, mid) = span(k, s);
        let got = |e: roxmltree::Node<'_, '_>| e.attribute(a).unwrap().parse::<f32>().unwrap();
        assert!(
            (got(max) - half).abs() < 1e-5 && half > 0.1,
            "{a}: {} {half}",
            got(max)
        );
        assert!(
            (got(center) - mid).abs() < 1e-5,
            "{a}: {} {mid}",
            got(center)
        );
    }
}
