//! The M3 builder: a neutral scene (what glTF import gives) becomes an M3 the reader reads back
//! with the same geometry, bones and sequences; every corpus M3 survives M3 -> scene -> M3.

mod common;

use common::{corpus, f32s, m3_out, name, octet_uri, u16s, write_m3_checked};
use hangar::formats::m3::{build, read, scene};
use hangar::model::{Animation, Channel, Interpolation, Mesh, Node, Primitive, Property, Scene};
use std::path::Path;

fn counts(s: &Scene) -> (usize, usize, usize, Vec<String>) {
    let v = s.meshes.iter().map(|m| m.vertices.len()).sum();
    let t = s.meshes.iter().map(|m| m.triangle_count()).sum();
    let bones = s.skins.first().map_or(0, |k| k.joints.len());
    let names = s.animations.iter().map(|a| a.name.clone()).collect();
    (v, t, bones, names)
}

/// Attachment point names, camera names and light kinds, as the M3 reader marks them.
fn helpers(s: &Scene) -> (Vec<String>, Vec<String>, Vec<String>) {
    let marked = |key: &str| -> Vec<String> {
        s.nodes
            .iter()
            .filter(|n| n.extras.get("m3").is_some_and(|m| m.get(key).is_some()))
            .map(|n| n.name.clone())
            .collect()
    };
    let lights = s.lights.iter().map(|l| format!("{:?}", l.kind)).collect();
    (marked("attachmentPoint"), marked("camera"), lights)
}

/// The layers a standard material (MAT_) has: every material is written as one.
const STANDARD_LAYERS: [&str; 18] = [
    "diffuseLayer",
    "decalLayer",
    "specularLayer",
    "glossLayer",
    "emissiveLayer",
    "emissive2Layer",
    "envioLayer",
    "envioMaskLayer",
    "alphaMaskLayer",
    "alphaMask2Layer",
    "normalLayer",
    "heightLayer",
    "lightMapLayer",
    "ambientOcclusionLayer",
    "normalBlend1MaskLayer",
    "normalBlend2MaskLayer",
    "normalBlend1Layer",
    "normalBlend2Layer",
];

/// The materials' standard layers and their image paths (as the M3 reader keeps them in extras),
/// sorted. A layer other material kinds have and MAT_ has not (a displacement material's
/// `strengthLayer`) has no place in the M3 written, and is left out here.
fn texture_paths(s: &Scene) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for m in &s.materials {
        if let Some(layers) = m.extras["m3"].get("layers").and_then(|l| l.as_object()) {
            for (layer, v) in layers {
                if STANDARD_LAYERS.contains(&layer.as_str()) {
                    out.push((layer.clone(), v["image"].as_str().unwrap_or("").to_string()));
                }
            }
        }
    }
    out.sort();
    out
}

fn reread(bytes: &[u8]) -> Scene {
    let (m3, _) = read::read(bytes).unwrap();
    scene::to_scene(&m3, "x", &[]).unwrap().0
}

/// Same meshes, positions within 1/1000 (M3 stores f32 positions; the axes turn twice).
fn same_positions(a: &Scene, b: &Scene, what: &str) {
    assert_eq!(a.meshes.len(), b.meshes.len(), "{what}: meshes");
    for (a, b) in a.meshes.iter().zip(&b.meshes) {
        assert_eq!(a.vertices.len(), b.vertices.len(), "{what}: {}", a.name);
        for (p, q) in a.vertices.positions.iter().zip(&b.vertices.positions) {
            for k in 0..3 {
                assert!(
                    (p[k] - q[k]).abs() <= 1e-3 * (1.0 + p[k].abs()),
                    "{what}: {p:?} {q:?}"
                );
            }
        }
    }
}

