//! An actor no corpus has, written by hangar's XAC writer: a two-bone skinned strip with a morph
//! target, plus an XSM that bends the second bone and an XPM that drives the morph. Converted to
//! glTF together, a posed vertex is checked against a hand computation.

mod common;
#[allow(dead_code)]
#[path = "common/wedge.rs"]
mod wedge;

use glam::{Mat4, Quat, Vec3};
use hangar::formats::emfx;
use hangar::model::{
    Material, Mesh, MorphTarget, Node, Primitive, Scene, Skin, Textures, Vertices,
};
use serde_json::{json, Value};
use std::path::Path;

/// Root at the origin, `arm` at x = 1; a strip from x = 0 to 2 (two vertices a column), the left
/// column on `root`, the middle shared half and half, the right on `arm`; morph `bulge` lifts the
/// top right vertex by 0.5 in y.
fn strip() -> Scene {
    let mut root = Node::new("root");
    root.parent = None;
    let mut arm = Node::new("arm");
    arm.parent = Some(0);
    arm.translation = Vec3::new(1.0, 0.0, 0.0);
    let mut bar = Node::new("bar");
    bar.mesh = Some(0);
    bar.skin = Some(0);
    let positions: Vec<[f32; 3]> = (0..6)
        .map(|i| [(i / 2) as f32, 0.2 * (i % 2) as f32, 0.0])
        .collect();
    let joints = vec![
        [0, 0, 0, 0],
        [0, 0, 0, 0],
        [0, 1, 0, 0],
        [0, 1, 0, 0],
        [1, 0, 0, 0],
        [1, 0, 0, 0],
    ];
    let weights = vec![
        [1.0, 0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0, 0.0],
        [0.5, 0.5, 0.0, 0.0],
        [0.5, 0.5, 0.0, 0.0],
        [1.0, 0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0, 0.0],
    ];
    let mut bulge = vec![[0.0; 3]; 6];
    bulge[5] = [0.0, 0.5, 0.0];
    let mesh = Mesh {
        name: "bar".into(),
        vertices: Vertices {
            positions,
            normals: Some(vec![[0.0, 0.0, 1.0]; 6]),
            uvs: vec![(0..6)
                .map(|i| [(i / 2) as f32 / 2.0, (i % 2) as f32])
                .collect()],
            joints: Some(joints),
            weights: Some(weights),
            ..Default::default()
        },
        primitives: vec![Primitive {
            indices: vec![0, 2, 1, 1, 2, 3, 2, 4, 3, 3, 4, 5],
            material: Some(0),
        }],
        morph_targets: vec![MorphTarget {
            name: "bulge".into(),
            positions: bulge,
            normals: None,
        }],
        extras: Default::default(),
    };
    Scene {
        name: "strip".into(),
        nodes: vec![root, arm, bar],
        meshes: vec![mesh],
        materials: vec![Material {
            name: "strip_mat".into(),
            textures: Textures {
                base_color: Some("strip_diffuse".into()),
                ..Default::default()
            },
            ..Default::default()
        }],
        skins: vec![Skin {
            name: "skeleton".into(),
            joints: vec![0, 1],
            inverse_bind: vec![
                Mat4::IDENTITY.to_cols_array(),
                Mat4::from_translation(Vec3::new(-1.0, 0.0, 0.0)).to_cols_array(),
            ],
        }],
        ..Default::default()
    }
}

fn file_bytes(v: Value) -> Vec<u8> {
    emfx::write(&emfx::from_json(&v).unwrap()).unwrap()
}

