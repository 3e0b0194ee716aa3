//! X4 part animations (.ani) on the corpus: exact rewrite, JSON round trip, one glTF animation a
//! state, and the superyard component folder with its parts.

mod common;

use common::{corpus, gltf_out, load_glb, name};
use hangar::formats::ani;
use std::path::Path;

#[test]
fn every_ani_rewrites_exactly_and_has_one_animation_a_state() {
    let Some(files) = corpus("x4", "ani") else {
        return;
    };
    assert_eq!(files.len(), 9);
    let out = gltf_out("ani_corpus");
    let mut states_total = 0;
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        let opened = common::open(&bytes, f).unwrap_or_else(|e| panic!("{e}"));
        let (again, _) = common::convert(&opened, Path::new("out.ani")).unwrap();
        assert!(again == bytes, "{}: rewrite differs", name(f));
        let dump = opened.dump().unwrap();
        let back = common::open(dump.as_bytes(), Path::new("d.json")).unwrap();
        let (from_json, _) = common::convert(&back, Path::new("out.ani")).unwrap();
        assert!(from_json == bytes, "{}: JSON round trip differs", name(f));
        let (file, _) = ani::read(&bytes).unwrap();
        let states = ani::states(&file);
        states_total += states.len();
        let dest = out.join(format!("{}.glb", name(f)));
        let (glb, _) = common::convert(&opened, &dest).unwrap();
        std::fs::write(&dest, &glb).unwrap();
        let (doc, _) = load_glb(&glb);
        let names: Vec<&str> = doc.animations().map(|a| a.name().unwrap()).collect();
        let want: Vec<&str> = states.iter().map(|s| s.0.as_str()).collect();
        assert_eq!(names, want, "{}", name(f));
    }
    assert_eq!(states_total, 51);
}

/// The superyard folder: the ring part's lod0 mesh, its collision mesh as a marked child, and the
/// `loop` state turning the ring a full circle (2 pi about Z) in 666.67 s.
#[test]
fn a_component_folder_becomes_one_animated_scene() {
    let Some(files) = corpus("x4", "xmf") else {
        return;
    };
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("superyard");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let src = files[0].parent().unwrap();
    for n in [
        "Cgettys__anim_to_ring-lod0.xmf",
        "Cgettys__anim_to_ring-collision.xmf",
        "Cgettys__struct_bt_ut_omicron_superyard_data.ani",
    ] {
        std::fs::copy(src.join(n), dir.join(n)).unwrap();
    }
    let dest = gltf_out("ani_component").join("superyard.glb");
    let glb = hangar::open(&dir)
        .unwrap()
        .write_as(&dest, &Default::default())
        .unwrap()
        .bytes;
    std::fs::write(&dest, &glb).unwrap();
    let (doc, blob) = load_glb(&glb);
    let part = doc
        .nodes()
        .find(|n| n.name() == Some("Cgettys__anim_to_ring"))
        .unwrap();
    let kids: Vec<_> = part.children().collect();
    assert_eq!(kids.len(), 2);
    assert!(kids
        .iter()
        .any(|k| k.mesh().is_some() && k.extras().is_none()));
    assert!(kids.iter().any(|k| k
        .extras()
        .as_ref()
        .is_some_and(|e| e.get().contains("collision"))));
    let anims: Vec<_> = doc.animations().collect();
    assert_eq!(anims.len(), 1);
    assert_eq!(anims[0].name(), Some("loop"));
    let ch = anims[0].channels().next().unwrap();
    assert_eq!(ch.target().node().index(), part.index());
    assert_eq!(ch.target().property(), gltf::animation::Property::Rotation);
    let r = ch.reader(|_| Some(&blob));
    let times: Vec<f32> = r.read_inputs().unwrap().collect();
    assert!((times.last().unwrap() - 666.6667).abs() < 1e-3);
    let gltf::animation::util::ReadOutputs::Rotations(q) = r.read_outputs().unwrap() else {
        panic!()
    };
    let q: Vec<[f32; 4]> = q.into_f32().collect();
    // Half way through (linear keys, sampled at 30 fps): half a turn about Z, mirrored to -Z.
    let mid = times.iter().position(|&t| t >= 333.33).unwrap();
    let rot = glam::Quat::from_array(q[mid]);
    let (axis, angle) = rot.to_axis_angle();
    assert!((angle - std::f32::consts::PI).abs() < 0.01, "{angle}");
    assert!(axis.z.abs() > 0.999, "{axis}");
}
