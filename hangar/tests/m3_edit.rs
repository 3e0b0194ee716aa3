//! An edited M3 written over the file it came from (`hangar convert edited.glb out.m3 --original
//! SRC.m3`, the Blender export): only what derives from the mesh is rebuilt; every other section
//! keeps its place, count and bytes.

mod common;

use common::{corpus, m3_out, name, write_m3_checked};
use hangar::formats::m3::table::Reference;
use hangar::formats::m3::{read, scene, Tag, M3};
use hangar::model::Scene;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// MODL fields made from the mesh; every other field of the MODL entry keeps its bytes.
const MESH_FIELDS: [&str; 5] = [
    "vertexFlags",
    "vertices",
    "divisions",
    "boneLookup",
    "boundings",
];

/// The sections the mesh is: the header, MODL, and what its mesh fields point at (the division's
/// faces, regions, batches and bounding shapes, which grow to hold the vertices).
fn mesh_sections(m3: &M3<'_>) -> BTreeSet<usize> {
    let modl = hangar::formats::m3::model::Model::new(m3).modl().unwrap();
    let mut out = BTreeSet::from([0, modl_index(m3)]);
    let mut add = |r: Option<Reference>| {
        if let Some(r) = r.filter(|r| !r.is_null()) {
            out.insert(r.index as usize);
        }
    };
    for f in ["vertices", "divisions", "boneLookup"] {
        add(modl.reference(f));
    }
    if let Some(r) = modl.reference("divisions").filter(|r| !r.is_null()) {
        for d in m3.sections[r.index as usize].entries(m3.small_refs()) {
            for f in ["faces", "regions", "batches", "boundingShapes"] {
                add(d.reference(f));
            }
        }
    }
    out
}

fn modl_index(m3: &M3<'_>) -> usize {
    m3.sections
        .iter()
        .position(|s| s.tag == Tag::from_name("MODL"))
        .unwrap()
}

/// Whether mdx-m3-viewer 5.12.0 reads an M3 with these sections: not with a colour track (`COL`),
/// MAT_ v20 or LAYR v26 (read as v25; see `formats::m3::build::VERSIONS`). An edited file keeps
/// them, so only the others go to the viewer's check in `.ci/run`.
fn viewer_reads(m3: &M3<'_>) -> bool {
    !m3.sections.iter().any(|s| {
        s.tag == Tag::from_name("COL")
            || (s.tag == Tag::from_name("MAT_") && s.version == 20)
            || (s.tag == Tag::from_name("LAYR") && s.version == 26)
    })
}

/// The scene of `src` through its GLB, as `hangar convert SRC.m3 x.glb` writes it.
fn glb_scene(src: &Path, bytes: &[u8]) -> Scene {
    let opened = common::open(bytes, src).unwrap();
    let (glb, _) = common::convert(&opened, Path::new("x.glb")).unwrap();
    common::from_glb(&glb).unwrap()
}

fn work(test: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("m3-edit")
        .join(test);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Every corpus M3 with a mesh, its first vertex moved by 0.05 in x in the glTF scene and written
/// with the original: every section but the mesh's at the same index with the same tag, version,
/// count and bytes, the MODL entry the same but for its mesh fields; the vertex moved and every
/// region's vertex count kept.
#[test]
fn every_corpus_m3_with_a_vertex_moved_keeps_every_other_part() {
    let Some(files) = corpus("m3", "m3") else {
        return;
    };
    let (dir, checked) = (work("vertex_moved"), m3_out("edited_vertex_moved"));
    let (mut done, mut kept_sections, mut to_viewer) = (0, 0, 0);
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        let Ok((was, _)) = read::read(&bytes) else {
            continue;
        };
        let mut edited = glb_scene(f, &bytes);
        let Some(p) = edited
            .meshes
            .first_mut()
            .and_then(|m| m.vertices.positions.first_mut())
        else {
            continue;
        };
        p[0] += 0.05;
        let out = dir.join(name(f));
        hangar::write_scene_to(&edited, &out, Some(f))
            .unwrap_or_else(|e| panic!("{}: {e}", name(f)));
        let written = std::fs::read(&out).unwrap();
        let (now, _) = read::read(&written).unwrap();

        // Kept: every section that is not the mesh, in its place, byte for byte.
        assert_eq!(
            now.sections.len(),
            was.sections.len(),
            "{}: sections",
            name(f)
        );
        let mesh = mesh_sections(&was);
        for (i, (a, b)) in was.sections.iter().zip(&now.sections).enumerate() {
            assert_eq!(
                (a.tag, a.version),
                (b.tag, b.version),
                "{}: section {i}",
                name(f)
            );
            if !mesh.contains(&i) {
                assert_eq!(a.count, b.count, "{}: section {i} {:?}", name(f), a.tag);
                assert!(
                    a.data == b.data,
                    "{}: section {i} {:?} changed",
                    name(f),
                    a.tag
                );
                kept_sections += 1;
            }
        }
        let m = modl_index(&was);
        let (a, b) = (
            was.sections[m].entry(0, was.small_refs()).unwrap(),
            now.sections[m].entry(0, now.small_refs()).unwrap(),
        );
        for ((slot, x), (_, y)) in a.fields().zip(b.fields()) {
            if !MESH_FIELDS.contains(&slot.name) {
                assert_eq!(x, y, "{}: MODL.{}", name(f), slot.name);
            }
        }

        // The edit arrived: the first vertex moved, every region with its vertices.
        let before = scene::to_scene(&was, "x", &[]).unwrap().0;
        let after = scene::to_scene(&now, "x", &[]).unwrap().0;
        let counts = |s: &Scene| {
            s.meshes
                .iter()
                .map(|m| m.vertices.len())
                .collect::<Vec<_>>()
        };
        assert_eq!(counts(&before), counts(&after), "{}: vertices", name(f));
        let (p0, p1) = (
            before.meshes[0].vertices.positions[0],
            after.meshes[0].vertices.positions[0],
        );
        let moved = [p1[0] - p0[0], p1[1] - p0[1], p1[2] - p0[2]];
        assert!(
            (moved[0] - 0.05).abs() < 1e-3 && moved[1].abs() < 1e-3 && moved[2].abs() < 1e-3,
            "{}: the first vertex moved by {moved:?}",
            name(f)
        );
        if viewer_reads(&was) {
            write_m3_checked(&checked, &name(f), &written);
            to_viewer += 1;
        }
        done += 1;
    }
    assert!(done >= 60, "{done} files edited");
    assert!(kept_sections > 50_000, "{kept_sections} sections kept");
    assert!(to_viewer >= 30, "{to_viewer} files for mdx-m3-viewer");
}