/// Every UV set and the vertex colours of `a` in `b`: UVs within the int16 step of their region's
/// scale, colours within one 8-bit step. Returns (meshes with 3+ UV sets, meshes with colours).
fn same_uvs_and_colours(a: &Scene, b: &Scene, what: &str) -> (usize, usize) {
    let (mut many_uvs, mut coloured) = (0, 0);
    for (a, b) in a.meshes.iter().zip(&b.meshes) {
        let (va, vb) = (&a.vertices, &b.vertices);
        assert_eq!(va.uvs.len(), vb.uvs.len(), "{what}: {} UV sets", a.name);
        many_uvs += (va.uvs.len() >= 3) as usize;
        for (sa, sb) in va.uvs.iter().zip(&vb.uvs) {
            for (x, y) in sa.iter().zip(sb) {
                for k in 0..2 {
                    let step = (x[k].abs() + 1.0).max(16.0) / 32768.0;
                    assert!(
                        (x[k] - y[k]).abs() <= step * 1.01,
                        "{what}: uv {x:?} came back {y:?}"
                    );
                }
            }
        }
        assert_eq!(
            va.colors.len(),
            vb.colors.len(),
            "{what}: {} colour sets",
            a.name
        );
        if let (Some(ca), Some(cb)) = (va.colors.first(), vb.colors.first()) {
            coloured += 1;
            for (x, y) in ca.iter().zip(cb) {
                for k in 0..4 {
                    assert!(
                        (x[k] - y[k]).abs() <= 0.5 / 255.0 + 1e-6,
                        "{what}: colour {x:?} came back {y:?}"
                    );
                }
            }
        }
    }
    (many_uvs, coloured)
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
            times: vec![0.0, 1.0].into(),
            values: vec![0.0, 0.0, 0.0, 0.0, 1.0, 0.0].into(),
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
    // Values every corpus file has and m3addon's reader insists on.
    let entry = |tag: &str| {
        json["sections"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["tag"] == tag)
            .map(|s| s["entries"][0].clone())
            .unwrap()
    };
    assert_eq!(entry("SEQS")["blendTime"], 100);
    assert_eq!(entry("STC_")["refCount"], 0);
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
    assert_eq!(c.times[..], [0.0, 1.0]);
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

/// Every corpus M3 goes M3 -> glTF -> M3 through the library (export, import, build): the same
/// vertex, triangle, bone and sequence counts and sequence names as hangar's reader sees them, the
/// same positions, and a second glTF with the same geometry as the first. Each written M3 goes to
/// `target/tmp/m3` for the mdx-m3-viewer check in `.ci/run`.
#[test]
fn every_corpus_m3_goes_through_gltf_and_back_with_its_counts() {
    let Some(files) = corpus("m3", "m3") else {
        return;
    };
    let dir = m3_out("corpus_round_trip");
    let (mut done, mut paths, mut many_uvs, mut coloured) = (0, 0, 0, 0);
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        let Ok((m3, _)) = read::read(&bytes) else {
            continue;
        };
        let Ok((first, _)) = scene::to_scene(&m3, "x", &[]) else {
            continue;
        };
        // As `hangar convert x.m3 x.glb` does (textures looked for beside the model).
        let opened = common::open(&bytes, f).unwrap();
        let (glb, _) = common::convert(&opened, Path::new("x.glb")).unwrap();
        let imported = common::import(&glb, Path::new("x.glb")).unwrap();
        let (out, _) = build::build(&imported.scene, &build::Options::default())
            .unwrap_or_else(|e| panic!("{}: {e}", name(f)));
        let written = write_m3_checked(&dir, &name(f), &out);
        let second = reread(&out);
        assert_eq!(counts(&first), counts(&second), "{}", name(f));
        assert_eq!(helpers(&first), helpers(&second), "{}", name(f));
        assert_eq!(written.modl_version, build::DEFAULT_MODL_VERSION);
        // Every layer's texture path is kept.
        assert_eq!(texture_paths(&first), texture_paths(&second), "{}", name(f));
        paths += texture_paths(&first).len();
        same_positions(&first, &second, &name(f));
        let (u, c) = same_uvs_and_colours(&first, &second, &name(f));
        many_uvs += u;
        coloured += c;
        // The second glTF holds the geometry of the first.
        let opened = common::open(&out, f).unwrap();
        let (glb2, _) = common::convert(&opened, Path::new("x.glb")).unwrap();
        let again = common::import(&glb2, Path::new("x.glb")).unwrap();
        let (a, b) = (counts(&imported.scene), counts(&again.scene));
        assert_eq!((a.0, a.1), (b.0, b.1), "{}: second glTF", name(f));
        same_positions(&imported.scene, &again.scene, &name(f));
        done += 1;
    }
    assert!(done >= 80, "{done} files round-tripped");
    assert!(paths > 500, "{paths} texture paths");
    // The corpus has models with three and four UV sets and with vertex colours: all kept.
    assert!(
        many_uvs >= 3 && coloured >= 4,
        "{many_uvs} meshes with 3+ UV sets, {coloured} coloured"
    );
}

/// The versions of the structures of each tag in an M3 (the first section of each tag).
fn section_versions(bytes: &[u8]) -> std::collections::BTreeMap<String, u64> {
    let (m3, _) = read::read(bytes).unwrap();
    let json = hangar::formats::m3::dump::to_json(&m3);
    let mut out = std::collections::BTreeMap::new();
    for s in json["sections"].as_array().unwrap() {
        out.entry(s["tag"].as_str().unwrap().to_string())
            .or_insert(s["version"].as_u64().unwrap());
    }
    out
}

