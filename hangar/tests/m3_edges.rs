//! M3 edge cases on tiny files built here (no corpus needed): UV scaling by region version, skin
//! lookups, unaligned sections, unknown tags and versions, size mismatches, MD33 references, and
//! what `validate` reports.

mod common;

use hangar::formats::m3::{self, table::table, table::Codec, Tag};
use hangar::Severity;
use serde_json::{json, Value};
use std::path::Path;

/// Every field of a `tag` entry at `version`, zeroed, as the dump shows it.
fn blank(tag: &str, version: u32) -> Value {
    let l = table().layout(Tag::from_name(tag), version, false).unwrap();
    Codec {
        small_refs: false,
        counts: &[],
    }
    .decode(l, &vec![0; l.size])
}

fn anim(init: Value) -> Value {
    json!({ "interpolation": 1, "id": 0, "init": init.clone(), "null": init })
}

/// A one-triangle skinned model: MODL v23, one bone, one region (REGN `regn_version`), vertex
/// flags 0x182007d (32-byte vertices: position, 4 weights + 4 lookups, normal, one UV, tangent).
fn triangle(regn_version: u32) -> Value {
    let mut vertices = Vec::new();
    let corners: [([f32; 3], [i16; 2]); 3] = [
        ([0.0, 0.0, 0.0], [0, 0]),
        ([1.0, 0.0, 0.0], [2048, 0]),
        ([0.0, 0.0, 1.0], [0, -4096]),
    ];
    for (p, uv) in corners {
        for c in p {
            vertices.extend_from_slice(&c.to_le_bytes());
        }
        vertices.extend_from_slice(&[255, 0, 0, 0, 0, 0, 0, 0]); // weights, lookups
        vertices.extend_from_slice(&[128, 0, 128, 255]); // normal -Y (toward the viewer), sign
        for c in uv {
            vertices.extend_from_slice(&c.to_le_bytes());
        }
        vertices.extend_from_slice(&[255, 128, 128, 0]); // tangent +X
    }
    use base64::Engine;
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);

    let mut modl = blank("MODL", 23);
    modl["name"] = json!({ "index": 2 });
    modl["vertexFlags"] = json!(0x182007d);
    modl["bones"] = json!({ "index": 3 });
    modl["skinBones"] = json!(1);
    modl["vertices"] = json!({ "index": 5 });
    modl["divisions"] = json!({ "index": 6 });
    modl["boneLookup"] = json!({ "index": 9 });
    modl["initialReference"] = json!({ "index": 10 });
    let mut bone = blank("BONE", 1);
    bone["name"] = json!({ "index": 4 });
    bone["parent"] = json!(-1);
    bone["location"] = anim(json!([0.0, 0.0, 0.0]));
    bone["rotation"] = anim(json!([0.0, 0.0, 0.0, 1.0]));
    bone["scale"] = anim(json!([1.0, 1.0, 1.0]));
    let mut div = blank("DIV_", 2);
    div["faces"] = json!({ "index": 7 });
    div["regions"] = json!({ "index": 8 });
    let mut regn = blank("REGN", regn_version);
    regn["vertexCount"] = json!(3);
    regn["faceCount"] = json!(3);
    regn["boneCount"] = json!(1);
    regn["boneLookupCount"] = json!(1);
    regn["boneWeightPairs"] = json!(1);
    if regn_version >= 5 {
        regn["uvMultiply"] = json!(2.0);
        regn["uvOffset"] = json!(0.5);
    }
    let identity =
        json!([1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0]);
    json!({
        "hangar_dump": 1,
        "format": "m3",
        "kind": "MD34",
        "sections": [
            { "tag": "MD34", "version": 11, "entries": [
                { "magic": 0x4d44_3334u32, "indexOffset": 0, "indexCount": 0, "model": { "index": 1 } }
            ] },
            { "tag": "MODL", "version": 23, "entries": [modl] },
            { "tag": "CHAR", "version": 0, "text": "Triangle" },
            { "tag": "BONE", "version": 1, "entries": [bone] },
            { "tag": "CHAR", "version": 0, "text": "Root" },
            { "tag": "U8__", "version": 0, "data": b64(&vertices) },
            { "tag": "DIV_", "version": 2, "entries": [div] },
            { "tag": "U16_", "version": 0, "entries": [0, 1, 2] },
            { "tag": "REGN", "version": regn_version, "entries": [regn] },
            { "tag": "U16_", "version": 0, "entries": [0] },
            { "tag": "IREF", "version": 0, "entries": [{ "matrix": identity }] },
        ]
    })
}

