//! Whether a mesh that went through another tool (Blender's glTF importer and exporter, most often)
//! still draws the triangles it was read with, so the file it came from can be written back byte for
//! byte. Tools renumber, split and merge vertices, reorder triangles, widen FLOAT16 UVs, renormalise
//! byte normals, rename repeated materials `name.001` and drop degenerate triangles: none of that is
//! an edit, and none of it changes the answer here.

use super::matching::base_name;
use super::{Material, Mesh};

/// Positions closer than this (scene units, on every axis) are one point: a tool's float noise.
/// Far from the origin it grows with the coordinates (f32 steps grow with them).
const WELD: f32 = 1e-4;
/// UVs within this (plus as much again relative to the value: FLOAT16's steps) are the same.
const UV_TOLERANCE: f32 = 1e-3;
/// Normals pointing within about 6 degrees are the same (byte normals, renormalised).
const NORMAL_COS: f32 = 0.995;
/// Distinct points of one [`WELD`] cell compared with a newcomer, at most: a bound on hostile
/// meshes of many points in one spot (a real mesh has a few).
const CELL_LIMIT: usize = 64;

/// One triangle: its corners' points (the smallest first, winding kept), its material's name
/// without a tool's `.001`, and its corners' vertex indices in the same order.
struct Triangle<'a> {
    key: [u32; 3],
    material: &'a str,
    corners: [usize; 3],
}

/// The point of every position of `a` and of `b`, numbered together: positions within [`WELD`]
/// (grown for coordinates past 100) of each other on every axis are one point, so noise that
/// crosses a grid line still matches.
fn points(a: &[[f32; 3]], b: &[[f32; 3]]) -> (Vec<u32>, Vec<u32>) {
    use std::collections::HashMap;
    let all: Vec<[f32; 3]> = a.iter().chain(b).map(|p| p.map(|x| x + 0.0)).collect();
    // Union-find over the distinct exact positions.
    let mut exact: HashMap<[u32; 3], u32> = HashMap::with_capacity(all.len());
    let id: Vec<u32> = all
        .iter()
        .map(|p| {
            let n = exact.len() as u32;
            *exact.entry(p.map(f32::to_bits)).or_insert(n)
        })
        .collect();
    let mut at = vec![[0f32; 3]; exact.len()];
    for (p, &i) in all.iter().zip(&id) {
        at[i as usize] = *p;
    }
    let mut parent: Vec<u32> = (0..at.len() as u32).collect();
    fn root(parent: &mut [u32], mut i: u32) -> u32 {
        while parent[i as usize] != i {
            let up = parent[parent[i as usize] as usize];
            parent[i as usize] = up;
            i = up;
        }
        i
    }
    let largest = all
        .iter()
        .flatten()
        .filter(|x| x.is_finite())
        .fold(0f32, |m, x| m.max(x.abs()));
    let weld = WELD * (1.0 + largest / 100.0);
    let cell = |p: &[f32; 3]| p.map(|x| (f64::from(x) / f64::from(weld)).floor() as i64);
    let mut cells: HashMap<[i64; 3], Vec<u32>> = HashMap::new();
    for (i, p) in at.iter().enumerate() {
        let c = cell(p);
        for d in 0..27i64 {
            let n = [c[0] + d % 3 - 1, c[1] + d / 3 % 3 - 1, c[2] + d / 9 - 1];
            let Some(near) = cells.get(&n) else { continue };
            for &j in near {
                let q = &at[j as usize];
                if p.iter().zip(q).all(|(x, y)| (x - y).abs() <= weld) {
                    let (r, s) = (root(&mut parent, i as u32), root(&mut parent, j));
                    parent[r.max(s) as usize] = r.min(s);
                }
            }
        }
        let list = cells.entry(c).or_default();
        if list.len() < CELL_LIMIT {
            list.push(i as u32);
        }
    }
    let mut of: Vec<u32> = id.iter().map(|&i| root(&mut parent, i)).collect();
    let b_of = of.split_off(a.len());
    (of, b_of)
}

fn triangles<'a>(
    mesh: &Mesh,
    points: &[u32],
    materials: &'a [Material],
) -> Option<Vec<Triangle<'a>>> {
    let mut out = Vec::with_capacity(mesh.triangle_count());
    for p in &mesh.primitives {
        let material = p
            .material
            .and_then(|m| materials.get(m))
            .map_or("", |m| base_name(&m.name));
        for t in p.indices.chunks_exact(3) {
            let mut corners = [t[0] as usize, t[1] as usize, t[2] as usize];
            let mut key = [0u32; 3];
            for (k, &c) in key.iter_mut().zip(&corners) {
                *k = *points.get(c)?;
            }
            // Degenerate: importers drop them, and they draw nothing.
            if key[0] == key[1] || key[1] == key[2] || key[0] == key[2] {
                continue;
            }
            let first = (0..3).min_by_key(|&k| key[k]).unwrap_or(0);
            key.rotate_left(first);
            corners.rotate_left(first);
            out.push(Triangle {
                key,
                material,
                corners,
            });
        }
    }
    Some(out)
}

