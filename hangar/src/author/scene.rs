//! The authoring convention, read once: which node of a scene is a part, a part's LOD or collision
//! mesh, a connection (a hardpoint), or only a group that moves what it holds.
//!
//! - A node holding a mesh is a part named after the node (its mesh is lod0); its children named
//!   `<part>-lod1..3` or `<part>-collision` holding meshes are those pieces of it.
//! - A node without a mesh whose `tags` extra holds the word `part` is a part without geometry.
//! - A node without a mesh with a `tags` extra is a connection named after the node; one without
//!   tags whose name begins `con_weapon`, `con_turret`, `con_shield` or `con_engine` gets the slot's
//!   tags for the ship's size.
//! - A node's string extras (`tags` first, then `group`, `value`, ...) are its connection's
//!   attributes; its parent is the nearest part above it, and its offset is where it stands in that
//!   part's frame, in the game's left-handed axes (glTF's X mirrored, as hangar's export reads it).

use crate::assemble::read::{split_piece_as_written, valid_part_name, Offset, Piece};
use crate::error::{Error, Result, Warning};
use crate::model::{Mesh, Scene};
use glam::{Mat3, Mat4, Quat, Vec3};
use serde_json::Value;

/// A part of the new component.
#[derive(Debug, Clone)]
pub(crate) struct Part {
    /// The scene's node the part is made from (its animation channels name it).
    pub node: usize,
    pub name: String,
    pub parent: Option<String>,
    pub offset: Offset,
    /// The connection's attributes other than `name` and `parent`, `tags` first.
    pub attributes: Vec<(String, String)>,
    /// lod0, in the part's frame.
    pub lod0: Option<Mesh>,
    /// LODs the scene gives (`<part>-lodN`, N >= 1), in the part's frame.
    pub lods: Vec<(u32, Mesh)>,
    /// The collision mesh the scene gives (`<part>-collision`).
    pub collision: Option<Mesh>,
    /// `restrictions` (a string property, types separated by spaces: `rotation_y`).
    pub restrictions: Vec<String>,
    /// From the frame the node's animation values are in (its scene parent's) into the part's
    /// parent's frame, when they differ (a group between, a parent part's scale); and the part's own
    /// scale, which its meshes hold.
    pub frame: Option<Mat4>,
    pub scale: Vec3,
}

/// A light, hanging from a part (or the component).
#[derive(Debug, Clone)]
pub(crate) struct Light {
    pub name: String,
    pub parent: Option<String>,
    pub offset: Offset,
    pub light: crate::model::Light,
    /// The node's string properties (`light` = the element, then the game's attributes).
    pub attributes: Vec<(String, String)>,
}

/// A connection without parts (a hardpoint, a waypoint...).
#[derive(Debug, Clone)]
pub(crate) struct Connection {
    pub name: String,
    pub parent: Option<String>,
    pub offset: Offset,
    pub attributes: Vec<(String, String)>,
    pub restrictions: Vec<String>,
}

/// The scene as the convention reads it.
#[derive(Debug, Default)]
pub(crate) struct Authored {
    pub parts: Vec<Part>,
    pub connections: Vec<Connection>,
    pub lights: Vec<Light>,
    pub warnings: Vec<Warning>,
}

/// The words of a tag list that name a slot's kind; a list with a size word but none of these is
/// refused (`medium standard` mounts nothing).
const KINDS: &[&str] = &[
    "weapon",
    "turret",
    "shield",
    "engine",
    "thruster",
    "missile",
    "jumpdrive",
    "dock",
    "dockingbay",
    "storage",
    "cockpit",
    "countermeasures",
    "radar",
    "scanner",
    "component",
];
const SIZES: &[&str] = &["extrasmall", "small", "medium", "large", "extralarge"];

/// The tags an untagged `con_weapon*` / `con_turret*` / `con_shield*` / `con_engine*` gets.
fn default_tags(name: &str, size: &str) -> Option<String> {
    let lower = name.to_ascii_lowercase();
    let rest = lower.strip_prefix("con_")?;
    ["weapon", "turret", "shield", "engine"]
        .iter()
        .find(|k| rest.starts_with(*k))
        .map(|k| match *k {
            "engine" => format!("engine {size}"),
            "shield" => format!("{size} shield unhittable"),
            k => format!("{k} {size} standard"),
        })
}

