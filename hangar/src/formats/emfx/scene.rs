//! Actors (XAC) to the neutral scene and motions (XSM) to its animations.
//!
//! Axes: like XMF, Emotion FX files for these games are left-handed; X is mirrored into glTF's
//! right-handed frame (positions, normals and tangents `x -> -x`, quaternions `(x, -y, -z, w)`),
//! and the index order is turned around so faces keep pointing out (checked on the corpus against
//! the stored normals, see tests/emfx_corpus.rs).
//!
//! Skinned meshes sit at the scene root with one skin whose joints are every node and whose inverse
//! bind matrices are the inverses of the nodes' rest world matrices; their vertices are in model
//! space. Meshes without a skin hang on their node. Collision meshes are separate nodes marked as
//! collision.

use super::{File, Kind};
use crate::error::{Error, Result, Warning};
use crate::model::{
    Animation, Channel, Interpolation, Material, Mesh, Node, Primitive, Property, Role, Scene,
    Skin, Textures, Vertices,
};
use glam::{Mat4, Quat, Vec3};
use serde_json::{json, Map, Value};

use crate::formats::schema::value::{bytes as blob, f32 as f32_of, floats, int};

fn text(v: &Value) -> String {
    crate::formats::schema::value::text(v)
        .unwrap_or("")
        .to_string()
}

/// File frame -> glTF frame: mirror X.
fn mirror(p: [f32; 3]) -> [f32; 3] {
    [-p[0], p[1], p[2]]
}

fn mirror_quat(q: [f32; 4]) -> Quat {
    let q = Quat::from_xyzw(q[0], -q[1], -q[2], q[3]);
    if q.is_finite() && q.length_squared() > 1e-12 {
        q.normalize()
    } else {
        Quat::IDENTITY
    }
}

/// A quaternion of four i16 (value / 32767).
fn quat16(v: &Value) -> [f32; 4] {
    [0, 1, 2, 3].map(|k| int(&v[k]) as f32 / 32767.0)
}

/// The node list of an actor: from the 0xB chunk, or one 0x0 chunk a node in older files.
fn node_fields(f: &File) -> Vec<&Value> {
    if let Some(b) = f.fields_of("nodes").next() {
        return b["nodes"]
            .as_array()
            .map(|a| a.iter().collect())
            .unwrap_or_default();
    }
    f.fields_of("node").collect()
}

/// The sub-motions of a motion: those of 0xCA chunks, then one a 0xC8 chunk.
pub fn sub_motions(f: &File) -> Vec<&Value> {
    let mut subs: Vec<&Value> = f
        .fields_of("boneAnimation")
        .flat_map(|c| c["subMotions"].as_array().into_iter().flatten())
        .collect();
    subs.extend(f.fields_of("subMotion"));
    subs
}

/// The morph target names of an actor, in chunk order.
pub fn morph_target_names(f: &File) -> Vec<String> {
    f.fields_of("morphTargets")
        .flat_map(|c| c["targets"].as_array().into_iter().flatten())
        .map(|t| text(&t["name"]))
        .collect()
}

/// The names a motion drives: nodes (XSM) or morph targets (XPM).
pub fn driven_names(f: &File) -> Vec<String> {
    let mut names: Vec<String> = sub_motions(f).iter().map(|s| text(&s["name"])).collect();
    names.extend(
        f.fields_of("morphAnimation")
            .flat_map(|c| c["tracks"].as_array().into_iter().flatten())
            .map(|t| text(&t["name"])),
    );
    names
}

/// The node names, in node order.
pub fn node_names(f: &File) -> Vec<String> {
    node_fields(f).iter().map(|n| text(&n["name"])).collect()
}

/// The node parents (-1 for a root), in node order.
pub fn node_parents(f: &File) -> Vec<i64> {
    node_fields(f).iter().map(|n| int(&n["parent"])).collect()
}

