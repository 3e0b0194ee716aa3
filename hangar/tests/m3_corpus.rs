//! M3 end to end on the real files in the corpus (HANGAR_CORPUS/m3): parse, byte-exact rewrite,
//! JSON round trip, validation, and glTF export with the right counts, a skin and animations.

mod common;

use common::{corpus, gltf_out, load_glb, name};
use hangar::formats::m3::{self, table::table};
use hangar::Severity;
use std::path::{Path, PathBuf};

#[test]
fn table_sizes_match_the_listed_sizes() {
    let md33 = m3::Tag::from_name("MD33");
    // MD33's header is listed with its own 8-byte references.
    assert_eq!(table().layout(md33, 11, true).unwrap().size, 20);
    let mut checked = 0;
    for l in table().all() {
        if !l.opaque && l.tag != md33 {
            assert_eq!(
                l.size, l.listed_size,
                "{:?} v{}: fields add up to {} bytes, the table lists {}",
                l.tag, l.version, l.size, l.listed_size
            );
            checked += 1;
        }
    }
    assert!(checked > 100, "only {checked} layouts");
    // Field names are unique in every layout (they are the keys of the JSON dump).
    for l in table().all() {
        let mut names: Vec<&str> = l.slots.iter().map(|s| s.name).collect();
        names.sort_unstable();
        let before = names.len();
        names.dedup();
        assert_eq!(
            before,
            names.len(),
            "{:?} v{} repeats a field name",
            l.tag,
            l.version
        );
    }
    // Every MODL version from 20 to 30 that exists.
    let modl = m3::Tag::from_name("MODL");
    let sizes: Vec<(u32, usize)> = [20, 21, 23, 24, 25, 26, 28, 29, 30]
        .iter()
        .map(|&v| (v, table().layout(modl, v, false).unwrap().size))
        .collect();
    assert_eq!(
        sizes,
        [
            (20, 748),
            (21, 760),
            (23, 784),
            (24, 796),
            (25, 808),
            (26, 820),
            (28, 844),
            (29, 856),
            (30, 868)
        ]
    );
}

fn m3_files() -> Option<Vec<PathBuf>> {
    let mut files = corpus("m3", "m3")?;
    files.extend(corpus("m3", "m3a")?);
    Some(files)
}

#[test]
fn every_corpus_file_parses_and_its_warnings_are_known() {
    let Some(files) = m3_files() else { return };
    assert_eq!(files.len(), 83);
    let mut report = String::new();
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        let opened = common::open(&bytes, f).unwrap_or_else(|e| panic!("{e}"));
        report.push_str(&format!(
            "{}: {} warnings\n",
            name(f),
            opened.warnings().len()
        ));
        for w in opened.warnings() {
            report.push_str(&format!("  {w}\n"));
        }
        let errors: Vec<String> = opened
            .validate()
            .into_iter()
            .filter(|x| x.severity == Severity::Error)
            .map(|x| x.to_string())
            .collect();
        assert!(errors.is_empty(), "{}: {errors:?}", name(f));
    }
    insta::assert_snapshot!("m3_corpus_warnings", report);
}

#[test]
fn every_corpus_file_rewrites_byte_for_byte_and_through_json() {
    let Some(files) = m3_files() else { return };
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        let opened = common::open(&bytes, f).unwrap();
        let (again, _) = common::convert(&opened, Path::new("out.m3")).unwrap();
        assert!(again == bytes, "{}: rewrite differs", name(f));
        let dump = opened.dump().unwrap();
        let json_path = Path::new("dump.json");
        let back = common::open(dump.as_bytes(), json_path).unwrap();
        let (from_json, _) = common::convert(&back, Path::new("out.m3")).unwrap();
        assert!(from_json == bytes, "{}: JSON round trip differs", name(f));
    }
}