/// What a node is under the convention.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Light,
    Part,
    Piece(usize, Piece),
    Connection,
    Group,
}

fn tags_of(extras: &serde_json::Map<String, Value>) -> Option<&str> {
    extras.get("tags").and_then(Value::as_str)
}

/// Whether a tag list names a slot's kind (`weapon`, `dockingbay`...).
fn names_kind(tags: &str) -> bool {
    tags.split_whitespace().any(|w| {
        let w = w.to_ascii_lowercase();
        KINDS.iter().any(|k| w == *k || w.starts_with("dock"))
    })
}

fn has_word(tags: &str, word: &str) -> bool {
    tags.split_whitespace()
        .any(|w| w.eq_ignore_ascii_case(word))
}

/// A key that can be an XML attribute of a connection (`restrictions` is an element of its own).
fn attribute_key(k: &str) -> bool {
    let mut chars = k.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        && !matches!(k, "name" | "parent" | "restrictions")
}

/// The `restrictions` property's types (`rotation_y rotation_x`).
fn restrictions(extras: &serde_json::Map<String, Value>) -> Vec<String> {
    extras
        .get("restrictions")
        .and_then(Value::as_str)
        .map(|r| r.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default()
}

/// The string extras of a node as attributes, `tags` first (with `tags` replaced when given).
fn attributes(
    extras: &serde_json::Map<String, Value>,
    tags: Option<String>,
) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    if let Some(t) = tags.or_else(|| tags_of(extras).map(str::to_string)) {
        out.push(("tags".into(), t));
    }
    for (k, v) in extras {
        if let (Some(v), true) = (v.as_str(), attribute_key(k) && k != "tags") {
            out.push((k.clone(), v.to_string()));
        }
    }
    out
}

