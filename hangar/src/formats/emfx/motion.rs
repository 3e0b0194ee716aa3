//! XSM (skeletal) and XPM (morph) motions built from one clip of the neutral scene: the glTF a
//! motion was exported as (`hangar convert walk.glb walk.xsm`), by another tool too.
//!
//! A skeletal motion is a sub-motion a node: its pose (the node at rest) and its position,
//! rotation and scale keys, back in the file frame (X mirrored). A morph motion is a track a
//! morph target: its weight keys as amounts of 65535.
//!
//! With the motion file the clip came from (`--original`), its header, metadata and sub-motions
//! (names, poses, bind poses, quaternion precision, the chunk layout) are kept, and a track whose
//! keys a tool resampled (a key a frame) but which still traces the stored curve keeps its stored
//! keys; nodes the clip does not move keep their sub-motions as stored.

use super::build::{chunk, fa, fv, mirror, mirror_quat};
use super::{scene, File, Kind};
use crate::error::{Error, Result, Warning};
use crate::model::{Animation, Channel, Property, Scene};
use crate::raw::Bytes;
use glam::Quat;
use serde_json::{json, Value};

/// The clip written: the one named `name` (a tool's `.001` allowed), else the only one that has
/// channels of `kind`; several without a name are refused, naming them.
fn clip<'s>(scene: &'s Scene, name: Option<&str>, kind: Kind) -> Result<&'s Animation> {
    let wanted = |c: &Channel| (c.property == Property::Weights) == (kind == Kind::Xpm);
    let with: Vec<&Animation> = scene
        .animations
        .iter()
        .filter(|a| a.channels.iter().any(wanted))
        .collect();
    if let Some(name) = name {
        let taken = vec![false; with.len()];
        if let Some(i) = crate::model::find_named(&with, &taken, name, |a| &a.name) {
            if let Some(a) = with.get(i) {
                return Ok(a);
            }
        }
    }
    match &with[..] {
        [one] => Ok(one),
        [] => Err(Error::refused(
            "animations",
            format!(
                "the scene has no clip that {}: nothing to write as {}",
                if kind == Kind::Xpm {
                    "drives morph target weights"
                } else {
                    "moves a node"
                },
                kind.name()
            ),
        )),
        many => Err(Error::refused(
            "animations",
            format!(
                "the scene has {} clips ({}): a {} holds one; convert from a glTF with one clip or give --original",
                many.len(),
                many.iter().map(|a| a.name.as_str()).collect::<Vec<_>>().join(", "),
                kind.name()
            ),
        )),
    }
}

/// The metadata of a motion: the original's chunks as stored, else one made here.
fn metadata_chunks(original: Option<&File>, kind: Kind, name: &str) -> Vec<super::Chunk> {
    match original {
        Some(f) => f
            .chunks
            .iter()
            .filter(|c| c.name(kind) == "metadata")
            .cloned()
            .collect(),
        None => vec![metadata(kind, name)],
    }
}

/// The metadata chunk of a motion made here.
fn metadata(kind: Kind, name: &str) -> super::Chunk {
    let app = format!("hangar {}", env!("CARGO_PKG_VERSION"));
    let id = if kind == Kind::Xpm { 0x65 } else { 0xC9 };
    chunk(
        id,
        1,
        json!({
            "fps": 30, "exporterMajor": 1, "exporterMinor": 0, "pad": b64(&[0, 0]),
            "sourceApp": app, "originalFile": "", "exportDate": "", "motionName": name,
        }),
    )
}

fn b64(b: &[u8]) -> Value {
    Bytes::borrowed(b).to_base64().into()
}

/// A file frame quaternion as the sub-motion stores it: four floats, or four i16 of 32767.
fn quat_value(q: [f32; 4], q16: bool) -> Value {
    if q16 {
        json!(q.map(|c| (c.clamp(-1.0, 1.0) * 32767.0).round() as i64))
    } else {
        fa(&q)
    }
}

/// The keys of channel `c` (scene frame) as a sub-motion's key list.
fn keys(c: &Channel, q16: bool) -> Vec<Value> {
    let w = c.width();
    c.times
        .iter()
        .zip(c.values.chunks_exact(w))
        .map(|(&t, v)| {
            let value = match c.property {
                Property::Translation => fa(&mirror([v[0], v[1], v[2]])),
                Property::Rotation => {
                    quat_value(mirror_quat(Quat::from_xyzw(v[0], v[1], v[2], v[3])), q16)
                }
                Property::Scale | Property::Weights => fa(v),
            };
            json!({ "value": value, "time": fv(t) })
        })
        .collect()
}

const TRACKS: [(&str, &str, Property); 3] = [
    ("positionKeys", "numPositionKeys", Property::Translation),
    ("rotationKeys", "numRotationKeys", Property::Rotation),
    ("scaleKeys", "numScaleKeys", Property::Scale),
];

