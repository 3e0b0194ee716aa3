//! Whether a whole scene that went through another tool (Blender's glTF importer and exporter with
//! default options) still shows what the game file it was made from shows, so that file can be
//! written back byte for byte: the same named nodes at the same rest places, the same meshes
//! ([`super::same_shape`]) on the same nodes and bones, the same clips whose keys (a tool resamples
//! them a key a frame) trace the stored curves. Names may carry a tool's `.001`.

use super::{Channel, Property, Scene};
use glam::Mat4;

/// Values within this, relative to their size, are the same (a tool's float noise: Blender's
/// bone space conversions, f32 matrix products).
const TOLERANCE: f32 = 1e-3;

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
    // Each node of `was` and the edited node of its name.
    let mut taken = vec![false; edited.nodes.len()];
    let mut of = vec![usize::MAX; was.nodes.len()];
    for (i, n) in was.nodes.iter().enumerate() {
        let Some(j) = super::find_named(&edited.nodes, &taken, &n.name, |x| &x.name) else {
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
    for (i, n) in was.nodes.iter().enumerate() {
        let j = of[i];
        let Some(e) = edited.nodes.get(j) else {
            continue;
        };
        // A skinned mesh's own node does not place it; a joint's rest is its bind pose in
        // Blender (compared below).
        if n.skin.is_none()
            && !joints[i]
            && !same_matrix(was.world_matrix(i), edited.world_matrix(j))
        {
            return Some(format!("node {:?} moved", n.name));
        }
        match (n.mesh, e.mesh) {
            (None, None) => {}
            (Some(a), Some(b)) => {
                let (Some(a), Some(b)) = (was.meshes.get(a), edited.meshes.get(b)) else {
                    return Some(format!("node {:?} lost its mesh", n.name));
                };
                let space = skin_space(was, n.skin, edited, e.skin);
                let b = &in_space(b, space);
                if !super::same_shape(b, &edited.materials, a, &was.materials) {
                    return Some(format!("the mesh of node {:?} changed", n.name));
                }
            }
            _ => return Some(format!("node {:?} gained or lost a mesh", n.name)),
        }
        match (n.skin, e.skin) {
            (None, None) => {}
            (Some(a), Some(b)) => {
                let (Some(a), Some(b)) = (was.skins.get(a), edited.skins.get(b)) else {
                    return Some(format!("node {:?} lost its skin", n.name));
                };
                // Vertex joint indices point into the list: the same joints in the same order.
                let same = a.joints.len() == b.joints.len()
                    && a.joints
                        .iter()
                        .zip(&b.joints)
                        .all(|(&x, &y)| of.get(x) == Some(&y));
                if !same {
                    return Some(format!("the skin of node {:?} has other joints", n.name));
                }
                if !same_binds(&a.inverse_bind, &b.inverse_bind) {
                    return Some(format!("the skin of node {:?} binds otherwise", n.name));
                }
            }
            _ => return Some(format!("node {:?} gained or lost a skin", n.name)),
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
            let ok = match (stored, at.and_then(|i| was.nodes.get(i))) {
                (Some(s), _) => traces(c, s),
                (None, Some(n)) => held_at(c, &rest(n, c.property)),
                (None, None) => false,
            };
            if !ok {
                return Some(format!(
                    "clip {:?} moves node {:?} otherwise",
                    a.name,
                    name_of(c.node)
                ));
            }
        }
        // A stored channel the tool left out must have held its node at rest.
        for s in &a.channels {
            let Some(&j) = of.get(s.node) else { continue };
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

/// The matrix that takes a skinned mesh of `edited` into the space of its skin in `was` (a tool
/// may bind in another space, see [`same_binds`]), from the first joint's inverse bind matrices.
fn skin_space(was: &Scene, a: Option<usize>, edited: &Scene, b: Option<usize>) -> Mat4 {
    let first = |s: &Scene, k: Option<usize>| {
        k.and_then(|k| s.skins.get(k))
            .and_then(|k| k.inverse_bind.first())
            .map(Mat4::from_cols_array)
    };
    match (first(was, a), first(edited, b)) {
        (Some(x), Some(y)) => x.inverse() * y,
        _ => Mat4::IDENTITY,
    }
}

/// `mesh` with its positions and normals taken through `m` (itself when `m` is the identity).
fn in_space(mesh: &super::Mesh, m: Mat4) -> std::borrow::Cow<'_, super::Mesh> {
    if same_matrix(m, Mat4::IDENTITY) {
        return std::borrow::Cow::Borrowed(mesh);
    }
    let mut out = mesh.clone();
    for p in &mut out.vertices.positions {
        *p = m.transform_point3((*p).into()).into();
    }
    if let Some(normals) = &mut out.vertices.normals {
        for n in normals {
            *n = m.transform_vector3((*n).into()).normalize_or_zero().into();
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The same bind poses, seen from the first joint: a tool may move the whole skeleton's space
/// (Blender binds in the armature's space, which takes in the root's turn), which multiplies every
/// inverse bind matrix by one matrix on the right.
fn same_binds(a: &[[f32; 16]], b: &[[f32; 16]]) -> bool {
    let (Some(a0), Some(b0)) = (a.first(), b.first()) else {
        return a.len() == b.len();
    };
    let (ia, ib) = (
        Mat4::from_cols_array(a0).inverse(),
        Mat4::from_cols_array(b0).inverse(),
    );
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| same_matrix(Mat4::from_cols_array(x) * ia, Mat4::from_cols_array(y) * ib))
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

/// Every key of `c` lies on the curve of `stored`, and `c` spans the same time (to a frame at 24
/// per second) unless `stored` holds still.
pub(crate) fn traces(c: &Channel, stored: &Channel) -> bool {
    let w = c.width();
    if w != stored.width() {
        return false;
    }
    let first = stored.values.get(..w).unwrap_or_default();
    let still = held_at(stored, first);
    let span = |x: &Channel| {
        x.times.last().copied().unwrap_or(0.0) - x.times.first().copied().unwrap_or(0.0)
    };
    (still || (span(c) - span(stored)).abs() <= 0.05)
        && c.times.iter().zip(c.values.chunks_exact(w)).all(|(&t, v)| {
            stored
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
}