/// Builds the scene of an actor.
pub fn to_scene(f: &File, name: &str) -> Result<(Scene, Vec<Warning>)> {
    if f.kind == Kind::Xsm {
        return motion_alone(f, name);
    }
    if f.kind != Kind::Xac {
        return Err(Error::unsupported(format!(
            "a {} file is a motion: convert its actor with --motion {}",
            f.kind.name(),
            f.kind.name().to_ascii_lowercase()
        )));
    }
    let mut scene = Scene {
        name: name.to_string(),
        ..Default::default()
    };
    let mut warnings = Vec::new();
    let nodes = node_fields(f);
    let n = nodes.len();
    for (i, nd) in nodes.iter().enumerate() {
        let mut node = Node::new(text(&nd["name"]));
        let p = int(&nd["parent"]);
        node.parent = (p >= 0 && (p as usize) < n && p as usize != i).then_some(p as usize);
        node.translation = Vec3::from(mirror(floats::<3>(&nd["position"])));
        node.rotation = mirror_quat(floats::<4>(&nd["rotation"]));
        let s = floats::<3>(&nd["scale"]);
        node.scale = Vec3::from(s.map(|c| if c == 0.0 { 1.0 } else { c }));
        scene.nodes.push(node);
    }
    for i in scene.cut_parent_loops(0..n, None) {
        warnings.push(Warning::new(
            None,
            format!("XAC.nodes[{i}].parent"),
            "the parent chain loops: the node is made a root",
        ));
    }

    // glTF wants the joints of a skin under one root: actors with several root nodes (helpers,
    // cameras beside the skeleton) get one, marked so the way back leaves it out.
    let roots = (0..n).filter(|&i| scene.nodes[i].parent.is_none()).count();
    if roots > 1 {
        let mut root = Node::new(name);
        root.extras
            .insert("hangar".into(), json!({ "actor_root": true }));
        scene.nodes.push(root);
        for node in scene.nodes.iter_mut().take(n) {
            if node.parent.is_none() {
                node.parent = Some(n);
            }
        }
    }

    materials(f, &mut scene);

    let skinned_any = f.fields_of("skinning").next().is_some() && n > 0;
    if skinned_any {
        let inverse_bind = (0..n)
            .map(|i| scene.world_matrix(i).inverse().to_cols_array())
            .map(|m| {
                if m.iter().all(|v| v.is_finite()) {
                    m
                } else {
                    Mat4::IDENTITY.to_cols_array()
                }
            })
            .collect();
        scene.skins.push(Skin {
            name: format!("{name} skeleton"),
            joints: (0..n).collect(),
            inverse_bind,
        });
    }

    for (mi, mesh) in f.fields_of("mesh").enumerate() {
        let path = format!("XAC.meshes[{mi}]");
        let node = int(&mesh["node"]);
        let collision = int(&mesh["isCollision"]) != 0;
        let skin = f
            .fields_of("skinning")
            .find(|s| int(&s["node"]) == node && (int(&s["isCollision"]) != 0) == collision);
        let (m, w) = build_mesh(f.big_endian(), mesh, skin, n, &scene.materials, &path)?;
        warnings.extend(w);
        let node_name = usize::try_from(node)
            .ok()
            .and_then(|i| scene.nodes.get(i))
            .map_or("mesh".to_string(), |x| x.name.clone());
        scene.meshes.push(m);
        let mut mnode = Node::new(if collision {
            format!("{node_name} collision")
        } else {
            node_name
        });
        mnode.mesh = Some(scene.meshes.len() - 1);
        mnode.role = if collision {
            Role::Collision
        } else {
            Role::Visual
        };
        let skinned = scene
            .meshes
            .last()
            .is_some_and(|m| m.vertices.joints.is_some())
            && !scene.skins.is_empty();
        if skinned {
            mnode.skin = Some(0);
        } else {
            mnode.parent = usize::try_from(node).ok().filter(|&i| i < n);
        }
        scene.nodes.push(mnode);
    }

    morph_targets(f, &mut scene, &mut warnings);

    // Mesh LODs: the nested actors, each under its own marked node.
    for (li, lod) in f.fields_of("meshLod").enumerate() {
        let level = int(&lod["level"]);
        match super::from_json(&lod["actor"])
            .and_then(|a| to_scene(&a, &format!("{name} lod{level}")))
        {
            Ok((sub, w)) => {
                warnings.extend(w);
                merge_lod(&mut scene, sub, level);
            }
            Err(e) => warnings.push(Warning::new(
                e.offset,
                format!("XAC.meshLods[{li}]"),
                format!("LOD {level} left out: {e}"),
            )),
        }
    }
    Ok((scene, warnings))
}