/// The corners of a triangle as a set (winding dropped).
fn corner_set(t: &Triangle<'_>) -> [u32; 3] {
    let mut k = t.key;
    k.sort_unstable();
    k
}

/// Both lists made comparable: faces over the same three corners (a double-sided face) are one face
/// in any winding, as Blender keeps one of them; each list then sorted.
fn settle(lists: [&mut Vec<Triangle<'_>>; 2]) {
    let mut seen = std::collections::HashSet::new();
    let mut twice = std::collections::HashSet::new();
    for list in &lists {
        seen.clear();
        for t in list.iter() {
            let set = corner_set(t);
            if !seen.insert(set) {
                twice.insert(set);
            }
        }
    }
    for list in lists {
        for t in list.iter_mut().filter(|t| twice.contains(&corner_set(t))) {
            let mut pairs = [
                (t.key[0], t.corners[0]),
                (t.key[1], t.corners[1]),
                (t.key[2], t.corners[2]),
            ];
            pairs.sort_unstable();
            t.key = pairs.map(|p| p.0);
            t.corners = pairs.map(|p| p.1);
        }
        list.sort_by(|a, b| (a.key, a.material).cmp(&(b.key, b.material)));
        list.dedup_by(|b, a| a.key == b.key);
    }
}

/// Whether `a` (with its scene's `a_materials`) draws the same triangles as `b`: the same corner
/// positions, material names, UVs and normal directions, in any vertex or triangle order. Attributes
/// one of them lacks (a tool that drops normals, a welded collision mesh) are not compared; colour
/// sets that are shader data (X4's, named by role) are compared where both carry the same roles
/// (painting one is an edit); tints, tangents and skin weights are not compared.
pub fn same_shape(a: &Mesh, a_materials: &[Material], b: &Mesh, b_materials: &[Material]) -> bool {
    same_skinned((a, a_materials, None), (b, b_materials, None))
}

/// A mesh, its scene's materials and, for a skinned mesh, the node of each joint of its skin (the
/// same numbering for both meshes compared).
pub(crate) type Side<'a> = (&'a Mesh, &'a [Material], Option<&'a [usize]>);

/// [`same_shape`], and where both sides name their joints' nodes, every corner moved by the same
/// nodes with the same weights (within what a byte weight holds).
pub(crate) fn same_skinned(a: Side<'_>, b: Side<'_>) -> bool {
    let ((a, a_materials, a_nodes), (b, b_materials, b_nodes)) = (a, b);
    let (pa, pb) = points(&a.vertices.positions, &b.vertices.positions);
    match (
        triangles(a, &pa, a_materials),
        triangles(b, &pb, b_materials),
    ) {
        (Some(mut ta), Some(mut tb)) => {
            settle([&mut ta, &mut tb]);
            let skins = a_nodes
                .zip(b_nodes)
                .and_then(|(x, y)| Some([influences(a, x)?, influences(b, y)?]));
            same_triangles(a, &ta, b, &tb, skins.as_ref())
        }
        _ => false,
    }
}

/// Weights below this move nothing that shows (a byte weight is 1/255).
const WEIGHT_FLOOR: f32 = 0.002;
/// Weights within this are the same: two byte steps (a tool renormalises them).
const WEIGHT_TOLERANCE: f32 = 2.0 / 255.0;

/// A vertex's joints as nodes (`usize::MAX`: none) and their weights, by node.
type Influence = [(usize, f32); 4];