/// Corpus models with materials, bones, sequences, attachment points, cameras and lights between
/// them, each written at every MODL version hangar writes: read back with the counts of the
/// first, with the structure versions of the table, and loaded by mdx-m3-viewer in `.ci/run`.
#[test]
fn each_modl_version_round_trips_with_its_structure_versions() {
    let Some(files) = corpus("m3", "m3") else {
        return;
    };
    let picked = common::choose(
        files,
        &[
            // MODL 26: 4 attachment points, a camera, an attachment volume.
            "rodriguez404_mineralz-evolution__Unit_HeroLich_Portrait.m3",
            // MODL 23: 15 attachment points, a light.
            "rodriguez404_mineralz-evolution__RailgunTurret.m3",
            // MODL 29: a camera.
            "SC2-Honkai-M_HonkaiUnitsMod__HonkaiUnitStatus_NoEnergy.m3",
        ],
    );
    let dir = m3_out("modl_versions");
    for f in &picked {
        let bytes = std::fs::read(f).unwrap();
        let (m3, _) = read::read(&bytes).unwrap();
        let (first, _) = scene::to_scene(&m3, "x", &[]).unwrap();
        let opened = common::open(&bytes, f).unwrap();
        let (glb, _) = common::convert(&opened, Path::new("x.glb")).unwrap();
        let imported = common::import(&glb, Path::new("x.glb")).unwrap();
        for v in build::VERSIONS {
            let opts = build::Options {
                modl_version: v.modl,
                ..Default::default()
            };
            let (out, _) = build::build(&imported.scene, &opts).unwrap();
            let what = format!("{} at MODL {}", name(f), v.modl);
            let stem = name(f).trim_end_matches(".m3").to_string();
            let written = write_m3_checked(&dir, &format!("{stem}-v{}.m3", v.modl), &out);
            assert_eq!(written.modl_version, v.modl, "{what}");
            let second = reread(&out);
            assert_eq!(counts(&first), counts(&second), "{what}");
            assert_eq!(helpers(&first), helpers(&second), "{what}");
            let got = section_versions(&out);
            for (tag, want) in [
                ("MODL", v.modl),
                ("REGN", v.regn),
                ("MAT_", v.mat),
                ("LAYR", v.layr),
                ("SEQS", v.seqs),
            ] {
                assert_eq!(got.get(tag), Some(&(want as u64)), "{what}: {tag}");
            }
            if !helpers(&first).1.is_empty() {
                assert_eq!(got.get("CAM_"), Some(&(v.cam as u64)), "{what}: CAM_");
            }
        }
    }
}

