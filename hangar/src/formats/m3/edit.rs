//! An edited mesh written into the M3 it came from: only what derives from the mesh is rebuilt
//! (the vertices, the division's faces, regions and batches, the bone lookup, the vertex flags,
//! the bounds grown to hold the vertices); every other section keeps its index and bytes:
//! particles, ribbons, physics, cloth, hit tests, attachment volumes, billboards, materials with
//! their layers, sequences with all their data.
//!
//! The mesh is built by [`build::sections`] from the scene, then grafted into the original's
//! section table (its JSON form, [`dump`]): a mesh section takes the place of the one it replaces,
//! so no other reference moves. The new vertices name the original's bones and material maps,
//! matched through the original's own scene (`was`) by name.

use super::build::{self, Built, Versions};
use super::{dump, read, write, Tag, M3};
use crate::error::{Error, Result, Warning};
use crate::formats::Remeshed;
use crate::model::Scene;
use serde_json::{json, Value};
use std::collections::HashMap;

/// Region fields that are not made from the mesh: the builder writes them as zero, and its root
/// bone a lookup index where the game's files name the bone itself (the bones keep their numbers).
const REGION_KEPT: [&str; 6] = [
    "unknown0", "unknown1", "unknown2", "unknown3", "flags", "rootBone",
];

/// Bind matrices differing by more than this (relative) mean a bone was moved at rest.
const BIND_TOLERANCE: f32 = 1e-3;