/// Adds a LOD actor's meshes under one node marked `{"hangar": {"lod": level}}` (static, in its rest pose).
fn merge_lod(scene: &mut Scene, sub: Scene, level: i64) {
    let mut holder = Node::new(format!("LOD {level}"));
    holder
        .extras
        .insert("hangar".into(), json!({ "lod": level }));
    let holder_index = scene.nodes.len();
    scene.nodes.push(holder);
    let mat_base = scene.materials.len();
    scene.materials.extend(sub.materials.iter().cloned());
    for (i, node) in sub.nodes.iter().enumerate() {
        let Some(mi) = node.mesh else { continue };
        let mut m = sub.meshes[mi].clone();
        for p in &mut m.primitives {
            p.material = p.material.map(|x| x + mat_base);
        }
        // Skinned LOD vertices are in model space; others take their node's rest transform.
        if node.skin.is_none() {
            let world = sub.world_matrix(i);
            for v in &mut m.vertices.positions {
                *v = world.transform_point3(Vec3::from(*v)).to_array();
            }
        }
        m.vertices.joints = None;
        m.vertices.weights = None;
        scene.meshes.push(m);
        let mut n = Node::new(format!("LOD {level} {}", node.name));
        n.parent = Some(holder_index);
        n.mesh = Some(scene.meshes.len() - 1);
        n.role = node.role;
        scene.nodes.push(n);
    }
}

/// Chunk 0xC: each target's deformations become glTF morph targets on the visual mesh of their node
/// (offsets decoded as the spec says: position = min + (max - min) * x / 65535, normal = x / 127.5 - 1).
fn morph_targets(f: &File, scene: &mut Scene, warnings: &mut Vec<Warning>) {
    let big = f.big_endian();
    let u16_at = |b: &[u8], i: usize| {
        let a = [b[i], b[i + 1]];
        if big {
            u16::from_be_bytes(a)
        } else {
            u16::from_le_bytes(a)
        }
    };
    for (ti, t) in f
        .fields_of("morphTargets")
        .flat_map(|c| c["targets"].as_array().into_iter().flatten())
        .enumerate()
    {
        let name = text(&t["name"]);
        for (di, d) in t["deformations"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            let path = format!("XAC.morphTargets[{ti}].deformations[{di}]");
            let node = int(&d["node"]);
            let Some(mi) = scene.nodes.iter().filter_map(|n| n.mesh).find(|&m| {
                let x = &scene.meshes[m].extras["xac"];
                int(&x["node"]) == node && int(&x["isCollision"]) == 0
            }) else {
                warnings.push(Warning::new(
                    None,
                    &path,
                    format!("node {node} has no visual mesh: target {name:?} skipped there"),
                ));
                continue;
            };
            let mesh = &mut scene.meshes[mi];
            let count = mesh.vertices.len();
            let (lo, hi) = (f32_of(&d["minValue"]), f32_of(&d["maxValue"]));
            let pos = blob(&d["positionOffsets"]);
            let nor = blob(&d["normalOffsets"]);
            let idx: Vec<usize> = d["vertexIndices"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|i| i.as_u64().unwrap_or(u64::MAX) as usize)
                .collect();
            let mut target = crate::model::MorphTarget {
                name: name.clone(),
                positions: vec![[0.0; 3]; count],
                normals: mesh
                    .vertices
                    .normals
                    .as_ref()
                    .map(|_| vec![[0.0; 3]; count]),
            };
            let mut outside = 0;
            for (k, &v) in idx.iter().enumerate() {
                if v >= count || pos.len() < (k + 1) * 6 {
                    outside += 1;
                    continue;
                }
                let p = [0, 1, 2]
                    .map(|a| lo + (hi - lo) * u16_at(&pos, k * 6 + a * 2) as f32 / 65535.0);
                target.positions[v] = mirror(p);
                if let (Some(ns), Some(b)) = (target.normals.as_mut(), nor.get(k * 3..k * 3 + 3)) {
                    ns[v] = mirror([0, 1, 2].map(|a| b[a] as f32 / 127.5 - 1.0));
                }
            }
            if outside > 0 {
                warnings.push(Warning::new(
                    None,
                    format!("{path}.vertexIndices"),
                    format!("{outside} offsets name vertices outside the mesh's {count}: skipped"),
                ));
            }
            mesh.morph_targets.push(target);
        }
    }
}