/// One static triangle on a node named `name`.
fn one_triangle(name: &str) -> Scene {
    let mut s = Scene::default();
    let mut mesh = Mesh::default();
    mesh.vertices.positions = vec![[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
    mesh.primitives = vec![Primitive {
        indices: vec![0, 1, 2],
        material: None,
    }];
    s.meshes.push(mesh);
    let mut n = Node::new(name);
    n.mesh = Some(0);
    s.nodes.push(n);
    s
}

#[test]
fn modl_versions_hangar_does_not_write_are_refused_with_the_list() {
    let s = one_triangle("tri");
    for bad in [0, 20, 21, 22, 24, 27, 30, 31] {
        let opts = build::Options {
            modl_version: bad,
            ..Default::default()
        };
        let e = build::build(&s, &opts).unwrap_err();
        assert_eq!(e.path, "--modl-version");
        assert!(
            e.message
                .contains(&format!("MODL version {bad} is not written"))
                && e.message.contains("23, 25, 26, 28, 29"),
            "{}",
            e.message
        );
    }
    let written: Vec<u32> = build::VERSIONS.iter().map(|v| v.modl).collect();
    assert_eq!(written, [23, 25, 26, 28, 29]);
}

/// A glTF as Blender writes one with an empty named `Ref_Weapon` (offset from its parent), a
/// perspective camera and a KHR_lights_punctual spot light: an attachment point, a camera and a
/// light in the M3, each on a bone of its own at the node's place.
#[test]
fn ref_empties_cameras_and_khr_lights_become_attachment_points_cameras_and_lights() {
    let gltf = r#"{
      "asset": {"version": "2.0"},
      "extensionsUsed": ["KHR_lights_punctual"],
      "extensions": {"KHR_lights_punctual": {"lights": [
        {"type": "spot", "color": [1.0, 0.5, 0.25], "intensity": 3.0, "range": 12.0,
         "spot": {"innerConeAngle": 0.2, "outerConeAngle": 0.6}}]}},
      "cameras": [{"type": "perspective", "perspective": {"yfov": 0.7, "znear": 0.5, "zfar": 50.0}}],
      "scene": 0,
      "scenes": [{"nodes": [0, 2, 3]}],
      "nodes": [
        {"name": "Body", "children": [1]},
        {"name": "Ref_Weapon", "translation": [0.0, 1.0, 2.0]},
        {"name": "Portrait", "camera": 0, "translation": [0.0, 2.0, 5.0]},
        {"name": "Lamp", "extensions": {"KHR_lights_punctual": {"light": 0}},
         "translation": [1.0, 3.0, 0.0]}
      ]
    }"#;
    let imported = common::import(gltf.as_bytes(), Path::new("x.gltf")).unwrap();
    assert_eq!(imported.scene.cameras.len(), 1);
    assert_eq!(imported.scene.lights[0].range, Some(12.0));
    let (bytes, _) = build::build(&imported.scene, &build::Options::default()).unwrap();
    let dir = m3_out("helpers");
    let written = write_m3_checked(&dir, "ref_camera_light.m3", &bytes);
    assert_eq!(
        (written.attachment_points, written.cameras, written.lights),
        (1, 1, 1)
    );
    let back = reread(&bytes);
    let (atts, cams, lights) = helpers(&back);
    assert_eq!(atts, ["Ref_Weapon"]);
    assert_eq!(cams, ["Portrait"]);
    assert_eq!(lights, ["Spot { inner: 0.2, outer: 0.6 }"]);
    assert_eq!(back.cameras[0].yfov, 0.7);
    assert_eq!(back.cameras[0].zfar, Some(50.0));
    assert_eq!(back.lights[0].color, [1.0, 0.5, 0.25]);
    assert_eq!(back.lights[0].intensity, 3.0);
    // Each helper sits on a bone of its own, at the node's place: Ref_Weapon's bone is at
    // glTF (0, 1, 2), M3 (0, -2, 1).
    assert_eq!(written.bones, 3);
    let att = back
        .nodes
        .iter()
        .position(|n| {
            n.extras
                .get("m3")
                .is_some_and(|m| m.get("attachmentPoint").is_some())
        })
        .unwrap();
    let bone = back.nodes[att].parent.unwrap();
    let t = back.nodes[bone].translation;
    assert!(
        (t - glam::Vec3::new(0.0, -2.0, 1.0)).length() < 1e-5,
        "{t:?}"
    );
}

/// A glTF text with one buffer (as a data URI) made of `chunks`, one buffer view and accessor a
/// chunk (`accessors[i]` gives the accessor's other fields), and `rest` (nodes, meshes, skins...).
fn tiny_gltf(chunks: &[(Vec<u8>, serde_json::Value)], rest: serde_json::Value) -> String {
    let mut data = Vec::new();
    let mut views = Vec::new();
    let mut accessors = Vec::new();
    for (i, (bytes, acc)) in chunks.iter().enumerate() {
        views.push(
            serde_json::json!({"buffer": 0, "byteOffset": data.len(), "byteLength": bytes.len()}),
        );
        let mut a = acc.clone();
        a["bufferView"] = i.into();
        accessors.push(a);
        data.extend_from_slice(bytes);
        data.resize(data.len().next_multiple_of(4), 0);
    }
    let mut doc = rest;
    doc["asset"] = serde_json::json!({"version": "2.0"});
    doc["buffers"] = serde_json::json!([{ "byteLength": data.len(), "uri": octet_uri(&data) }]);
    doc["bufferViews"] = views.into();
    doc["accessors"] = accessors.into();
    serde_json::to_string_pretty(&doc).unwrap()
}

fn positions(p: &[[f32; 3]]) -> (Vec<u8>, serde_json::Value) {
    let lo = [0, 1, 2].map(|k| p.iter().map(|v| v[k]).fold(f32::MAX, f32::min));
    let hi = [0, 1, 2].map(|k| p.iter().map(|v| v[k]).fold(f32::MIN, f32::max));
    (
        f32s(&p.concat()),
        serde_json::json!({"componentType": 5126, "count": p.len(), "type": "VEC3", "min": lo, "max": hi}),
    )
}

/// A triangle skinned to eight joints through JOINTS_0/WEIGHTS_0 and JOINTS_1/WEIGHTS_1: the first
/// vertex has six non-zero weights. The strongest four stay, scaled back to a sum of 1, and a
/// warning counts the vertex; the M3 carries them.
#[test]
fn more_than_four_weights_keep_the_strongest_four_renormalised() {
    let tri = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
    let j0 = u16s(&[0, 1, 2, 3].repeat(3));
    let j1 = u16s(&[4, 5, 6, 7].repeat(3));
    let w0 = f32s(&[0.1, 0.1, 0.1, 0.1, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]);
    let w1 = f32s(&[0.4, 0.2, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    let vec4 = |ct: u32| serde_json::json!({"componentType": ct, "count": 3, "type": "VEC4"});
    let joints: Vec<serde_json::Value> = (0..8)
        .map(|i| serde_json::json!({"name": format!("joint{i}"), "translation": [i as f32, 0.0, 0.0]}))
        .collect();
    let mut nodes = vec![serde_json::json!({"name": "skinned", "mesh": 0, "skin": 0})];
    nodes.extend(joints);
    // joint0 is the root of the others.
    nodes[1]["children"] = serde_json::json!([2, 3, 4, 5, 6, 7, 8]);
    let text = tiny_gltf(
        &[
            positions(&tri),
            (j0, vec4(5123)),
            (w0, vec4(5126)),
            (j1, vec4(5123)),
            (w1, vec4(5126)),
        ],
        serde_json::json!({
            "scene": 0,
            "scenes": [{"nodes": [0, 1]}],
            "nodes": nodes,
            "skins": [{"joints": [1, 2, 3, 4, 5, 6, 7, 8]}],
            "meshes": [{"primitives": [{"attributes":
                {"POSITION": 0, "JOINTS_0": 1, "WEIGHTS_0": 2, "JOINTS_1": 3, "WEIGHTS_1": 4}}]}],
        }),
    );
    std::fs::write(common::gltf_out("m3_build").join("six_weights.gltf"), &text).unwrap();
    let imported = common::import(text.as_bytes(), Path::new("x.gltf")).unwrap();
    assert!(
        imported.warnings.iter().any(|w| w
            .message
            .contains("1 vertices have more than four joint weights")),
        "{:?}",
        imported.warnings
    );
    let v = &imported.scene.meshes[0].vertices;
    assert_eq!(v.joints.as_ref().unwrap()[0], [4, 5, 0, 1]);
    for (got, want) in v.weights.as_ref().unwrap()[0]
        .iter()
        .zip([0.5, 0.25, 0.125, 0.125])
    {
        assert!((got - want).abs() < 1e-6, "{got} {want}");
    }
    assert_eq!(v.weights.as_ref().unwrap()[2], [1.0, 0.0, 0.0, 0.0]);
    assert_eq!(v.joints.as_ref().unwrap()[2], [3, 0, 0, 0]);
    let (bytes, _) = build::build(&imported.scene, &build::Options::default()).unwrap();
    write_m3_checked(&m3_out("weights"), "six_weights.m3", &bytes);
    let back = reread(&bytes);
    let w = &back.meshes[0].vertices.weights.as_ref().unwrap()[0];
    // Stored as 255ths: 128, 64, 32, 31 (the last takes what is left).
    for (got, want) in w.iter().zip([0.5, 0.25, 0.125, 0.125]) {
        assert!((got - want).abs() <= 1.0 / 255.0, "{w:?}");
    }
}

/// A skinned model as Blender exports it: an armature node with a chain of two bones up glTF's
/// +Y, a column 2 units tall bound at rest (no inverse binds: identity). The M3 stores its
/// vertices standing up +Z (not lying on their back as glTF's +Y would leave them), and read back
/// the model still stands 2 units tall up glTF's +Y at rest.
#[test]
fn a_skinned_blender_model_stands_up_in_the_m3() {
    let column = [[0.0, 0.0, 0.0], [0.2, 0.0, 0.0], [0.0, 2.0, 0.0]];
    let joints = u16s(&[0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0]);
    let weights = f32s(&[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]);
    let vec4 = |ct: u32| serde_json::json!({"componentType": ct, "count": 3, "type": "VEC4"});
    let text = tiny_gltf(
        &[
            positions(&column),
            (joints, vec4(5123)),
            (weights, vec4(5126)),
        ],
        serde_json::json!({
            "scene": 0,
            "scenes": [{"nodes": [0]}],
            "nodes": [
                {"name": "walker", "children": [1, 3]},
                {"name": "hip", "children": [2]},
                {"name": "spine", "translation": [0.0, 1.0, 0.0]},
                {"name": "body", "mesh": 0, "skin": 0}
            ],
            "skins": [{"joints": [1, 2]}],
            "meshes": [{"primitives": [{"attributes":
                {"POSITION": 0, "JOINTS_0": 1, "WEIGHTS_0": 2}}]}],
        }),
    );
    let imported = common::import(text.as_bytes(), Path::new("walker.gltf")).unwrap();
    let (bytes, _) = build::build(&imported.scene, &build::Options::default()).unwrap();
    write_m3_checked(&m3_out("skinned"), "walker.m3", &bytes);
    let back = reread(&bytes);
    // The stored (bind space) vertices: the top one 2 up M3's +Z.
    let stored = &back.meshes[0].vertices.positions;
    let top = stored
        .iter()
        .copied()
        .fold([0f32; 3], |m, p| if p[2] > m[2] { p } else { m });
    assert!(
        (top[2] - 2.0).abs() < 1e-5 && top[1].abs() < 1e-5,
        "{stored:?}"
    );
    // At rest, through the skin, where the glTF shows it (the top vertex rides on the spine,
    // 1 up: 3 up glTF's +Y).
    let at_rest = |scene: &hangar::model::Scene| -> Vec<glam::Vec3> {
        let skin = &scene.skins[0];
        let v = &scene.meshes[0].vertices;
        v.positions
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let j = v.joints.as_ref().unwrap()[i][0] as usize;
                let m = scene.world_matrix(skin.joints[j])
                    * glam::Mat4::from_cols_array(&skin.inverse_bind[j]);
                m.transform_point3(glam::Vec3::from(*p))
            })
            .collect()
    };
    let (was, now) = (at_rest(&imported.scene), at_rest(&back));
    assert!((now[2].y - 3.0).abs() < 1e-4, "{now:?}");
    for (a, b) in was.iter().zip(&now) {
        assert!(a.distance(*b) < 1e-4, "{was:?} {now:?}");
    }
}

/// Lines and points are skipped with a warning that names the primitive; a triangle strip and a
/// fan become triangle lists.
#[test]
fn lines_are_skipped_and_strips_and_fans_become_triangles() {
    let quad = [
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0],
        [1.0, 1.0, 0.0],
    ];
    let text = tiny_gltf(
        &[positions(&quad)],
        serde_json::json!({
            "scene": 0,
            "scenes": [{"nodes": [0]}],
            "nodes": [{"name": "shapes", "mesh": 0}],
            "meshes": [{"primitives": [
                {"attributes": {"POSITION": 0}, "mode": 1},
                {"attributes": {"POSITION": 0}, "mode": 0},
                {"attributes": {"POSITION": 0}, "mode": 5},
                {"attributes": {"POSITION": 0}, "mode": 6}
            ]}],
        }),
    );
    std::fs::write(common::gltf_out("m3_build").join("modes.gltf"), &text).unwrap();
    let imported = common::import(text.as_bytes(), Path::new("x.gltf")).unwrap();
    let skipped: Vec<&str> = imported
        .warnings
        .iter()
        .filter(|w| w.message.contains("skipped"))
        .map(|w| w.path.as_str())
        .collect();
    assert_eq!(
        skipped,
        ["meshes[0].primitives[0]", "meshes[0].primitives[1]"]
    );
    let mesh = &imported.scene.meshes[0];
    // Both share the four vertices. Strip 0 1 2 3: (0 1 2) (2 1 3); fan: (0 1 2) (0 2 3).
    assert_eq!(mesh.vertices.len(), 4);
    let lists: Vec<&Vec<u32>> = mesh.primitives.iter().map(|p| &p.indices).collect();
    assert_eq!(lists.len(), 2);
    assert_eq!(lists[0][..], [0, 1, 2, 2, 1, 3]);
    assert_eq!(lists[1][..], [0, 1, 2, 0, 2, 3]);
    let (bytes, _) = build::build(&imported.scene, &build::Options::default()).unwrap();
    let c = write_m3_checked(&m3_out("modes"), "strip_and_fan.m3", &bytes);
    // One region a primitive, each with its own copy of the vertices it uses.
    assert_eq!((c.vertices, c.triangles), (8, 4));
}

