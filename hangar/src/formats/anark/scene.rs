//! .bsg -> neutral scene: one node a graph node, named `AK<sceneNodeId>` like the .dae it came from.

use super::bsg::Bsg;
use crate::model::{Node, Scene};
use glam::{EulerRot, Quat, Vec3};
use serde_json::json;

/// The spec's frame change: translation and pivot Z negated, euler X and Y negated.
fn translation(v: [super::F32; 3]) -> Vec3 {
    Vec3::new(v[0].0, v[1].0, -v[2].0)
}

fn finite(v: Vec3, or: Vec3) -> Vec3 {
    if v.is_finite() {
        v
    } else {
        or
    }
}

/// A parent index kept only when it is in range and its chain reaches a root (no cycles in glTF).
fn parent_of(f: &Bsg, i: usize) -> Option<usize> {
    let p = usize::try_from(f.nodes.get(i)?.parent).ok()?;
    f.nodes.get(p)?;
    let mut cur = Some(p);
    for _ in 0..=f.nodes.len() {
        match cur {
            None => return Some(p),
            Some(c) if c == i => return None,
            Some(c) => {
                cur = f
                    .nodes
                    .get(c)
                    .and_then(|n| usize::try_from(n.parent).ok())
                    .filter(|q| *q < f.nodes.len());
            }
        }
    }
    None
}

pub fn to_scene(f: &Bsg) -> Scene {
    let mut scene = Scene {
        name: "bsg".into(),
        ..Default::default()
    };
    for (i, n) in f.nodes.iter().enumerate() {
        let mut node = Node::new(format!("AK{}", n.id));
        node.parent = parent_of(f, i);
        node.translation = finite(translation(n.translation), Vec3::ZERO);
        let r = n.rotation;
        let q = Quat::from_euler(EulerRot::XYZ, -r[0].0, -r[1].0, r[2].0);
        node.rotation = if q.is_finite() {
            q.normalize()
        } else {
            Quat::IDENTITY
        };
        node.scale = finite(
            Vec3::new(n.scale[0].0, n.scale[1].0, n.scale[2].0),
            Vec3::ONE,
        );
        let v = |a: [super::F32; 3]| json!([a[0].0, a[1].0, a[2].0]);
        let e = &mut node.extras;
        e.insert("sceneNodeId".into(), json!(n.id));
        e.insert("type".into(), json!(n.kind));
        e.insert("boundingBoxMin".into(), v(n.bbox_min));
        e.insert("boundingBoxMax".into(), v(n.bbox_max));
        let p = translation(n.rotate_pivot);
        e.insert("rotatePivot".into(), json!([p.x, p.y, p.z]));
        if n.opacity.0.is_finite() {
            e.insert("opacity".into(), json!(n.opacity.0));
        }
        e.insert("layer".into(), json!(n.layer));
        let assets: Vec<u8> = f
            .assets
            .iter()
            .filter(|a| a.node == n.id)
            .map(|a| a.kind)
            .collect();
        if !assets.is_empty() {
            e.insert("assets".into(), json!(assets));
        }
        scene.nodes.push(node);
    }
    scene
}
