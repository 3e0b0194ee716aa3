//! An edited actor written into the XAC it came from: only the meshes the edit changed are
//! written anew; every other chunk (nodes, node groups and limits, materials, morph targets, the
//! LOD actors, metadata, chunks hangar has no layout for) keeps its place and bytes.
//!
//! A mesh whose vertices kept their number, faces and skin gets the changed values written into
//! its own attribute layers, vertex by vertex (every layer and vertex the edit left alone keeps its
//! bytes). Any other change rebuilds that mesh's chunk (and its skin's) by the builder
//! ([`build::mesh_chunks`]) on the original's node, bones and materials; kept morph targets naming
//! that mesh's vertices are then named in a warning.

use super::{build, Body, Chunk, File, Kind};
use crate::error::{Result, Warning};
use crate::formats::schema::value::{bytes as blob, int, text};
use crate::formats::Remeshed;
use crate::model::{Mesh, Scene};
use crate::raw::Bytes;
use serde_json::Value;

/// Skin weights closer than this are the same (glTF may carry them in bytes).
const WEIGHT_TOLERANCE: f32 = 0.5 / 255.0;

/// `original` (an XAC's bytes) with the meshes of `scene`, the original's scene being `was`.
pub(crate) fn remesh(original: &[u8], scene: &Scene, was: &Scene) -> Result<Remeshed> {
    let (mut file, _) = super::read(original)?;
    let big = file.big_endian();
    let node_count = super::scene::node_names(&file).len();
    let matched = crate::model::match_nodes(&was.nodes, &scene.nodes);
    // The actor's node of each edited node (the reader puts the actor's nodes first).
    let mut actor_node = vec![None; scene.nodes.len()];
    for (i, j) in matched.iter().enumerate().take(node_count) {
        if let Some(slot) = j.and_then(|j| actor_node.get_mut(j)) {
            *slot = Some(i);
        }
    }
    // The original's material of each edited one, by name; the reader puts the actor's first.
    let own_materials = file.fields_of("material").count();
    let free = vec![false; own_materials];
    let material: Vec<Option<usize>> = scene
        .materials
        .iter()
        .map(|m| {
            crate::model::find_named(
                &was.materials[..own_materials.min(was.materials.len())],
                &free,
                &m.name,
                |x| &x.name,
            )
        })
        .collect();
    // The mesh chunks, in the order the reader made them into the scene's first meshes.
    let mesh_at: Vec<usize> = (file.chunks.iter().enumerate())
        .filter(|(_, c)| c.name(Kind::Xac) == "mesh" && c.fields().is_some())
        .map(|(i, _)| i)
        .collect();
    let mut warnings = Vec::new();
    let mut rebuilt: Vec<Rebuilt> = Vec::new();
    for (i, n) in was.nodes.iter().enumerate() {
        let Some(k) = n.mesh else { continue };
        let edited = matched[i].and_then(|j| scene.nodes.get(j));
        let Some(before) = was.meshes.get(k) else {
            continue;
        };
        let Some((e_node, e_mesh)) = edited.and_then(|e| Some((e, scene.meshes.get(e.mesh?)?)))
        else {
            // The mesh taken out: its chunk and its skin go.
            if let Some((&at, f)) = mesh_at
                .get(k)
                .and_then(|a| Some((a, file.chunks[*a].fields()?)))
            {
                let (owner, collision) =
                    (int(&f["node"]).max(0) as usize, int(&f["isCollision"]) != 0);
                rebuilt.push(Rebuilt {
                    owner,
                    collision,
                    at,
                    mesh: None,
                    skin: None,
                    count: 0,
                    name: n.name.clone(),
                });
            }
            continue;
        };
        let Some(&at) = mesh_at.get(k) else {
            // A LOD's mesh: its actor is kept as stored.
            if !crate::model::same_shape(e_mesh, &scene.materials, before, &was.materials) {
                warnings.push(Warning::new(
                    None,
                    format!("XAC.meshLod ({})", n.name),
                    "the LOD actors are kept as stored: an edit of their meshes is not written",
                ));
            }
            continue;
        };
        let skin = e_node.skin.and_then(|s| scene.skins.get(s));
        let to_actor = |j: usize| actor_node.get(j).copied().flatten();
        let was_skin = n.skin.and_then(|s| was.skins.get(s)).map(|s| &s.joints[..]);
        let was_joints = skin_nodes(before, was_skin, &|j| (j < node_count).then_some(j));
        let mut mapped = e_mesh.clone();
        for p in &mut mapped.primitives {
            p.material = match p.material.map(|m| material.get(m).copied().flatten()) {
                Some(None) => {
                    return Ok(Remeshed::Cannot(format!(
                        "the mesh of {:?} has a material the original does not have",
                        n.name
                    )))
                }
                m => m.flatten(),
            };
        }
        let same_faces = mapped.primitives == before.primitives
            && mapped.vertices.len() == before.vertices.len();
        let now_joints = skin_nodes(&mapped, skin.map(|s| &s.joints[..]), &to_actor);
        if same_faces && same_weights(&now_joints, &was_joints) {
            patch_layers(&mut file.chunks[at], &mapped, before, big);
            continue;
        }
        let fields = file.chunks[at].fields().cloned().unwrap_or_default();
        let owner = int(&fields["node"]).max(0) as usize;
        let collision = int(&fields["isCollision"]) != 0;
        let (mut chunk, skin_chunk, order) = build::mesh_chunks(
            &mapped,
            (owner, collision),
            skin.map(|s| &s.joints[..]),
            &to_actor,
            &format!("XAC.chunks[{at}]"),
        )?;
        add_layers(&mut chunk, &fields, &mapped, &order, big);
        if let (Body::Fields(f), Some(s)) = (&mut chunk.body, skin_chunk.as_ref()) {
            submesh_bones(f, &fields, s);
        }
        rebuilt.push(Rebuilt {
            owner,
            collision,
            at,
            mesh: Some(chunk),
            skin: skin_chunk,
            count: order.len(),
            name: n.name.clone(),
        });
    }
    // From the last: a chunk put in or taken out moves the chunks after it.
    rebuilt.sort_by_key(|r| r.at);
    for r in rebuilt.into_iter().rev() {
        let Rebuilt {
            owner,
            collision,
            at,
            mesh,
            skin,
            count,
            name,
        } = r;
        match mesh {
            Some(m) => file.chunks[at] = m,
            None => {
                file.chunks.remove(at);
            }
        }
        let is_skin = |c: &Chunk| {
            c.name(Kind::Xac) == "skinning"
                && c.fields().is_some_and(|f| {
                    int(&f["node"]) == owner as i64 && (int(&f["isCollision"]) != 0) == collision
                })
        };
        let old = file.chunks.iter().position(is_skin);
        match (old, skin) {
            (Some(o), Some(mut s)) => {
                if file.chunks[o].version == 2 {
                    s.version = 2;
                    if let Body::Fields(Value::Object(f)) = &mut s.body {
                        f.remove("numLocalBones");
                    }
                }
                file.chunks[o] = s;
            }
            (Some(o), None) => {
                file.chunks.remove(o);
            }
            (None, Some(s)) => file.chunks.insert(at + 1, s),
            (None, None) => {}
        }
        if !collision {
            warnings.extend(morphs_of(&file, owner, count, &name));
        }
    }
    Ok(Remeshed::Done(super::write(&file)?, warnings))
}