/// A name longer than the builder writes (255 bytes) is cut at a character boundary, and said.
#[test]
fn names_too_long_are_cut_with_a_warning() {
    let s = one_triangle(&"é".repeat(200));
    let (bytes, warnings) = build::build(&s, &build::Options::default()).unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.message.contains("1 names are longer than 255 bytes")),
        "{warnings:?}"
    );
    let back = reread(&bytes);
    let bone = back.skins[0].joints[0];
    assert_eq!(back.nodes[bone].name, "é".repeat(127));
}

/// Every `-lod0.xmf` of the X4 corpus goes XMF -> glTF -> M3 through the library: the triangles
/// of the XMF, one region per material part with the vertices that part uses, one root bone, and
/// mdx-m3-viewer loads each in `.ci/run`.
#[test]
fn every_x4_lod0_xmf_goes_through_gltf_into_an_m3() {
    let Some(files) = corpus("x4", "xmf") else {
        return;
    };
    let dir = m3_out("xmf_lod0");
    let (mut done, mut split) = (0, 0);
    for f in files
        .iter()
        .filter(|f| name(f).to_ascii_lowercase().ends_with("-lod0.xmf"))
    {
        let bytes = std::fs::read(f).unwrap();
        let opened = common::open(&bytes, f).unwrap();
        let (xmf, _) = opened.to_scene().unwrap();
        let (glb, _) = common::convert(&opened, Path::new("x.glb")).unwrap();
        let imported = common::import(&glb, Path::new("x.glb")).unwrap();
        let (out, _) = build::build(&imported.scene, &build::Options::default())
            .unwrap_or_else(|e| panic!("{}: {e}", name(f)));
        let stem = name(f).trim_end_matches(".xmf").to_string();
        let c = write_m3_checked(&dir, &format!("{stem}.m3"), &out);
        let triangles: usize = xmf.meshes.iter().map(|m| m.triangle_count()).sum();
        assert_eq!(c.triangles, triangles, "{}", name(f));
        // Each part (primitive) is a region holding the vertices its triangles use; a part over
        // 65535 vertices is split into several (vertices at the cut are then in two).
        let used: Vec<usize> = imported
            .scene
            .meshes
            .iter()
            .flat_map(|m| &m.primitives)
            .map(|p| {
                p.indices
                    .iter()
                    .collect::<std::collections::HashSet<_>>()
                    .len()
            })
            .collect();
        let back = reread(&out);
        assert!(back.meshes.iter().all(|m| m.vertices.len() <= 65_535));
        if used.iter().all(|&u| u <= 65_535) {
            let regions = (c.vertices, back.meshes.len());
            assert_eq!(regions, (used.iter().sum(), used.len()), "{}", name(f));
        } else {
            assert!(back.meshes.len() > used.len(), "{}", name(f));
            assert!(c.vertices >= used.iter().sum(), "{}", name(f));
            split += 1;
        }
        assert_eq!((c.bones, c.sequences), (1, 0), "{}", name(f));
        done += 1;
    }
    assert!(done >= 9, "{done} lod0 XMFs");
    // xirsoi__anim_main-lod0.xmf has a part of 98112 vertices.
    assert!(split >= 1);
}