/// A sub-motion for a node the original motion does not have: its rest as pose and bind pose.
fn new_sub_motion(scene: &Scene, node: usize, with_error: bool) -> Value {
    let n = scene.nodes.get(node).cloned().unwrap_or_default();
    let rot = fa(&mirror_quat(n.rotation));
    let pos = fa(&mirror(n.translation.to_array()));
    let scale = fa(&n.scale.to_array());
    let none = fa(&[0.0, 0.0, 0.0, 1.0]);
    let mut s = json!({
        "poseRotation": rot, "bindPoseRotation": rot,
        "poseScaleRotation": none, "bindPoseScaleRotation": none,
        "posePosition": pos, "poseScale": scale, "bindPosePosition": pos, "bindPoseScale": scale,
        "numPositionKeys": 0, "numRotationKeys": 0, "numScaleKeys": 0, "numScaleRotationKeys": 0,
        "name": n.name,
        "positionKeys": [], "rotationKeys": [], "scaleKeys": [], "scaleRotationKeys": [],
    });
    if with_error {
        s["maxError"] = fv(0.0);
    }
    s
}

/// `s` (a stored sub-motion, or a new one) with the keys of `channels` (the clip's, on its node)
/// where they do not trace what `s` stores. Returns whether a track changed.
fn set_keys(s: &mut Value, channels: &[&Channel], node: usize) -> bool {
    let q16 = s["poseRotation"][0].is_i64();
    let stored = scene::sub_motion_channels(s, node);
    let mut changed = false;
    for (list, count, property) in TRACKS {
        let Some(c) = channels.iter().find(|c| c.property == property) else {
            continue;
        };
        let kept = stored
            .iter()
            .find(|x| x.property == property)
            .is_some_and(|x| crate::model::unchanged::traces(c, x));
        if kept {
            continue;
        }
        let k = keys(c, q16);
        s[count] = json!(k.len());
        s[list] = Value::Array(k);
        changed = true;
    }
    changed
}

/// An XSM of the clip named `name` (else the scene's only clip that moves nodes), on `original`'s
/// sub-motions when given.
pub fn skeletal(
    scene: &Scene,
    name: Option<&str>,
    original: Option<&File>,
) -> Result<(File, Vec<Warning>)> {
    let clip = clip(scene, name, Kind::Xsm)?;
    let mut warnings = Vec::new();
    // Sub-motions by node: the original's in its order, then nodes only the clip moves.
    let mut subs: Vec<(Option<usize>, Value)> = Vec::new();
    let old_layout = original.is_some_and(|f| f.chunks.iter().any(|c| c.id == 0xC8));
    let mut taken: Vec<bool> = scene.nodes.iter().map(|n| n.mesh.is_some()).collect();
    if let Some(f) = original {
        for s in scene::sub_motions(f) {
            let name = crate::formats::schema::value::text(&s["name"]).unwrap_or("");
            let node = crate::model::find_named(&scene.nodes, &taken, name, |n| &n.name);
            if let Some(i) = node {
                taken[i] = true;
            }
            subs.push((node, s.clone()));
        }
    }
    let mut moved: Vec<usize> = clip
        .channels
        .iter()
        .filter(|c| c.property != Property::Weights)
        .map(|c| c.node)
        .collect();
    moved.sort_unstable();
    moved.dedup();
    let mut added = 0;
    for &n in &moved {
        if subs.iter().all(|(node, _)| *node != Some(n)) {
            subs.push((Some(n), new_sub_motion(scene, n, !old_layout)));
            added += 1;
        }
    }
    if original.is_some() && added > 0 {
        warnings.push(Warning::note(
            None,
            "animations",
            format!("{added} nodes the original motion does not move got sub-motions of their own"),
        ));
    }
    let mut changed = 0;
    for (node, s) in &mut subs {
        let Some(n) = *node else { continue };
        let mine: Vec<&Channel> = clip.channels.iter().filter(|c| c.node == n).collect();
        changed += usize::from(set_keys(s, &mine, n));
    }
    let subs: Vec<Value> = subs.into_iter().map(|(_, s)| s).collect();
    let mut chunks = metadata_chunks(original, Kind::Xsm, &clip.name);
    if old_layout {
        chunks.extend(subs.into_iter().map(|s| chunk(0xC8, 1, s)));
    } else {
        let version = original
            .and_then(|f| f.chunks.iter().find(|c| c.id == 0xCA))
            .map_or(1, |c| c.version);
        chunks.push(chunk(
            0xCA,
            version,
            json!({ "numSubMotions": subs.len(), "subMotions": subs }),
        ));
    }
    if original.is_some() && changed > 0 {
        warnings.push(Warning::note(
            None,
            "animations",
            format!("{changed} sub-motions take the clip's keys (the others keep the stored ones)"),
        ));
    }
    Ok((motion_file(Kind::Xsm, original, chunks), warnings))
}

