//! `hangar validate` and `hangar info` for XAC, XSM and XPM.

use super::{File, Kind};
use crate::document::Info;
use crate::validate::Finding;
use serde_json::{json, Value};

use super::scene::sub_motions;
use crate::formats::schema::value::{f32 as f32_of, int};

/// The numbers `hangar info` shows for an XAC, XSM or XPM file.
pub fn summary(f: &File) -> Info {
    let nodes = super::scene::node_names(f);
    let meshes: Vec<&Value> = f.fields_of("mesh").collect();
    let vertices = meshes
        .iter()
        .map(|m| int(&m["numVertices"]).max(0) as u64)
        .sum();
    let triangles = meshes
        .iter()
        .map(|m| int(&m["numIndices"]).max(0) as u64 / 3)
        .sum();
    let chunks: Vec<String> = f
        .chunks
        .iter()
        .map(|c| format!("0x{:x} v{} {}", c.id, c.version, c.name(f.kind)))
        .collect();
    let morphs = super::scene::morph_target_names(f);
    let motion = f
        .fields_of("metadata")
        .next()
        .map(|m| m["motionName"].clone());
    let animations = match f.kind {
        Kind::Xac => 0,
        _ => 1,
    };
    Info {
        vertices,
        triangles,
        bones: Some(nodes.len() as u64),
        animations: Some(animations),
        details: json!({
            "kind": f.kind.name(),
            "nodes": nodes,
            "meshes": meshes.len(),
            "morph_targets": morphs,
            "sub_motions": sub_motions(f).len(),
            "motion_name": motion,
            "chunks": chunks,
        }),
        ..Default::default()
    }
}

pub fn check(f: &File) -> Vec<Finding> {
    let mut out = Vec::new();
    let names = super::scene::node_names(f);
    let n = names.len() as i64;
    // Parents in range and acyclic.
    let parents = super::scene::node_parents(f);
    for (i, &p) in parents.iter().enumerate() {
        if p < -1 || p >= n {
            out.push(Finding::error(
                format!("XAC.nodes[{i}].parent"),
                format!("parent {p} of {n} nodes"),
            ));
            continue;
        }
    }
    for i in crate::validate::looping_parents(&parents) {
        out.push(Finding::error(
            format!("XAC.nodes[{i}].parent"),
            "the parent chain loops back",
        ));
    }
    for (mi, m) in f.fields_of("mesh").enumerate() {
        let p = format!("XAC.meshes[{mi}]");
        let count = int(&m["numVertices"]).max(0) as u64;
        let mut base = 0u64;
        for (si, sm) in m["subMeshes"].as_array().into_iter().flatten().enumerate() {
            let bad = sm["indices"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|i| i.as_u64().unwrap_or(0) + base >= count)
                .count();
            if bad > 0 {
                out.push(Finding::error(
                    format!("{p}.subMeshes[{si}].indices"),
                    format!("{bad} indices past the {count} vertices"),
                ));
            }
            base += int(&sm["numVertices"]).max(0) as u64;
        }
        if int(&m["node"]) >= n || int(&m["node"]) < 0 {
            out.push(Finding::error(
                format!("{p}.node"),
                format!("node {} of {n}", m["node"]),
            ));
        }
    }
    for (si, s) in f.fields_of("skinning").enumerate() {
        let p = format!("XAC.skinning[{si}]");
        let infl = s["influences"].as_array().map_or(&[][..], Vec::as_slice);
        for (ri, r) in s["ranges"].as_array().into_iter().flatten().enumerate() {
            let (first, count) = (int(&r["first"]), int(&r["count"]));
            if first < 0 || count < 0 || (first + count) as usize > infl.len() {
                out.push(Finding::error(
                    format!("{p}.ranges[{ri}]"),
                    format!("influences {first}..{} of {}", first + count, infl.len()),
                ));
                continue;
            }
            let sum: f32 = infl[first as usize..(first + count) as usize]
                .iter()
                .map(|x| f32_of(&x["weight"]))
                .sum();
            if count > 0 && (sum - 1.0).abs() > 0.01 {
                out.push(Finding::warning(
                    format!("{p}.ranges[{ri}]"),
                    format!("weights sum to {sum}, not 1"),
                ));
            }
        }
        if let Some(b) = infl
            .iter()
            .map(|x| int(&x["bone"]))
            .find(|&b| b < 0 || b >= n)
        {
            out.push(Finding::error(
                format!("{p}.influences"),
                format!("bone {b} of {n} nodes"),
            ));
        }
    }
    let mesh_sizes: Vec<(i64, u64)> = f
        .fields_of("mesh")
        .map(|m| (int(&m["node"]), int(&m["numVertices"]).max(0) as u64))
        .collect();
    for (ti, t) in f
        .fields_of("morphTargets")
        .flat_map(|c| c["targets"].as_array().into_iter().flatten())
        .enumerate()
    {
        for (di, d) in t["deformations"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            let size = mesh_sizes
                .iter()
                .find(|m| m.0 == int(&d["node"]))
                .map_or(0, |m| m.1);
            let bad = d["vertexIndices"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|i| i.as_u64().unwrap_or(0) >= size)
                .count();
            if bad > 0 {
                out.push(Finding::error(
                    format!("XAC.morphTargets[{ti}].deformations[{di}].vertexIndices"),
                    format!("{bad} indices past the mesh's {size} vertices"),
                ));
            }
        }
    }
    for (si, s) in sub_motions(f).iter().enumerate() {
        for track in [
            "positionKeys",
            "rotationKeys",
            "scaleKeys",
            "scaleRotationKeys",
        ] {
            let times: Vec<f32> = s[track]
                .as_array()
                .into_iter()
                .flatten()
                .map(|k| f32_of(&k["time"]))
                .collect();
            let p = format!("XSM.subMotions[{si}].{track}");
            // Real motions start sub-motions late (6 corpus tracks); they play as stored.
            if times.first().is_some_and(|&t| t != 0.0) {
                out.push(Finding::note(
                    &p,
                    format!("the first key is at {}, not 0", times[0]),
                ));
            }
            if times.windows(2).any(|w| w[1] < w[0]) {
                out.push(Finding::error(&p, "key times are not sorted"));
            }
        }
    }
    out
}