/// file, vertices, triangles, bones, [(sequence, milliseconds)], attachment points.
type Sample<'a> = (
    &'a str,
    usize,
    usize,
    usize,
    &'a [(&'a str, u32)],
    &'a [&'a str],
);

/// The models `tests/blender/make_samples.py` built in Blender 3.4 and wrote with Blender's own
/// glTF exporter become M3s with the expected vertex, triangle, bone and sequence counts (and the
/// sequences' lengths), the texture path, the `Ref_Center` empty as an attachment point; M3 ->
/// glTF again goes to the validator, the M3s to mdx-m3-viewer.
#[test]
fn blender_exports_become_m3_files() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/blender");
    let dir = m3_out("blender");
    let gltf_dir = common::gltf_out("blender_m3");
    let cases: [Sample; 3] = [
        // A 24-vertex box and an empty: the box and the empty each get a bone.
        ("static/crate.gltf", 24, 12, 2, &[], &["Ref_Center"]),
        // Three bones; Stand keys frames 1-48, Walk 1-24, at 24 frames a second (Blender writes
        // frame f at f/24 s, and a sequence runs from 0 to its last key).
        (
            "skinned.glb",
            128,
            96,
            3,
            &[("Stand", 2000), ("Walk", 1000)],
            &[],
        ),
        // The box's own bone carries its keys (frames 1-40).
        ("spinning.glb", 24, 12, 1, &[("Spin", 1667)], &[]),
    ];
    for (file, vertices, triangles, bones, seqs, atts) in cases {
        let path = here.join(file);
        let bytes = std::fs::read(&path).unwrap();
        let imported = common::import(&bytes, &path).unwrap();
        let (out, _) = build::build(&imported.scene, &build::Options::default()).unwrap();
        let stem = file.rsplit('/').next().unwrap().split('.').next().unwrap();
        let c = write_m3_checked(&dir, &format!("{stem}.m3"), &out);
        let names: Vec<&str> = seqs.iter().map(|s| s.0).collect();
        assert_eq!(
            (c.vertices, c.triangles, c.bones, c.sequence_names),
            (
                vertices,
                triangles,
                bones,
                names.iter().map(|s| s.to_string()).collect()
            ),
            "{file}"
        );
        let back = reread(&out);
        assert_eq!(helpers(&back).0, atts, "{file}");
        let (m3, _) = read::read(&out).unwrap();
        let json = hangar::formats::m3::dump::to_json(&m3);
        let lengths: Vec<u64> = json["sections"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["tag"] == "SEQS")
            .flat_map(|s| s["entries"].as_array().unwrap().clone())
            .map(|e| e["animationEnd"].as_u64().unwrap() - e["animationStart"].as_u64().unwrap())
            .collect();
        let want: Vec<u64> = seqs.iter().map(|s| s.1 as u64).collect();
        assert_eq!(lengths, want, "{file}");
        // The PNG Blender names by its file alone is looked for as a DDS in the game's
        // texture folder.
        if stem == "crate" {
            assert_eq!(
                back.materials[0].textures.base_color.as_deref(),
                Some("Assets/Textures/crate_diffuse.dds")
            );
        }
        let opened = common::open(&out, Path::new("x.m3")).unwrap();
        let (glb, _) = common::convert(&opened, Path::new("x.glb")).unwrap();
        std::fs::write(gltf_dir.join(format!("{stem}.glb")), glb).unwrap();
    }
}