fn build(dump: &Value) -> Vec<u8> {
    let text = serde_json::to_string(dump).unwrap();
    let opened = common::open(text.as_bytes(), Path::new("t.json")).unwrap();
    common::convert(&opened, Path::new("t.m3")).unwrap().0
}

fn scene_of(bytes: &[u8]) -> (hangar::model::Scene, Vec<hangar::Warning>) {
    let opened = common::open(bytes, Path::new("t.m3")).unwrap();
    opened.to_scene().unwrap()
}

#[test]
fn a_built_triangle_reads_back_with_its_uvs_skin_and_axes() {
    let bytes = build(&triangle(3));
    assert_eq!(&bytes[..4], b"43DM");
    // Blizzard's layout: every section starts on 16 bytes, the index is last.
    let index_at = u32::from_le_bytes(bytes[4..8].try_into().unwrap()) as usize;
    assert_eq!(index_at % 16, 0);
    assert_eq!(bytes.len(), index_at + 11 * 16);
    let opened = common::open(&bytes, Path::new("t.m3")).unwrap();
    assert!(opened.warnings().is_empty(), "{:?}", opened.warnings());
    let info = opened.info();
    assert_eq!((info.vertices, info.triangles, info.bones), (3, 1, Some(1)));
    assert_eq!(info.details["modl_version"], 23);
    assert_eq!(info.details["vertex_flags"], "0x182007d");
    assert!(opened.validate().is_empty());

    let (scene, warnings) = scene_of(&bytes);
    assert!(warnings.is_empty(), "{warnings:?}");
    let mesh = &scene.meshes[0];
    // REGN v3: UV = int16 / 2048.
    assert_eq!(
        mesh.vertices.uvs[0],
        vec![[0.0, 0.0], [1.0, 0.0], [0.0, -2.0]]
    );
    assert_eq!(mesh.vertices.positions[2], [0.0, 0.0, 1.0]);
    let n = mesh.vertices.normals.as_ref().unwrap()[0];
    assert!((n[1] + 1.0).abs() < 1e-3 && n[0].abs() < 0.01, "{n:?}");
    // Sign byte 255: glTF w = -1 (measured on the corpus, tests/tangents.rs).
    assert_eq!(mesh.vertices.tangents.as_ref().unwrap()[0][3], -1.0);
    assert_eq!(mesh.vertices.joints.as_ref().unwrap()[1], [0, 0, 0, 0]);
    assert_eq!(
        mesh.vertices.weights.as_ref().unwrap()[1],
        [1.0, 0.0, 0.0, 0.0]
    );
    assert_eq!(mesh.primitives[0].indices, vec![0, 1, 2]);
    // The root turns +Z up into +Y up: file (0, 0, 1) ends at glTF (0, 1, 0).
    let up = scene.world_matrix(0).transform_point3(glam::Vec3::Z);
    assert!((up - glam::Vec3::Y).length() < 1e-6, "{up}");
    assert_eq!(scene.skins[0].joints, vec![1]);
    let node = scene.nodes.iter().find(|n| n.mesh == Some(0)).unwrap();
    assert_eq!(node.skin, Some(0));

    let dest = common::gltf_out("m3_edges").join("triangle.glb");
    let (glb, _) = common::convert(&opened, &dest).unwrap();
    std::fs::write(&dest, &glb).unwrap();
    let (doc, _) = common::load_glb(&glb);
    let prim = doc.meshes().next().unwrap().primitives().next().unwrap();
    assert_eq!(prim.get(&gltf::Semantic::Joints(0)).unwrap().count(), 3);
    assert_eq!(doc.skins().next().unwrap().joints().count(), 1);
    assert_eq!(doc.nodes().nth(1).unwrap().name(), Some("Root"));
}