/// A mesh chunk written anew (or taken out, `mesh` none) at chunk `at`, on actor node `owner`.
struct Rebuilt {
    owner: usize,
    collision: bool,
    at: usize,
    mesh: Option<Chunk>,
    skin: Option<Chunk>,
    /// Its vertices now.
    count: usize,
    /// The scene node's name, for a warning.
    name: String,
}

/// Each vertex's influences as (actor node, weight), strongest first; `nodes` is the mesh's skin's
/// joint list and `actor_node` names a joint's node in the actor.
fn skin_nodes(
    m: &Mesh,
    nodes: Option<&[usize]>,
    actor_node: &dyn Fn(usize) -> Option<usize>,
) -> Vec<Vec<(Option<usize>, f32)>> {
    let v = &m.vertices;
    let (Some(js), Some(ws), Some(nodes)) = (&v.joints, &v.weights, nodes) else {
        return Vec::new();
    };
    js.iter()
        .zip(ws)
        .map(|(j, w)| {
            let mut x: Vec<(Option<usize>, f32)> = (j.iter().zip(w))
                .filter(|(_, &w)| w > 0.0)
                .map(|(&j, &w)| (nodes.get(usize::from(j)).copied().and_then(actor_node), w))
                .collect();
            x.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            x
        })
        .collect()
}

fn same_weights(a: &[Vec<(Option<usize>, f32)>], b: &[Vec<(Option<usize>, f32)>]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            x.len() == y.len()
                && x.iter().zip(y).all(|(p, q)| {
                    p.0.is_some() && p.0 == q.0 && (p.1 - q.1).abs() <= WEIGHT_TOLERANCE
                })
        })
}

