//! X4 part animations (`<component>_data.ani`): per part and state, position, rotation (Euler
//! radians), scale, pre-scale and post-scale keys. Layout (FORMAT-NOTES.md, checked on every corpus
//! file): a 16-byte header, 160-byte descriptions, then every description's keys in order, 128
//! bytes each. Key times are seconds.
//!
//! Interpolation is per key and axis, for the segment that starts at the key: 1 step, 2 linear,
//! 5 bezier with absolute handles (out time, out value, in time, in value per axis). Step and
//! linear tracks are exported exactly; bezier (and TCB, read as linear) tracks are sampled at
//! 30 frames a second plus every key.

pub mod document;

use super::schema::{self, Count, F};
use crate::bytes::{Cursor, Writer};
use crate::error::{Error, Result, Warning};
use crate::model::{Animation, Channel, Interpolation, Node, Property, Scene};
use glam::{EulerRot, Quat};
use serde_json::{json, Map, Value};

const KEY: &[F] = &[
    F::Floats("value", 3),
    F::I32("interpolationX"),
    F::I32("interpolationY"),
    F::I32("interpolationZ"),
    F::F32("time"),
    F::Floats("bezier", 12),
    F::Floats("tcb", 5),
    F::Floats("derivatives", 7),
    F::U32("angle"),
];

const DESCRIPTION: &[F] = &[
    F::Fixed("part", 64),
    F::Fixed("state", 64),
    F::I32("numPosition"),
    F::I32("numRotation"),
    F::I32("numScale"),
    F::I32("numPreScale"),
    F::I32("numPostScale"),
    F::F32("duration"),
    F::Bytes("pad", 8),
];

const FILE: &[F] = &[
    F::I32("count"),
    F::I32("keyOffset"),
    F::I32("version"),
    F::I32("reserved"),
    F::List("animations", Count::Field("count"), DESCRIPTION),
    F::List("keys", Count::Rest(KEY_SIZE), KEY),
];

const HEADER: usize = 16;
const DESCRIPTION_SIZE: usize = 160;
const KEY_SIZE: usize = 128;

/// A whole .ani file as its fields (see `FILE`).
#[derive(Debug, Clone)]
pub struct Ani {
    pub fields: Value,
}

fn no_nested(_: &[u8], _: &mut Vec<Warning>) -> Result<Value> {
    Ok(Value::Null)
}

fn no_nested_write(_: &Value, _: bool) -> Result<Vec<u8>> {
    Ok(Vec::new())
}

pub fn read(data: &[u8]) -> Result<(Ani, Vec<Warning>)> {
    let mut warnings = Vec::new();
    let mut c = Cursor::new(data, "ANI");
    let mut nested = Vec::new();
    let m = schema::Reader {
        c: &mut c,
        end: data.len(),
        nested: no_nested,
        warnings: &mut nested,
    }
    .read(FILE, &[])?;
    if c.remaining() != 0 {
        return Err(c.error(
            "keys",
            format!("{} bytes after the last whole key", c.remaining()),
        ));
    }
    let fields = Value::Object(m);
    let count = fields["count"].as_i64().unwrap_or(0) as usize;
    if fields["keyOffset"].as_i64() != Some((HEADER + DESCRIPTION_SIZE * count) as i64) {
        warnings.push(c.warning(
            4,
            "keyOffset",
            format!(
                "key offset {} is not 16 + 160 x {count}",
                fields["keyOffset"]
            ),
        ));
    }
    let declared: i64 = descriptions(&fields)
        .map(|d| counts(d).iter().sum::<usize>() as i64)
        .sum();
    let keys = fields["keys"].as_array().map_or(0, Vec::len) as i64;
    if declared != keys {
        return Err(Error::invalid(
            (HEADER + DESCRIPTION_SIZE * count) as u64,
            "ANI.keys",
            format!("the descriptions count {declared} keys but the file holds {keys}"),
        ));
    }
    Ok((Ani { fields }, warnings))
}

pub fn write(a: &Ani) -> Result<Vec<u8>> {
    let mut w = Writer::new(false);
    schema::Writer2 {
        w: &mut w,
        nested: no_nested_write,
    }
    .write(FILE, &a.fields)
    .map_err(|(p, m)| schema::json_error(format!("ANI.{p}"), m))?;
    let mut out = w.buf;
    // The key offset follows the number of descriptions.
    let count = a.fields["animations"].as_array().map_or(0, Vec::len);
    out[4..8].copy_from_slice(&((HEADER + DESCRIPTION_SIZE * count) as i32).to_le_bytes());
    Ok(out)
}

fn descriptions(fields: &Value) -> impl Iterator<Item = &Value> {
    fields["animations"].as_array().into_iter().flatten()
}

fn counts(d: &Value) -> [usize; 5] {
    [
        "numPosition",
        "numRotation",
        "numScale",
        "numPreScale",
        "numPostScale",
    ]
    .map(|k| d[k].as_i64().unwrap_or(0).max(0) as usize)
}

/// A name field ("?" when it is not text).
fn text(v: &Value) -> String {
    schema::value::text(v).unwrap_or("?").to_string()
}

/// The states (`loop`, `dockingbay_opening`...) and the parts each animates.
pub fn states(a: &Ani) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for d in descriptions(&a.fields) {
        let (state, part) = (text(&d["state"]), text(&d["part"]));
        match out.iter_mut().find(|s| s.0 == state) {
            Some(s) => s.1.push(part),
            None => out.push((state, vec![part])),
        }
    }
    out
}

