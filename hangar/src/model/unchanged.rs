//! Whether a whole scene that went through another tool (Blender's glTF importer and exporter with
//! default options) still shows what the game file it was made from shows, so that file can be
//! written back byte for byte: the same named nodes at the same rest places, the same meshes
//! ([`super::same_shape`]) on the same nodes and bones, the same clips whose keys (a tool resamples
//! them a key a frame) trace the stored curves. Names may carry a tool's `.001`.

use super::{Channel, Property, Scene};
use glam::Mat4;
use std::borrow::Cow;

/// Values within this, relative to their size, are the same (a tool's float noise: Blender's
/// bone space conversions, f32 matrix products).
const TOLERANCE: f32 = 1e-3;

/// Farther than this from the origin (scene units), a node is junk no tool keeps.
const FAR: f32 = 1e6;

fn near(a: f32, b: f32) -> bool {
    (a - b).abs() <= TOLERANCE * (1.0 + a.abs().max(b.abs()))
}

fn near_all(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| near(*x, *y))
}

/// Two key values of `property` the same (a rotation also as its negation).
fn same_value(property: Property, a: &[f32], b: &[f32]) -> bool {
    near_all(a, b)
        || (property == Property::Rotation
            && near_all(a, &b.iter().map(|x| -x).collect::<Vec<_>>()))
}

fn same_matrix(a: Mat4, b: Mat4) -> bool {
    near_all(&a.to_cols_array(), &b.to_cols_array())
}

/// `None` when `edited` shows what `was` shows; else the first difference found, for a note.
/// Clips are compared too unless `with_clips` is false (an actor's clips come from its motions).
pub fn difference(edited: &Scene, was: &Scene, with_clips: bool) -> Option<String> {
    compare(edited, was, with_clips, true)
}

/// As [`difference`] without clips, but a mesh may differ from its original (still on the same
/// node, with or without a skin as it was): `None` when an edit changed meshes and nothing else,
/// so the game file can keep every other part.
pub fn difference_but_meshes(edited: &Scene, was: &Scene) -> Option<String> {
    compare(edited, was, false, false)
}