#[test]
fn region_v5_scales_uvs_by_its_multiply_and_offset() {
    let (scene, _) = scene_of(&build(&triangle(5)));
    // UV = int16 * 2 / 32768 + 0.5
    assert_eq!(
        scene.meshes[0].vertices.uvs[0],
        vec![[0.5, 0.5], [0.625, 0.5], [0.5, 0.25]]
    );
}

#[test]
fn unaligned_sections_and_odd_padding_read_and_rewrite_exactly() {
    let mut dump = triangle(3);
    // No padding after the name and after the vertices; three bytes of junk after the bones.
    dump["sections"][2]["pad"] = json!("");
    dump["sections"][5]["pad"] = json!("");
    dump["sections"][3]["pad"] = json!("AQID");
    let bytes = build(&dump);
    let (file, warnings) = m3::read::read(&bytes).unwrap();
    assert_eq!(
        file.sections[3].offset % 16,
        9,
        "BONE starts right after the 9-byte name"
    );
    assert_eq!(
        file.sections[4].offset % 16,
        12,
        "after 160 bytes and 3 of junk"
    );
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(file.sections[3].pad.as_deref(), Some(&[1u8, 2, 3][..]));
    assert_eq!(m3::write::write(&file).unwrap(), bytes);
    let (scene, _) = scene_of(&bytes);
    assert_eq!(scene.meshes[0].vertices.positions[1], [1.0, 0.0, 0.0]);
}

#[test]
fn unknown_tags_and_versions_are_kept_and_reported() {
    let mut dump = triangle(3);
    let sections = dump["sections"].as_array_mut().unwrap();
    sections.push(json!({ "tag": "ZZZZ", "version": 3, "count": 2, "raw": "AAECAwQFBgc=" }));
    sections.push(json!({ "tag": "EVNT", "version": 9, "count": 1, "raw": "AAAAAAAAAAAAAAAA" }));
    let bytes = build(&dump);
    let (file, warnings) = m3::read::read(&bytes).unwrap();
    let text: Vec<String> = warnings.iter().map(|w| w.to_string()).collect();
    assert!(
        text.iter().any(|w| w.contains("MD34.index[11]")
            && w.contains("unknown tag ZZZZ v3 (2 entries, 16 bytes)")),
        "{text:?}"
    );
    assert!(
        text.iter().any(|w| w.contains("MD34.index[12]")
            && w.contains("unknown version EVNT v9 (known: [0, 1, 2])")),
        "{text:?}"
    );
    assert!(warnings
        .iter()
        .all(|w| w.offset.is_some() || w.path.ends_with("index")));
    assert_eq!(m3::write::write(&file).unwrap(), bytes);
    // The dump keeps them as count and raw bytes.
    let dump = m3::dump::to_json(&file);
    // The raw bytes run to the next section: the eight given and Blizzard's padding.
    assert_eq!(dump["sections"][11]["raw"], "AAECAwQFBgeqqqqqqqqqqg==");
    assert_eq!(dump["sections"][11]["count"], 2);
}

#[test]
fn a_size_mismatch_names_both_sizes_and_keeps_the_bytes() {
    let mut dump = triangle(3);
    // An IREF of 72 bytes where the table says 64 (padded to 80 in the file).
    dump["sections"][10] =
        json!({ "tag": "IREF", "version": 0, "count": 1, "raw": base64_of(&[0u8; 72]) });
    let bytes = build(&dump);
    let (file, warnings) = m3::read::read(&bytes).unwrap();
    let w = warnings
        .iter()
        .find(|w| w.message.contains("size mismatch"))
        .expect("a size warning");
    assert!(
        w.message.contains(
            "IREF v0 entries are 64 bytes in the table but the section holds 80 bytes for 1 entries"
        ),
        "{w}"
    );
    assert!(w.offset.is_some());
    assert!(file.sections[10].layout.is_none());
    assert_eq!(m3::write::write(&file).unwrap(), bytes);
}