/// A name made longer in the dump: every section after it moves, and the file still reads.
#[test]
fn an_edited_dump_with_a_longer_name_becomes_a_valid_file() {
    let Some(files) = m3_files() else { return };
    let (f, bytes) = common::pick(&files, "Chaos_Defiler.m3");
    let f = &f;
    let dump = common::open(&bytes, f).unwrap().dump().unwrap();
    // The sequence and its STC each have the name.
    assert_eq!(dump.matches("\"text\": \"Walk\"").count(), 2);
    let edited = dump.replace("\"text\": \"Walk\"", "\"text\": \"Walk slowly now\"");
    let opened = common::open(edited.as_bytes(), Path::new("edited.json")).unwrap();
    let (out, _) = common::convert(&opened, Path::new("out.m3")).unwrap();
    assert_ne!(out, bytes);
    let again = common::open(&out, Path::new("out.m3")).unwrap();
    assert!(again
        .validate()
        .iter()
        .all(|x| x.severity != Severity::Error));
    let info = again.info();
    let names = info.details["sequence_names"].as_array().unwrap();
    assert!(names.iter().any(|n| n == "Walk slowly now"), "{names:?}");
    let before = common::open(&bytes, f).unwrap();
    let old = before.info();
    assert_eq!(info.vertices, old.vertices);
    assert_eq!(info.triangles, old.triangles);
    assert_eq!(info.bones, old.bones);
}

/// Sums of positions and triangles over every mesh of a glb.
fn glb_counts(doc: &gltf::Document) -> (u64, u64) {
    let mut v = 0;
    let mut t = 0;
    for m in doc.meshes() {
        for p in m.primitives() {
            v += p.get(&gltf::Semantic::Positions).unwrap().count() as u64;
            t += p.indices().unwrap().count() as u64 / 3;
        }
    }
    (v, t)
}

#[test]
fn every_corpus_file_converts_to_glb_with_its_counts_skin_and_sequences() {
    let Some(files) = m3_files() else { return };
    let out = gltf_out("m3_corpus");
    let mut animated = 0;
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        let opened = common::open(&bytes, f).unwrap();
        let info = opened.info();
        let dest = out.join(format!("{}.glb", name(f)));
        let (glb, _) = common::convert(&opened, &dest).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(&dest, &glb).unwrap();
        let (doc, _) = load_glb(&glb);
        assert_eq!(
            glb_counts(&doc),
            (info.vertices, info.triangles),
            "{}: glb counts",
            name(f)
        );
        let bones = info.bones.unwrap() as usize;
        if bones > 0 {
            let skin = doc.skins().next().expect("a skin");
            assert_eq!(skin.joints().count(), bones, "{}", name(f));
        }
        let sequences = info.sequences.unwrap() as usize;
        let anims: Vec<_> = doc.animations().collect();
        assert_eq!(
            anims.len(),
            sequences,
            "{}: one animation a sequence",
            name(f)
        );
        assert!(anims.iter().all(|a| a.channels().count() > 0));
        if sequences > 0 {
            animated += 1;
        }
    }
    assert!(animated >= 70, "{animated} animated models");
}