fn compare(edited: &Scene, was: &Scene, with_clips: bool, meshes: bool) -> Option<String> {
    // Each node of `was` and the edited node that is it.
    let matched = super::match_nodes(&was.nodes, &edited.nodes);
    let mut taken = vec![false; edited.nodes.len()];
    let mut of = vec![usize::MAX; was.nodes.len()];
    for ((i, n), j) in was.nodes.iter().enumerate().zip(matched) {
        let Some(j) = j else {
            // Blender's default export leaves cameras and lights out.
            if n.camera.is_some() || n.light.is_some() {
                continue;
            }
            return Some(format!("node {:?} is gone", n.name));
        };
        taken[j] = true;
        of[i] = j;
    }
    if let Some(extra) = edited
        .nodes
        .iter()
        .zip(&taken)
        .find(|(n, t)| !**t && (n.mesh.is_some() || n.light.is_some() || n.camera.is_some()))
    {
        return Some(format!("node {:?} is new", extra.0.name));
    }
    let name_of = |j: usize| edited.nodes.get(j).map_or("", |n| n.name.as_str());
    let mut joints = vec![false; was.nodes.len()];
    for k in &was.skins {
        for &j in &k.joints {
            if let Some(x) = joints.get_mut(j) {
                *x = true;
            }
        }
    }
    // Nodes out where f32 steps are whole units (junk in real files: a bone 60 million units
    // away); a tool's float maths does not carry them, so they are not compared.
    let far: Vec<bool> = (0..was.nodes.len())
        .map(|i| was.world_matrix(i).w_axis.truncate().length() > FAR)
        .collect();
    for (i, n) in was.nodes.iter().enumerate() {
        let j = of[i];
        let Some(e) = edited.nodes.get(j) else {
            continue;
        };
        // A skinned mesh's own node does not place it; a joint's rest is its bind pose in
        // Blender (its skinned meshes compared below). A node under a joint keeps its place and
        // turn on its parent, not its scale (Blender's bones hold none).
        let under_joint = std::iter::successors(n.parent, |&p| was.nodes.get(p)?.parent)
            .take(was.nodes.len())
            .any(|p| joints.get(p).copied().unwrap_or(false));
        let placed = if under_joint {
            near_all(&n.translation.to_array(), &e.translation.to_array())
                && same_value(
                    Property::Rotation,
                    &n.rotation.to_array(),
                    &e.rotation.to_array(),
                )
        } else {
            same_matrix(was.world_matrix(i), edited.world_matrix(j))
        };
        // Without the meshes to show a joint moved, its own place is compared.
        if n.skin.is_none() && (!joints[i] || !meshes) && !placed && !far[i] {
            return Some(format!("node {:?} moved", n.name));
        }
        match (n.mesh, e.mesh) {
            (None, None) => {}
            (Some(a), Some(b)) => {
                let (Some(a), Some(b)) = (was.meshes.get(a), edited.meshes.get(b)) else {
                    return Some(format!("node {:?} lost its mesh", n.name));
                };
                // Both as the edited skeleton shows them at rest.
                let at = |j: usize| edited.nodes.get(j).map(|_| edited.world_matrix(j));
                let was_at = |i: usize| of.get(i).and_then(|&j| at(j));
                let was_skin = n.skin.and_then(|k| was.skins.get(k));
                let edited_skin = e.skin.and_then(|k| edited.skins.get(k));
                let (Some(a), Some(b)) = (posed(was_skin, was_at, a), posed(edited_skin, at, b))
                else {
                    return Some(format!("the skin of node {:?} has other joints", n.name));
                };
                // Joints as edited nodes: the same numbering on both sides.
                let a_nodes: Option<Vec<usize>> = was_skin.map(|k| {
                    k.joints
                        .iter()
                        .map(|&i| of.get(i).copied().unwrap_or(usize::MAX))
                        .collect()
                });
                let b_nodes = edited_skin.map(|k| &k.joints[..]);
                if meshes
                    && !super::same::same_skinned(
                        (&b, &edited.materials, b_nodes),
                        (&a, &was.materials, a_nodes.as_deref()),
                    )
                {
                    return Some(format!("the mesh of node {:?} changed", n.name));
                }
            }
            // A mesh taken out is an edit of meshes.
            (Some(_), None) if !meshes => {}
            _ => return Some(format!("node {:?} gained or lost a mesh", n.name)),
        }
        if n.skin.is_some() != e.skin.is_some() && e.mesh.is_some() {
            return Some(format!("node {:?} gained or lost a skin", n.name));
        }
    }
    if edited.meshes.len() > was.meshes.len() {
        return Some("more meshes".into());
    }
    if !with_clips {
        return None;
    }
    // Clips by name, the same number.
    if edited.animations.len() != was.animations.len() {
        return Some(format!(
            "{} clips, not {}",
            edited.animations.len(),
            was.animations.len()
        ));
    }
    let mut taken = vec![false; edited.animations.len()];
    for a in &was.animations {
        let Some(k) = super::find_named(&edited.animations, &taken, &a.name, |x| &x.name) else {
            return Some(format!("clip {:?} is gone", a.name));
        };
        taken[k] = true;
        let Some(b) = edited.animations.get(k) else {
            return Some(format!("clip {:?} is gone", a.name));
        };
        for c in &b.channels {
            // The stored channel of the same node and property, else the node held at rest.
            let at = of.iter().position(|&j| j == c.node);
            let stored = at.and_then(|i| {
                a.channels
                    .iter()
                    .find(|s| s.node == i && s.property == c.property)
            });
            if at.is_some_and(|i| far.get(i).copied().unwrap_or(false)) {
                continue;
            }
            let was_node = at.and_then(|i| was.nodes.get(i));
            let seen = |t: f32| at.is_none_or(|i| shown(was, a, i, c.property, t));
            if !same_track(c, stored, was_node, edited.nodes.get(c.node), &seen) {
                return Some(format!(
                    "clip {:?} moves node {:?} otherwise",
                    a.name,
                    name_of(c.node)
                ));
            }
        }
        // A stored channel the tool left out must have held its node at rest.
        for s in &a.channels {
            let Some(&j) = of
                .get(s.node)
                .filter(|_| !far.get(s.node).copied().unwrap_or(true))
            else {
                continue;
            };
            let kept = b
                .channels
                .iter()
                .any(|c| c.node == j && c.property == s.property);
            let held = edited
                .nodes
                .get(j)
                .is_some_and(|n| held_at(s, &rest(n, s.property)));
            if !kept && !held {
                return Some(format!("clip {:?} lost a track", a.name));
            }
        }
    }
    None
}