/// `arm` turns 90 degrees about +Z (glTF frame) from t = 0 to 1; in the file X is mirrored, so the
/// quaternion is (x, -y, -z, w) and the pose position is x = -1.
fn wave_xsm() -> Vec<u8> {
    let s = std::f32::consts::FRAC_1_SQRT_2;
    let q = |v: [f32; 4]| json!(v);
    file_bytes(json!({
        "kind": "XSM", "header": [1, 0, 0, 0],
        "chunks": [
            { "id": "0xc9", "version": 2, "fields": {
                "unused": 1.0, "maxError": 0, "fps": 30, "exporterMajor": 1, "exporterMinor": 0,
                "pad": "AAA=", "sourceApp": "test", "originalFile": "", "exportDate": "", "motionName": "wave" } },
            { "id": "0xca", "version": 1, "fields": { "numSubMotions": 1, "subMotions": [{
                "poseRotation": q([0.0, 0.0, 0.0, 1.0]), "bindPoseRotation": q([0.0, 0.0, 0.0, 1.0]),
                "poseScaleRotation": q([0.0, 0.0, 0.0, 1.0]), "bindPoseScaleRotation": q([0.0, 0.0, 0.0, 1.0]),
                "posePosition": [-1.0, 0.0, 0.0], "poseScale": [1.0, 1.0, 1.0],
                "bindPosePosition": [-1.0, 0.0, 0.0], "bindPoseScale": [1.0, 1.0, 1.0],
                "numPositionKeys": 0, "numRotationKeys": 2, "numScaleKeys": 0, "numScaleRotationKeys": 0,
                "maxError": 0, "name": "arm",
                "positionKeys": [],
                "rotationKeys": [
                    { "value": q([0.0, 0.0, 0.0, 1.0]), "time": 0 },
                    { "value": q([0.0, 0.0, -s, s]), "time": 1.0 }
                ],
                "scaleKeys": [], "scaleRotationKeys": [] }] } }
        ]
    }))
}

/// `bulge` from 0 at t = 0 to 1 (65535) at t = 1.
fn smile_xpm() -> Vec<u8> {
    file_bytes(json!({
        "kind": "XPM", "header": [1, 0, 0, 0],
        "chunks": [
            { "id": "0x65", "version": 1, "fields": {
                "fps": 30, "exporterMajor": 1, "exporterMinor": 0, "pad": "AAA=",
                "sourceApp": "test", "originalFile": "", "exportDate": "", "motionName": "smile" } },
            { "id": "0x66", "version": 1, "fields": { "numTracks": 1, "tracks": [{
                "poseWeight": 0, "minWeight": 0, "maxWeight": 1.0, "phonemes": 0, "numKeys": 2, "name": "bulge",
                "keys": [ { "time": 0, "amount": 0, "pad": "AAA=" }, { "time": 1.0, "amount": 65535, "pad": "AAA=" } ] }] } }
        ]
    }))
}

/// Samples a channel at `t` (linear; rotations by slerp).
fn sample(times: &[f32], values: &[Vec<f32>], t: f32, rotation: bool) -> Vec<f32> {
    let i = times.partition_point(|&x| x <= t);
    if i == 0 {
        return values[0].clone();
    }
    if i >= times.len() {
        return values[times.len() - 1].clone();
    }
    let (a, b) = (&values[i - 1], &values[i]);
    let f = (t - times[i - 1]) / (times[i] - times[i - 1]);
    if rotation {
        let q = Quat::from_slice(a).slerp(Quat::from_slice(b), f);
        return q.to_array().to_vec();
    }
    a.iter().zip(b).map(|(x, y)| x + (y - x) * f).collect()
}

