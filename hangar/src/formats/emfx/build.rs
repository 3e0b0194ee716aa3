//! hangar's XAC writer: an actor built from the neutral scene, as the chunks real files use
//! (0x7 metadata, 0xB nodes, 0xD totals, 0x3 v2 materials with layers, 0x1 meshes, 0x2 v3 skins,
//! 0xC morph targets), written by the same layouts that read them.
//!
//! Nodes without a mesh become the actor's nodes; a skinned mesh belongs to the first joint of its
//! skin, any other mesh to its parent node; a node marked collision writes a collision mesh. Each
//! primitive is a sub-mesh with its own vertices.
//! Positions, normals and rotations go back to the file frame (X mirrored) and faces are turned
//! around again, so reading the file gives back the scene.

use super::{Body, Chunk, File, Kind};
use crate::error::{Error, Result};
use crate::model::{Mesh, Scene};
use crate::raw::{float_value, Bytes};
use glam::{Mat4, Quat, Vec3};
use serde_json::{json, Value};

pub(super) fn fv(x: f32) -> Value {
    float_value(x.to_bits())
}

pub(super) fn fa(a: &[f32]) -> Value {
    Value::Array(a.iter().map(|&x| fv(x)).collect())
}

fn b64(b: &[u8]) -> Value {
    Bytes::borrowed(b).to_base64().into()
}

pub(super) fn mirror(p: [f32; 3]) -> [f32; 3] {
    [-p[0], p[1], p[2]]
}

pub(super) fn mirror_quat(q: Quat) -> [f32; 4] {
    [q.x, -q.y, -q.z, q.w]
}

pub(super) fn chunk(id: u32, version: u32, fields: Value) -> Chunk {
    Chunk {
        id,
        version,
        declared: None,
        offset: 0,
        length: 0,
        body: Body::Fields(fields),
    }
}

/// The actor file of `scene`: its LOD 0 (nodes marked as other LODs are left out, as are the roots
/// hangar added when it read an actor).
pub fn actor(scene: &Scene) -> Result<File> {
    let lod0 = scene.lod_mask(0);
    let keep = |i: usize| lod0[i] && !scene.is_added_root(i);
    let mut kept = scene.retain_nodes(keep);
    // Materials only the other LODs draw with belong to their own actors (the LOD chunks).
    let drawn_with = |here: bool| -> std::collections::BTreeSet<usize> {
        (scene.nodes.iter().enumerate())
            .filter(|&(i, _)| keep(i) == here)
            .filter_map(|(_, n)| scene.meshes.get(n.mesh?))
            .flat_map(|m| m.primitives.iter().filter_map(|p| p.material))
            .collect()
    };
    let (here, elsewhere) = (drawn_with(true), drawn_with(false));
    kept.retain_materials(|k| here.contains(&k) || !elsewhere.contains(&k));
    actor_of(&kept)
}