/// Whether an edited channel `c` moves its node as the original did: it traces the `stored`
/// channel of its node and property, or where the original has none it holds the node still, at
/// its rest in the original (`was_node`) or (Blender keys every bone of an action) at the rest the
/// tool gave it (`edited_node`).
/// Keys at times `seen` says nothing shows are not compared.
pub(crate) fn same_track(
    c: &Channel,
    stored: Option<&Channel>,
    was_node: Option<&super::Node>,
    edited_node: Option<&super::Node>,
    seen: &dyn Fn(f32) -> bool,
) -> bool {
    match (stored, was_node) {
        (Some(s), _) => traces_where(c, s, seen),
        (None, Some(n)) => {
            held_at(c, &rest(n, c.property))
                || edited_node.is_some_and(|e| held_at(c, &rest(e, c.property)))
        }
        (None, None) => false,
    }
}

/// `mesh`, skinned by `skin` (inverse binds and joints), as it shows with each joint at `pose`,
/// the joint's place in the edited scene (`None`: the joint is gone). A tool may rebind a skin:
/// Blender binds at the rest pose without the joints' scale and skins the vertices there, so the
/// original's mesh is compared as the edited skeleton shows it. A mesh without a skin is itself.
fn posed<'m>(
    skin: Option<&super::Skin>,
    pose: impl Fn(usize) -> Option<Mat4>,
    mesh: &'m super::Mesh,
) -> Option<Cow<'m, super::Mesh>> {
    let v = &mesh.vertices;
    let (Some(skin), Some(joints), Some(weights)) = (skin, &v.joints, &v.weights) else {
        return Some(Cow::Borrowed(mesh));
    };
    let bind = skin
        .joints
        .iter()
        .zip(&skin.inverse_bind)
        .map(|(&j, ib)| Some(pose(j)? * Mat4::from_cols_array(ib)))
        .collect::<Option<Vec<Mat4>>>()?;
    let mut out = mesh.clone();
    let mut normals = out.vertices.normals.take();
    for (i, p) in out.vertices.positions.iter_mut().enumerate() {
        let (Some(j), Some(w)) = (joints.get(i), weights.get(i)) else {
            continue;
        };
        let mut m = Mat4::ZERO;
        for (&j, &w) in j.iter().zip(w).filter(|(_, &w)| w != 0.0) {
            m += *bind.get(usize::from(j))? * w;
        }
        *p = m.transform_point3((*p).into()).into();
        if let Some(n) = normals.as_mut().and_then(|n| n.get_mut(i)) {
            *n = m.transform_vector3((*n).into()).normalize_or_zero().into();
        }
    }
    out.vertices.normals = normals;
    Some(Cow::Owned(out))
}

/// A node's rest value of `property` (empty for weights).
fn rest(n: &super::Node, property: Property) -> Vec<f32> {
    match property {
        Property::Translation => n.translation.to_array().to_vec(),
        Property::Rotation => n.rotation.to_array().to_vec(),
        Property::Scale => n.scale.to_array().to_vec(),
        Property::Weights => Vec::new(),
    }
}

/// Every key of `c` is `value` (weights: never held "at rest").
fn held_at(c: &Channel, value: &[f32]) -> bool {
    let w = c.width();
    !value.is_empty()
        && c.values
            .chunks_exact(w)
            .all(|v| same_value(c.property, v, value))
}

/// Every key of `c` lies on the curve of `stored` (held at its ends), and `c` spans at least the
/// same time (to a frame at 24 per second) unless `stored` holds still.
pub(crate) fn traces(c: &Channel, stored: &Channel) -> bool {
    traces_where(c, stored, &|_| true)
}

/// Whether `property` of node `i` of `was` shows at time `t` of clip `a`: not while an ancestor's
/// scale (or for a rotation, its own) is zero there. A tool that keys from matrices (Blender's
/// exporter decomposes each bone's) gives noise for what a zero scale hides.
pub(crate) fn shown(
    was: &Scene,
    a: &super::Animation,
    i: usize,
    property: Property,
    t: f32,
) -> bool {
    let own = (property == Property::Rotation).then_some(i);
    let above = std::iter::successors(was.nodes.get(i).and_then(|n| n.parent), |&p| {
        was.nodes.get(p)?.parent
    })
    .take(was.nodes.len());
    !own.into_iter().chain(above).any(|n| {
        a.channels
            .iter()
            .filter(|c| c.node == n && c.property == Property::Scale)
            .any(|c| {
                c.value_at(t)
                    .is_some_and(|v| v.iter().any(|x| x.abs() < 1e-6))
            })
    })
}