/// `original` (an M3's bytes) with the mesh of `scene`, the original's scene being `was`.
pub(crate) fn remesh(original: &[u8], scene: &Scene, was: &Scene) -> Result<Remeshed> {
    let (file, _) = read::read(original)?;
    let mut root = dump::to_json(&file);
    let (secs, mi) = sections(&mut root)?;
    let built = build::sections(scene, versions(&file, mi)?, false)?;
    let bmodl = built.sections[1]["entries"][0].clone();
    let omodl = secs[mi]["entries"][0].clone();
    let shared = reference_counts(secs);
    let matched = crate::model::match_nodes(&was.nodes, &scene.nodes);
    let links = Links::new(scene, was, &matched, &built);
    if let Some(why) = moved_bind(&built, &bmodl, secs, &omodl, &links.bone) {
        return Ok(Remeshed::Cannot(why));
    }
    // The original's materials are kept: the builder's notes about its own are not about them.
    let mut warnings: Vec<Warning> = built
        .warnings
        .iter()
        .filter(|w| w.path != "materials")
        .cloned()
        .collect();
    let section = |r: &Value| ref_index(r).and_then(|i| built.sections.get(i)).cloned();

    // The bone lookup in the original's bone numbering.
    let mut lookup = section(&bmodl["boneLookup"]);
    if let Some(e) = lookup.as_mut().and_then(|s| s.get_mut("entries")) {
        for v in e.as_array_mut().into_iter().flatten() {
            let b = v.as_u64().unwrap_or(0) as usize;
            match links.bone.get(b).copied().flatten() {
                Some(o) => *v = o.into(),
                None => {
                    return Ok(Remeshed::Cannot(format!(
                        "vertices are weighted to {:?}, which is not a bone of the original",
                        built_name(&built, scene, b)
                    )))
                }
            }
        }
    }
    let bdiv = section(&bmodl["divisions"]).map(|d| d["entries"][0].clone());
    let odiv_ref = omodl["divisions"].clone();
    let odiv = ref_index(&odiv_ref).map(|i| secs[i]["entries"][0].clone());
    let oregions = entries(
        secs,
        &odiv.as_ref().map_or(Value::Null, |d| d["regions"].clone()),
    );
    let obatches = entries(
        secs,
        &odiv.as_ref().map_or(Value::Null, |d| d["batches"].clone()),
    );

    // Regions keep the original's fields the mesh does not make; batches of a region that was in
    // the original are the original's, the others the builder's on the original's material maps.
    let mut regions = bdiv.as_ref().and_then(|d| section(&d["regions"]));
    let mut batches = Vec::new();
    let mut came_from = Vec::new();
    for (r, reg) in regions
        .as_mut()
        .and_then(|s| s["entries"].as_array_mut())
        .into_iter()
        .flatten()
        .enumerate()
    {
        let mesh = built.region_mesh.get(r).copied();
        let was_region = mesh.and_then(|m| links.region.get(&m).copied());
        came_from.push(was_region);
        let old = was_region.and_then(|o| oregions.get(o));
        for k in REGION_KEPT {
            if let (Some(v), Some(slot)) = (old.and_then(|o| o.get(k)), reg.get_mut(k)) {
                *slot = v.clone();
            }
        }
        let kept: Vec<&Value> = obatches
            .iter()
            .filter(|b| {
                was_region.is_some() && b["region"].as_u64() == was_region.map(|o| o as u64)
            })
            .collect();
        let material = mesh
            .and_then(|m| scene.meshes.get(m))
            .and_then(|m| m.primitives.first())
            .and_then(|p| p.material)
            .map(|s| links.material.get(s).copied().flatten());
        if let Some(None) = material {
            return Ok(Remeshed::Cannot(
                "a mesh has a material the original does not have".into(),
            ));
        }
        let material = material.flatten();
        if kept.is_empty() {
            let Some(m) = material else {
                return Ok(Remeshed::Cannot(format!(
                    "region {r} has no material the original has"
                )));
            };
            let mut b = built_batch(&built, bdiv.as_ref(), r);
            b["materialMap"] = m.into();
            batches.push(b);
        }
        for (k, b) in kept.into_iter().enumerate() {
            let mut b = b.clone();
            b["region"] = r.into();
            // The material the editor gave the mesh (the reader shows a region's first batch's).
            if let (0, Some(m)) = (k, material) {
                b["materialMap"] = m.into();
            }
            batches.push(b);
        }
    }
    let regions_changed = region_changes(&oregions, regions.as_ref(), &came_from);
    let batches = section_of("BAT_", 1, batches);

    // The division: the original's (its bounding shapes keyed by the sequences' SDMB), with the
    // mesh's faces, regions and batches.
    // A scene with no mesh left empties the original's division.
    let mut div = odiv.clone().or(bdiv.clone()).unwrap_or(Value::Null);
    if !div.is_null() {
        let bd = bdiv.clone().unwrap_or(Value::Null);
        let od = odiv.as_ref();
        let old = |k: &str| od.map_or(Value::Null, |d| d[k].clone());
        div["faces"] = place(secs, section(&bd["faces"]), &old("faces"), &shared);
        div["regions"] = place(secs, regions, &old("regions"), &shared);
        div["batches"] = place(secs, batches, &old("batches"), &shared);
        if od.is_none() {
            div["boundingShapes"] = graft(secs, &built, &bd["boundingShapes"]);
        }
    }
    let bounds = bmodl["boundings"].clone();
    if let Some(d) = odiv.as_ref() {
        grow_shapes(secs, &d["boundingShapes"], &bounds);
    }
    let mut modl = omodl.clone();
    modl["vertexFlags"] = vertex_flags(&omodl["vertexFlags"], &bmodl["vertexFlags"]);
    modl["vertices"] = place(
        secs,
        section(&bmodl["vertices"]),
        &omodl["vertices"],
        &shared,
    );
    modl["boneLookup"] = place(secs, lookup, &omodl["boneLookup"], &shared);
    modl["boundings"] = grown(&omodl["boundings"], &bounds);
    let div_section = (!div.is_null()).then(|| section_of("DIV_", 2, vec![div.clone()]));
    modl["divisions"] = match (ref_index(&odiv_ref), div_section.flatten()) {
        (Some(i), Some(mut s)) if secs.get(i).is_some() => {
            s["version"] = secs[i]["version"].clone();
            place(secs, Some(s), &odiv_ref, &shared)
        }
        (_, s) => place(secs, s, &Value::Null, &shared),
    };
    secs[mi]["entries"][0] = modl;
    warnings.extend(inconsistent(secs, &omodl, &regions_changed));

    let m3 = dump::from_json(&root)?;
    Ok(Remeshed::Done(write::write(&m3)?, warnings))
}

