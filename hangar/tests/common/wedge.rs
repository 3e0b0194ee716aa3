//! A small asymmetric model built in code, for the files in `samples/` and for tests: a 3 x 2 x 1 box
//! from the origin to (3, 2, 1) with a pyramid on its top face, flat shaded, one UV square per face,
//! box and pyramid in two materials. Nothing in it is symmetric, so a mirrored axis or a reversed
//! winding shows.
// Builds hangar's own sample models from constants, never from input.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use glam::{Vec2, Vec3};
use hangar::model::{Material, Mesh, Node, Primitive, Scene, Vertices};
use serde_json::json;

fn push_face(v: &mut Vertices, idx: &mut Vec<u32>, corners: &[Vec3], uvs: &[Vec2]) {
    // Corners are counter-clockwise seen from outside; the normal follows from that winding.
    let n = (corners[1] - corners[0])
        .cross(corners[2] - corners[0])
        .normalize();
    let (e1, e2) = (corners[1] - corners[0], corners[2] - corners[0]);
    let (d1, d2) = (uvs[1] - uvs[0], uvs[2] - uvs[0]);
    let r = 1.0 / (d1.x * d2.y - d2.x * d1.y);
    let t = ((e1 * d2.y - e2 * d1.y) * r).normalize();
    let b = (e2 * d1.x - e1 * d2.x) * r;
    // glTF: bitangent = cross(N, T) * w points along -V.
    let w = if n.cross(t).dot(-b) >= 0.0 { 1.0 } else { -1.0 };
    let base = v.positions.len() as u32;
    for (c, uv) in corners.iter().zip(uvs) {
        v.positions.push(c.to_array());
        v.normals.as_mut().unwrap().push(n.to_array());
        v.tangents.as_mut().unwrap().push([t.x, t.y, t.z, w]);
        v.uvs[0].push(uv.to_array());
    }
    for k in 1..corners.len() as u32 - 1 {
        idx.extend_from_slice(&[base, base + k, base + k + 1]);
    }
}

/// The sample mesh and its two materials, in the neutral (glTF) frame.
pub fn wedge() -> (Mesh, Vec<Material>) {
    let mut v = Vertices {
        normals: Some(Vec::new()),
        tangents: Some(Vec::new()),
        uvs: vec![Vec::new()],
        ..Default::default()
    };
    let p = |x: f32, y: f32, z: f32| Vec3::new(x, y, z);
    let quad = [
        Vec2::new(0.0, 1.0),
        Vec2::new(1.0, 1.0),
        Vec2::new(1.0, 0.0),
        Vec2::new(0.0, 0.0),
    ];
    let tri = [
        Vec2::new(0.0, 1.0),
        Vec2::new(1.0, 1.0),
        Vec2::new(0.5, 0.0),
    ];
    let mut box_idx = Vec::new();
    let faces = [
        [p(0., 0., 1.), p(3., 0., 1.), p(3., 2., 1.), p(0., 2., 1.)], // +Z
        [p(3., 0., 0.), p(0., 0., 0.), p(0., 2., 0.), p(3., 2., 0.)], // -Z
        [p(3., 0., 1.), p(3., 0., 0.), p(3., 2., 0.), p(3., 2., 1.)], // +X
        [p(0., 0., 0.), p(0., 0., 1.), p(0., 2., 1.), p(0., 2., 0.)], // -X
        [p(0., 0., 0.), p(3., 0., 0.), p(3., 0., 1.), p(0., 0., 1.)], // -Y
    ];
    for f in &faces {
        push_face(&mut v, &mut box_idx, f, &quad);
    }
    // The top face is covered by the pyramid, whose apex leans toward +X.
    let apex = p(2.5, 3.5, 0.5);
    let top = [p(0., 2., 1.), p(3., 2., 1.), p(3., 2., 0.), p(0., 2., 0.)];
    let mut pyr_idx = Vec::new();
    for k in 0..4 {
        push_face(
            &mut v,
            &mut pyr_idx,
            &[top[k], top[(k + 1) % 4], apex],
            &tri,
        );
    }
    let mesh = Mesh {
        name: "wedge".into(),
        vertices: v,
        primitives: vec![
            Primitive {
                indices: box_idx,
                material: Some(0),
            },
            Primitive {
                indices: pyr_idx,
                material: Some(1),
            },
        ],
        extras: Default::default(),
        morph_targets: Vec::new(),
    };
    let mat = |n: &str| Material {
        name: n.into(),
        extras: json!({ "xmf_name": n }).as_object().unwrap().clone(),
        ..Default::default()
    };
    (
        mesh,
        vec![
            mat("generic.generic_p1_hulltexture"),
            mat("generic.generic_p1_fx"),
        ],
    )
}

/// The sample as a one-node scene.
pub fn wedge_scene() -> Scene {
    let (mesh, materials) = wedge();
    let mut node = Node::new("wedge");
    node.mesh = Some(0);
    Scene {
        name: "wedge".into(),
        nodes: vec![node],
        meshes: vec![mesh],
        materials,
        ..Default::default()
    }
}