/// Each vertex's joints as nodes (`usize::MAX`: none) with their weights, by node; `None` without
/// joints or weights.
fn influences(mesh: &Mesh, nodes: &[usize]) -> Option<Vec<Influence>> {
    let v = &mesh.vertices;
    let (joints, weights) = (v.joints.as_ref()?, v.weights.as_ref()?);
    Some(
        joints
            .iter()
            .zip(weights)
            .map(|(j, w)| {
                let mut out = [(usize::MAX, 0.0); 4];
                for (o, (&j, &w)) in out.iter_mut().zip(j.iter().zip(w)) {
                    if w > WEIGHT_FLOOR {
                        *o = (
                            nodes.get(usize::from(j)).copied().unwrap_or(usize::MAX - 1),
                            w,
                        );
                    }
                }
                // The same node twice is one influence.
                out.sort_unstable_by_key(|x| x.0);
                for k in 1..4 {
                    if out[k].0 == out[k - 1].0 && out[k].0 != usize::MAX {
                        out[k].1 += std::mem::take(&mut out[k - 1].1);
                        out[k - 1].0 = usize::MAX;
                    }
                }
                out.sort_unstable_by_key(|x| x.0);
                out
            })
            .collect(),
    )
}

/// The same nodes with the same weights (a node one side lacks weighs nothing there).
fn same_influences(a: &[(usize, f32); 4], b: &[(usize, f32); 4]) -> bool {
    let weight =
        |s: &[(usize, f32); 4], n: usize| s.iter().filter(|x| x.0 == n).map(|x| x.1).sum::<f32>();
    a.iter()
        .chain(b)
        .filter(|x| x.0 != usize::MAX)
        .all(|x| (weight(a, x.0) - weight(b, x.0)).abs() <= WEIGHT_TOLERANCE)
}