/// The sections of an M3's JSON form ([`dump`]) and the index of its MODL.
fn sections(root: &mut Value) -> Result<(&mut Vec<Value>, usize)> {
    let Some(secs) = root.get_mut("sections").and_then(Value::as_array_mut) else {
        return Err(Error::invalid(0, "M3", "no sections"));
    };
    let Some(mi) = ref_index(&secs[0]["entries"][0]["model"]) else {
        return Err(Error::invalid(
            12,
            "MD34.model",
            "the header does not point at a MODL",
        ));
    };
    Ok((secs, mi))
}

/// The structure versions of the original, where the builder writes mesh sections: its MODL's
/// row of [`build::VERSIONS`] (the newest row for a MODL hangar does not write) with its own
/// REGN version.
fn versions(file: &M3<'_>, modl: usize) -> Result<Versions> {
    let v = file.sections.get(modl).map_or(0, |s| s.version);
    let mut row = build::VERSIONS
        .iter()
        .copied()
        .find(|r| r.modl == v)
        .unwrap_or(build::VERSIONS[build::VERSIONS.len() - 1]);
    if let Some(regn) = file
        .sections
        .iter()
        .find(|s| s.tag == Tag::from_name("REGN"))
    {
        row.regn = regn.version;
    }
    Ok(row)
}

/// How the scene's parts name the original's: bones, regions and material maps.
struct Links {
    /// The original bone of each built bone.
    bone: Vec<Option<usize>>,
    /// The original region of each scene mesh that was one.
    region: HashMap<usize, usize>,
    /// The original material map of each scene material.
    material: Vec<Option<usize>>,
}

impl Links {
    fn new(scene: &Scene, was: &Scene, matched: &[Option<usize>], built: &Built) -> Links {
        let m3 = |n: &crate::model::Node, k: &str| {
            n.extras
                .get("m3")
                .and_then(|m| m.get(k))
                .and_then(Value::as_u64)
                .map(|v| v as usize)
        };
        let mut of_node: HashMap<usize, usize> = HashMap::new();
        let mut region = HashMap::new();
        for (n, j) in was.nodes.iter().zip(matched) {
            let Some(j) = *j else { continue };
            if let Some(b) = m3(n, "bone") {
                of_node.insert(j, b);
            }
            let old_mesh = n.mesh.and_then(|m| was.meshes.get(m));
            let r = old_mesh.and_then(|m| m.extras.get("m3")?.get("region")?.as_u64());
            if let (Some(r), Some(m)) = (r, scene.nodes.get(j).and_then(|e| e.mesh)) {
                region.insert(m, r as usize);
            }
        }
        let bone = built
            .bone_nodes
            .iter()
            .map(|n| of_node.get(n).copied())
            .collect();
        let free = vec![false; was.materials.len()];
        let material = scene
            .materials
            .iter()
            .map(|m| crate::model::find_named(&was.materials, &free, &m.name, |x| &x.name))
            .collect();
        Links {
            bone,
            region,
            material,
        }
    }
}

/// The name of built bone `b` (its scene node's), for a message.
fn built_name<'s>(built: &Built, scene: &'s Scene, b: usize) -> &'s str {
    built
        .bone_nodes
        .get(b)
        .and_then(|&n| scene.nodes.get(n))
        .map_or("?", |n| n.name.as_str())
}