/// The skinned, morphed position of the vertex at `base` (glTF file) at time `t`.
fn posed(glb: &[u8], base: [f32; 3], t: f32) -> Vec3 {
    let (doc, blob) = common::load_glb(glb);
    let nodes: Vec<_> = doc.nodes().collect();
    let mut trs: Vec<(Vec3, Quat, Vec3)> = nodes
        .iter()
        .map(|n| {
            let (p, r, s) = n.transform().decomposed();
            (Vec3::from(p), Quat::from_array(r), Vec3::from(s))
        })
        .collect();
    let mut weights = Vec::new();
    for a in doc.animations() {
        for c in a.channels() {
            let r = c.reader(|_| Some(&blob));
            let times: Vec<f32> = r.read_inputs().unwrap().collect();
            let node = c.target().node().index();
            use gltf::animation::util::ReadOutputs;
            match r.read_outputs().unwrap() {
                ReadOutputs::Rotations(q) => {
                    let v: Vec<Vec<f32>> = q.into_f32().map(|x| x.to_vec()).collect();
                    trs[node].1 = Quat::from_slice(&sample(&times, &v, t, true));
                }
                ReadOutputs::Translations(p) => {
                    let v: Vec<Vec<f32>> = p.map(|x| x.to_vec()).collect();
                    trs[node].0 = Vec3::from_slice(&sample(&times, &v, t, false));
                }
                ReadOutputs::Scales(p) => {
                    let v: Vec<Vec<f32>> = p.map(|x| x.to_vec()).collect();
                    trs[node].2 = Vec3::from_slice(&sample(&times, &v, t, false));
                }
                ReadOutputs::MorphTargetWeights(w) => {
                    let flat: Vec<f32> = w.into_f32().collect();
                    let per = flat.len() / times.len();
                    let v: Vec<Vec<f32>> = flat.chunks(per).map(|c| c.to_vec()).collect();
                    weights = sample(&times, &v, t, false);
                }
            }
        }
    }
    let parent = |i: usize| {
        nodes
            .iter()
            .position(|n| n.children().any(|c| c.index() == i))
    };
    let world = |mut i: usize| {
        let mut m = Mat4::from_scale_rotation_translation(trs[i].2, trs[i].1, trs[i].0);
        while let Some(p) = parent(i) {
            m = Mat4::from_scale_rotation_translation(trs[p].2, trs[p].1, trs[p].0) * m;
            i = p;
        }
        m
    };
    let skin = doc.skins().next().unwrap();
    let ibm: Vec<Mat4> = skin
        .reader(|_| Some(&blob))
        .read_inverse_bind_matrices()
        .unwrap()
        .map(|m| Mat4::from_cols_array_2d(&m))
        .collect();
    let joints: Vec<usize> = skin.joints().map(|j| j.index()).collect();
    let prim = doc.meshes().next().unwrap().primitives().next().unwrap();
    let r = prim.reader(|_| Some(&blob));
    let pos: Vec<[f32; 3]> = r.read_positions().unwrap().collect();
    let v = pos
        .iter()
        .position(|p| Vec3::from(*p).distance(Vec3::from(base)) < 1e-5)
        .expect("the vertex");
    let js: Vec<[u16; 4]> = r.read_joints(0).unwrap().into_u16().collect();
    let ws: Vec<[f32; 4]> = r.read_weights(0).unwrap().into_f32().collect();
    let mut p = Vec3::from(pos[v]);
    for (k, mut targets) in r.read_morph_targets().enumerate() {
        let d: Vec<[f32; 3]> = targets.0.take().unwrap().collect();
        p += Vec3::from(d[v]) * weights.get(k).copied().unwrap_or(0.0);
    }
    (0..4)
        .map(|k| {
            (world(joints[js[v][k] as usize]) * ibm[js[v][k] as usize]).transform_point3(p)
                * ws[v][k]
        })
        .sum()
}