#[test]
fn bones_sharing_an_anim_id_share_one_decoded_track() {
    // Two nodes, each moved by its own track; then the file is edited so that the second bone's
    // location names the first one's anim id (as hostile or hand-edited files do).
    let mut s = Scene::default();
    let mut mesh = Mesh::default();
    mesh.vertices.positions = vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
    mesh.primitives = vec![Primitive {
        indices: vec![0, 1, 2],
        material: None,
    }];
    s.meshes.push(mesh);
    let mut a = Node::new("a");
    a.mesh = Some(0);
    let mut b = Node::new("b");
    b.parent = Some(0);
    s.nodes.extend([a, b]);
    let track = |node, y: f32| Channel {
        node,
        property: Property::Translation,
        interpolation: Interpolation::Linear,
        times: vec![0.0, 1.0].into(),
        values: vec![0.0, 0.0, 0.0, 0.0, y, 0.0].into(),
    };
    s.animations.push(Animation {
        name: "Walk".into(),
        channels: vec![track(0, 1.0), track(1, 2.0)],
        extras: Default::default(),
    });
    let (bytes, _) = build::build(&s, &build::Options::default()).unwrap();
    let (m3, _) = read::read(&bytes).unwrap();
    let mut json = hangar::formats::m3::dump::to_json(&m3);
    let bones = json["sections"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|s| s["tag"] == "BONE")
        .unwrap();
    let entries = bones["entries"].as_array_mut().unwrap();
    // Bone k is the skin's joint k.
    let first = reread(&bytes);
    let bone = |name: &str| {
        let joints = &first.skins[0].joints;
        joints
            .iter()
            .position(|&j| first.nodes[j].name == name)
            .unwrap()
    };
    let (ia, ib) = (bone("a"), bone("b"));
    let id = entries[ia]["location"]["id"].clone();
    assert_ne!(entries[ib]["location"]["id"], id);
    entries[ib]["location"]["id"] = id;
    let edited = hangar::formats::m3::dump::from_json(&json).unwrap();
    let edited = hangar::formats::m3::write::write(&edited).unwrap();

    let back = reread(&edited);
    let walk = &back.animations[0];
    let moved: Vec<&Channel> = walk
        .channels
        .iter()
        .filter(|c| c.property == Property::Translation)
        .collect();
    assert_eq!(moved.len(), 2);
    // One decoded range for both bones: the first bone's keys (glTF Y is M3 Z).
    assert!(std::ptr::eq(&moved[0].values[..], &moved[1].values[..]));
    assert!(std::ptr::eq(&moved[0].times[..], &moved[1].times[..]));
    assert!(
        (moved[1].values[5] - 1.0).abs() < 1e-5,
        "{:?}",
        moved[1].values
    );
    // And one output accessor in the glTF for both channels.
    let root = common::glb_root(&common::to_glb(&back).unwrap().0);
    let samplers = &root.animations[0].samplers;
    let outputs: std::collections::BTreeSet<u32> =
        samplers.iter().map(|s| s.output.value() as u32).collect();
    assert_eq!(samplers.len(), walk.channels.len());
    assert_eq!(outputs.len(), walk.channels.len() - 1);
}