fn materials(f: &File, scene: &mut Scene) {
    let separate_layers: Vec<&Value> = f.fields_of("materialLayer").collect();
    for (i, m) in f.fields_of("material").enumerate() {
        let mut layers: Vec<&Value> = m["layers"]
            .as_array()
            .map(|a| a.iter().collect())
            .unwrap_or_default();
        layers.extend(
            separate_layers
                .iter()
                .copied()
                .filter(|l| int(&l["materialId"]) == i as i64),
        );
        let mut textures = Textures::default();
        for l in &layers {
            let tex = text(&l["texture"]);
            if tex.is_empty() {
                continue;
            }
            // Map types: 2 diffuse, 3 specular, 4 opacity, 5 bump, 6 self-illumination, 12 normal.
            match int(&l["mapType"]) {
                2 => textures.base_color.get_or_insert(tex),
                5 | 12 => textures.normal.get_or_insert(tex),
                6 => textures.emissive.get_or_insert(tex),
                _ => continue,
            };
        }
        let mut extras = Map::new();
        extras.insert(
            "xac".into(),
            json!({
                "diffuse": m["diffuse"],
                "opacity": m["opacity"],
                "doubleSided": m["doubleSided"],
                "layers": layers.iter().map(|l| json!({ "texture": l["texture"], "mapType": l["mapType"] })).collect::<Vec<_>>(),
            }),
        );
        // EMFX standard materials are diffuse and specular colours: nothing metal.
        let look = crate::model::Look {
            metallic: 0.0,
            double_sided: m["doubleSided"].as_u64().is_some_and(|d| d != 0),
            ..Default::default()
        };
        scene.materials.push(Material {
            name: text(&m["name"]),
            textures,
            look,
            extras,
        });
    }
}

/// Attribute data (kept as stored) as `width` floats a vertex, in the file's byte order.
fn f32s(b: &[u8], width: usize, big: bool) -> Vec<Vec<f32>> {
    b.chunks_exact(4 * width)
        .map(|c| {
            c.chunks_exact(4)
                .map(|x| {
                    let a = [x[0], x[1], x[2], x[3]];
                    let f = if big {
                        f32::from_be_bytes(a)
                    } else {
                        f32::from_le_bytes(a)
                    };
                    if f.is_finite() {
                        f
                    } else {
                        0.0
                    }
                })
                .collect()
        })
        .collect()
}