#[test]
fn a_written_actor_with_a_motion_and_a_morph_motion_poses_as_computed_by_hand() {
    let xac = emfx::write(&emfx::build::actor(&strip()).unwrap()).unwrap();
    let (file, warnings) = emfx::read(&xac).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let names: Vec<&str> = file.chunks.iter().map(|c| c.name(file.kind)).collect();
    assert_eq!(
        names,
        [
            "metadata",
            "nodes",
            "materialTotals",
            "material",
            "mesh",
            "skinning",
            "morphTargets"
        ]
    );
    // Reading back gives the scene: 6 vertices, 4 triangles, the skin and the morph target.
    let (scene, _) = emfx::scene::to_scene(&file, "strip").unwrap();
    assert_eq!(scene.meshes[0].vertices.len(), 6);
    assert_eq!(scene.meshes[0].triangle_count(), 4);
    assert_eq!(scene.meshes[0].morph_targets[0].name, "bulge");
    assert!(hangar::formats::emfx::check::check(&file).is_empty());

    let xsm = wave_xsm();
    let xpm = smile_xpm();
    let mut a = common::open(&xac, Path::new("strip.xac")).unwrap();
    let m1 = common::open(&xsm, Path::new("wave.xsm")).unwrap();
    let m2 = common::open(&xpm, Path::new("smile.xpm")).unwrap();
    let dest = common::gltf_out("emfx_edges").join("strip.glb");
    // Each clip is named after its motion file's stem.
    a.add_motion(m1);
    a.add_motion(m2);
    let (glb, _) = common::convert(&a, &dest).unwrap();
    std::fs::write(&dest, &glb).unwrap();
    let (doc, _) = common::load_glb(&glb);
    let anims: Vec<&str> = doc.animations().map(|x| x.name().unwrap()).collect();
    assert_eq!(anims, ["wave", "smile"]);
    assert_eq!(doc.meshes().next().unwrap().weights(), Some(&[0.0][..]));

    // At rest: where it was built.
    let top_right = [2.0, 0.2, 0.0];
    assert!(posed(&glb, top_right, 0.0).distance(Vec3::new(2.0, 0.2, 0.0)) < 1e-4);
    // t = 1: bulge 1 -> (2, 0.7); about the arm at (1, 0), turned 90 degrees: (1 - 0.7, 0 + 1).
    let p = posed(&glb, top_right, 1.0);
    assert!(p.distance(Vec3::new(0.3, 1.0, 0.0)) < 1e-3, "{p}");
    // t = 0.5: bulge 0.5 -> (2, 0.45); (1, 0.45) turned 45 degrees: (0.55, 1.45) / sqrt 2, plus (1, 0).
    let p = posed(&glb, top_right, 0.5);
    let h = std::f32::consts::FRAC_1_SQRT_2;
    assert!(
        p.distance(Vec3::new(1.0 + 0.55 * h, 1.45 * h, 0.0)) < 1e-3,
        "{p}"
    );
    // The middle vertex follows both bones half and half: (1, 0) stays at the arm's pivot.
    assert!(posed(&glb, [1.0, 0.0, 0.0], 1.0).distance(Vec3::new(1.0, 0.0, 0.0)) < 1e-4);
}

/// No real XPM exists: hangar's own one reads back field for field and rewrites byte for byte,
/// also through its JSON dump.
#[test]
fn an_xpm_rewrites_exactly_and_through_json() {
    let bytes = smile_xpm();
    let o = common::open(&bytes, Path::new("smile.xpm")).unwrap();
    assert!(o.warnings().is_empty());
    let info = o.info();
    assert_eq!(info.details["motion_name"], "smile");
    let (again, _) = common::convert(&o, Path::new("o.xpm")).unwrap();
    assert_eq!(again, bytes);
    let dump = o.dump().unwrap();
    let back = common::open(dump.as_bytes(), Path::new("d.json")).unwrap();
    let (from_json, _) = common::convert(&back, Path::new("o.xpm")).unwrap();
    assert_eq!(from_json, bytes);
    // 8-byte header, two chunk headers, metadata (8, then "test", "", "" and "smile" each after an
    // i32 length), one track (20 + "bulge") of two 8-byte keys.
    assert_eq!(
        bytes.len(),
        8 + 12 + (8 + 4 * 4 + 4 + 5) + 12 + (4 + 20 + 4 + 5 + 2 * 8)
    );
}

#[test]
fn the_xac_writer_refuses_an_empty_scene_and_roots_a_static_one() {
    let mut s = strip();
    s.nodes.clear();
    let err = emfx::build::actor(&s).unwrap_err();
    assert_eq!(err.path, "XAC.nodes");
    // The shipped wedge: one mesh node, no bones -> a root node named after the scene.
    let wedge = wedge::wedge_scene();
    let file = emfx::build::actor(&wedge).unwrap();
    let (back, _) = emfx::scene::to_scene(&file, "wedge").unwrap();
    assert_eq!(back.nodes[0].name, "wedge");
    let mesh_node = back.nodes.iter().find(|n| n.mesh.is_some()).unwrap();
    assert_eq!(mesh_node.parent, Some(0));
    assert_eq!(
        back.meshes[0].vertices.len(),
        wedge.meshes[0].vertices.len()
    );
    assert_eq!(
        back.meshes[0].triangle_count(),
        wedge.meshes[0].triangle_count()
    );
}