fn actor_of(scene: &Scene) -> Result<File> {
    if scene.nodes.iter().all(|n| n.mesh.is_some()) {
        if scene.nodes.is_empty() {
            return Err(Error::refused(
                "XAC.nodes",
                "the scene has no node to write",
            ));
        }
        // Only mesh nodes (a static model): they hang on one root node.
        let mut s = scene.clone();
        s.nodes
            .iter_mut()
            .for_each(|n| n.parent = Some(n.parent.map_or(0, |p| p + 1)));
        s.nodes.insert(0, crate::model::Node::new(&scene.name));
        s.skins
            .iter_mut()
            .for_each(|k| k.joints.iter_mut().for_each(|j| *j += 1));
        return actor_of(&s);
    }
    let bones: Vec<usize> = (0..scene.nodes.len())
        .filter(|&i| scene.nodes[i].mesh.is_none())
        .collect();
    let index_of = |n: usize| bones.iter().position(|&b| b == n);
    let mut chunks = vec![chunk(
        0x7,
        2,
        json!({
            "repositionMask": 0, "repositioningNode": 0, "exporterMajor": 1, "exporterMinor": 0,
            "pad": b64(&[0, 0]), "retargetRootOffset": 0,
            "sourceApp": format!("hangar {}", env!("CARGO_PKG_VERSION")),
            "originalFile": "", "exportDate": "", "actorName": scene.name,
        }),
    )];

    let mut nodes = Vec::new();
    for &b in &bones {
        let n = &scene.nodes[b];
        let parent = n.parent.and_then(index_of).map_or(-1, |p| p as i64);
        let children = bones
            .iter()
            .filter(|&&c| scene.nodes[c].parent == Some(b))
            .count();
        let local = Mat4::from_scale_rotation_translation(
            n.scale,
            Quat::from_array(mirror_quat(n.rotation)),
            Vec3::from(mirror(n.translation.to_array())),
        );
        nodes.push(json!({
            "rotation": fa(&mirror_quat(n.rotation)),
            "scaleRotation": fa(&[0.0, 0.0, 0.0, 1.0]),
            "position": fa(&mirror(n.translation.to_array())),
            "scale": fa(&n.scale.to_array()),
            "unused": fa(&[-1.0, -1.0, -1.0]),
            "unknown0": -1, "unknown1": -1,
            "parent": parent, "numChildren": children, "includeInBounds": 1,
            "transform": fa(&local.to_cols_array()),
            "importance": 1.0,
            "name": n.name,
        }));
    }
    let roots = nodes.iter().filter(|n| n["parent"] == -1).count();
    chunks.push(chunk(
        0xB,
        1,
        json!({ "numNodes": nodes.len(), "numRoots": roots, "nodes": nodes }),
    ));
    let count = scene.materials.len();
    chunks.push(chunk(
        0xD,
        1,
        json!({ "totalMaterials": count, "standardMaterials": count, "fxMaterials": 0 }),
    ));
    for (i, m) in scene.materials.iter().enumerate() {
        let layers: Vec<Value> = [(&m.textures.base_color, 2), (&m.textures.normal, 12), (&m.textures.emissive, 6)]
            .iter()
            .filter_map(|(t, ty)| t.as_ref().map(|t| (t, *ty)))
            .map(|(t, ty)| {
                json!({
                    "amount": 1.0, "uOffset": 0, "vOffset": 0, "uTiling": 1.0, "vTiling": 1.0, "rotation": 0,
                    "materialId": i, "mapType": ty, "unused": 0, "texture": t,
                })
            })
            .collect();
        chunks.push(chunk(
            0x3,
            2,
            json!({
                "ambient": fa(&[0.0, 0.0, 0.0, 1.0]), "diffuse": fa(&[1.0; 4]), "specular": fa(&[0.0, 0.0, 0.0, 1.0]),
                "emissive": fa(&[0.0, 0.0, 0.0, 1.0]), "shine": 0, "shineStrength": 0, "opacity": 1.0, "ior": 1.5,
                "doubleSided": 0, "wireframe": 0, "unused": 0, "numLayers": layers.len(), "name": m.name,
                "layers": layers,
            }),
        ));
    }

    let mut morphs: Vec<(String, Vec<Value>)> = Vec::new();
    for (ni, n) in scene.nodes.iter().enumerate() {
        let Some(mi) = n.mesh else { continue };
        let mesh = &scene.meshes[mi];
        let skin = n
            .skin
            .and_then(|s| scene.skins.get(s))
            .filter(|_| mesh.vertices.joints.is_some());
        let owner = match skin {
            Some(s) => s.joints.first().and_then(|&j| index_of(j)),
            None => n.parent.and_then(index_of),
        }
        .unwrap_or(0);
        let collision = n.role == crate::model::Role::Collision;
        let (mesh_chunk, skin_chunk, order) = mesh_chunks(
            mesh,
            (owner, collision),
            skin.map(|s| s.joints.as_slice()),
            &index_of,
            &format!("nodes[{ni}]"),
        )?;
        chunks.push(mesh_chunk);
        chunks.extend(skin_chunk);
        for t in mesh.morph_targets.iter().filter(|_| !collision) {
            let d = deformation(t, &order, owner);
            match morphs.iter_mut().find(|m| m.0 == t.name) {
                Some(m) => m.1.push(d),
                None => morphs.push((t.name.clone(), vec![d])),
            }
        }
    }
    if !morphs.is_empty() {
        let targets: Vec<Value> = morphs
            .into_iter()
            .map(|(name, defs)| {
                json!({
                    "rangeMin": 0, "rangeMax": 1.0, "lod": 0, "numDeformations": defs.len(),
                    "numTransformations": 0, "phonemes": 0, "name": name,
                    "deformations": defs, "transformations": [],
                })
            })
            .collect();
        chunks.push(chunk(
            0xC,
            1,
            json!({ "numTargets": targets.len(), "lodIndex": 0, "targets": targets }),
        ));
    }
    Ok(File {
        kind: Kind::Xac,
        header: [1, 0, 0, 0],
        chunks,
        tail: Bytes::default(),
    })
}

pub(super) type NodeIndex<'a> = &'a dyn Fn(usize) -> Option<usize>;