/// A region taken out of the mesh: a kept particle emitter that spawns from it, or from a region
/// after it (now numbered one less), is named in a warning; the emitters are all kept.
#[test]
fn a_kept_emitter_on_a_changed_region_is_named_in_a_warning() {
    let Some(files) = corpus("m3", "m3") else {
        return;
    };
    let dir = work("region_removed");
    let mut seen = 0;
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        let Ok((was, _)) = read::read(&bytes) else {
            continue;
        };
        // The regions the emitters spawn from, through the dump.
        let dump = hangar::formats::m3::dump::to_json(&was);
        let secs = dump["sections"].as_array().unwrap();
        let modl = &secs[modl_index(&was)]["entries"][0];
        let entries = |r: &serde_json::Value| {
            r.get("index")
                .and_then(|i| i.as_u64())
                .and_then(|i| secs[i as usize]["entries"].as_array().cloned())
                .unwrap_or_default()
        };
        let emitters = entries(&modl["particleEmitters"]);
        let Some((e, region)) = emitters.iter().enumerate().find_map(|(k, p)| {
            Some((
                k,
                entries(&p["emitShapeRegions"]).first()?.as_u64()? as usize,
            ))
        }) else {
            continue;
        };
        let mut edited = glb_scene(f, &bytes);
        let gone = edited
            .nodes
            .iter()
            .position(|n| {
                n.mesh
                    .and_then(|m| edited.meshes[m].extras["m3"]["region"].as_u64())
                    == Some(region as u64)
            })
            .unwrap();
        edited.nodes[gone].mesh = None;
        let out = dir.join(name(f));
        let wrote = hangar::write_scene_to(&edited, &out, Some(f)).unwrap();
        let part = format!("MODL.particleEmitters[{e}].emitShapeRegions");
        let w = wrote.warnings.iter().find(|w| w.path == part);
        let w =
            w.unwrap_or_else(|| panic!("{}: no warning on {part}: {:?}", name(f), wrote.warnings));
        assert!(
            w.message.contains(&format!("region {region}")) && w.message.contains("is gone"),
            "{}",
            w.message
        );
        let written = std::fs::read(&out).unwrap();
        let (now, _) = read::read(&written).unwrap();
        let after = hangar::formats::m3::dump::to_json(&now);
        let n = after["sections"][modl_index(&now)]["entries"][0]["particleEmitters"].clone();
        assert_eq!(n, modl["particleEmitters"], "{}: emitters kept", name(f));
        seen += 1;
    }
    // The corpus has a model whose emitters spawn from its regions.
    assert!(seen >= 1);
}