fn base64_of(b: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(b)
}

/// The bytes of a dump's base64 `data` field.
fn bytes_of(data: &Value) -> Vec<u8> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .decode(data.as_str().unwrap())
        .unwrap()
}

#[test]
fn a_vertex_blob_that_is_not_whole_vertices_fails_clearly() {
    let mut dump = triangle(3);
    let mut v = bytes_of(&dump["sections"][5]["data"]);
    v.truncate(v.len() - 5);
    dump["sections"][5]["data"] = json!(base64_of(&v));
    let bytes = build(&dump);
    let opened = common::open(&bytes, Path::new("t.m3")).unwrap();
    let err = opened.to_scene().unwrap_err();
    assert_eq!(err.path, "MODL.vertices");
    assert!(
        err.message.contains(
            "91 vertex bytes are not a whole number of 32-byte vertices (vertex flags 0x182007d)"
        ),
        "{err}"
    );
    assert!(err.offset.is_some());
    let findings = opened.validate();
    assert!(findings
        .iter()
        .any(|f| f.severity == Severity::Error && f.path == "MODL.vertices"));
}

#[test]
fn validate_names_broken_references_ranges_and_lookups() {
    let mut dump = triangle(3);
    // The region claims more vertices than there are, the bone lookup names a missing bone, and
    // the MODL name points at the bone list.
    dump["sections"][8]["entries"][0]["vertexCount"] = json!(4);
    dump["sections"][9]["entries"] = json!([7]);
    dump["sections"][1]["entries"][0]["name"] = json!({ "index": 3 });
    let bytes = build(&dump);
    let opened = common::open(&bytes, Path::new("t.m3")).unwrap();
    let errors: Vec<String> = opened
        .validate()
        .into_iter()
        .filter(|f| f.severity == Severity::Error)
        .map(|f| format!("{}: {}", f.path, f.message))
        .collect();
    assert!(
        errors.iter().any(|e| e.starts_with(
            "MODL.divisions[0].regions[0].firstVertex: vertices 0..4 are outside the 3 vertices"
        )),
        "{errors:?}"
    );
    assert!(
        errors.iter().any(|e| e.starts_with(
            "MODL.divisions[0].regions[0].firstBoneLookup: bone lookup names bone 7 of 1"
        )),
        "{errors:?}"
    );
    assert!(
        errors
            .iter()
            .any(|e| e.contains("MODL[0].name: points at section 3 which is BONE, expected CHAR")),
        "{errors:?}"
    );
}

#[test]
fn md33_files_use_eight_byte_references() {
    let mut dump = triangle(3);
    dump["kind"] = json!("MD33");
    dump["sections"][0]["tag"] = json!("MD33");
    dump["sections"][0]["entries"][0]["magic"] = json!(0x4d44_3333u32);
    let bytes = build(&dump);
    assert_eq!(&bytes[..4], b"33DM");
    let (file, warnings) = m3::read::read(&bytes).unwrap();
    assert_eq!(file.kind, m3::Kind::Md33);
    // The header is 20 bytes and MODL v23 shrinks by 4 bytes a reference.
    assert_eq!(file.sections[0].data.len(), 20);
    let refs = table()
        .layout(Tag::from_name("MODL"), 23, false)
        .unwrap()
        .slots
        .iter()
        .filter(|s| matches!(s.ty, m3::table::Ty::Ref(_)))
        .count();
    assert_eq!(file.sections[1].data.len(), 784 - 4 * refs - 4 * 2);
    let (scene, _) = scene_of(&bytes);
    assert_eq!(scene.meshes[0].vertices.len(), 3);
    assert_eq!(scene.nodes[1].name, "Root");
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(m3::write::write(&file).unwrap(), bytes);
}