/// The floats of a value in the file's byte order.
fn float_bytes(v: &[f32], big: bool) -> Vec<u8> {
    v.iter()
        .flat_map(|x| {
            if big {
                x.to_be_bytes()
            } else {
                x.to_le_bytes()
            }
        })
        .collect()
}

/// One vertex's value of attribute layer `ty` (the `set`th of its kind) in the file's frame, when
/// the edit changed it.
fn changed(ty: i64, set: usize, i: usize, now: &Mesh, was: &Mesh, big: bool) -> Option<Vec<u8>> {
    let (a, b) = (&now.vertices, &was.vertices);
    let differs = |x: Option<&[f32]>, y: Option<&[f32]>| x.is_some() && x != y;
    let file = |p: [f32; 3]| super::build::mirror(p);
    match ty {
        0 => {
            let (x, y) = (a.positions.get(i)?, b.positions.get(i));
            differs(Some(x), y.map(|y| &y[..])).then(|| float_bytes(&file(*x), big))
        }
        1 => {
            let x = a.normals.as_ref()?.get(i)?;
            let y = b.normals.as_ref().and_then(|n| n.get(i));
            differs(Some(x), y.map(|y| &y[..])).then(|| float_bytes(&file(*x), big))
        }
        2 => {
            let x = a.tangents.as_ref()?.get(i)?;
            let y = b.tangents.as_ref().and_then(|n| n.get(i));
            let d = file([x[0], x[1], x[2]]);
            differs(Some(x), y.map(|y| &y[..])).then(|| float_bytes(&[d[0], d[1], d[2], x[3]], big))
        }
        3 => {
            let x = a.uvs.get(set)?.get(i)?;
            let y = b.uvs.get(set).and_then(|u| u.get(i));
            differs(Some(x), y.map(|y| &y[..])).then(|| float_bytes(x, big))
        }
        4 => {
            let x = a.colors.get(set)?.get(i)?;
            let y = b.colors.get(set).and_then(|u| u.get(i));
            let byte = |c: f32| (c.clamp(0.0, 1.0) * 255.0).round() as u8;
            differs(Some(x), y.map(|y| &y[..])).then(|| x.map(byte).to_vec())
        }
        _ => None,
    }
}

/// The layer kinds the reader takes (type, size a vertex) and whether it reads more than one.
const LAYERS: [(i64, usize, bool); 5] = [
    (0, 12, false),
    (1, 12, false),
    (2, 16, false),
    (3, 8, true),
    (4, 4, true),
];

/// Writes the vertices the edit changed into the mesh chunk's own layers: the layer the reader
/// took each value from, at that vertex; every other byte is kept.
fn patch_layers(chunk: &mut Chunk, now: &Mesh, was: &Mesh, big: bool) {
    let Body::Fields(f) = &mut chunk.body else {
        return;
    };
    let count = int(&f["numVertices"]).max(0) as usize;
    let mut seen = [0usize; 5];
    let mut touched = false;
    for layer in f["layers"].as_array_mut().into_iter().flatten() {
        let (ty, size) = (int(&layer["type"]), int(&layer["attribSize"]) as usize);
        let Some(kind) = LAYERS.iter().position(|l| l.0 == ty && l.1 == size) else {
            continue;
        };
        let mut data = blob(&layer["data"]);
        if count.checked_mul(size) != Some(data.len()) {
            continue; // skipped by the reader too
        }
        let set = seen[kind];
        seen[kind] += 1;
        if set > 0 && !LAYERS[kind].2 {
            continue;
        }
        let mut here = false;
        for i in 0..count {
            if let Some(b) = changed(ty, set, i, now, was, big) {
                data[i * size..(i + 1) * size].copy_from_slice(&b);
                here = true;
            }
        }
        if here {
            layer["data"] = Bytes::borrowed(&data).to_base64().into();
            touched = true;
        }
    }
    if touched {
        chunk.declared = None;
    }
}