/// The first clip's first stored track with its first key moved (a position or scale by 0.5 in x, a
/// rotation turned half round), on its own (`with_vertex` false) or with the first vertex moved too.
fn edit_a_key(scene: &mut Scene, with_vertex: bool) -> Option<(usize, usize)> {
    let (a, c) = scene.animations.iter().enumerate().find_map(|(a, clip)| {
        // A track the file stores (a sequence that moves no bone shows one key at rest).
        let c = clip.channels.iter().position(|c| c.times.len() > 1)?;
        Some((a, c))
    })?;
    let ch = &mut scene.animations[a].channels[c];
    if ch.property == hangar::model::Property::Rotation {
        let q = [ch.values[0], ch.values[1], ch.values[2], ch.values[3]];
        // Half a turn about z: (x, y, z, w) * (0, 0, 1, 0).
        let turned = [q[1], -q[0], q[3], -q[2]];
        ch.values[0..4].copy_from_slice(&turned);
    } else {
        ch.values[0] += 0.5;
    }
    if with_vertex {
        scene.meshes.first_mut()?.vertices.positions.first_mut()?[0] += 0.05;
    }
    Some((a, c))
}

/// Every corpus M3 with a clip, one key of it moved in the glTF scene (alone, and with a vertex
/// moved too) and written with the original: sections other than the mesh's and that track's
/// (its block and its key times and values) keep their index and bytes; read back, the key moved,
/// every other track of every clip as it was, and with the vertex, the vertex moved too.
#[test]
fn every_corpus_m3_with_a_key_moved_rewrites_that_track_alone() {
    let Some(files) = corpus("m3", "m3") else {
        return;
    };
    let dir = work("key_moved");
    let (mut alone, mut with_mesh) = (0, 0);
    let track_tags = ["SD3V", "SD4Q", "I32_", "VEC3", "QUAT"].map(Tag::from_name);
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        let Ok((was, _)) = read::read(&bytes) else {
            continue;
        };
        let original = glb_scene(f, &bytes);
        for with_vertex in [false, true] {
            let mut edited = original.clone();
            let Some((a, c)) = edit_a_key(&mut edited, with_vertex) else {
                continue;
            };
            let out = dir.join(format!("{with_vertex}-{}", name(f)));
            let wrote = hangar::write_scene_to(&edited, &out, Some(f))
                .unwrap_or_else(|e| panic!("{}: {e}", name(f)));
            assert!(
                wrote.warnings.iter().any(|w| w.message.contains(
                    "the edited clips' tracks rebuilt from the glTF, every other part kept"
                )),
                "{}: {:?}",
                name(f),
                wrote.warnings
            );
            let written = std::fs::read(&out).unwrap();
            let (now, _) = read::read(&written).unwrap();
            let mesh = if with_vertex {
                mesh_sections(&was)
            } else {
                BTreeSet::new()
            };
            let mut differ = 0;
            for (i, (x, y)) in was.sections.iter().zip(&now.sections).enumerate() {
                // The header (section 0) says where the index now is.
                let same = (x.tag, x.count, &x.data[..]) == (y.tag, y.count, &y.data[..]);
                if i == 0 || mesh.contains(&i) || same {
                    continue;
                }
                assert!(
                    track_tags.contains(&x.tag) && x.tag == y.tag,
                    "{}: section {i} {:?} changed",
                    name(f),
                    x.tag
                );
                differ += 1;
            }
            assert!(differ <= 3, "{}: {differ} track sections changed", name(f));
            for s in &now.sections[was.sections.len().min(now.sections.len())..] {
                assert!(
                    track_tags.contains(&s.tag) || with_vertex,
                    "{}: {:?} added",
                    name(f),
                    s.tag
                );
            }
            // Read back: the key moved, the other tracks as they were.
            let back = scene::to_scene(&now, "x", &[]).unwrap().0;
            let before = scene::to_scene(&was, "x", &[]).unwrap().0;
            assert_eq!(back.animations.len(), before.animations.len());
            for (k, (p, q)) in before.animations.iter().zip(&back.animations).enumerate() {
                for (j, (x, y)) in p.channels.iter().zip(&q.channels).enumerate() {
                    let e = &edited.animations[k].channels[j];
                    let want = if (k, j) == (a, c) { e } else { x };
                    assert_eq!(
                        (&y.times[..], y.values.len()),
                        (&want.times[..], want.values.len()),
                        "{}: clip {k} track {j}",
                        name(f)
                    );
                    let near = y
                        .values
                        .iter()
                        .zip(&want.values[..])
                        .all(|(u, v)| (u - v).abs() < 1e-5);
                    assert!(near, "{}: clip {k} track {j} values", name(f));
                }
            }
            if with_vertex {
                let (p0, p1) = (
                    before.meshes[0].vertices.positions[0],
                    back.meshes[0].vertices.positions[0],
                );
                assert!((p1[0] - p0[0] - 0.05).abs() < 1e-3, "{}: vertex", name(f));
                with_mesh += 1;
            } else {
                alone += 1;
            }
        }
    }
    println!("{alone} M3s with a key moved, {with_mesh} with a vertex moved too");
    assert!(alone >= 60 && with_mesh >= 50, "{alone} {with_mesh}");
}