/// A texture the material names, found beside the model, is embedded in the GLB as PNG, and reading
/// that glTF back gives the texture's name again.
#[test]
fn textures_found_on_disk_are_embedded_and_read_back() {
    use base64::Engine;
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("textures");
    std::fs::create_dir_all(&dir).unwrap();
    let png = base64::engine::general_purpose::STANDARD
        .decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==")
        .unwrap();
    std::fs::write(dir.join("strip_diffuse.png"), &png).unwrap();
    let xac_path = dir.join("strip.xac");
    let xac = emfx::write(&emfx::build::actor(&strip()).unwrap()).unwrap();
    let opened = common::open(&xac, &xac_path).unwrap();
    let dest = common::gltf_out("emfx_textures").join("strip.glb");
    let (glb, warnings) = common::convert(&opened, &dest).unwrap();
    assert!(
        warnings.iter().all(|w| !w.message.contains("not found")),
        "{warnings:?}"
    );
    std::fs::write(&dest, &glb).unwrap();
    let (doc, _) = common::load_glb(&glb);
    // Found beside the model (as strip_diffuse.png), embedded whole, named with the material's path.
    let image = doc.images().next().unwrap();
    let gltf::image::Source::View { view, mime_type } = image.source() else {
        panic!("the image is not embedded")
    };
    assert_eq!(mime_type, "image/png");
    assert_eq!(view.length(), png.len());
    assert_eq!(image.name(), Some("strip_diffuse"));
    let back = common::open(&glb, &dest).unwrap();
    let (scene, _) = back.to_scene().unwrap();
    assert_eq!(
        scene.materials[0].textures.base_color.as_deref(),
        Some("strip_diffuse")
    );
}

/// A node marked collision is written as the collision mesh of its node and read back marked.
#[test]
fn a_collision_node_is_written_as_a_collision_mesh() {
    let mut s = strip();
    let mut col = s.nodes[2].clone();
    col.name = "bar collision".into();
    col.role = hangar::model::Role::Collision;
    col.skin = None;
    col.parent = Some(0);
    s.nodes.push(col);
    let file = emfx::build::actor(&s).unwrap();
    let flags: Vec<i64> = file
        .fields_of("mesh")
        .map(|m| m["isCollision"].as_i64().unwrap())
        .collect();
    assert_eq!(flags, [0, 1]);
    let (back, _) = emfx::scene::to_scene(&file, "strip").unwrap();
    let roles: Vec<_> = back
        .nodes
        .iter()
        .filter(|n| n.mesh.is_some())
        .map(|n| n.role)
        .collect();
    assert_eq!(
        roles,
        [hangar::model::Role::Visual, hangar::model::Role::Collision]
    );
}