fn build_mesh(
    big: bool,
    mesh: &Value,
    skin: Option<&Value>,
    node_count: usize,
    materials: &[Material],
    path: &str,
) -> Result<(Mesh, Vec<Warning>)> {
    let mut warnings = Vec::new();
    let count = int(&mesh["numVertices"]).max(0) as usize;
    let mut v = Vertices::default();
    let mut original: Option<Vec<u32>> = None;
    for (li, layer) in mesh["layers"].as_array().into_iter().flatten().enumerate() {
        let size = int(&layer["attribSize"]) as usize;
        let data = blob(&layer["data"]);
        if size == 0 || count.checked_mul(size) != Some(data.len()) {
            warnings.push(Warning::new(
                None,
                format!("{path}.layers[{li}]"),
                "attribute data does not match the vertex count: skipped",
            ));
            continue;
        }
        match (int(&layer["type"]), size) {
            (0, 12) if v.positions.is_empty() => {
                v.positions = f32s(&data, 3, big)
                    .into_iter()
                    .map(|p| mirror([p[0], p[1], p[2]]))
                    .collect();
            }
            (1, 12) if v.normals.is_none() => {
                v.normals = Some(
                    f32s(&data, 3, big)
                        .into_iter()
                        .map(|p| {
                            Vec3::from(mirror([p[0], p[1], p[2]]))
                                .normalize_or(Vec3::Y)
                                .to_array()
                        })
                        .collect(),
                );
            }
            (2, 16) if v.tangents.is_none() => {
                v.tangents = Some(
                    f32s(&data, 4, big)
                        .into_iter()
                        .map(|t| {
                            let d = Vec3::from(mirror([t[0], t[1], t[2]])).normalize_or(Vec3::X);
                            // The mirror and glTF's -V bitangent cancel out: the sign is kept
                            // (measured on the corpus, see tests/tangents.rs).
                            [d.x, d.y, d.z, if t[3] < 0.0 { -1.0 } else { 1.0 }]
                        })
                        .collect(),
                );
            }
            (3, 8) => v.uvs.push(
                f32s(&data, 2, big)
                    .into_iter()
                    .map(|u| [u[0], u[1]])
                    .collect(),
            ),
            (4, 4) => v.colors.push(
                data.chunks_exact(4)
                    .map(|c| [c[0], c[1], c[2], c[3]].map(|x| x as f32 / 255.0))
                    .collect(),
            ),
            (5, 4) => {
                original = Some(
                    data.chunks_exact(4)
                        .map(|c| {
                            let a = [c[0], c[1], c[2], c[3]];
                            if big {
                                u32::from_be_bytes(a)
                            } else {
                                u32::from_le_bytes(a)
                            }
                        })
                        .collect(),
                )
            }
            _ => {}
        }
    }
    if v.positions.len() != count {
        return Err(Error::new(
            crate::error::ErrorKind::Invalid,
            None,
            format!("{path}.layers"),
            "the mesh has no position layer",
        ));
    }
    // Skin: each vertex's influence range (attribute layer 5) -> influences -> at most 4 bones.
    if let (Some(s), Some(ranges_of)) = (skin, &original) {
        let influences: Vec<(f32, i64)> = s["influences"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|x| (f32_of(&x["weight"]), int(&x["bone"])))
            .collect();
        let ranges: Vec<(usize, usize)> = s["ranges"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| {
                (
                    int(&r["first"]).max(0) as usize,
                    int(&r["count"]).max(0) as usize,
                )
            })
            .collect();
        let mut joints = Vec::with_capacity(count);
        let mut weights = Vec::with_capacity(count);
        let (mut over, mut broken) = (0usize, 0usize);
        for &r in ranges_of {
            let mut w: Vec<(f32, u16)> = match ranges.get(r as usize) {
                Some(&(first, n)) if first + n <= influences.len() => influences[first..first + n]
                    .iter()
                    .filter(|(wt, b)| {
                        *wt > 0.0 && wt.is_finite() && (*b as usize) < node_count && *b >= 0
                    })
                    .map(|&(wt, b)| (wt, b as u16))
                    .collect(),
                _ => {
                    broken += 1;
                    Vec::new()
                }
            };
            w.sort_by(|a, b| b.0.total_cmp(&a.0));
            if w.len() > 4 {
                over += 1;
                w.truncate(4);
            }
            let sum: f32 = w.iter().map(|x| x.0).sum();
            let mut j = [0u16; 4];
            let mut wt = [0f32; 4];
            if sum > 0.0 {
                for (k, (x, b)) in w.iter().enumerate() {
                    j[k] = *b;
                    wt[k] = x / sum;
                }
            } else {
                wt[0] = 1.0;
            }
            joints.push(j);
            weights.push(wt);
        }
        if over > 0 {
            warnings.push(Warning::new(None, path.to_string(), format!("{over} vertices have more than 4 bone weights: the 4 strongest are kept and renormalised")));
        }
        if broken > 0 {
            warnings.push(Warning::new(
                None,
                path.to_string(),
                format!("{broken} vertices point at a missing influence range: bound to node 0"),
            ));
        }
        v.joints = Some(joints);
        v.weights = Some(weights);
    }
    let mut primitives = Vec::new();
    let mut base = 0u64;
    for (si, sm) in mesh["subMeshes"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let mut idx: Vec<u32> = Vec::new();
        let mut bad = 0;
        for tri in sm["indices"]
            .as_array()
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .chunks_exact(3)
        {
            let &[a, b, c] = tri else { continue };
            // In u64: an index near 2^32 plus the vertices before must not wrap onto a valid one.
            let t = [a, b, c].map(|v| v.as_u64().unwrap_or(u64::MAX).saturating_add(base));
            if t.iter().any(|&i| i >= count as u64) {
                bad += 1;
                continue;
            }
            let t = t.map(|i| i as u32);
            // Mirroring turns the winding around: swap two corners.
            idx.extend_from_slice(&[t[0], t[2], t[1]]);
        }
        if bad > 0 {
            warnings.push(Warning::new(
                None,
                format!("{path}.subMeshes[{si}]"),
                format!("{bad} triangles index past the {count} vertices: dropped"),
            ));
        }
        base = base.saturating_add(int(&sm["numVertices"]).max(0) as u64);
        let material = usize::try_from(int(&sm["materialId"]))
            .ok()
            .filter(|&m| m < materials.len());
        primitives.push(Primitive {
            indices: idx,
            material,
        });
    }
    let mut extras = Map::new();
    extras.insert(
        "xac".into(),
        json!({ "node": mesh["node"], "isCollision": mesh["isCollision"] }),
    );
    Ok((
        Mesh {
            name: format!("mesh of node {}", mesh["node"]),
            vertices: v,
            primitives,
            extras,
            morph_targets: Vec::new(),
        },
        warnings,
    ))
}

