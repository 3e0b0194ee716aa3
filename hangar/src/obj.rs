//! Wavefront OBJ out of the neutral model: positions, UV set 0, normals, one `usemtl` per primitive.
//! OBJ has no node hierarchy: every mesh is placed in world space as its own object.

use crate::model::Scene;
use glam::{Mat3, Vec3};
use std::fmt::Write;

pub fn to_obj(scene: &Scene) -> Vec<u8> {
    let mut s = String::new();
    let _ = writeln!(s, "# written by hangar {}", env!("CARGO_PKG_VERSION"));
    let mut base = 1usize;
    for (ni, node) in scene.nodes.iter().enumerate() {
        let Some(mesh) = node.mesh.and_then(|m| scene.meshes.get(m)) else {
            continue;
        };
        let world = scene.world_matrix(ni);
        let normal_m = Mat3::from_mat4(world).inverse().transpose();
        let v = &mesh.vertices;
        let _ = writeln!(s, "o {}", node.name.replace(char::is_whitespace, "_"));
        for p in &v.positions {
            let p = world.transform_point3(Vec3::from(*p));
            let _ = writeln!(s, "v {} {} {}", p.x, p.y, p.z);
        }
        let uv = v.uvs.first();
        if let Some(uv) = uv {
            // OBJ puts the UV origin at the bottom left.
            for t in uv {
                let _ = writeln!(s, "vt {} {}", t[0], 1.0 - t[1]);
            }
        }
        if let Some(ns) = &v.normals {
            for n in ns {
                let n = (normal_m * Vec3::from(*n)).normalize_or_zero();
                let _ = writeln!(s, "vn {} {} {}", n.x, n.y, n.z);
            }
        }
        for p in &mesh.primitives {
            if let Some(m) = p.material.and_then(|m| scene.materials.get(m)) {
                let _ = writeln!(s, "usemtl {}", m.name);
            }
            for t in p.indices.chunks_exact(3) {
                s.push('f');
                for &i in t {
                    let i = i as usize + base;
                    let _ = match (uv.is_some(), v.normals.is_some()) {
                        (true, true) => write!(s, " {i}/{i}/{i}"),
                        (true, false) => write!(s, " {i}/{i}"),
                        (false, true) => write!(s, " {i}//{i}"),
                        (false, false) => write!(s, " {i}"),
                    };
                }
                s.push('\n');
            }
        }
        base += v.len();
    }
    s.into_bytes()
}
