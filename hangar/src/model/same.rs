//! Whether a mesh that went through another tool (Blender's glTF importer and exporter, most often)
//! still draws the triangles it was read with, so the file it came from can be written back byte for
//! byte. Tools renumber, split and merge vertices, reorder triangles, widen FLOAT16 UVs, renormalise
//! byte normals, rename repeated materials `name.001` and drop degenerate triangles: none of that is
//! an edit, and none of it changes the answer here.

use super::{Material, Mesh};

/// The first item not taken yet named `name`: the same name, else the name with a tool's `.NNN`
/// suffix, else (Blender cuts names at 63 bytes) a name that is the start of it.
pub(crate) fn find_named<T>(
    items: &[T],
    taken: &[bool],
    name: &str,
    name_of: impl Fn(&T) -> &str,
) -> Option<usize> {
    let free = |i: &usize| !taken.get(*i).copied().unwrap_or(true);
    let base = |s: &str| base_name(s).to_string();
    let exact = (0..items.len())
        .filter(free)
        .find(|&i| items.get(i).is_some_and(|x| name_of(x) == name));
    exact
        .or_else(|| {
            (0..items.len())
                .filter(free)
                .find(|&i| items.get(i).is_some_and(|x| base(name_of(x)) == name))
        })
        .or_else(|| {
            (0..items.len()).filter(free).find(|&i| {
                items.get(i).is_some_and(|x| {
                    let n = base(name_of(x));
                    n.len() >= 60 && name.starts_with(&n)
                })
            })
        })
}

/// Positions on this grid (scene units) match when a tool added float noise.
const GRID: f64 = 1e-4;
/// UVs within this (plus as much again relative to the value: FLOAT16's steps) are the same.
const UV_TOLERANCE: f32 = 1e-3;
/// Normals pointing within about 6 degrees are the same (byte normals, renormalised).
const NORMAL_COS: f32 = 0.995;

/// One triangle: its corners' position keys (the smallest first, winding kept), its material's
/// name without a tool's `.001`, and its corners' vertex indices in the same order.
struct Triangle<'a> {
    key: [[i64; 3]; 3],
    material: &'a str,
    corners: [usize; 3],
}

/// A material name without the `.NNN` Blender appends to a repeated name.
fn base_name(name: &str) -> &str {
    match name.rsplit_once('.') {
        Some((base, n)) if n.len() == 3 && n.bytes().all(|b| b.is_ascii_digit()) => base,
        _ => name,
    }
}

/// A position coordinate as a sortable key: its exact value (`-0` is `0`), or its cell on [`GRID`].
fn coordinate(v: f32, grid: bool) -> i64 {
    if grid {
        (f64::from(v) / GRID).round() as i64
    } else {
        i64::from((v + 0.0).to_bits())
    }
}

fn triangles<'a>(mesh: &Mesh, materials: &'a [Material], grid: bool) -> Option<Vec<Triangle<'a>>> {
    let positions = &mesh.vertices.positions;
    let mut out = Vec::with_capacity(mesh.triangle_count());
    for p in &mesh.primitives {
        let material = p
            .material
            .and_then(|m| materials.get(m))
            .map_or("", |m| base_name(&m.name));
        for t in p.indices.chunks_exact(3) {
            let mut corners = [t[0] as usize, t[1] as usize, t[2] as usize];
            let mut key = [[0i64; 3]; 3];
            for (k, &c) in key.iter_mut().zip(&corners) {
                let v = positions.get(c)?;
                *k = [
                    coordinate(v[0], grid),
                    coordinate(v[1], grid),
                    coordinate(v[2], grid),
                ];
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
fn corner_set(t: &Triangle<'_>) -> [[i64; 3]; 3] {
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
/// one of them lacks (a tool that drops normals, a welded collision mesh) are not compared; vertex
/// colours, tangents and skin weights are not compared.
pub fn same_shape(a: &Mesh, a_materials: &[Material], b: &Mesh, b_materials: &[Material]) -> bool {
    // Exact positions first (a round trip through Blender keeps every bit); else on the grid.
    [false, true].into_iter().any(|grid| {
        match (
            triangles(a, a_materials, grid),
            triangles(b, b_materials, grid),
        ) {
            (Some(mut ta), Some(mut tb)) => {
                settle([&mut ta, &mut tb]);
                same_triangles(a, &ta, b, &tb)
            }
            _ => false,
        }
    })
}

fn same_triangles(a: &Mesh, ta: &[Triangle<'_>], b: &Mesh, tb: &[Triangle<'_>]) -> bool {
    if ta.len() != tb.len() {
        return false;
    }
    let (va, vb) = (&a.vertices, &b.vertices);
    let uv_sets = match (va.uvs.len(), vb.uvs.len()) {
        (0, _) | (_, 0) => 0,
        (x, y) if x == y => x,
        _ => return false,
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
                uv_same
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
        // Float noise below the grid on every position.
        let mut noisy = a.clone();
        noisy.vertices.positions[2] = [1.000_01, 0.999_99, 0.0];
        assert!(same_shape(&a, &am, &noisy, &am));
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
}