/// Why the built vertices do not fit the original's bones: a bone bound elsewhere (moved at rest
/// in the editor) than the original binds it, its inverse bind matrix (IREF) differing.
fn moved_bind(
    built: &Built,
    bmodl: &Value,
    secs: &[Value],
    omodl: &Value,
    bone: &[Option<usize>],
) -> Option<String> {
    let mine = ref_index(&bmodl["initialReference"]).and_then(|i| built.sections.get(i))?;
    let theirs = entries(secs, &omodl["initialReference"]);
    let names = entries(secs, &omodl["bones"]);
    for (b, e) in mine["entries"].as_array()?.iter().enumerate() {
        let Some(o) = bone.get(b).copied().flatten() else {
            continue;
        };
        let (Some(a), Some(t)) = (
            floats(&e["matrix"]),
            theirs.get(o).and_then(|t| floats(&t["matrix"])),
        ) else {
            continue;
        };
        let scale = t.iter().fold(1.0f32, |m, x| m.max(x.abs()));
        if a.iter()
            .zip(&t)
            .any(|(x, y)| (x - y).abs() > BIND_TOLERANCE * scale)
        {
            let name = names
                .get(o)
                .and_then(|n| ref_index(&n["name"]))
                .and_then(|i| secs.get(i))
                .and_then(|s| s["text"].as_str())
                .unwrap_or("?");
            return Some(format!("bone {name:?} was moved at rest"));
        }
    }
    None
}

fn floats(v: &Value) -> Option<Vec<f32>> {
    v.as_array()?
        .iter()
        .map(|x| x.as_f64().map(|f| f as f32))
        .collect()
}

/// The builder's vertex flags with the original's bits that add nothing to a vertex (0x4, 0x8,
/// 0x10 in most of the game's files), which the builder does not know the meaning of.
fn vertex_flags(was: &Value, built: &Value) -> Value {
    let (Some(was), Some(mut flags)) = (was.as_u64(), built.as_u64()) else {
        return built.clone();
    };
    let size = |f: u64| super::scene::VertexLayout::from_flags(f as u32).map(|l| l.size);
    for bit in (0..32).map(|k| 1u64 << k).filter(|b| was & b != 0) {
        if flags & bit == 0 && size(flags | bit).is_ok() && size(flags | bit) == size(flags) {
            flags |= bit;
        }
    }
    flags.into()
}

/// The section index a reference names (`None` for a null reference).
fn ref_index(r: &Value) -> Option<usize> {
    r.get("index")?.as_u64().map(|i| i as usize)
}

/// The entries a reference names in `secs`.
fn entries(secs: &[Value], r: &Value) -> Vec<Value> {
    ref_index(r)
        .and_then(|i| secs.get(i))
        .and_then(|s| s["entries"].as_array())
        .cloned()
        .unwrap_or_default()
}

/// How many references in the file name each section.
fn reference_counts(secs: &[Value]) -> Vec<usize> {
    fn walk(v: &Value, counts: &mut [usize]) {
        match v {
            Value::Object(o) => {
                let is_ref = o.contains_key("index")
                    && o.keys()
                        .all(|k| matches!(k.as_str(), "index" | "entries" | "flags"));
                if is_ref {
                    if let Some(c) = ref_index(v).and_then(|i| counts.get_mut(i)) {
                        *c += 1;
                    }
                    return;
                }
                o.values().for_each(|x| walk(x, counts));
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, counts)),
            _ => {}
        }
    }
    let mut counts = vec![0; secs.len()];
    for s in secs {
        walk(&s["entries"], &mut counts);
    }
    counts
}

/// A section of `entries`, or none when there are none.
fn section_of(tag: &str, version: u32, entries: Vec<Value>) -> Option<Value> {
    (!entries.is_empty()).then(|| json!({ "tag": tag, "version": version, "entries": entries }))
}

/// Puts `section` into `secs` where the reference `old` pointed (when nothing else points there
/// and the tag is the same), else at the end; returns the reference to it.
fn place(secs: &mut Vec<Value>, section: Option<Value>, old: &Value, shared: &[usize]) -> Value {
    let Some(mut s) = section.filter(|s| {
        s["entries"].as_array().is_none_or(|e| !e.is_empty())
            && s["data"].as_str().is_none_or(|d| !d.is_empty())
    }) else {
        return Value::Null;
    };
    let at = ref_index(old)
        .filter(|&i| shared.get(i) == Some(&1) && secs.get(i).map(|o| &o["tag"]) == Some(&s["tag"]))
        .unwrap_or(secs.len());
    s["index"] = at.into();
    if at == secs.len() {
        secs.push(s);
    } else {
        secs[at] = s;
    }
    let mut r = json!({ "index": at });
    if let Some(f) = old.get("flags") {
        r["flags"] = f.clone();
    }
    r
}