/// Reads `scene` by the convention; `size` is the ship's size word (`medium`) for default tags.
pub(crate) fn read(scene: &Scene, size: &str) -> Result<Authored> {
    let n = scene.nodes.len();
    let mut kinds = vec![Kind::Group; n];
    for (i, node) in scene.nodes.iter().enumerate() {
        let tags = tags_of(&node.extras);
        kinds[i] = if node.light.is_some() && node.mesh.is_none() {
            Kind::Light
        } else if node.mesh.is_some() || tags.is_some_and(|t| has_word(t, "part")) {
            Kind::Part
        } else if tags.is_some() || default_tags(&node.name, size).is_some() {
            Kind::Connection
        } else {
            Kind::Group
        };
    }
    // Only parts hold things in a component: a tagged empty something hangs from is a part.
    let holders: Vec<usize> = scene
        .nodes
        .iter()
        .enumerate()
        .filter(|(c, _)| kinds.get(*c).is_some_and(|k| *k != Kind::Group))
        .filter_map(|(_, n)| n.parent)
        .collect();
    for p in holders {
        if let Some(k) = kinds.get_mut(p).filter(|k| **k == Kind::Connection) {
            if scene
                .nodes
                .get(p)
                .is_some_and(|n| tags_of(&n.extras).is_some())
            {
                *k = Kind::Part;
            }
        }
    }
    // Pieces: a mesh child named `<parent>-lodN` / `<parent>-collision` of a part.
    for (i, node) in scene.nodes.iter().enumerate() {
        let Some(p) = node.parent.filter(|&p| kinds.get(p) == Some(&Kind::Part)) else {
            continue;
        };
        let Some(parent) = scene.nodes.get(p) else {
            continue;
        };
        if node.mesh.is_none() {
            continue;
        }
        let base = crate::model::base_name(&node.name);
        if let Some((name, piece)) = split_piece_as_written(base) {
            if name.eq_ignore_ascii_case(crate::model::base_name(&parent.name)) {
                kinds[i] = Kind::Piece(p, piece);
            }
        }
    }
    let mut out = Authored::default();
    out.warnings.extend(unsure(scene, &kinds, size));
    let mut names: Vec<String> = Vec::new();
    for (i, node) in scene.nodes.iter().enumerate() {
        let at = format!("nodes[{i}]");
        match kinds[i] {
            Kind::Group | Kind::Piece(..) => {}
            Kind::Light => {
                let Some(light) = node.light.and_then(|l| scene.lights.get(l)) else {
                    continue;
                };
                let (parent, (_, rotation, translation), _) = placed(scene, &kinds, i);
                let attributes = node
                    .extras
                    .iter()
                    .filter(|(k, _)| attribute_key(k) || k.as_str() == "light")
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                    .collect();
                out.lights.push(Light {
                    name: node.name.clone(),
                    parent,
                    offset: Offset::from_gltf(translation, rotation),
                    light: light.clone(),
                    attributes,
                });
            }
            Kind::Part => {
                let name = node.name.clone();
                if !valid_part_name(&name) || name.contains('#') {
                    return Err(Error::refused(
                        at,
                        format!("part {name:?}: a part's name is letters, digits, _ - . and spaces only"),
                    ));
                }
                // A name used twice (parts reused from other components are): the meshes are
                // the first one's files.
                let again = names.iter().any(|x| x.eq_ignore_ascii_case(&name));
                if again && node.mesh.is_some() {
                    out.warnings.push(Warning::new(
                        None,
                        at.clone(),
                        format!("a second part named {name:?}: its meshes are left out (part names are the file names of its meshes)"),
                    ));
                }
                names.push(name.clone());
                let (parent, (scale, rotation, translation), chain) = placed(scene, &kinds, i);
                let mut tags = tags_of(&node.extras).unwrap_or("").to_string();
                if !has_word(&tags, "part") {
                    tags = format!("part {tags}").trim_end().to_string();
                }
                let in_part = Mat4::from_scale(scale);
                let lod0 = node
                    .mesh
                    .filter(|_| !again)
                    .and_then(|m| scene.meshes.get(m))
                    .map(|m| moved(m, in_part));
                let mut lods = Vec::new();
                let mut collision = None;
                for (c, child) in scene.nodes.iter().enumerate() {
                    let Kind::Piece(p, piece) = kinds[c] else {
                        continue;
                    };
                    let Some(mesh) = child
                        .mesh
                        .and_then(|m| scene.meshes.get(m))
                        .filter(|_| p == i && !again)
                    else {
                        continue;
                    };
                    let mesh = moved(mesh, in_part * child.local_matrix());
                    match piece {
                        Piece::Lod(0) => out.warnings.push(Warning::new(
                            None,
                            format!("nodes[{c}]"),
                            format!(
                                "{:?}: the part's own mesh is its lod0: left out",
                                child.name
                            ),
                        )),
                        Piece::Lod(l) => lods.push((l, mesh)),
                        Piece::Collision if collision.is_none() => collision = Some(mesh),
                        Piece::Collision => out.warnings.push(Warning::new(
                            None,
                            format!("nodes[{c}]"),
                            format!("{:?}: a second collision mesh: left out", child.name),
                        )),
                    }
                }
                lods.sort_by_key(|l| l.0);
                lods.dedup_by_key(|l| l.0);
                out.parts.push(Part {
                    node: i,
                    name,
                    parent,
                    offset: Offset::from_gltf(translation, rotation),
                    attributes: attributes(&node.extras, Some(tags)),
                    lod0,
                    lods,
                    collision,
                    restrictions: restrictions(&node.extras),
                    frame: (!chain.abs_diff_eq(Mat4::IDENTITY, 1e-6)).then_some(chain),
                    scale: node.scale,
                });
            }
            Kind::Connection => {
                let defaults = tags_of(&node.extras)
                    .is_none()
                    .then(|| default_tags(&node.name, size))
                    .flatten();
                let attributes = attributes(&node.extras, defaults);
                let tags = attributes
                    .first()
                    .map(|(_, t)| t.as_str())
                    .unwrap_or_default();
                let sized = tags
                    .split_whitespace()
                    .any(|w| SIZES.iter().any(|s| w.eq_ignore_ascii_case(s)));
                let kind = names_kind(tags);
                if sized && !kind {
                    return Err(Error::refused(
                        at,
                        format!(
                            "hardpoint {:?}: tags {tags:?} give a size but name no slot kind (weapon, turret, shield, engine, dock, cockpit, storage, countermeasures...)",
                            node.name
                        ),
                    ));
                }
                let (parent, (_, rotation, translation), _) = placed(scene, &kinds, i);
                out.connections.push(Connection {
                    name: node.name.clone(),
                    parent,
                    offset: Offset::from_gltf(translation, rotation),
                    attributes,
                    restrictions: restrictions(&node.extras),
                });
            }
        }
    }
    if out.parts.is_empty() {
        return Err(Error::refused(
            "nodes",
            "the scene has no part: a component needs at least one (a mesh object, or an empty \
             tagged part for a part without geometry, as bullets and effects have)",
        ));
    }
    Ok(out)
}