/// [`traces`] with the keys at times `seen` says nothing shows left out.
fn traces_where(c: &Channel, stored: &Channel, seen: &dyn Fn(f32) -> bool) -> bool {
    let w = c.width();
    if w != stored.width() {
        return false;
    }
    let first = stored.values.get(..w).unwrap_or_default();
    let still = held_at(stored, first);
    let span = |x: &Channel| {
        x.times.last().copied().unwrap_or(0.0) - x.times.first().copied().unwrap_or(0.0)
    };
    // A tool samples every track over its whole clip: a longer span holds the last key.
    (still || span(c) >= span(stored) - 0.05)
        && c.times.iter().zip(c.values.chunks_exact(w)).all(|(&t, v)| {
            !seen(t)
                || stored
                    .value_at(t)
                    .is_some_and(|x| same_value(c.property, v, &x))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Animation, Interpolation, Node};

    fn scene(keys: &[(f32, f32)]) -> Scene {
        let mut s = Scene::default();
        s.nodes.push(Node::new("root"));
        let mut b = Node::new("bone");
        b.parent = Some(0);
        b.translation = glam::Vec3::new(1.0, 2.0, 3.0);
        s.nodes.push(b);
        s.animations.push(Animation {
            name: "Walk".into(),
            channels: vec![Channel {
                node: 1,
                property: Property::Translation,
                interpolation: Interpolation::Linear,
                times: keys.iter().map(|k| k.0).collect(),
                values: keys.iter().flat_map(|k| [k.1, 2.0, 3.0]).collect(),
            }],
            extras: Default::default(),
        });
        s
    }

    #[test]
    fn resampled_keys_on_the_curve_are_unchanged() {
        let was = scene(&[(0.0, 0.0), (1.0, 24.0)]);
        // A key a frame on the line from 0 to 24, renamed as Blender does.
        let frames: Vec<(f32, f32)> = (0..=24).map(|f| (f as f32 / 24.0, f as f32)).collect();
        let mut edited = scene(&frames);
        edited.nodes[1].name = "bone.001".into();
        assert_eq!(difference(&edited, &was, true), None);
        // One frame off the line: changed.
        let mut moved = frames.clone();
        moved[12].1 += 0.5;
        assert_eq!(
            difference(&scene(&moved), &was, true).as_deref(),
            Some("clip \"Walk\" moves node \"bone\" otherwise")
        );
        // A node moved at rest.
        let mut edited = scene(&frames);
        edited.nodes[1].translation.x = 5.0;
        assert_eq!(
            difference(&edited, &was, true).as_deref(),
            Some("node \"bone\" moved")
        );
    }

    /// A bone scaled to nothing in the middle of a clip (SC2 models hide parts so): Blender's
    /// export decomposes its matrix there and keys noise for its rotation and its child's
    /// place; those keys are not an edit, the same noise where the bone shows is.
    #[test]
    fn keys_a_zero_scale_hides_are_not_compared() {
        let mut was = scene(&[(0.0, 0.0), (1.0, 24.0)]);
        let mut child = Node::new("child");
        (child.parent, child.translation) = (Some(1), glam::Vec3::X);
        was.nodes.push(child);
        let times = vec![0.0, 0.4, 0.6, 1.0];
        let still = |property, values: Vec<f32>| Channel {
            node: 1,
            property,
            interpolation: Interpolation::Step,
            times: times.clone().into(),
            values: values.into(),
        };
        let clip = &mut was.animations[0].channels;
        clip.push(still(
            Property::Scale,
            [1.0, 0.0, 0.0, 1.0].iter().flat_map(|&s| [s; 3]).collect(),
        ));
        clip.push(still(Property::Rotation, [0.0, 0.0, 0.0, 1.0].repeat(4)));
        let mut child_track = still(Property::Translation, [1.0, 0.0, 0.0].repeat(4));
        child_track.node = 2;
        clip.push(child_track);
        let noisy = |at: usize| {
            let mut e = was.clone();
            let c = &mut e.animations[0].channels;
            c[2].values[4 * at..4 * at + 4].copy_from_slice(&[0.6, 0.0, 0.0, 0.8]);
            c[3].values[3 * at] = 7.0;
            e
        };
        // Hidden at 0.4 and 0.6 (the step holds the zero until 1.0).
        assert_eq!(difference(&noisy(1), &was, true), None);
        assert_eq!(difference(&noisy(2), &was, true), None);
        assert!(difference(&noisy(0), &was, true).is_some());
        assert!(difference(&noisy(3), &was, true).is_some());
    }

    /// A root, two bones and a triangle skinned to them, bound away from the bones' rest; the
    /// bones' rest (and their scale) as `rest`.
    fn skinned(first: Mat4, bind: [Mat4; 2], positions: Vec<[f32; 3]>) -> Scene {
        let mut s = Scene::default();
        s.nodes.push(Node::new("root"));
        let (scale, rotation, translation) = first.to_scale_rotation_translation();
        let mut a = Node::new("bone");
        (a.parent, a.scale, a.rotation, a.translation) = (Some(0), scale, rotation, translation);
        s.nodes.push(a);
        let mut b = Node::new("tip");
        (b.parent, b.translation) = (Some(1), glam::Vec3::Y);
        s.nodes.push(b);
        let mut m = Node::new("body");
        (m.parent, m.mesh, m.skin) = (Some(0), Some(0), Some(0));
        s.nodes.push(m);
        s.skins.push(crate::model::Skin {
            name: "skin".into(),
            joints: vec![1, 2],
            inverse_bind: bind.map(|b| b.inverse().to_cols_array()).to_vec(),
        });
        s.meshes.push(crate::model::Mesh {
            vertices: crate::model::Vertices {
                positions,
                joints: Some(vec![[0, 0, 0, 0], [0, 1, 0, 0], [1, 0, 0, 0]]),
                weights: Some(vec![
                    [1.0, 0.0, 0.0, 0.0],
                    [0.5, 0.5, 0.0, 0.0],
                    [1.0, 0.0, 0.0, 0.0],
                ]),
                ..Default::default()
            },
            primitives: vec![crate::model::Primitive {
                indices: vec![0, 1, 2],
                material: None,
            }],
            ..Default::default()
        });
        s
    }

    #[test]
    fn a_skin_rebound_at_rest_is_unchanged() {
        use glam::{Quat, Vec3};
        // The original: a bone at rest scaled 2 and turned, bound elsewhere.
        let rest = Mat4::from_scale_rotation_translation(
            Vec3::splat(2.0),
            Quat::from_rotation_z(0.3),
            Vec3::new(0.0, 1.0, 0.0),
        );
        let bind = [
            Mat4::from_translation(Vec3::new(0.0, 0.5, 0.0)),
            Mat4::from_translation(Vec3::new(0.0, 1.5, 0.0)),
        ];
        let positions = vec![[0.0, 0.5, 0.0], [1.0, 1.0, 0.0], [0.0, 1.5, 0.2]];
        let was = skinned(rest, bind, positions.clone());
        // Blender: the bone's rest without its scale, bound there, each vertex skinned into it.
        let (_, r, t) = rest.to_scale_rotation_translation();
        let mut edited = skinned(
            Mat4::from_rotation_translation(r, t),
            [Mat4::IDENTITY; 2],
            vec![],
        );
        let worlds = [edited.world_matrix(1), edited.world_matrix(2)];
        edited.skins[0].inverse_bind = worlds.map(|w| w.inverse().to_cols_array()).to_vec();
        let ib = bind.map(|b| b.inverse());
        let v = &was.meshes[0].vertices;
        edited.meshes[0].vertices.positions = positions
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let (j, w) = (
                    v.joints.as_ref().unwrap()[i],
                    v.weights.as_ref().unwrap()[i],
                );
                let m = (0..2).fold(Mat4::ZERO, |m, k| {
                    m + worlds[usize::from(j[k])] * ib[usize::from(j[k])] * w[k]
                });
                m.transform_point3(Vec3::from(*p)).into()
            })
            .collect();
        assert_eq!(difference(&edited, &was, true), None);
        // A weight moved from one bone to the other is an edit, though the rest shows the same.
        let mut reweighted = edited.clone();
        reweighted.meshes[0].vertices.weights.as_mut().unwrap()[1] = [0.8, 0.2, 0.0, 0.0];
        assert_eq!(
            difference(&reweighted, &was, true).as_deref(),
            Some("the mesh of node \"body\" changed")
        );
        // A vertex moved.
        let mut moved = edited.clone();
        moved.meshes[0].vertices.positions[2][0] += 0.1;
        assert_eq!(
            difference(&moved, &was, true).as_deref(),
            Some("the mesh of node \"body\" changed")
        );
    }
}