/// NaN has no JSON form: a scene with one is refused naming where it is, not turned into `null`.
#[test]
fn a_nan_is_refused_naming_its_field() {
    let mut s = one_triangle("nan");
    s.meshes[0].vertices.positions[1][2] = f32::NAN;
    let e = build::build(&s, &build::Options::default()).unwrap_err();
    assert_eq!(e.path, "meshes[0].positions[5]");
    assert!(e.message.contains("NaN or infinite"), "{}", e.message);
    let mut s = one_triangle("nan");
    s.nodes[0].translation.y = f32::INFINITY;
    let e = build::build(&s, &build::Options::default()).unwrap_err();
    assert!(
        e.path.starts_with("nodes[0]") && e.path.ends_with(".transform[1]"),
        "{}",
        e.path
    );
}

/// A bone scaled to zero at rest (the game hides parts so) has no inverse: its child's rest and
/// keys are written as the scene holds them, not as the `null`s of a NaN (the file could not be
/// written: "expected numbers, got [null,null,null]"); a sequence's NaN movement speed, kept by
/// the reader as its bits, comes back as those bits.
#[test]
fn a_bone_scaled_to_zero_and_a_nan_speed_come_back() {
    let mut s = one_triangle("tri");
    let mut arm = Node::new("arm");
    arm.scale = glam::Vec3::ZERO;
    s.nodes.push(arm);
    let mut hand = Node::new("hand");
    hand.parent = Some(1);
    hand.translation = glam::Vec3::new(1.0, 2.0, 3.0);
    s.nodes.push(hand);
    let channel = |node, property, values: Vec<f32>| Channel {
        node,
        property,
        interpolation: Interpolation::Linear,
        times: vec![0.0, 1.0].into(),
        values: values.into(),
    };
    let mut a = Animation {
        name: "Stand".into(),
        channels: vec![
            channel(1, Property::Scale, vec![0.0; 6]),
            channel(2, Property::Translation, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),
        ],
        ..Default::default()
    };
    a.extras.insert(
        "m3".into(),
        serde_json::json!({ "movementSpeed": "0x7fc00000" }),
    );
    s.animations.push(a);
    let (out, _) = build::build(&s, &build::Options::default()).unwrap();
    let back = reread(&out);
    let hand = back.nodes.iter().position(|n| n.name == "hand").unwrap();
    assert_eq!(back.nodes[hand].translation, glam::Vec3::new(1.0, 2.0, 3.0));
    let stand = &back.animations[0];
    let track = stand
        .channels
        .iter()
        .find(|c| c.node == hand && c.property == Property::Translation)
        .unwrap();
    assert_eq!(&track.values[..], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    assert_eq!(stand.extras["m3"]["movementSpeed"], "0x7fc00000");
}