fn same_triangles(
    a: &Mesh,
    ta: &[Triangle<'_>],
    b: &Mesh,
    tb: &[Triangle<'_>],
    skins: Option<&[Vec<Influence>; 2]>,
) -> bool {
    if ta.len() != tb.len() {
        return false;
    }
    let (va, vb) = (&a.vertices, &b.vertices);
    let uv_sets = match (va.uvs.len(), vb.uvs.len()) {
        (0, _) | (_, 0) => 0,
        (x, y) if x == y => x,
        _ => return false,
    };
    // Data colour sets: the same roles on both sides, each value within half a byte.
    let data_sets = match (&va.color_names, &vb.color_names) {
        (x, y)
            if !x.is_empty()
                && x == y
                && va.colors.len() == x.len()
                && vb.colors.len() == x.len() =>
        {
            x.len()
        }
        _ => 0,
    };
    let normals = va.normals.as_deref().zip(vb.normals.as_deref());
    // Corners whose normal turned: Blender sets a corner of a face it cannot give a custom normal
    // (too thin) its own; a few of them are not an edit.
    let mut turned = 0usize;
    let same = ta.iter().zip(tb).all(|(x, y)| {
        x.key == y.key
            && x.material == y.material
            && x.corners.iter().zip(&y.corners).all(|(&i, &j)| {
                let uv_same = (0..uv_sets).all(|s| {
                    match (
                        va.uvs.get(s).and_then(|u| u.get(i)),
                        vb.uvs.get(s).and_then(|u| u.get(j)),
                    ) {
                        (Some(p), Some(q)) => p.iter().zip(q).all(|(p, q)| {
                            (p - q).abs() <= UV_TOLERANCE * (1.0 + p.abs().max(q.abs()))
                        }),
                        _ => false,
                    }
                });
                if let Some((na, nb)) = normals {
                    let (Some(p), Some(q)) = (na.get(i), nb.get(j)) else {
                        return false;
                    };
                    let (p, q) = (glam::Vec3::from(*p), glam::Vec3::from(*q));
                    // A zero normal (a tool that had none) says nothing.
                    let same = p.length_squared() < 1e-6
                        || q.length_squared() < 1e-6
                        || p.normalize().dot(q.normalize()) >= NORMAL_COS;
                    turned += usize::from(!same);
                }
                let skin_same = skins.is_none_or(|[sa, sb]| match (sa.get(i), sb.get(j)) {
                    (Some(x), Some(y)) => same_influences(x, y),
                    _ => false,
                });
                let colours_same = (0..data_sets).all(|s| {
                    match (
                        va.colors.get(s).and_then(|c| c.get(i)),
                        vb.colors.get(s).and_then(|c| c.get(j)),
                    ) {
                        (Some(p), Some(q)) => {
                            p.iter().zip(q).all(|(p, q)| (p - q).abs() <= 0.5 / 255.0)
                        }
                        _ => false,
                    }
                });
                uv_same && skin_same && colours_same
            })
    });
    same && turned <= (ta.len() * 3).div_ceil(1000)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Primitive, Vertices};

    fn quad(material: &str) -> (Mesh, Vec<Material>) {
        let mesh = Mesh {
            name: "q".into(),
            vertices: Vertices {
                positions: vec![[0., 0., 0.], [1., 0., 0.], [1., 1., 0.], [0., 1., 0.]],
                normals: Some(vec![[0., 0., 1.]; 4]),
                uvs: vec![vec![[0., 0.], [1., 0.], [1., 1.], [0., 1.]]],
                ..Default::default()
            },
            primitives: vec![Primitive {
                indices: vec![0, 1, 2, 0, 2, 3],
                material: Some(0),
            }],
            ..Default::default()
        };
        let materials = vec![Material {
            name: material.into(),
            ..Default::default()
        }];
        (mesh, materials)
    }

    #[test]
    fn a_tools_round_trip_is_the_same_shape() {
        let (a, am) = quad("hull");
        // Blender's way back: split vertices, triangles reordered and rotated, a renamed material,
        // UVs widened from FLOAT16, normals renormalised, a degenerate triangle added.
        let b = Mesh {
            vertices: Vertices {
                positions: vec![
                    [1., 1., 0.],
                    [0., 1., 0.],
                    [0., 0., 0.],
                    [1., 0., 0.],
                    [0., 0., 0.],
                    [1., 1., 0.],
                ],
                normals: Some(vec![[0., 0.001, 0.999]; 6]),
                uvs: vec![vec![
                    [1., 1.0002],
                    [0., 1.],
                    [0., 0.],
                    [1., 0.],
                    [0., 0.],
                    [1., 1.],
                ]],
                ..Default::default()
            },
            primitives: vec![Primitive {
                indices: vec![0, 1, 2, 3, 5, 4, 2, 2, 3, 5, 4, 3],
                material: Some(0),
            }],
            ..a.clone()
        };
        let bm = vec![Material {
            name: "hull.001".into(),
            ..Default::default()
        }];
        assert!(same_shape(&a, &am, &b, &bm));
        // Float noise below the weld on every position.
        let mut noisy = a.clone();
        noisy.vertices.positions[2] = [1.000_01, 0.999_99, 0.0];
        assert!(same_shape(&a, &am, &noisy, &am));
        // Noise either side of a line of a 1e-4 grid (a skinned mesh taken through its bind
        // matrices): still one point.
        let (mut left, mut right) = (a.clone(), a.clone());
        left.vertices.positions[2] = [1.000_049_8, 1.0, 0.0];
        right.vertices.positions[2] = [1.000_050_2, 1.0, 0.0];
        assert!(same_shape(&left, &am, &right, &am));
    }

    #[test]
    fn edits_are_not_the_same_shape() {
        let (a, am) = quad("hull");
        let mut moved = a.clone();
        moved.vertices.positions[2] = [1.0, 1.5, 0.0];
        assert!(!same_shape(&a, &am, &moved, &am));
        let mut flipped = a.clone();
        flipped.primitives[0].indices = vec![0, 2, 1, 0, 3, 2];
        assert!(!same_shape(&a, &am, &flipped, &am));
        let mut uv = a.clone();
        uv.vertices.uvs[0][1] = [0.5, 0.0];
        assert!(!same_shape(&a, &am, &uv, &am));
        let (_, other) = quad("glass");
        assert!(!same_shape(&a, &am, &a, &other));
        let mut fewer = a.clone();
        fewer.primitives[0].indices.truncate(3);
        assert!(!same_shape(&a, &am, &fewer, &am));
        let mut normal = a.clone();
        normal.vertices.normals = Some(vec![[0., 1., 0.]; 4]);
        assert!(!same_shape(&a, &am, &normal, &am));
    }

    #[test]
    fn a_painted_data_colour_is_an_edit_a_dropped_one_is_not() {
        let (mut a, am) = quad("p1.multimat");
        a.vertices.colors = vec![vec![[214. / 255., 1.0, 13. / 255., 0.0]; 4]];
        a.vertices.color_names = vec!["multimat".into()];
        let mut painted = a.clone();
        painted.vertices.colors[0][1][2] = 7. / 255.;
        assert!(!same_shape(&a, &am, &painted, &am));
        // A tool that kept the values (as floats) or dropped the set changed nothing.
        let mut kept = a.clone();
        kept.vertices.colors[0][1][2] += 0.1 / 255.;
        assert!(same_shape(&a, &am, &kept, &am));
        let mut dropped = a.clone();
        dropped.vertices.colors.clear();
        dropped.vertices.color_names.clear();
        assert!(same_shape(&a, &am, &dropped, &am));
        // Tints are not compared.
        let mut tint = a.clone();
        tint.vertices.color_names.clear();
        let mut tint_painted = painted.clone();
        tint_painted.vertices.color_names.clear();
        assert!(same_shape(&tint, &am, &tint_painted, &am));
    }
}