fn motion_file(kind: Kind, original: Option<&File>, chunks: Vec<super::Chunk>) -> File {
    File {
        kind,
        header: original.map_or([1, 0, 0, 0], |f| f.header),
        chunks,
        tail: original.map_or_else(Bytes::default, |f| f.tail.clone()),
    }
}

/// An XPM of the clip named `name` (else the scene's only clip that drives weights): a track a
/// morph target of the meshes it drives, on `original`'s tracks when given.
pub fn morph(
    scene: &Scene,
    name: Option<&str>,
    original: Option<&File>,
) -> Result<(File, Vec<Warning>)> {
    let clip = clip(scene, name, Kind::Xpm)?;
    // Every target's keys, by target name, first come first.
    let mut made: Vec<(String, Vec<(f32, f32)>)> = Vec::new();
    for c in clip
        .channels
        .iter()
        .filter(|c| c.property == Property::Weights)
    {
        let Some(mesh) = scene
            .nodes
            .get(c.node)
            .and_then(|n| n.mesh)
            .and_then(|m| scene.meshes.get(m))
        else {
            continue;
        };
        let w = mesh.morph_targets.len();
        if w == 0 || c.values.len() != c.times.len() * w {
            continue;
        }
        for (k, t) in mesh.morph_targets.iter().enumerate() {
            if made.iter().any(|(n, _)| *n == t.name) {
                continue;
            }
            let keys = c
                .times
                .iter()
                .zip(c.values.chunks_exact(w))
                .map(|(&time, v)| (time, v.get(k).copied().unwrap_or(0.0)))
                .collect();
            made.push((t.name.clone(), keys));
        }
    }
    let amount = |w: f32| (w.clamp(0.0, 1.0) * 65535.0).round() as i64;
    let key_values = |keys: &[(f32, f32)]| -> Vec<Value> {
        keys.iter()
            .map(|&(t, w)| json!({ "time": fv(t), "amount": amount(w), "pad": b64(&[0, 0]) }))
            .collect()
    };
    let mut tracks: Vec<Value> = Vec::new();
    let stored = original
        .into_iter()
        .flat_map(|f| f.fields_of("morphAnimation"))
        .flat_map(|c| c["tracks"].as_array().into_iter().flatten());
    for t in stored {
        let mut t = t.clone();
        let name = crate::formats::schema::value::text(&t["name"])
            .unwrap_or("")
            .to_string();
        if let Some((_, keys)) = made.iter().find(|(n, _)| *n == name) {
            // Resampled keys on the stored line (within an amount step) keep the stored keys.
            let was: Vec<(f32, f32)> = t["keys"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|k| {
                    (
                        crate::formats::schema::value::f32(&k["time"]),
                        crate::formats::schema::value::int(&k["amount"]) as f32 / 65535.0,
                    )
                })
                .collect();
            if !traces_weights(keys, &was) {
                t["numKeys"] = json!(keys.len());
                t["keys"] = Value::Array(key_values(keys));
            }
        }
        tracks.push(t);
    }
    for (name, keys) in &made {
        if tracks.iter().any(|t| t["name"].as_str() == Some(name)) {
            continue;
        }
        tracks.push(json!({
            "poseWeight": fv(0.0), "minWeight": fv(0.0), "maxWeight": fv(1.0), "phonemes": 0,
            "numKeys": keys.len(), "name": name, "keys": key_values(keys),
        }));
    }
    let mut chunks = metadata_chunks(original, Kind::Xpm, &clip.name);
    chunks.push(chunk(
        0x66,
        1,
        json!({ "numTracks": tracks.len(), "tracks": tracks }),
    ));
    Ok((motion_file(Kind::Xpm, original, chunks), Vec::new()))
}

/// Every key of `keys` on the line through `stored` (linear between keys, held outside them),
/// within one amount step and a half.
fn traces_weights(keys: &[(f32, f32)], stored: &[(f32, f32)]) -> bool {
    let at = |t: f32| -> Option<f32> {
        let i = stored.partition_point(|k| k.0 <= t);
        Some(
            match (i.checked_sub(1).and_then(|j| stored.get(j)), stored.get(i)) {
                (Some(a), Some(b)) if b.0 > a.0 => a.1 + (b.1 - a.1) * (t - a.0) / (b.0 - a.0),
                (Some(a), _) => a.1,
                (None, Some(b)) => b.1,
                (None, None) => return None,
            },
        )
    };
    !stored.is_empty()
        && keys
            .iter()
            .all(|&(t, w)| at(t).is_some_and(|x| (x - w).abs() <= 1.5 / 65535.0))
}