/// The built sections `r` names, with everything they name, appended to `secs`.
fn graft(secs: &mut Vec<Value>, built: &Built, r: &Value) -> Value {
    fn renumber(v: &mut Value, secs: &mut Vec<Value>, built: &Built) {
        match v {
            Value::Object(o) if o.contains_key("index") && o.len() == 1 => {
                *v = graft(secs, built, v);
            }
            Value::Object(o) => o.values_mut().for_each(|x| renumber(x, secs, built)),
            Value::Array(a) => a.iter_mut().for_each(|x| renumber(x, secs, built)),
            _ => {}
        }
    }
    let Some(mut s) = ref_index(r).and_then(|i| built.sections.get(i)).cloned() else {
        return Value::Null;
    };
    let at = secs.len();
    secs.push(Value::Null);
    if let Some(e) = s.get_mut("entries") {
        renumber(e, secs, built);
    }
    s["index"] = at.into();
    secs[at] = s;
    json!({ "index": at })
}

/// The builder's batch of region `r`.
fn built_batch(built: &Built, div: Option<&Value>, r: usize) -> Value {
    let all = div
        .and_then(|d| ref_index(&d["batches"]))
        .and_then(|i| built.sections.get(i))
        .and_then(|s| s["entries"].as_array());
    all.and_then(|a| a.iter().find(|b| b["region"].as_u64() == Some(r as u64)))
        .cloned()
        .unwrap_or_else(|| {
            json!({ "flags": 0, "priorityPlane": 0, "region": r, "boundsIndex": 0,
                                    "colorIndex": 0, "materialMap": 0, "bone": -1 })
        })
}

/// A bounding box and sphere (`[min, max, radius]`) grown to hold `add`; kept as it was when
/// either is not seven finite numbers.
fn grown(was: &Value, add: &Value) -> Value {
    let (Some(a), Some(b)) = (floats(was), floats(add)) else {
        return was.clone();
    };
    if a.len() != 7 || b.len() != 7 || a.iter().chain(&b).any(|x| !x.is_finite()) {
        return was.clone();
    }
    let mut g = a.clone();
    for k in 0..3 {
        g[k] = a[k].min(b[k]);
        g[k + 3] = a[k + 3].max(b[k + 3]);
    }
    let r = ((g[3] - g[0]).powi(2) + (g[4] - g[1]).powi(2) + (g[5] - g[2]).powi(2)).sqrt() / 2.0;
    g[6] = a[6].max(r);
    if g == a {
        return was.clone();
    }
    json!(g)
}

/// The division's bounding shapes (MSEC) grown to hold the new bounds at rest.
fn grow_shapes(secs: &mut [Value], r: &Value, bounds: &Value) {
    let Some(s) = ref_index(r).and_then(|i| secs.get_mut(i)) else {
        return;
    };
    for e in s["entries"].as_array_mut().into_iter().flatten() {
        let b = &mut e["boundings"];
        if b.is_object() {
            b["init"] = grown(&b["init"], bounds);
        }
    }
}

/// Which of the original's regions the edit changed: gone, or another vertex count.
fn region_changes(
    old: &[Value],
    new: Option<&Value>,
    came_from: &[Option<usize>],
) -> HashMap<usize, String> {
    let count = |v: &Value| v["vertexCount"].as_u64().unwrap_or(0);
    let new: Vec<Value> = new
        .and_then(|s| s["entries"].as_array())
        .cloned()
        .unwrap_or_default();
    let mut out = HashMap::new();
    for (o, reg) in old.iter().enumerate() {
        let at = came_from.iter().position(|&c| c == Some(o));
        let why = match at.and_then(|r| new.get(r).map(|n| (r, n))) {
            None => "is gone".to_string(),
            Some((r, _)) if r != o => format!("is now region {r}"),
            Some((_, n)) if count(n) != count(reg) => {
                format!("has {} vertices, not {}", count(n), count(reg))
            }
            Some(_) => continue,
        };
        out.insert(o, why);
    }
    out
}