/// A skeletal motion without its actor: one empty node a moved node name under one root, and the
/// motion as one animation, so it can be looked at and attached to an actor later by name.
fn motion_alone(f: &File, name: &str) -> Result<(Scene, Vec<Warning>)> {
    let mut scene = Scene {
        name: name.to_string(),
        ..Default::default()
    };
    let mut root = Node::new(name);
    root.extras
        .insert("hangar".into(), json!({ "motion_only": true }));
    scene.nodes.push(root);
    for s in sub_motions(f) {
        let node_name = text(&s["name"]);
        if scene.nodes.iter().skip(1).all(|n| n.name != node_name) {
            let mut n = Node::new(node_name);
            n.parent = Some(0);
            scene.nodes.push(n);
        }
    }
    let warnings = add_motion(&mut scene, f, name)?;
    Ok((scene, warnings))
}

/// Adds the animation of a motion file (XSM) to `scene`, bound to nodes by name. Names that do not
/// resolve are reported.
pub fn add_motion(scene: &mut Scene, motion: &File, label: &str) -> Result<Vec<Warning>> {
    match motion.kind {
        Kind::Xsm => {}
        Kind::Xpm => return add_morph_motion(scene, motion, label),
        Kind::Xac => {
            return Err(Error::unsupported(format!(
                "{label}: an actor is not a motion"
            )))
        }
    }
    let mut warnings = Vec::new();
    let subs = sub_motions(motion);
    let mut channels = Vec::new();
    let mut missing = Vec::new();
    for s in subs {
        let node_name = text(&s["name"]);
        let Some(node) = scene
            .nodes
            .iter()
            .position(|n| n.name == node_name && n.mesh.is_none())
        else {
            missing.push(node_name);
            continue;
        };
        channels.extend(sub_motion_channels(s, node));
    }
    warnings.extend(finish(
        scene,
        motion,
        label,
        channels,
        &missing,
        "sub-motions name no node",
    ));
    Ok(warnings)
}