/// What the convention cannot tell, said: a childless empty whose tags name no slot kind may be a
/// part without geometry written as a connection, and a childless empty without tags (nor a
/// `con_weapon*`... name) is left out. One warning for each case, naming the empties.
fn unsure(scene: &Scene, kinds: &[Kind], size: &str) -> Vec<Warning> {
    let holds = |i: usize| scene.nodes.iter().any(|n| n.parent == Some(i));
    let listed = |v: &[String]| {
        let shown: Vec<&str> = v.iter().take(8).map(String::as_str).collect();
        let more = v.len().saturating_sub(shown.len());
        let more = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        format!("{}{more}", shown.join(", "))
    };
    let (mut kindless, mut dropped) = (Vec::new(), Vec::new());
    for (i, node) in scene.nodes.iter().enumerate() {
        if node.mesh.is_some() || holds(i) {
            continue;
        }
        match (kinds.get(i), tags_of(&node.extras)) {
            (Some(Kind::Connection), Some(tags)) if !names_kind(tags) => {
                kindless.push(format!("{:?} (tags {tags:?})", node.name));
            }
            (Some(Kind::Group), None) if default_tags(&node.name, size).is_none() => {
                dropped.push(format!("{:?}", node.name));
            }
            _ => {}
        }
    }
    let said = |v: &[String], what: &str, how: &str| {
        let one = if v.len() == 1 { "y" } else { "ies" };
        (!v.is_empty()).then(|| {
            let message = format!("{} empt{one} {what}: {}; {how}", v.len(), listed(v));
            Warning::new(None, "nodes", message)
        })
    };
    said(
        &kindless,
        "without children whose tags name no slot kind written as connections (hardpoints), not parts",
        "a part without geometry needs the word `part` in its tags (tags=\"part ...\")",
    )
    .into_iter()
    .chain(said(
        &dropped,
        "without tags, children or a con_weapon/con_turret/con_shield/con_engine name left out",
        "give a hardpoint its `tags` (\"weapon medium standard\"), a part without geometry tags=\"part\"",
    ))
    .collect()
}

/// The part node `i` hangs from (its nearest part ancestor, by name), node `i`'s scale, rotation
/// and translation in that part's frame (the part's own scale included: it is baked into the
/// part's meshes, not kept in the game's offsets), and the matrix from the frame `i`'s own values
/// are in (its scene parent's) into that frame (the groups between and the part's scale; its
/// animation values move with it). A node right under its part (or at the top) keeps its own
/// values exactly.
fn placed(scene: &Scene, kinds: &[Kind], i: usize) -> (Option<String>, (Vec3, Quat, Vec3), Mat4) {
    let Some(node) = scene.nodes.get(i) else {
        return (
            None,
            (Vec3::ONE, Quat::IDENTITY, Vec3::ZERO),
            Mat4::IDENTITY,
        );
    };
    let mut chain = Mat4::IDENTITY;
    let mut part = None;
    let mut p = node.parent;
    let mut direct = true;
    for _ in 0..scene.nodes.len() {
        let Some(pi) = p else { break };
        let Some(up) = scene.nodes.get(pi) else {
            break;
        };
        if kinds.get(pi) == Some(&Kind::Part) {
            part = Some(up.name.clone());
            chain = Mat4::from_scale(up.scale) * chain;
            break;
        }
        direct = false;
        chain = up.local_matrix() * chain;
        p = up.parent;
    }
    let trs = if direct && chain.abs_diff_eq(Mat4::IDENTITY, 1e-6) {
        (node.scale, node.rotation, node.translation)
    } else {
        (chain * node.local_matrix()).to_scale_rotation_translation()
    };
    (part, trs, chain)
}