/// Warnings for kept parts that name a region the edit changed: particle emitters spawning from
/// regions, cloth simulating or influenced by them.
fn inconsistent(secs: &[Value], modl: &Value, changed: &HashMap<usize, String>) -> Vec<Warning> {
    let mut out = Vec::new();
    let mut check = |part: String, region: Option<u64>| {
        if let Some(why) = region.and_then(|r| changed.get(&(r as usize)).map(|w| (r, w))) {
            out.push(Warning::new(
                None,
                part,
                format!(
                    "kept from the original, it names region {}, which the edit changed (it {}): check it in the game",
                    why.0, why.1
                ),
            ));
        }
    };
    for (i, p) in entries(secs, &modl["particleEmitters"]).iter().enumerate() {
        let list = ref_index(&p["emitShapeRegions"]).and_then(|k| secs.get(k));
        for r in list
            .and_then(|s| s["entries"].as_array())
            .into_iter()
            .flatten()
        {
            check(
                format!("MODL.particleEmitters[{i}].emitShapeRegions"),
                r.as_u64(),
            );
        }
    }
    for (i, c) in entries(secs, &modl["physicsCloths"]).iter().enumerate() {
        check(
            format!("MODL.physicsCloths[{i}].simulationRegionIndex"),
            c["simulationRegionIndex"].as_u64(),
        );
        for (k, a) in entries(secs, &c["influenceMap"]).iter().enumerate() {
            for f in ["influencedRegionIndex", "simulationRegionIndex"] {
                check(
                    format!("MODL.physicsCloths[{i}].influenceMap[{k}].{f}"),
                    a[f].as_u64(),
                );
            }
        }
    }
    out
}