/// The channels of one sub-motion on `node`, in the scene's frame: a track without keys holds the
/// node in the pose.
pub fn sub_motion_channels(s: &Value, node: usize) -> Vec<Channel> {
    let mut channels = Vec::new();
    let q16 = s["rotationKeys"]
        .as_array()
        .and_then(|k| k.first())
        .is_some_and(|k| k["value"][0].is_i64());
    let pose_q16 = s["poseRotation"][0].is_i64();
    let tracks: [(&str, &str, Property); 3] = [
        ("positionKeys", "posePosition", Property::Translation),
        ("rotationKeys", "poseRotation", Property::Rotation),
        ("scaleKeys", "poseScale", Property::Scale),
    ];
    for (key, pose, property) in tracks {
        let keys = s[key].as_array().map(Vec::as_slice).unwrap_or_default();
        let mut times: Vec<f32> = Vec::new();
        let mut values = Vec::new();
        if keys.is_empty() {
            // No keys: the motion holds the node in its pose.
            times.push(0.0);
            match property {
                Property::Translation => values.extend(mirror(floats::<3>(&s[pose]))),
                Property::Scale | Property::Weights => {
                    values.extend(floats::<3>(&s[pose]).map(|c| if c == 0.0 { 1.0 } else { c }))
                }
                Property::Rotation => {
                    let q = if pose_q16 {
                        quat16(&s[pose])
                    } else {
                        floats::<4>(&s[pose])
                    };
                    values.extend(mirror_quat(q).to_array());
                }
            }
        }
        for k in keys {
            let t = f32_of(&k["time"]);
            if !t.is_finite() || t < 0.0 || times.last().is_some_and(|&l| t <= l) {
                continue;
            }
            times.push(t);
            match property {
                Property::Translation => values.extend(mirror(floats::<3>(&k["value"]))),
                Property::Scale | Property::Weights => values.extend(floats::<3>(&k["value"])),
                Property::Rotation => {
                    let q = if q16 {
                        quat16(&k["value"])
                    } else {
                        floats::<4>(&k["value"])
                    };
                    values.extend(mirror_quat(q).to_array());
                }
            }
        }
        if !times.is_empty() {
            channels.push(Channel {
                node,
                property,
                interpolation: Interpolation::Linear,
                times: times.into(),
                values: values.into(),
            });
        }
    }
    channels
}