#[test]
fn skin_weights_merge_a_repeated_bone_drop_bad_lookups_and_fall_back_to_the_root_bone() {
    let mut dump = triangle(3);
    let mut v = bytes_of(&dump["sections"][5]["data"]);
    // Four weights at byte 12 of each 32-byte vertex, then four indices into the region's lookup.
    let skin: [([u8; 4], [u8; 4]); 3] = [
        ([100, 155, 0, 0], [2, 1, 0, 0]),
        // Lookup 1 twice (its weights add up), lookup 7 is past the region's three.
        ([100, 40, 60, 55], [1, 0, 1, 7]),
        // Only a bad lookup carries weight: bound to the region's first bone.
        ([0, 0, 0, 90], [0, 0, 0, 9]),
    ];
    for (i, (w, l)) in skin.iter().enumerate() {
        v[32 * i + 12..32 * i + 16].copy_from_slice(w);
        v[32 * i + 16..32 * i + 20].copy_from_slice(l);
    }
    dump["sections"][5]["data"] = json!(base64_of(&v));
    let bone = dump["sections"][3]["entries"][0].clone();
    dump["sections"][3]["entries"] = json!([bone, bone, bone]);
    dump["sections"][1]["entries"][0]["skinBones"] = json!(3);
    dump["sections"][8]["entries"][0]["boneLookupCount"] = json!(3);
    dump["sections"][8]["entries"][0]["boneCount"] = json!(3);
    // Lookup slots 0, 1, 2 name bones 2, 0, 1.
    dump["sections"][9]["entries"] = json!([2, 0, 1]);
    let iref = dump["sections"][10]["entries"][0].clone();
    dump["sections"][10]["entries"] = json!([iref, iref, iref]);

    let (scene, warnings) = scene_of(&build(&dump));
    let v = &scene.meshes[0].vertices;
    let (joints, weights) = (v.joints.as_ref().unwrap(), v.weights.as_ref().unwrap());
    assert_eq!(joints[0], [1, 0, 0, 0]);
    assert_eq!(weights[0], [100.0 / 255.0, 155.0 / 255.0, 0.0, 0.0]);
    assert_eq!(joints[1], [0, 2, 0, 0]);
    assert_eq!(weights[1], [160.0 / 200.0, 40.0 / 200.0, 0.0, 0.0]);
    assert_eq!(joints[2], [2, 0, 0, 0]);
    assert_eq!(weights[2], [1.0, 0.0, 0.0, 0.0]);
    let said: Vec<String> = warnings
        .iter()
        .map(|w| format!("{}: {}", w.path, w.message))
        .collect();
    assert!(
        said.contains(&"MODL.divisions[0].regions[0].firstBoneLookup: 2 bone weights point outside the region's bone lookup and are dropped".to_string()),
        "{said:?}"
    );
    assert!(
        said.contains(&"MODL.divisions[0].regions[0]: 1 vertices have no weight: bound to the region's root bone".to_string()),
        "{said:?}"
    );
}

#[test]
fn a_section_no_reference_reaches_is_reported_and_one_reached_from_a_nested_structure_is_not() {
    let mut dump = triangle(3);
    // MODL.tightHitTest is an SSGS inlined in MODL: its vertices reference section 11.
    dump["sections"][1]["entries"][0]["tightHitTest"]["vertices"] = json!({ "index": 11 });
    let sections = dump["sections"].as_array_mut().unwrap();
    sections.push(json!({ "tag": "VEC3", "version": 0, "entries": [[1.0, 2.0, 3.0]] }));
    sections.push(json!({ "tag": "CHAR", "version": 0, "text": "nobody's" }));
    let bytes = build(&dump);
    let opened = common::open(&bytes, Path::new("t.m3")).unwrap();
    let said: Vec<String> = opened
        .warnings()
        .iter()
        .map(|w| format!("{}: {}", w.path, w.message))
        .collect();
    assert_eq!(
        said,
        ["MD34.index: 1 sections no reference reaches: 12 (CHAR)"],
        "{said:?}"
    );
}