/// `original` (an M3's bytes) with the keys of the clips `scene` changed written into the tracks
/// they came from; `None` when no clip changed. A changed track gets its own key times and values
/// (sections put where the old ones were when nothing else names them, else added at the end) and
/// its block's biggest key; every other section keeps its index and bytes. The clips of `scene`
/// and `was` (the original's scene) are matched by name, their tracks by node and property.
pub(crate) fn retrack(original: &[u8], scene: &Scene, was: &Scene) -> Result<Option<Remeshed>> {
    use crate::model::unchanged::{same_track, shown};
    use crate::model::Property;
    let (file, _) = read::read(original)?;
    let mut root = dump::to_json(&file);
    let (secs, mi) = sections(&mut root)?;
    let modl = secs[mi]["entries"][0].clone();
    let (bones, stcs, stgs) = (
        entries(secs, &modl["bones"]),
        entries(secs, &modl["stc"]),
        entries(secs, &modl["stg"]),
    );
    let shared = reference_counts(secs);
    let matched = crate::model::match_nodes(&was.nodes, &scene.nodes);
    let mut taken = vec![false; scene.animations.len()];
    let mut changed = 0;
    for a in &was.animations {
        let Some(k) = crate::model::find_named(&scene.animations, &taken, &a.name, |x| &x.name)
        else {
            return Ok(Some(Remeshed::Cannot(format!("clip {:?} is gone", a.name))));
        };
        taken[k] = true;
        let b = &scene.animations[k];
        let m3 = a.extras.get("m3");
        let (Some(si), Some(start)) = (
            m3.and_then(|m| m["sequence"].as_u64()).map(|s| s as usize),
            m3.and_then(|m| m["startMs"].as_i64()),
        ) else {
            continue;
        };
        // The sequence's STCs, highest priority first (as the reader takes them).
        let mut order: Vec<usize> = entries(
            secs,
            &stgs
                .get(si)
                .map_or(Value::Null, |g| g["stcIndices"].clone()),
        )
        .iter()
        .filter_map(|i| i.as_u64().map(|i| i as usize))
        .filter(|&i| i < stcs.len())
        .collect();
        order.sort_by_key(|&i| std::cmp::Reverse(stcs[i]["priority"].as_u64().unwrap_or(0)));
        for c in &b.channels {
            let i = matched.iter().position(|&j| j == Some(c.node));
            let stored = i.and_then(|i| {
                a.channels
                    .iter()
                    .find(|s| s.node == i && s.property == c.property)
            });
            let was_node = i.and_then(|i| was.nodes.get(i));
            let seen = |t: f32| i.is_none_or(|i| shown(was, a, i, c.property, t));
            if same_track(c, stored, was_node, scene.nodes.get(c.node), &seen) {
                continue;
            }
            let node_name = scene.nodes.get(c.node).map_or("?", |n| n.name.as_str());
            let cannot = |what: &str| {
                Ok(Some(Remeshed::Cannot(format!(
                    "clip {:?} moves {node_name:?} {what}",
                    a.name
                ))))
            };
            let bone = was_node
                .and_then(|n| n.extras.get("m3")?.get("bone")?.as_u64())
                .map(|b| b as usize);
            let field = match c.property {
                Property::Translation => "location",
                Property::Rotation => "rotation",
                Property::Scale => "scale",
                Property::Weights => return cannot("by morph weights, which M3 has not"),
            };
            let id = bone
                .and_then(|b| bones.get(b))
                .and_then(|b| b[field]["id"].as_u64());
            let Some(id) = id.filter(|&id| id != 0) else {
                return cannot(&format!(
                    "in its {field}, which the original does not animate"
                ));
            };
            // The first STC of the sequence holding the id decides, and in it the id stored last.
            let found = order.iter().find_map(|&s| {
                let ids = entries(secs, &stcs[s]["animIds"]);
                let at = ids.iter().rposition(|x| x.as_u64() == Some(id))?;
                Some((s, entries(secs, &stcs[s]["animRefs"]).get(at)?.as_u64()?))
            });
            let Some((s, r)) = found else {
                return cannot(&format!(
                    "in its {field}, which this sequence does not animate"
                ));
            };
            let (sd_field, width) = match r >> 16 {
                2 => ("sd3v", 3),
                3 => ("sd4q", 4),
                _ => {
                    return cannot(&format!(
                        "in its {field}, stored in a kind hangar does not write"
                    ))
                }
            };
            let Some(sd) = ref_index(&stcs[s][sd_field]) else {
                return cannot(&format!("in its {field}, whose block is missing"));
            };
            let block = (r & 0xffff) as usize;
            let Some(old) = secs.get(sd).and_then(|x| x["entries"].get(block)).cloned() else {
                return cannot(&format!("in its {field}, whose block is missing"));
            };
            let frames: Vec<i64> = c
                .times
                .iter()
                .map(|t| start + (f64::from(*t) * 1000.0).round() as i64)
                .collect();
            let values: Vec<Value> = c
                .values
                .chunks_exact(width)
                .map(|v| {
                    Value::Array(
                        v.iter()
                            .map(|x| super::table::float_value(x.to_bits()))
                            .collect(),
                    )
                })
                .collect();
            let version = |r: &Value| {
                ref_index(r)
                    .and_then(|i| secs.get(i))
                    .map_or(0, |x| x["version"].as_u64().unwrap_or(0))
            };
            let frames_section =
                json!({ "tag": "I32_", "version": version(&old["frames"]), "entries": frames });
            let value_tag = if width == 4 { "QUAT" } else { "VEC3" };
            let values_section =
                json!({ "tag": value_tag, "version": version(&old["values"]), "entries": values });
            let mut new = old.clone();
            new["frames"] = place(secs, Some(frames_section), &old["frames"], &shared);
            new["values"] = place(secs, Some(values_section), &old["values"], &shared);
            new["biggestKey"] = frames.iter().copied().max().unwrap_or(0).max(0).into();
            secs[sd]["entries"][block] = new;
            changed += 1;
        }
    }
    if let Some(new) = (scene.animations.iter().zip(&taken)).find(|(_, t)| !**t) {
        let why = format!(
            "clip {:?} is new: a sequence is not added to the original",
            new.0.name
        );
        return Ok(Some(Remeshed::Cannot(why)));
    }
    if changed == 0 {
        return Ok(None);
    }
    let m3 = dump::from_json(&root)?;
    Ok(Some(Remeshed::Done(write::write(&m3)?, Vec::new())))
}