/// Each description's part and state, its first key's time and its duration, in seconds (the
/// frames a component's `<animation start end>` names, at 30 a second).
pub fn spans(a: &Ani) -> Vec<(String, String, f32, f32)> {
    let keys: Vec<&Value> = a.fields["keys"].as_array().into_iter().flatten().collect();
    let mut at = 0usize;
    let mut out = Vec::new();
    for d in descriptions(&a.fields) {
        let n: usize = counts(d).iter().sum();
        let end = (at + n).min(keys.len());
        let first = keys[at..end]
            .iter()
            .map(|k| schema::value::f32(&k["time"]))
            .fold(f32::INFINITY, f32::min);
        at = end;
        out.push((
            text(&d["part"]),
            text(&d["state"]),
            if first.is_finite() {
                first.max(0.0)
            } else {
                0.0
            },
            schema::value::f32(&d["duration"]),
        ));
    }
    out
}

struct Key {
    value: [f32; 3],
    interpolation: [i32; 3],
    time: f32,
    /// Per axis: out time, out value, in time, in value.
    bezier: [f32; 12],
}

fn key(v: &Value) -> Key {
    let i = |k: &str| v[k].as_i64().unwrap_or(2) as i32;
    Key {
        value: schema::value::floats::<3>(&v["value"]),
        interpolation: [
            i("interpolationX"),
            i("interpolationY"),
            i("interpolationZ"),
        ],
        time: schema::value::f32(&v["time"]),
        bezier: schema::value::floats::<12>(&v["bezier"]),
    }
}

/// The value of one axis at time `t` (inside the keys' span).
/// The most samples a key of a sampled (bezier or TCB) track may add: keeps output linear in input.
const SAMPLES_PER_KEY: usize = 64;