/// Key 2 of bone `bip01`'s rotation in the Chaos Defiler's `Walk` (looked up in the file by hand
/// through its JSON dump: BONE -> animation id -> STG -> STC -> SD4Q block; frame 66 ms, quaternion 0.4828962, -0.5166462, -0.48908812, 0.51056904) is the glTF
/// rotation of node `bip01` at 0.066 s.
#[test]
fn a_bone_pose_at_a_known_frame_matches_the_file() {
    let Some(files) = m3_files() else { return };
    let (f, bytes) = common::pick(&files, "Chaos_Defiler.m3");
    let f = &f;
    let opened = common::open(&bytes, f).unwrap();
    let dest = gltf_out("m3_pose").join("Chaos_Defiler.glb");
    let (glb, _) = common::convert(&opened, &dest).unwrap();
    std::fs::write(&dest, &glb).unwrap();
    let (doc, blob) = load_glb(&glb);
    let walk = doc.animations().find(|a| a.name() == Some("Walk")).unwrap();
    let channel = walk
        .channels()
        .find(|c| {
            c.target().node().name() == Some("bip01")
                && c.target().property() == gltf::animation::Property::Rotation
        })
        .expect("bip01 rotates in Walk");
    assert_eq!(
        channel.sampler().interpolation(),
        gltf::animation::Interpolation::Linear
    );
    let reader = channel.reader(|_| Some(&blob));
    let times: Vec<f32> = reader.read_inputs().unwrap().collect();
    assert_eq!(times.len(), 41);
    assert_eq!(&times[..4], &[0.0, 0.033, 0.066, 0.1]);
    let gltf::animation::util::ReadOutputs::Rotations(r) = reader.read_outputs().unwrap() else {
        panic!("rotations")
    };
    let q: Vec<[f32; 4]> = r.into_f32().collect();
    let want = [0.4828962f32, -0.5166462, -0.48908812, 0.51056904];
    let len = want.iter().map(|c| c * c).sum::<f32>().sqrt();
    for k in 0..4 {
        assert!((q[2][k] - want[k] / len).abs() < 1e-6, "{:?}", q[2]);
    }
    // The rest pose is the bone's init value.
    let node = doc.nodes().find(|n| n.name() == Some("bip01")).unwrap();
    let (_, rest, _) = node.transform().decomposed();
    assert!((rest[0] - 0.5032264).abs() < 1e-5 && (rest[3] - 0.5032269).abs() < 1e-5);
}

#[test]
fn an_m3a_adds_its_sequences_to_its_model() {
    let Some(files) = m3_files() else { return };
    let (model, mb) = common::pick(&files, "storm_hero_tyrael_base.m3");
    let (anims, ab) = common::pick(&files, ".m3a");
    let mut m = common::open(&mb, &model).unwrap();
    let a = common::open(&ab, &anims).unwrap();
    let a_info = a.info();
    assert_eq!(a_info.vertices, 0);
    let added = a_info.sequences.unwrap() as usize;
    assert_eq!(added, 11);
    let dest = gltf_out("m3_motion").join("tyrael_with_anims.glb");
    m.add_motion(a);
    let (glb, _) = common::convert(&m, &dest).unwrap();
    std::fs::write(&dest, &glb).unwrap();
    let (doc, _) = load_glb(&glb);
    let names: Vec<String> = doc
        .animations()
        .map(|x| x.name().unwrap().to_string())
        .collect();
    assert_eq!(names.len(), 1 + added, "{names:?}");
    // The added clips are named after the motion file's stem.
    let label = format!("{}: ", anims.file_stem().unwrap().to_string_lossy());
    let from_m3a = names.iter().filter(|n| n.starts_with(&label)).count();
    assert_eq!(from_m3a, added);
    // The added clips move many of the model's 124 bones.
    let most = doc
        .animations()
        .map(|x| x.channels().count())
        .max()
        .unwrap();
    assert!(most > 40, "{most}");
}