/// Adds a morph motion (XPM): one weights channel a mesh with morph targets, bound by target name,
/// keys at every time any of its tracks has one (amount / 65535, linear between keys).
fn add_morph_motion(scene: &mut Scene, motion: &File, label: &str) -> Result<Vec<Warning>> {
    let mut warnings = Vec::new();
    let tracks: Vec<(String, Vec<(f32, f32)>)> = motion
        .fields_of("morphAnimation")
        .flat_map(|c| c["tracks"].as_array().into_iter().flatten())
        .map(|t| {
            let keys = t["keys"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|k| (f32_of(&k["time"]), int(&k["amount"]) as f32 / 65535.0))
                .filter(|k| k.0.is_finite() && k.0 >= 0.0)
                .collect();
            (text(&t["name"]), keys)
        })
        .collect();
    let value_at = |keys: &[(f32, f32)], t: f32| -> f32 {
        let i = keys.partition_point(|k| k.0 <= t);
        match (i.checked_sub(1).map(|j| keys[j]), keys.get(i)) {
            (Some(a), Some(b)) if b.0 > a.0 => a.1 + (b.1 - a.1) * (t - a.0) / (b.0 - a.0),
            (Some(a), _) => a.1,
            (None, Some(b)) => b.1,
            (None, None) => 0.0,
        }
    };
    let mut channels = Vec::new();
    let mut used = vec![false; tracks.len()];
    for (ni, n) in scene.nodes.iter().enumerate() {
        let Some(mesh) = n.mesh.map(|m| &scene.meshes[m]) else {
            continue;
        };
        if mesh.morph_targets.is_empty() {
            continue;
        }
        let mine: Vec<Option<usize>> = mesh
            .morph_targets
            .iter()
            .map(|t| tracks.iter().position(|tr| tr.0 == t.name))
            .collect();
        let mut times: Vec<f32> = mine
            .iter()
            .flatten()
            .flat_map(|&i| tracks[i].1.iter().map(|k| k.0))
            .collect();
        if times.is_empty() {
            continue;
        }
        times.sort_by(f32::total_cmp);
        times.dedup();
        let mut values = Vec::with_capacity(times.len() * mine.len());
        for &t in &times {
            for m in &mine {
                values.push(m.map_or(0.0, |i| value_at(&tracks[i].1, t)));
            }
        }
        mine.iter().flatten().for_each(|&i| used[i] = true);
        channels.push(Channel {
            node: ni,
            property: Property::Weights,
            interpolation: Interpolation::Linear,
            times: times.into(),
            values: values.into(),
        });
    }
    let unused: Vec<String> = tracks
        .iter()
        .zip(&used)
        .filter(|(_, u)| !**u)
        .map(|(t, _)| t.0.clone())
        .collect();
    warnings.extend(finish(
        scene,
        motion,
        label,
        channels,
        &unused,
        "morph tracks name no morph target",
    ));
    Ok(warnings)
}

/// Reports the names that bound to nothing and adds the motion's animation (named by its metadata)
/// when it has channels.
fn finish(
    scene: &mut Scene,
    motion: &File,
    label: &str,
    channels: Vec<Channel>,
    unbound: &[String],
    what: &str,
) -> Vec<Warning> {
    let mut warnings = Vec::new();
    if !unbound.is_empty() {
        warnings.push(Warning::new(
            None,
            label,
            format!(
                "{} {what} of the actor: {}",
                unbound.len(),
                unbound.join(", ")
            ),
        ));
    }
    if channels.is_empty() {
        warnings.push(Warning::new(
            None,
            label,
            "the motion moves nothing of the actor: no animation added",
        ));
        return warnings;
    }
    // The file's name tells clips apart; the name inside is often the exporter's scene name, the
    // same for every motion of a folder.
    let inside = motion
        .fields_of("metadata")
        .next()
        .map(|m| text(&m["motionName"]))
        .filter(|s| !s.is_empty() && s != "?");
    let base = Some(label.to_string())
        .filter(|l| !l.is_empty())
        .or(inside)
        .unwrap_or_else(|| motion.kind.name().to_string());
    let mut name = base.clone();
    let mut k = 2;
    while scene.animations.iter().any(|a| a.name == name) {
        name = format!("{base} {k}");
        k += 1;
    }
    let mut extras = Map::new();
    extras.insert(
        motion.kind.name().to_ascii_lowercase(),
        json!({ "file": label }),
    );
    scene.animations.push(Animation {
        name,
        channels,
        extras,
    });
    warnings
}