/// The original mesh's layers the builder does not write (tangents, colours, more UV sets), made
/// from the edited vertices in the builder's order, so a rebuilt mesh keeps what it had.
fn add_layers(chunk: &mut Chunk, was: &Value, now: &Mesh, order: &[usize], big: bool) {
    let Body::Fields(f) = &mut chunk.body else {
        return;
    };
    let v = &now.vertices;
    let mut uv_sets = 0;
    let mut colour_sets = 0;
    let mut add = Vec::new();
    for layer in was["layers"].as_array().into_iter().flatten() {
        let data: Option<Vec<u8>> = match (int(&layer["type"]), int(&layer["attribSize"])) {
            (2, 16) if !add.iter().any(|(t, _)| *t == 2) => v.tangents.as_ref().map(|t| {
                let one = |i: usize| {
                    let x = t.get(i).copied().unwrap_or([1.0, 0.0, 0.0, 1.0]);
                    let d = super::build::mirror([x[0], x[1], x[2]]);
                    float_bytes(&[d[0], d[1], d[2], x[3]], big)
                };
                order.iter().flat_map(|&i| one(i)).collect()
            }),
            (3, 8) => {
                uv_sets += 1;
                // The builder writes the first set.
                (uv_sets > 1)
                    .then(|| v.uvs.get(uv_sets - 1))
                    .flatten()
                    .map(|u| {
                        let one =
                            |i: usize| float_bytes(&u.get(i).copied().unwrap_or_default(), big);
                        order.iter().flat_map(|&i| one(i)).collect()
                    })
            }
            (4, 4) => {
                colour_sets += 1;
                v.colors.get(colour_sets - 1).map(|c| {
                    let byte = |x: f32| (x.clamp(0.0, 1.0) * 255.0).round() as u8;
                    let one = |i: usize| c.get(i).copied().unwrap_or([1.0; 4]).map(byte);
                    order.iter().flat_map(|&i| one(i)).collect()
                })
            }
            _ => None,
        };
        if let Some(d) = data {
            let mut l = layer.clone();
            l["data"] = Bytes::borrowed(&d).to_base64().into();
            add.push((int(&layer["type"]), l));
        }
    }
    if let Some(layers) = f["layers"].as_array_mut() {
        layers.extend(add.into_iter().map(|(_, l)| l));
        let n = layers.len();
        f["numAttribLayers"] = n.into();
    }
}

/// Each sub-mesh's bone list (the nodes its vertices' influences name), where the original's
/// sub-meshes list their bones.
fn submesh_bones(mesh: &mut Value, was: &Value, skin: &Chunk) {
    let listed = was["subMeshes"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|s| int(&s["numBones"]) > 0);
    let Some(s) = skin.fields().filter(|_| listed) else {
        return;
    };
    let influences = s["influences"].as_array().cloned().unwrap_or_default();
    let ranges = s["ranges"].as_array().cloned().unwrap_or_default();
    let mut start = 0usize;
    for sm in mesh["subMeshes"].as_array_mut().into_iter().flatten() {
        let n = int(&sm["numVertices"]).max(0) as usize;
        let mut bones = std::collections::BTreeSet::new();
        for r in ranges.iter().skip(start).take(n) {
            let (first, count) = (
                int(&r["first"]).max(0) as usize,
                int(&r["count"]).max(0) as usize,
            );
            for x in influences.iter().skip(first).take(count) {
                bones.insert(int(&x["bone"]));
            }
        }
        start += n;
        sm["numBones"] = bones.len().into();
        sm["bones"] = bones.into_iter().collect::<Vec<_>>().into();
    }
}

/// Warnings for the kept morph targets that move vertices of the rebuilt mesh of actor node
/// `owner` (now `count` vertices): their vertex numbers are the original mesh's.
fn morphs_of(file: &File, owner: usize, count: usize, name: &str) -> Vec<Warning> {
    let mut out = Vec::new();
    let targets = file
        .fields_of("morphTargets")
        .flat_map(|c| c["targets"].as_array().into_iter().flatten());
    for (ti, t) in targets.enumerate() {
        for (di, d) in (t["deformations"].as_array().into_iter().flatten()).enumerate() {
            if int(&d["node"]) != owner as i64 {
                continue;
            }
            let indices = d["vertexIndices"].as_array().map_or(&[][..], |a| &a[..]);
            let gone = indices
                .iter()
                .filter(|i| i.as_u64().is_none_or(|i| i >= count as u64))
                .count();
            let what = if gone > 0 {
                format!("{gone} of the {} vertices it moves are gone", indices.len())
            } else {
                format!("it moves {} vertices by their old numbers", indices.len())
            };
            out.push(Warning::new(
                None,
                format!("XAC.morphTargets[{ti}].deformations[{di}]"),
                format!(
                    "morph target {:?} is kept from the original, but the edit changed the mesh of {name:?} it deforms ({count} vertices now; {what}): check it in the game",
                    text(&t["name"]).unwrap_or("")
                ),
            ));
        }
    }
    out
}