/// `mesh` with its positions, normals and tangents moved by `m` (itself when `m` is the identity).
fn moved(mesh: &Mesh, m: Mat4) -> Mesh {
    let mut out = mesh.clone();
    if m.abs_diff_eq(Mat4::IDENTITY, 1e-7) {
        return out;
    }
    let normal_m = Mat3::from_mat4(m).inverse().transpose();
    for p in &mut out.vertices.positions {
        *p = m.transform_point3(Vec3::from(*p)).to_array();
    }
    if let Some(ns) = &mut out.vertices.normals {
        for n in ns {
            *n = (normal_m * Vec3::from(*n)).normalize_or_zero().to_array();
        }
    }
    if let Some(ts) = &mut out.vertices.tangents {
        for t in ts {
            let v = (Mat3::from_mat4(m) * Vec3::new(t[0], t[1], t[2])).normalize_or_zero();
            *t = [v.x, v.y, v.z, t[3]];
        }
    }
    // A mirroring transform turns the triangles inside out: their winding is turned back.
    if Mat3::from_mat4(m).determinant() < 0.0 {
        for prim in &mut out.primitives {
            for tri in prim.indices.chunks_exact_mut(3) {
                tri.swap(1, 2);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Node;
    use serde_json::json;

    fn cube() -> Mesh {
        crate::author::lod::positions_mesh(
            "m",
            vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
            vec![0, 1, 2],
        )
    }

    #[test]
    fn parts_connections_and_parents_follow_the_hierarchy() {
        let mut scene = Scene {
            meshes: vec![cube()],
            ..Default::default()
        };
        let mut hull = Node::new("hull");
        hull.mesh = Some(0);
        scene.nodes.push(hull);
        let mut tower = Node::new("tower");
        tower.mesh = Some(0);
        tower.parent = Some(0);
        tower.translation = Vec3::new(0.0, 3.0, 0.0);
        scene.nodes.push(tower);
        let mut gun = Node::new("con_weapon_01");
        gun.parent = Some(1);
        gun.translation = Vec3::new(1.0, 2.0, 3.0);
        gun.rotation = Quat::from_rotation_y(0.5);
        scene.nodes.push(gun);
        let mut lod = Node::new("tower-lod1");
        lod.mesh = Some(0);
        lod.parent = Some(1);
        scene.nodes.push(lod);
        let mut way = Node::new("waypoint");
        way.extras.insert("tags".into(), json!("npc_waypoint"));
        way.extras.insert("group".into(), json!("g1"));
        scene.nodes.push(way);
        scene.nodes.push(Node::new("antenna"));
        let a = read(&scene, "medium").unwrap();
        // What the convention cannot tell is said: the waypoint may be a part, the antenna is dropped.
        let said: Vec<&str> = a.warnings.iter().map(|w| w.message.as_str()).collect();
        assert_eq!(said.len(), 2, "{said:?}");
        assert!(said[0].starts_with("1 empty without children whose tags name no slot kind"));
        assert!(
            said[0].contains("\"waypoint\" (tags \"npc_waypoint\")"),
            "{}",
            said[0]
        );
        assert!(said[0].contains("tags=\"part ...\""));
        assert!(said[1].contains("left out: \"antenna\""), "{}", said[1]);
        assert_eq!(a.parts.len(), 2);
        assert_eq!(a.parts[1].parent.as_deref(), Some("hull"));
        assert_eq!(a.parts[1].lods.len(), 1);
        assert_eq!(a.parts[1].attributes, vec![("tags".into(), "part".into())]);
        assert_eq!(a.connections.len(), 2);
        let gun = &a.connections[0];
        assert_eq!(gun.parent.as_deref(), Some("tower"));
        assert_eq!(gun.attributes[0].1, "weapon medium standard");
        assert_eq!(
            gun.offset,
            Offset::from_gltf(Vec3::new(1.0, 2.0, 3.0), Quat::from_rotation_y(0.5))
        );
        assert_eq!(a.connections[1].attributes.len(), 2);
    }

    #[test]
    fn a_size_without_a_kind_and_a_scene_without_part_are_refused() {
        let mut scene = Scene::default();
        let mut e = Node::new("gun");
        e.extras.insert("tags".into(), json!("medium standard"));
        scene.nodes.push(e);
        let err = read(&scene, "medium").unwrap_err();
        assert!(err.message.contains("no slot kind"), "{err}");
        scene.nodes[0]
            .extras
            .insert("tags".into(), json!("weapon medium"));
        let err = read(&scene, "medium").unwrap_err();
        assert!(err.message.contains("no part"), "{err}");
    }
}