/// The mesh chunk (and skin chunk) of `mesh`; `order` maps each written vertex to the mesh's.
pub(super) fn mesh_chunks(
    mesh: &Mesh,
    (owner, collision): (usize, bool),
    joints: Option<&[usize]>,
    index_of: NodeIndex<'_>,
    path: &str,
) -> Result<(Chunk, Option<Chunk>, Vec<usize>)> {
    let v = &mesh.vertices;
    let mut order: Vec<usize> = Vec::new();
    let mut subs = Vec::new();
    for p in &mesh.primitives {
        let start = order.len();
        let mut local = std::collections::HashMap::new();
        let mut idx = Vec::with_capacity(p.indices.len());
        for tri in p.indices.chunks_exact(3) {
            // Back to the file's winding.
            for &i in &[tri[0], tri[2], tri[1]] {
                if i as usize >= v.len() {
                    return Err(Error::refused(
                        path,
                        format!("index {i} past the {} vertices", v.len()),
                    ));
                }
                let k = *local.entry(i).or_insert_with(|| {
                    order.push(i as usize);
                    order.len() - start - 1
                });
                idx.push(k as u32);
            }
        }
        subs.push(json!({
            "numIndices": idx.len(), "numVertices": order.len() - start,
            "materialId": p.material.unwrap_or(0), "numBones": 0, "indices": idx, "bones": [],
        }));
    }
    let n = order.len();
    let floats = |f: &dyn Fn(usize) -> Vec<f32>| -> Vec<u8> {
        order
            .iter()
            .flat_map(|&i| f(i))
            .flat_map(f32::to_le_bytes)
            .collect()
    };
    let layer = |ty: i32, size: usize, keep: u8, data: Vec<u8>| json!({ "type": ty, "attribSize": size, "keepOriginals": keep, "isScaleFactor": 0, "pad": b64(&[0, 0]), "data": b64(&data) });
    let ranges: Vec<u8> = (0..n as u32).flat_map(u32::to_le_bytes).collect();
    let mut layers = vec![
        layer(5, 4, 0, ranges),
        layer(0, 12, 1, floats(&|i| mirror(v.positions[i]).to_vec())),
    ];
    if let Some(ns) = &v.normals {
        layers.push(layer(1, 12, 1, floats(&|i| mirror(ns[i]).to_vec())));
    }
    if let Some(uv) = v.uvs.first() {
        layers.push(layer(3, 8, 0, floats(&|i| uv[i].to_vec())));
    }
    let mesh_chunk = chunk(
        0x1,
        1,
        json!({
            "node": owner, "numInfluenceRanges": n, "numVertices": n,
            "numIndices": subs.iter().map(|s| s["numIndices"].as_u64().unwrap_or(0)).sum::<u64>(),
            "numSubMeshes": subs.len(), "numAttribLayers": layers.len(), "isCollision": collision as u8,
            "pad": b64(&[0, 0, 0]), "layers": layers, "subMeshes": subs,
        }),
    );
    let skin = match (joints, &v.joints, &v.weights) {
        (Some(joints), Some(js), Some(ws)) => {
            let mut influences = Vec::new();
            let mut ranges = Vec::new();
            let mut bones = std::collections::BTreeSet::new();
            for &i in &order {
                let first = influences.len();
                for k in 0..4 {
                    if ws[i][k] <= 0.0 {
                        continue;
                    }
                    let node = joints
                        .get(js[i][k] as usize)
                        .copied()
                        .and_then(index_of)
                        .unwrap_or(0);
                    bones.insert(node);
                    influences
                        .push(json!({ "weight": fv(ws[i][k]), "bone": node, "pad": b64(&[0, 0]) }));
                }
                ranges.push(json!({ "first": first, "count": influences.len() - first }));
            }
            Some(chunk(
                0x2,
                3,
                json!({
                    "node": owner, "numLocalBones": bones.len(), "numInfluences": influences.len(),
                    "isCollision": collision as u8, "pad": b64(&[0, 0, 0]), "influences": influences, "ranges": ranges,
                }),
            ))
        }
        _ => None,
    };
    Ok((mesh_chunk, skin, order))
}

/// A morph target as an XAC deformation: the vertices it moves, offsets quantised to u16 over
/// their range.
fn deformation(t: &crate::model::MorphTarget, order: &[usize], owner: usize) -> Value {
    let moved: Vec<(usize, [f32; 3])> = order
        .iter()
        .enumerate()
        .filter_map(|(k, &i)| {
            let d = mirror(*t.positions.get(i)?);
            (d != [0.0; 3]).then_some((k, d))
        })
        .collect();
    let lo = moved.iter().flat_map(|m| m.1).fold(0.0f32, f32::min);
    let hi = moved.iter().flat_map(|m| m.1).fold(0.0f32, f32::max);
    let span = if hi > lo { hi - lo } else { 1.0 };
    let mut pos = Vec::new();
    let mut nor = Vec::new();
    for &(k, d) in &moved {
        for c in d {
            pos.extend_from_slice(&(((c - lo) / span * 65535.0).round() as u16).to_le_bytes());
        }
        let n = t
            .normals
            .as_ref()
            .and_then(|ns| ns.get(order[k]))
            .map_or([0.0; 3], |n| mirror(*n));
        nor.extend(n.map(|c| ((c + 1.0) * 127.5).round().clamp(0.0, 255.0) as u8));
    }
    let tangents = vec![128u8; moved.len() * 3];
    json!({
        "node": owner, "minValue": fv(lo), "maxValue": fv(lo + span), "numVertices": moved.len(),
        "positionOffsets": b64(&pos), "normalOffsets": b64(&nor), "tangentOffsets": b64(&tangents),
        "vertexIndices": moved.iter().map(|m| m.0).collect::<Vec<_>>(),
    })
}