/// Triangles wind counter-clockwise around their stored normals (as glTF wants, so the indices are
/// kept), and the normal's fourth byte is the bitangent sign: for most triangles the bitangent glTF
/// derives (cross(normal, tangent) * w) points along -V, up the image (glTF's convention).
#[test]
fn winding_and_tangent_sign_follow_the_normals_and_uvs() {
    let Some(files) = m3_files() else { return };
    let mut agree = 0u64;
    let mut total = 0u64;
    let mut ccw = 0u64;
    for f in files.iter().filter(|f| f.extension().unwrap() == "m3") {
        let bytes = std::fs::read(f).unwrap();
        let opened = common::open(&bytes, f).unwrap();
        let (scene, _) = opened.to_scene().unwrap();
        for m in &scene.meshes {
            let v = &m.vertices;
            let (Some(ns), Some(ts), Some(uv)) = (&v.normals, &v.tangents, v.uvs.first()) else {
                continue;
            };
            for tri in m.primitives[0].indices.chunks_exact(3) {
                let [a, b, c] = [tri[0] as usize, tri[1] as usize, tri[2] as usize];
                let p = |i: usize| glam::Vec3::from(v.positions[i]);
                let (e1, e2) = (p(b) - p(a), p(c) - p(a));
                let (du1, dv1) = (uv[b][0] - uv[a][0], uv[b][1] - uv[a][1]);
                let (du2, dv2) = (uv[c][0] - uv[a][0], uv[c][1] - uv[a][1]);
                let det = du1 * dv2 - du2 * dv1;
                if det.abs() < 1e-12 {
                    continue;
                }
                let face = e1.cross(e2);
                let nsum =
                    glam::Vec3::from(ns[a]) + glam::Vec3::from(ns[b]) + glam::Vec3::from(ns[c]);
                if face.dot(nsum) > 0.0 {
                    ccw += 1;
                }
                // Direction of -V on the surface.
                let bit = -(e2 * du1 - e1 * du2) / det;
                let n = glam::Vec3::from(ns[a]);
                let t = ts[a];
                let derived = n.cross(glam::Vec3::new(t[0], t[1], t[2])) * t[3];
                total += 1;
                if derived.dot(bit) > 0.0 {
                    agree += 1;
                }
            }
        }
    }
    let share = agree as f64 / total as f64;
    println!("tangent sign agrees with -V on {agree} of {total} triangles ({share:.3})");
    let wound = ccw as f64 / total as f64;
    println!("counter-clockwise around their normals: {ccw} ({wound:.4})");
    assert!(wound > 0.97, "{wound}");
    assert!(total > 300_000, "{total}");
    assert!(share > 0.85, "{share}");
}

/// M3 -> glb -> M3 with `--original`: the untouched glb gives the original's bytes; a glb whose
/// clip gains a track is rebuilt (a warning says why) with the original's triangles, bones and
/// sequences (a stored track edited: `m3_edit`).
#[test]
fn a_glb_back_with_its_original_is_the_original_or_keeps_its_counts() {
    let Some(files) = m3_files() else { return };
    let Some(src) = files
        .iter()
        .find(|f| name(f) == "vicboyv_thethingrevival.SC2Map__Wrench.m3")
    else {
        return;
    };
    let bytes = std::fs::read(src).unwrap();
    let was = common::open(&bytes, src).unwrap();
    let info = was.info();
    assert_eq!(
        (info.triangles, info.bones, info.sequences),
        (172, Some(7), Some(1))
    );
    let (glb, _) = common::convert(&was, Path::new("wrench.glb")).unwrap();
    let options = hangar::ConvertOptions {
        original: Some(src.clone()),
        ..Default::default()
    };
    let g = common::open(&glb, Path::new("wrench.glb")).unwrap();
    let back = g.write_as("wrench.m3", &options).unwrap();
    assert_eq!(back.bytes.len(), bytes.len());
    assert!(back.bytes == bytes, "the untouched glb is not the original");

    // Its one sequence moves no bone (the clip shows the first bone held at rest): that key
    // moved is a track the original does not have, so the model is rebuilt, a warning says why,
    // with the same counts.
    let (mut scene, _) = g.to_scene().unwrap();
    let c = &mut scene.animations[0].channels[0];
    if c.property == hangar::model::Property::Rotation {
        c.values[0..4].copy_from_slice(&[0.0, 0.0, 1.0, 0.0]);
    } else {
        c.values[0] += 0.5;
    }
    let edited = hangar::write_scene(&scene, "edited.glb", &Default::default()).unwrap();
    let e = common::open(&edited.bytes, Path::new("edited.glb")).unwrap();
    let out = e.write_as("wrench.m3", &options).unwrap();
    assert!(out.bytes != bytes);
    assert!(
        out.warnings
            .iter()
            .any(|w| w.message.contains("rebuilt whole from the glTF")
                && w.message.contains("which this sequence does not animate")),
        "{:?}",
        out.warnings
    );
    let info = common::open(&out.bytes, Path::new("out.m3"))
        .unwrap()
        .info();
    assert_eq!(
        (info.triangles, info.bones, info.sequences),
        (172, Some(7), Some(1))
    );
}