fn eval(keys: &[Key], axis: usize, t: f32) -> f32 {
    let k = keys.partition_point(|k| k.time <= t).saturating_sub(1);
    let a = &keys[k];
    let Some(b) = keys.get(k + 1) else {
        return a.value[axis];
    };
    let (t0, t1, v0, v1) = (a.time, b.time, a.value[axis], b.value[axis]);
    if t1 <= t0 {
        return v1;
    }
    match a.interpolation[axis] {
        1 => v0,
        5 => {
            // Cubic bezier in (time, value) with absolute handles: find s where time(s) = t.
            let (p1t, p1v) = (a.bezier[axis * 4], a.bezier[axis * 4 + 1]);
            let (p2t, p2v) = (b.bezier[axis * 4 + 2], b.bezier[axis * 4 + 3]);
            let cubic = |s: f32, p0: f32, p1: f32, p2: f32, p3: f32| {
                let r = 1.0 - s;
                r * r * r * p0 + 3.0 * r * r * s * p1 + 3.0 * r * s * s * p2 + s * s * s * p3
            };
            let (mut lo, mut hi) = (0.0f32, 1.0f32);
            for _ in 0..40 {
                let mid = 0.5 * (lo + hi);
                if cubic(mid, t0, p1t, p2t, t1) < t {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            cubic(0.5 * (lo + hi), v0, p1v, p2v, v1)
        }
        _ => v0 + (v1 - v0) * (t - t0) / (t1 - t0),
    }
}

const FPS: f32 = 30.0;

/// The least time between two keys of a sampled track. Blender's glTF importer merges keys less
/// than a hundredth of a frame apart (4e-4 s at 24 frames a second): a step's hold 1e-4 s before
/// the next key, or a 30 fps sample that close to a key, was lost there and the state came back
/// rebuilt (a landing-gear door with three more keys). 2 ms is a fifth of a frame at 100 fps
/// and still apart at any scene rate above 5 frames a second.
const KEY_GAP: f32 = 2e-3;

/// The scale a part hidden by a scale of 0 has in glTF. A tool that samples a node's matrix
/// (Blender's exporter does, every frame) finds no rotation in a matrix of scale 0: the part's
/// rotation came back as none, and Blender kept that scale on the object for its other actions,
/// whose rotations were lost too. A hundred-thousandth keeps the part out of sight and its
/// rotation in the matrix; written back, it is 0 again.
const HIDDEN: f32 = 1e-5;

/// A scale factor from glTF: a part the glTF shrank to HIDDEN is hidden again (0).
fn hidden_again(x: f32) -> f32 {
    if x.abs() <= HIDDEN * 1.5 {
        0.0
    } else {
        x
    }
}

/// A scale factor as glTF gets it: 0 (a hidden part) as HIDDEN, its sign kept.
fn unhidden(x: f32) -> f32 {
    if x.abs() < HIDDEN {
        HIDDEN.copysign(x)
    } else {
        x
    }
}

/// glTF tracks of one description's keys for `property`. Times below 0 are cut at 0.
fn channel(keys: &[Key], property: Property, node: usize) -> Option<Channel> {
    if keys.is_empty() {
        return None;
    }
    let all = |ty: i32| {
        keys.iter()
            .all(|k| k.interpolation.iter().all(|&i| i == ty))
    };
    // Angles interpolated linearly are no linear quaternion path: linear rotations are sampled.
    let exact = keys.iter().all(|k| k.time >= 0.0)
        && (all(1) || (all(2) && property != Property::Rotation));
    let convert = |v: [f32; 3]| -> Vec<f32> {
        // X is mirrored into glTF's frame (as for XMF meshes), which turns Y and Z rotations around.
        match property {
            Property::Translation => vec![-v[0], v[1], v[2]],
            Property::Scale => v.map(unhidden).to_vec(),
            Property::Weights => v.to_vec(),
            Property::Rotation => Quat::from_euler(EulerRot::XYZ, v[0], -v[1], -v[2])
                .normalize()
                .to_array()
                .to_vec(),
        }
    };
    let (times, samples, interpolation) = if exact {
        let mut times: Vec<f32> = Vec::new();
        let mut values = Vec::new();
        for k in keys {
            if times.last().is_some_and(|&l| k.time <= l) {
                continue;
            }
            times.push(k.time);
            values.push(k.value);
        }
        let i = if all(1) {
            Interpolation::Step
        } else {
            Interpolation::Linear
        };
        (times, values, i)
    } else {
        let (first, last) = (keys[0].time.max(0.0), keys[keys.len() - 1].time.max(0.0));
        // The keys' own times, and a step's hold just before the key that ends it.
        let mut times: Vec<f32> = keys.iter().map(|k| k.time.max(0.0)).collect();
        times.extend(
            keys.windows(2)
                .filter(|w| w[0].interpolation.contains(&1))
                .map(|w| (w[1].time - KEY_GAP).max(w[0].time).max(0.0)),
        );
        times.sort_by(f32::total_cmp);
        times.dedup_by(|a, b| (*a - *b).abs() < 1e-5);
        // At most SAMPLES_PER_KEY samples a key, spread evenly when 30 fps would take more: a
        // few keys spanning hours must not turn into millions of samples.
        let budget = keys.len().saturating_mul(SAMPLES_PER_KEY).min(100_000);
        let span = last - first;
        let step = if span * FPS > budget as f32 {
            span / budget as f32
        } else {
            1.0 / FPS
        };
        let frames = if step > 0.0 {
            ((span / step).ceil() as usize).min(budget)
        } else {
            0
        };
        // A sample closer than KEY_GAP to a key is left out: Blender's importer would merge the
        // two (and keep one value), and the clip it exports would leave the curve read.
        let far = |t: &f32| {
            let i = times.partition_point(|k| k < t);
            [i.checked_sub(1), Some(i)]
                .into_iter()
                .flatten()
                .filter_map(|i| times.get(i))
                .all(|k| (k - t).abs() >= KEY_GAP)
        };
        let grid: Vec<f32> = (0..=frames)
            .map(|f| first + f as f32 * step)
            .filter(|&t| t <= last)
            .filter(far)
            .collect();
        times.extend(grid);
        times.sort_by(f32::total_cmp);
        let values = times
            .iter()
            .map(|&t| [0, 1, 2].map(|a| eval(keys, a, t)))
            .collect();
        (times, values, Interpolation::Linear)
    };
    Some(Channel {
        node,
        property,
        interpolation,
        times: times.into(),
        values: samples.into_iter().flat_map(convert).collect(),
    })
}

/// One glTF animation a state; `node_of` finds the node of a part by name (None: reported).
pub fn animations(
    a: &Ani,
    node_of: &mut dyn FnMut(&str) -> Option<usize>,
) -> (Vec<Animation>, Vec<Warning>) {
    let mut warnings = Vec::new();
    let keys: Vec<&Value> = a.fields["keys"].as_array().into_iter().flatten().collect();
    let mut at = 0usize;
    let mut out: Vec<Animation> = Vec::new();
    for (di, d) in descriptions(&a.fields).enumerate() {
        let n = counts(d);
        let (part, state) = (text(&d["part"]), text(&d["state"]));
        let mut tracks: Vec<Vec<Key>> = Vec::new();
        for count in n {
            let end = (at + count).min(keys.len());
            tracks.push(keys[at..end].iter().map(|k| key(k)).collect());
            at = end;
        }
        let i = match out.iter().position(|x| x.name == state) {
            Some(i) => i,
            None => {
                out.push(Animation {
                    name: state.clone(),
                    channels: Vec::new(),
                    extras: Map::new(),
                });
                out.len() - 1
            }
        };
        let Some(anim) = out.get_mut(i) else { continue };
        let Some(node) = node_of(&part) else {
            warnings.push(Warning::new(
                None,
                format!("ANI.animations[{di}]"),
                format!("part {part:?} ({state}) has no node: its keys are skipped"),
            ));
            continue;
        };
        for (track, property) in
            tracks
                .iter()
                .zip([Property::Translation, Property::Rotation, Property::Scale])
        {
            let Some(c) = channel(track, property, node) else {
                continue;
            };
            // One channel a node and property: a part listed twice in a state keeps its first keys.
            if anim
                .channels
                .iter()
                .any(|x| x.node == node && x.property == property)
            {
                warnings.push(Warning::new(
                    None,
                    format!("ANI.animations[{di}]"),
                    format!("{part} is listed again in {state}: these keys stay in extras only"),
                ));
                continue;
            }
            anim.channels.push(c);
        }
        if anim.channels.is_empty() && n.iter().sum::<usize>() == 0 {
            // A state without keys still plays: the part held where it is.
            anim.channels.push(Channel {
                node,
                property: Property::Translation,
                interpolation: Interpolation::Step,
                times: vec![0.0].into(),
                values: vec![0.0, 0.0, 0.0].into(),
            });
        }
        if n[3] + n[4] > 0 {
            warnings.push(Warning::new(None, format!("ANI.animations[{di}]"), format!("{part} {state}: pre- and post-scale keys have no glTF place and stay in extras")));
        }
        let kept: Vec<Value> = keys[at - n.iter().sum::<usize>()..at]
            .iter()
            .map(|k| (*k).clone())
            .collect();
        let entry = anim.extras.entry("ani").or_insert_with(|| json!([]));
        if let Some(list) = entry.as_array_mut() {
            list.push(json!({
                "part": part, "index": di, "duration": d["duration"], "counts": n, "keys": kept,
            }));
        }
    }
    // A state whose parts have no node keeps no channel.
    out.retain(|x| !x.channels.is_empty());
    (out, warnings)
}

/// An .ani built from a scene's animations by [`from_animations`].
pub struct Built {
    pub ani: Ani,
    /// Every state and part has the keys it was read with (see [`animations`]): the file as read
    /// is the better copy, byte for byte.
    pub unchanged: bool,
}

/// The longest name a description holds (64 bytes with the terminating zero).
const NAME_MAX: usize = 63;

/// glTF animations back into .ani states: one animation a state, one description a part. A part
/// whose channels are still the ones hangar read keeps its keys exactly (bezier and pre/post-scale
/// included); others get one key a glTF key, step or linear, in the game's frame. `part_of` names
/// the part a channel's node belongs to (None: the channel is reported and left out).
pub fn from_animations(
    animations: &[Animation],
    part_of: &mut dyn FnMut(usize) -> Option<String>,
) -> Result<(Built, Vec<Warning>)> {
    let mut warnings = Vec::new();
    let mut unchanged = true;
    // (index in the file read, description, keys), sorted by the index at the end.
    let mut out: Vec<(usize, Value, Vec<Value>)> = Vec::new();
    let mut next_new = usize::MAX / 2;
    for (ai, a) in animations.iter().enumerate() {
        let state = a.name.as_str();
        let mut by_part: Vec<(String, usize, Vec<&Channel>)> = Vec::new();
        for (ci, c) in a.channels.iter().enumerate() {
            if c.property == Property::Weights {
                continue;
            }
            let Some(part) = part_of(c.node) else {
                warnings.push(Warning::new(
                    None,
                    format!("animations[{ai}].channels[{ci}]"),
                    format!(
                        "{state}: node {} is not a part of the component: its keys are left out",
                        c.node
                    ),
                ));
                continue;
            };
            match by_part.iter_mut().find(|p| p.0 == part) {
                Some(p) => p.2.push(c),
                None => by_part.push((part, c.node, vec![c])),
            }
        }
        let stored: Vec<&Value> = a
            .extras
            .get("ani")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .collect();
        for (k, e) in stored.iter().enumerate() {
            let part = e["part"].as_str().unwrap_or_default().to_string();
            let index = e["index"].as_u64().map_or(next_new, |i| i as usize);
            let keys: Vec<Value> = e["keys"].as_array().cloned().unwrap_or_default();
            let n: Vec<usize> = (0..5)
                .map(|i| e["counts"][i].as_u64().unwrap_or(0) as usize)
                .collect();
            // A part listed more than once in a state (its position keys in one description,
            // its rotation in another): each description takes the channels of the tracks it
            // holds keys for, the last one what is left.
            let last = !stored[k + 1..].iter().any(|x| x["part"] == e["part"]);
            let holds = |p: Property| match p {
                Property::Translation => n[0] > 0,
                Property::Rotation => n[1] > 0,
                Property::Scale => n[2] > 0,
                Property::Weights => false,
            };
            let (node, channels) = match by_part.iter().position(|p| p.0 == part) {
                Some(i) => {
                    let node = by_part[i].1;
                    let (mine, rest): (Vec<&Channel>, Vec<&Channel>) =
                        std::mem::take(&mut by_part[i].2)
                            .into_iter()
                            .partition(|c| last || holds(c.property));
                    if rest.is_empty() {
                        by_part.remove(i);
                    } else {
                        by_part[i].2 = rest;
                    }
                    // A description left no channel keeps its keys as stored.
                    (Some(node).filter(|_| !mine.is_empty()), mine)
                }
                None => (None, Vec::new()),
            };
            if n.iter().sum::<usize>() != keys.len() {
                return Err(Error::refused(
                    format!("animations[{ai}].extras.ani"),
                    format!("{state} {part}: the stored key counts do not match the stored keys"),
                ));
            }
            let same = node.is_none_or(|node| keeps_keys(&keys, &n, &channels, node));
            if same {
                let d = description(&part, state, &n, e["duration"].clone())?;
                out.push((index, d, keys));
                continue;
            }
            unchanged = false;
            // Pre- and post-scale keys have no glTF place: they come back as they were.
            let extra: Vec<Value> = keys.get(n[0] + n[1] + n[2]..).unwrap_or_default().to_vec();
            // Edited: its keys rebuilt, its length and pre/post-scale keys as they were.
            let stored = Some(e["duration"].clone()).filter(|d| d.is_number());
            let (d, k) = rebuilt(&part, state, &channels, [n[3], n[4]], extra, stored)?;
            out.push((index, d, k));
        }
        for (part, _, channels) in by_part {
            unchanged = false;
            let (d, k) = rebuilt(&part, state, &channels, [0, 0], Vec::new(), None)?;
            out.push((next_new, d, k));
            next_new += 1;
        }
    }
    out.sort_by_key(|o| o.0);
    let count = out.len();
    let (descs, keys): (Vec<Value>, Vec<Vec<Value>>) = out.into_iter().map(|o| (o.1, o.2)).unzip();
    let fields = json!({
        "count": count,
        "keyOffset": HEADER + DESCRIPTION_SIZE * count,
        "version": 1,
        "reserved": 0,
        "animations": descs,
        "keys": keys.into_iter().flatten().collect::<Vec<_>>(),
    });
    Ok((
        Built {
            ani: Ani { fields },
            unchanged,
        },
        warnings,
    ))
}

fn description(part: &str, state: &str, n: &[usize], duration: Value) -> Result<Value> {
    for (what, name) in [("part", part), ("state", state)] {
        if name.len() > NAME_MAX || name.contains('\0') {
            return Err(Error::refused(
                format!("ANI.animations.{what}"),
                format!("{what} name {name:?} does not fit the .ani's {NAME_MAX} bytes"),
            ));
        }
    }
    let n = |i: usize| n.get(i).copied().unwrap_or(0);
    Ok(json!({
        "part": part, "state": state,
        "numPosition": n(0), "numRotation": n(1), "numScale": n(2),
        "numPreScale": n(3), "numPostScale": n(4),
        "duration": duration, "pad": "AAAAAAAAAAA=",
    }))
}

/// True when `channels` are what [`animations`] made of the stored `keys` (within float noise; a
/// rotation may come back negated).
fn keeps_keys(keys: &[Value], n: &[usize], channels: &[&Channel], node: usize) -> bool {
    let sampled: Vec<std::borrow::Cow<'_, Channel>> =
        channels.iter().map(|c| c.sampled()).collect();
    let channels: Vec<&Channel> = sampled.iter().map(|c| &**c).collect();
    let channels = &channels[..];
    let parsed: Vec<Key> = keys.iter().map(key).collect();
    let mut at = 0;
    let mut expected = Vec::new();
    for (count, property) in
        n.iter()
            .zip([Property::Translation, Property::Rotation, Property::Scale])
    {
        let track = parsed.get(at..at + count).unwrap_or_default();
        at += count;
        expected.extend(channel(track, property, node));
    }
    if expected.is_empty() {
        // A state without keys is exported as the part held where it is.
        return channels.iter().all(|c| held_still(c));
    }
    let exact = expected.len() == channels.len()
        && expected.iter().all(|e| {
            channels.iter().any(|c| {
                let near = |sign: f32| {
                    c.values
                        .iter()
                        .zip(&e.values)
                        .all(|(a, b)| (a - sign * b).abs() < 1e-4)
                };
                c.property == e.property
                    && c.times.len() == e.times.len()
                    && c.values.len() == e.values.len()
                    && c.times
                        .iter()
                        .zip(&e.times)
                        .all(|(a, b)| (a - b).abs() < 1e-4)
                    && (near(1.0) || (c.property == Property::Rotation && near(-1.0)))
            })
        });
    exact || same_curves(&expected, channels)
}

/// True when `channels` (a tool's resampling: a key a frame) trace the curves of `expected` within
/// 1e-4 over the same span: every expected channel has one sampled the same, and any other channel
/// holds still.
fn same_curves(expected: &[Channel], channels: &[&Channel]) -> bool {
    let close = |a: &[f32], b: &[f32], rotation: bool| {
        let near = |sign: f32| {
            a.iter()
                .zip(b)
                .all(|(x, y)| (x - sign * y).abs() <= 1e-4 * (1.0 + x.abs()))
        };
        a.len() == b.len() && (near(1.0) || (rotation && near(-1.0)))
    };
    let traced = |e: &Channel, c: &Channel| {
        let w = e.width();
        let (Some(&first), Some(&last)) = (e.times.first(), e.times.last()) else {
            return false;
        };
        let span = |x: &Channel| {
            x.times.last().copied().unwrap_or(0.0) - x.times.first().copied().unwrap_or(0.0)
        };
        // At least the same span, to a frame at 24 per second (a part held still: any span). A
        // tool samples every track of a clip over the whole clip: a track that ends before its
        // state does (a door turned by 0.7 s of a 2 s state) comes back holding its last value
        // to the clip's end, which `value_at` checks.
        (held_still(e) || span(c) >= (last - first) - 0.05)
            && c.times.iter().zip(c.values.chunks_exact(w)).all(|(&t, v)| {
                e.value_at(t)
                    .is_some_and(|x| close(v, &x, e.property == Property::Rotation))
            })
    };
    expected.iter().all(|e| {
        channels
            .iter()
            .any(|c| c.property == e.property && traced(e, c))
    }) && channels
        .iter()
        .filter(|c| !expected.iter().any(|e| e.property == c.property))
        .all(|c| held_still(c))
}

/// True when every key of `c` has its first key's value (within 1e-4; a rotation may be negated).
fn held_still(c: &Channel) -> bool {
    let w = c.width();
    let first = c.values.get(..w).unwrap_or_default();
    c.values.chunks_exact(w).all(|v| {
        let near = |sign: f32| {
            v.iter()
                .zip(first)
                .all(|(x, y)| (x - sign * y).abs() <= 1e-4 * (1.0 + x.abs()))
        };
        near(1.0) || (c.property == Property::Rotation && near(-1.0))
    })
}

/// One description and its keys from glTF channels: a key a glTF key, in the game's frame.
fn rebuilt(
    part: &str,
    state: &str,
    channels: &[&Channel],
    pre_post: [usize; 2],
    extra: Vec<Value>,
    duration: Option<Value>,
) -> Result<(Value, Vec<Value>)> {
    let mut keys = Vec::new();
    let mut n = [0usize; 5];
    let mut last = 0.0f32;
    for (slot, property) in [Property::Translation, Property::Rotation, Property::Scale]
        .into_iter()
        .enumerate()
    {
        let Some(c) = channels.iter().find(|c| c.property == property) else {
            continue;
        };
        // (time, value, interpolation type, bezier handles) a key.
        let written: Vec<(f32, [f32; 3], i32, [f32; 12])> =
            // A cubic spline of a position or scale is the .ani's own bezier: a key a glTF key.
            if c.interpolation == Interpolation::CubicSpline && property != Property::Rotation {
                bezier_keys(c, property)
            } else {
                linear_keys(&c.sampled(), property)
            };
        for (t, value, ty, bezier) in written {
            keys.push(json!({
                "value": value,
                "interpolationX": ty, "interpolationY": ty, "interpolationZ": ty,
                "time": t,
                "bezier": bezier, "tcb": ([0.0f32; 5]),
                "derivatives": ([0.0f32; 7]), "angle": 0,
            }));
            n[slot] += 1;
            last = last.max(t);
        }
    }
    n[3] = pre_post[0];
    n[4] = pre_post[1];
    keys.extend(extra);
    // A state of one key lasts a frame, as the game's files have it.
    let duration = duration.unwrap_or(json!(if last > 0.0 { last } else { 1.0 / FPS }));
    Ok((description(part, state, &n, duration)?, keys))
}

/// The keys of a step or linear track in the game's frame: (time, value, interpolation type 1 or
/// 2, no bezier handles), a tool's resampling (a key a frame) back to the keys that make the same
/// curve.
fn linear_keys(c: &Channel, property: Property) -> Vec<(f32, [f32; 3], i32, [f32; 12])> {
    let width = if property == Property::Rotation { 4 } else { 3 };
    let ty = if c.interpolation == Interpolation::Step {
        1
    } else {
        2
    };
    let mut previous: Option<[f32; 3]> = None;
    let mut track: Vec<(f32, [f32; 3])> = Vec::with_capacity(c.times.len());
    let dense;
    let (times, values) = if property == Property::Rotation && ty == 2 {
        dense = euler_safe(&c.times, &c.values);
        (&dense.0[..], &dense.1[..])
    } else {
        (&c.times[..], &c.values[..])
    };
    for (t, v) in times.iter().zip(values.chunks_exact(width)) {
        let value = match property {
            Property::Translation => [-v[0], v[1], v[2]],
            Property::Rotation => {
                let q = Quat::from_xyzw(v[0], v[1], v[2], v[3]).normalize();
                let (x, y, z) = q.to_euler(EulerRot::XYZ);
                let mut e = [x, -y, -z];
                // The game interpolates the angles: take the turn nearest the previous key.
                if let Some(p) = previous {
                    for (a, b) in e.iter_mut().zip(p) {
                        let turns = ((b - *a) / std::f32::consts::TAU).round();
                        *a += turns * std::f32::consts::TAU;
                    }
                }
                previous = Some(e);
                e
            }
            // A part the glTF shrank to HIDDEN is hidden again.
            _ => [v[0], v[1], v[2]].map(hidden_again),
        };
        track.push((*t, value));
    }
    fewest_keys(&track, ty == 1)
        .into_iter()
        .map(|(t, v)| (t, v, ty, [0.0; 12]))
        .collect()
}

/// The keys of a cubic-spline position or scale track in the game's frame: time, value, type 5
/// and the bezier handles (per axis: out time, out value, in time, in value, absolute) a third of
/// the way along each segment, which make the same curve as glTF's Hermite tangents.
fn bezier_keys(c: &Channel, property: Property) -> Vec<(f32, [f32; 3], i32, [f32; 12])> {
    let part = |k: usize, p: usize| -> Option<[f32; 3]> {
        let v = crate::model::spline_part(&c.values, 3, k, p)?;
        // X is mirrored into the game's frame; a tangent turns with it.
        Some(match property {
            Property::Translation => [-v[0], v[1], v[2]],
            _ => [v[0], v[1], v[2]],
        })
    };
    let n = c.times.len().min(c.values.len() / 9);
    let mut out = Vec::with_capacity(n);
    for k in 0..n {
        let (Some(a), Some(mut v), Some(b)) = (part(k, 0), part(k, 1), part(k, 2)) else {
            break;
        };
        if property == Property::Scale {
            v = v.map(hidden_again);
        }
        let t = c.times[k];
        let before = k.checked_sub(1).map_or(0.0, |p| t - c.times[p]);
        let after = c.times.get(k + 1).map_or(0.0, |&u| u - t);
        let mut bezier = [0.0f32; 12];
        for axis in 0..3 {
            bezier[axis * 4] = t + after / 3.0;
            bezier[axis * 4 + 1] = v[axis] + after * b[axis] / 3.0;
            bezier[axis * 4 + 2] = t - before / 3.0;
            bezier[axis * 4 + 3] = v[axis] - before * a[axis] / 3.0;
        }
        out.push((t, v, 5, bezier));
    }
    out
}

/// A linear rotation track (quaternions, glTF's slerp between keys) with keys added where the
/// game's linear angles would leave the slerp by more than a tenth of a degree (a turn about more
/// than one axis): every 30th of a second of such a segment, 256 at most (100,000 in all).
fn euler_safe(times: &[f32], values: &[f32]) -> (Vec<f32>, Vec<f32>) {
    let quat = |k: usize| {
        values
            .get(k * 4..k * 4 + 4)
            .map(|v| Quat::from_xyzw(v[0], v[1], v[2], v[3]).normalize())
    };
    let euler = |q: Quat| {
        let (x, y, z) = q.to_euler(EulerRot::XYZ);
        [x, y, z]
    };
    let mut out_t = Vec::with_capacity(times.len());
    let mut out_v = Vec::with_capacity(values.len());
    for k in 0..times.len() {
        let Some(a) = quat(k) else { break };
        out_t.push(times[k]);
        out_v.extend(a.to_array());
        let (Some(b), Some(&t1)) = (quat(k + 1), times.get(k + 1)) else {
            continue;
        };
        let t0 = times[k];
        let b = if a.dot(b) < 0.0 { -b } else { b };
        let (ea, mut eb) = (euler(a), euler(b));
        for (x, y) in eb.iter_mut().zip(ea) {
            *x += ((y - *x) / std::f32::consts::TAU).round() * std::f32::consts::TAU;
        }
        let at = |u: f32| {
            let e = [0, 1, 2].map(|i| ea[i] + (eb[i] - ea[i]) * u);
            Quat::from_euler(EulerRot::XYZ, e[0], e[1], e[2])
        };
        let off = |u: f32| at(u).angle_between(a.slerp(b, u));
        if off(0.5).max(off(0.25)).max(off(0.75)) <= 0.1f32.to_radians() {
            continue;
        }
        // Bounded as a whole too: a track of many long segments adds at most 100,000 keys.
        if out_t.len() >= times.len() + 100_000 {
            continue;
        }
        let steps = (((t1 - t0) * FPS).ceil() as usize).clamp(2, 256);
        for s in 1..steps {
            let u = s as f32 / steps as f32;
            out_t.push(t0 + (t1 - t0) * u);
            out_v.extend(a.slerp(b, u).to_array());
        }
    }
    (out_t, out_v)
}

/// The keys of `track` (time, value) without those the others already make: a step key holding
/// the value before it, a linear key on the line between the keys kept around it (within 1e-4).
fn fewest_keys(track: &[(f32, [f32; 3])], step: bool) -> Vec<(f32, [f32; 3])> {
    let near = |a: &[f32; 3], b: &[f32; 3]| {
        a.iter()
            .zip(b)
            .all(|(x, y)| (x - y).abs() <= 1e-4 * (1.0 + x.abs()))
    };
    let (Some(&first), Some(&last)) = (track.first(), track.last()) else {
        return Vec::new();
    };
    let mut kept = vec![first];
    if step {
        for w in track.windows(2) {
            if !near(&w[1].1, &w[0].1) {
                kept.push(w[1]);
            }
        }
    } else {
        // From the last key kept, the farthest key such that every key between lies on the line.
        let on_line = |a: usize, b: usize| {
            let ((ta, va), (tb, vb)) = (track[a], track[b]);
            track[a + 1..b].iter().all(|(t, v)| {
                let f = if tb > ta { (t - ta) / (tb - ta) } else { 0.0 };
                let lerp = [0, 1, 2].map(|i| va[i] + (vb[i] - va[i]) * f);
                near(&lerp, v)
            })
        };
        let mut a = 0;
        while a + 1 < track.len() {
            let mut b = a + 1;
            // A bounded window: a long straight run costs at most this many checks a key.
            while b + 1 < track.len() && b - a < 512 && on_line(a, b + 1) {
                b += 1;
            }
            kept.push(track[b]);
            a = b;
        }
    }
    if kept.last().map(|k| k.0) != Some(last.0) {
        kept.push(last);
    }
    kept
}

/// `hangar validate` for .ani: counts that match the keys, key times in order.
pub fn check(a: &Ani) -> Vec<crate::validate::Finding> {
    use crate::validate::Finding;
    let mut out = Vec::new();
    let keys: Vec<&Value> = a.fields["keys"].as_array().into_iter().flatten().collect();
    let mut at = 0usize;
    for (di, d) in descriptions(&a.fields).enumerate() {
        for (track, count) in ["position", "rotation", "scale", "preScale", "postScale"]
            .iter()
            .zip(counts(d))
        {
            let end = (at + count).min(keys.len());
            let times: Vec<f32> = keys[at..end]
                .iter()
                .map(|k| schema::value::f32(&k["time"]))
                .collect();
            let p = format!("ANI.animations[{di}].{track}");
            if times.windows(2).any(|w| w[1] < w[0]) {
                out.push(Finding::error(&p, "key times are not sorted"));
            }
            // Game files start tracks before 0 (12 corpus tracks); the export cuts them at 0.
            if times.first().is_some_and(|&t| t < 0.0) {
                out.push(Finding::note(
                    &p,
                    format!("the first key is at {} s: glTF starts at 0", times[0]),
                ));
            }
            at = end;
        }
    }
    if at != keys.len() {
        out.push(Finding::error(
            "ANI.keys",
            format!(
                "{} keys are not counted by any description",
                keys.len() - at
            ),
        ));
    }
    out
}

/// A part animation file alone: one empty node a part, and one animation a state.
pub fn to_scene(file: &Ani, name: &str) -> (Scene, Vec<Warning>) {
    let mut scene = Scene {
        name: name.to_string(),
        ..Default::default()
    };
    let mut root = Node::new(name);
    root.extras.insert("hangar".into(), json!({ "ani": true }));
    scene.nodes.push(root);
    let (animations, warnings) = animations(file, &mut |part| {
        if let Some(i) = scene.nodes.iter().position(|n| n.name == part) {
            return Some(i);
        }
        let mut n = Node::new(part);
        n.parent = Some(0);
        scene.nodes.push(n);
        Some(scene.nodes.len() - 1)
    });
    scene.animations = animations;
    (scene, warnings)
}

#[cfg(test)]
mod part_twice_tests {
    use super::*;

    fn key(value: [f32; 3], time: f32) -> Value {
        json!({
            "value": value, "interpolationX": 2, "interpolationY": 2, "interpolationZ": 2,
            "time": time, "bezier": ([0.0f32; 12]), "tcb": ([0.0f32; 5]), "derivatives": ([0.0f32; 7]),
            "angle": 0,
        })
    }

    /// A bullet's `loop` state listing `part_bullet` twice (its spin in one description, its
    /// move in the other), as channels resampled a key a frame at 24 fps (Blender's default
    /// export): each description finds its own track again, and the file is the one read.
    #[test]
    fn a_part_listed_twice_in_a_state_keeps_each_description() {
        let keys = vec![
            key([0.0, 0.0, 0.0], 0.0),
            key([0.0, 0.0, std::f32::consts::TAU], 1.0),
            key([0.0, 0.0, 0.0], 0.0),
            key([0.0, 0.0, 1.0], 1.0),
        ];
        let fields = json!({
            "count": 2, "keyOffset": HEADER + 2 * DESCRIPTION_SIZE, "version": 1, "reserved": 0,
            "animations": [
                description("part_bullet", "loop", &[0, 2, 0, 0, 0], json!(1.0)).unwrap(),
                description("part_bullet", "loop", &[2, 0, 0, 0, 0], json!(1.0)).unwrap(),
            ],
            "keys": keys,
        });
        let ani = Ani { fields };
        let bytes = write(&ani).unwrap();
        let (read_back, _) = read(&bytes).unwrap();
        let (mut anims, _) = animations(&read_back, &mut |p| (p == "part_bullet").then_some(0));
        assert_eq!(anims.len(), 1);
        assert_eq!(anims[0].channels.len(), 2);
        for c in &mut anims[0].channels {
            let frames: Vec<f32> = (0..=24).map(|f| f as f32 / 24.0).collect();
            let values: Vec<f32> = frames
                .iter()
                .flat_map(|&t| c.value_at(t).unwrap())
                .collect();
            (c.times, c.values) = (frames.into(), values.into());
        }
        let (built, _) =
            from_animations(&anims, &mut |n| (n == 0).then(|| "part_bullet".into())).unwrap();
        assert!(built.unchanged);
        assert!(write(&built.ani).unwrap() == bytes);
    }
}

#[cfg(test)]
mod fewest_keys_tests {
    use super::fewest_keys;

    #[test]
    fn a_resampled_line_is_its_two_ends_again() {
        // Blender's export of a 2-key move over 3.333 s: a key a frame at 24 fps.
        let track: Vec<(f32, [f32; 3])> = (0..=80)
            .map(|f| {
                let t = f as f32 / 24.0;
                (t, [2.0 * t, 0.0, -t])
            })
            .collect();
        let kept = fewest_keys(&track, false);
        assert_eq!(kept.len(), 2);
        assert_eq!(kept[1].0, 80.0 / 24.0);
        // A bend in the middle keeps its corner.
        let bent: Vec<(f32, [f32; 3])> = (0..=20)
            .map(|f| (f as f32, [(f as f32 - 10.0).abs(), 0.0, 0.0]))
            .collect();
        let kept = fewest_keys(&bent, false);
        assert_eq!(
            kept.iter().map(|k| k.0).collect::<Vec<_>>(),
            [0.0, 10.0, 20.0]
        );
    }

    #[test]
    fn a_step_track_keeps_only_its_changes() {
        let track = [
            (0.0, [1.0, 0.0, 0.0]),
            (1.0, [1.0, 0.0, 0.0]),
            (2.0, [3.0, 0.0, 0.0]),
            (3.0, [3.0, 0.0, 0.0]),
        ];
        let kept = fewest_keys(&track, true);
        assert_eq!(
            kept.iter().map(|k| k.0).collect::<Vec<_>>(),
            [0.0, 2.0, 3.0]
        );
    }
}

#[cfg(test)]
mod same_bits_tests {
    use super::{channel, Key, Property};

    /// Half angles whose sine glibc's `sinf` and the pure-Rust `libm`'s round apart by one unit in
    /// the last place (found by comparing them on Linux): an .ani key turns into the same
    /// quaternion bits on every platform only because glam takes its sines from `libm`.
    #[test]
    fn rotation_keys_are_the_same_bits_on_every_platform() {
        let half = [0x3da3_b37e, 0x3e0a_b967, 0x3dbf_8ca1].map(f32::from_bits);
        let key = Key {
            value: half.map(|h| 2.0 * h),
            interpolation: [1; 3],
            time: 0.0,
            bezier: [0.0; 12],
        };
        let c = channel(&[key], Property::Rotation, 0).unwrap();
        let bits: Vec<u32> = c.values.iter().map(|v| v.to_bits()).collect();
        // Through glibc's sines the same key gives 3dbb1216, be01b0a0, bdd2e6dd, 3f7b7b49.
        assert_eq!(
            bits,
            [0x3dbb_1214, 0xbe01_b09f, 0xbdd2_e6dc, 0x3f7b_7b49],
            "{bits:08x?}"
        );
    }
}

#[cfg(test)]
mod resampled_tests;