/// The sub-motions (XSM) or tracks (XPM) of a motion file, as JSON.
fn motion_body(bytes: &[u8]) -> Value {
    let (file, _) = emfx::read(bytes).unwrap();
    let json = emfx::to_json(&file);
    let body = json["chunks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "boneAnimation" || c["name"] == "morphAnimation")
        .unwrap()["fields"]
        .clone();
    body
}

#[test]
fn motions_are_written_from_a_glb_and_keep_their_keys_with_the_original() {
    let dir = common::gltf_out("emfx_edges_motions");
    let xac = emfx::write(&emfx::build::actor(&strip()).unwrap()).unwrap();
    let (xsm, xpm) = (wave_xsm(), smile_xpm());
    let mut a = common::open(&xac, Path::new("strip.xac")).unwrap();
    a.add_motion(common::open(&xsm, Path::new("wave.xsm")).unwrap());
    a.add_motion(common::open(&xpm, Path::new("smile.xpm")).unwrap());
    let (glb, _) = common::convert(&a, &dir.join("strip.glb")).unwrap();
    let g = common::open(&glb, Path::new("strip.glb")).unwrap();

    // Without the original: the clip that moves nodes, one sub-motion a node it moves ("arm"),
    // its two rotation keys back in the file frame; the position it holds is its pose.
    let (made, _) = common::convert(&g, &dir.join("wave.xsm")).unwrap();
    let body = motion_body(&made);
    assert_eq!(body["numSubMotions"], 1);
    let arm = &body["subMotions"][0];
    assert_eq!(arm["name"], "arm");
    assert_eq!(arm["numRotationKeys"], 2);
    let s = std::f32::consts::FRAC_1_SQRT_2;
    let q: Vec<f32> = serde_json::from_value(arm["rotationKeys"][1]["value"].clone()).unwrap();
    assert!(
        q.iter()
            .zip([0.0, 0.0, -s, s])
            .all(|(a, b)| (a - b).abs() < 1e-6),
        "{q:?}"
    );
    assert_eq!(arm["rotationKeys"][1]["time"], 1.0);
    assert_eq!(arm["numPositionKeys"], 0);
    assert_eq!(arm["posePosition"], json!([-1.0, 0.0, 0.0]));
    // The weights clip as an XPM: track "bulge", amounts 0 and 65535 at 0 and 1 s.
    let (made, _) = common::convert(&g, &dir.join("smile.xpm")).unwrap();
    let body = motion_body(&made);
    assert_eq!(body["numTracks"], 1);
    assert_eq!(body["tracks"][0]["name"], "bulge");
    let keys: Vec<(f64, i64)> = body["tracks"][0]["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| (k["time"].as_f64().unwrap(), k["amount"].as_i64().unwrap()))
        .collect();
    assert_eq!(keys, [(0.0, 0), (1.0, 65535)]);

    // With the original: the same curves keep the stored keys, byte for byte.
    let with = |original: &str, output: &str| {
        let path = dir.join(original);
        std::fs::write(
            &path,
            if original.ends_with("xsm") {
                &xsm
            } else {
                &xpm
            },
        )
        .unwrap();
        let options = hangar::ConvertOptions {
            original: Some(path),
            ..Default::default()
        };
        g.write_as(dir.join(output), &options).unwrap().bytes
    };
    assert_eq!(with("wave.xsm", "wave-back.xsm"), xsm);
    assert_eq!(with("smile.xpm", "smile-back.xpm"), xpm);

    // An edited key: only that track takes the glTF's keys.
    let (mut scene, _) = g.to_scene().unwrap();
    let wave = scene
        .animations
        .iter_mut()
        .find(|a| a.name == "wave")
        .unwrap();
    let rot = wave
        .channels
        .iter_mut()
        .find(|c| c.property == hangar::model::Property::Rotation)
        .unwrap();
    rot.values[4..8].copy_from_slice(&[0.0, 0.0, 1.0, 0.0]);
    let edited = hangar::write_scene(&scene, "edited.glb", &Default::default()).unwrap();
    let e = common::open(&edited.bytes, Path::new("edited.glb")).unwrap();
    let path = dir.join("wave.xsm");
    let options = hangar::ConvertOptions {
        original: Some(path),
        ..Default::default()
    };
    let made = e.write_as(dir.join("wave-edit.xsm"), &options).unwrap();
    let body = motion_body(&made.bytes);
    let arm = &body["subMotions"][0];
    assert_eq!(arm["numRotationKeys"], 2);
    assert_eq!(
        arm["rotationKeys"][1]["value"],
        json!([0.0, -0.0, -1.0, 0.0])
    );
    // The pose and the other tracks as stored.
    assert_eq!(arm["numPositionKeys"], 0);
    assert_eq!(arm["posePosition"], json!([-1.0, 0.0, 0.0]));
    assert!(made
        .warnings
        .iter()
        .any(|w| w.message.contains("1 sub-motions take the clip's keys")));
}
