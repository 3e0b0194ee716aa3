//! LODs and collision meshes made from a part's lod0 with meshoptimizer's simplifier (the `native`
//! feature; without it LODs are refused and a collision mesh is lod0 itself).
//!
//! A LOD keeps the outline (the simplifier's border lock, on each primitive's own vertices welded by
//! position so that UV and normal seams are not borders) and has at most 60% of the triangles of the level before;
//! a collision mesh is lod0 simplified to a few hundred triangles, a box where lod0 is too thin or
//! too small to hold one.

use crate::error::{Error, Result};
use crate::model::{bounds, Mesh, Primitive, Vertices};

/// The most triangles a LOD may keep of the level before.
pub(crate) const LOD_RATIO: f64 = 0.6;
/// A mesh with fewer triangles gets no LOD: drawing it costs little, and halving it breaks its shape.
const MIN_LOD_TRIANGLES: usize = 64;
/// What a collision mesh is simplified towards.
const COLLISION_TRIANGLES: usize = 400;

/// The box of the vertices the triangles use.
fn used_bounds(mesh: &Mesh) -> Option<([f32; 3], [f32; 3])> {
    let used: Vec<[f32; 3]> = mesh
        .primitives
        .iter()
        .flat_map(|p| p.indices.iter())
        .filter_map(|&i| mesh.vertices.positions.get(i as usize).copied())
        .collect();
    bounds(&used)
}

/// Whether `b`'s box is within `share` of `a`'s diagonal of `a`'s box on every side.
#[cfg(test)]
fn same_box(a: &Mesh, b: &Mesh, share: f32) -> bool {
    match (used_bounds(a), used_bounds(b)) {
        (Some(a), Some(b)) => boxes_close(a, b, share),
        _ => false,
    }
}

/// Whether box `b` is within `share` of `a`'s diagonal of box `a` on every side.
#[cfg(any(feature = "native", test))]
fn boxes_close(a: ([f32; 3], [f32; 3]), b: ([f32; 3], [f32; 3]), share: f32) -> bool {
    let ((alo, ahi), (blo, bhi)) = (a, b);
    let diag = (0..3)
        .map(|k| (ahi[k] - alo[k]).powi(2))
        .sum::<f32>()
        .sqrt()
        .max(1e-6);
    (0..3)
        .all(|k| (alo[k] - blo[k]).abs() <= share * diag && (ahi[k] - bhi[k]).abs() <= share * diag)
}

/// Each vertex's first vertex at the same position: the index buffer the simplifier sees, so seams
/// of normals and UVs are not borders.
#[cfg(feature = "native")]
fn position_remap(positions: &[[f32; 3]]) -> Vec<u32> {
    let mut first: std::collections::HashMap<[u32; 3], u32> = std::collections::HashMap::new();
    positions
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let key = p.map(|c| if c == 0.0 { 0 } else { c.to_bits() });
            *first.entry(key).or_insert(i as u32)
        })
        .collect()
}

/// A mesh as the simplifier sees it: each primitive's triangles over its own vertices only (the
/// simplifier's work and memory grow with the vertices it is handed, and a part's mesh holds those
/// of all its materials), welded by position so seams of normals and UVs are not borders.
#[cfg(feature = "native")]
struct Welded {
    prims: Vec<WeldedPrimitive>,
}

/// One primitive as the simplifier sees it: its positions, its triangles over them, and the mesh's
/// vertex of each position.
#[cfg(feature = "native")]
struct WeldedPrimitive {
    positions: Vec<[f32; 3]>,
    indices: Vec<u32>,
    vertex: Vec<u32>,
}

#[cfg(feature = "native")]
impl Welded {
    fn new(mesh: &Mesh) -> Welded {
        let positions = &mesh.vertices.positions;
        let remap = position_remap(positions);
        let mut local = vec![u32::MAX; positions.len()];
        let prims = mesh
            .primitives
            .iter()
            .map(|prim| {
                let (mut pos, mut global) = (Vec::new(), Vec::new());
                let idx = prim
                    .indices
                    .iter()
                    .map(|&i| {
                        let g = remap.get(i as usize).copied().unwrap_or(i);
                        match local.get_mut(g as usize) {
                            Some(slot) if *slot != u32::MAX => *slot,
                            slot => {
                                let k = pos.len() as u32;
                                if let Some(slot) = slot {
                                    *slot = k;
                                }
                                pos.push(positions.get(g as usize).copied().unwrap_or_default());
                                global.push(g);
                                k
                            }
                        }
                    })
                    .collect();
                for &g in &global {
                    if let Some(slot) = local.get_mut(g as usize) {
                        *slot = u32::MAX;
                    }
                }
                WeldedPrimitive {
                    positions: pos,
                    indices: idx,
                    vertex: global,
                }
            })
            .collect();
        Welded { prims }
    }

    /// Each primitive's triangles (as the mesh's vertices) simplified towards `ratio` of them.
    fn simplified(&self, ratio: f64, error: f32, lock_border: bool, sloppy: bool) -> Vec<Vec<u32>> {
        use meshopt::SimplifyOptions;
        self.prims
            .iter()
            .map(|p| {
                let (pos, idx) = (&p.positions, &p.indices);
                let target = ((idx.len() / 3) as f64 * ratio) as usize * 3;
                let options = if lock_border {
                    SimplifyOptions::LockBorder
                } else {
                    SimplifyOptions::None
                };
                let out = if sloppy {
                    meshopt::simplify_sloppy_decoder(idx, pos, target, error, None)
                } else {
                    meshopt::simplify_decoder(idx, pos, target, error, options, None)
                };
                out.iter()
                    .map(|&l| p.vertex.get(l as usize).copied().unwrap_or(0))
                    .collect()
            })
            .collect()
    }
}

/// `mesh` with each primitive's triangles replaced by `indices` (a primitive left without one
/// triangle dropped).
#[cfg(feature = "native")]
fn with_indices(mesh: &Mesh, indices: Vec<Vec<u32>>) -> Mesh {
    let mut out = Mesh {
        primitives: Vec::new(),
        ..mesh.clone()
    };
    out.primitives = mesh
        .primitives
        .iter()
        .zip(indices)
        .filter(|(_, i)| i.len() >= 3)
        .map(|(p, indices)| Primitive {
            indices,
            material: p.material,
        })
        .collect();
    out
}

/// The triangles `indices` (over `mesh`'s vertices) count and whether their box is within `share`
/// of the diagonal of `was` (the box of the mesh simplified, taken once for all tries) on every side.
#[cfg(feature = "native")]
fn judged(
    mesh: &Mesh,
    was: Option<([f32; 3], [f32; 3])>,
    indices: &[Vec<u32>],
    share: f32,
) -> (usize, bool) {
    let n = indices.iter().map(|i| i.len() / 3).sum();
    let used: Vec<[f32; 3]> = indices
        .iter()
        .flatten()
        .filter_map(|&i| mesh.vertices.positions.get(i as usize).copied())
        .collect();
    let same = match (was, bounds(&used)) {
        (Some(a), Some(b)) => boxes_close(a, b, share),
        _ => false,
    };
    (n, same)
}

/// The next LOD of `mesh`: at most [`LOD_RATIO`] of its triangles with the same box (within 5% of
/// its diagonal), the outline kept when the simplifier can keep it; else (scattered pieces such as
/// decals, which no edge collapse reduces) its largest triangles. None below
/// [`MIN_LOD_TRIANGLES`].
pub(crate) fn next_lod(mesh: &Mesh) -> Option<Mesh> {
    let before = mesh.triangle_count();
    if before < MIN_LOD_TRIANGLES {
        return None;
    }
    // Gentle first: outline locked and a small error; then freer.
    #[cfg(feature = "native")]
    {
        let limit = (before as f64 * LOD_RATIO).floor() as usize;
        let welded = Welded::new(mesh);
        let was = used_bounds(mesh);
        for (error, lock, sloppy) in [
            (0.01, true, false),
            (0.05, true, false),
            (0.05, false, false),
            (0.2, false, false),
            (0.05, false, true),
        ] {
            let indices = welded.simplified(0.5, error, lock, sloppy);
            let (n, same) = judged(mesh, was, &indices, 0.04);
            if n > 0 && n <= limit && same {
                return Some(compact(with_indices(mesh, indices)));
            }
        }
    }
    largest_triangles(mesh, before / 2).map(compact)
}

/// The `keep` largest triangles of `mesh` (each keeping its primitive), always with those that hold
/// the extreme vertices, so the box stays; none when that leaves nothing out.
fn largest_triangles(mesh: &Mesh, keep: usize) -> Option<Mesh> {
    let p = &mesh.vertices.positions;
    let at = |i: u32| glam::Vec3::from(p.get(i as usize).copied().unwrap_or_default());
    // (primitive, first corner, area)
    let mut tris: Vec<(usize, usize, f32)> = Vec::new();
    for (k, prim) in mesh.primitives.iter().enumerate() {
        for (c, t) in prim.indices.chunks_exact(3).enumerate() {
            let area = (at(t[1]) - at(t[0])).cross(at(t[2]) - at(t[0])).length();
            tris.push((k, c * 3, area));
        }
    }
    if keep == 0 || keep >= tris.len() {
        return None;
    }
    let (lo, hi) = used_bounds(mesh)?;
    let corners = |t: &(usize, usize, f32)| -> Vec<[f32; 3]> {
        mesh.primitives
            .get(t.0)
            .and_then(|pr| pr.indices.get(t.1..t.1 + 3))
            .map(|c| c.iter().map(|&i| at(i).to_array()).collect())
            .unwrap_or_default()
    };
    // One triangle for each side of the box: the first that touches it.
    let mut must: Vec<usize> = Vec::new();
    for a in 0..3 {
        for side in [lo[a], hi[a]] {
            if let Some(i) = tris
                .iter()
                .position(|t| corners(t).iter().any(|v| v[a] == side))
            {
                if !must.contains(&i) {
                    must.push(i);
                }
            }
        }
    }
    let mut order: Vec<usize> = (0..tris.len()).collect();
    order.sort_by(|&a, &b| {
        must.contains(&b)
            .cmp(&must.contains(&a))
            .then(tris[b].2.total_cmp(&tris[a].2))
            .then(a.cmp(&b))
    });
    let mut chosen: Vec<usize> = order.into_iter().take(keep).collect();
    chosen.sort_unstable();
    let mut out = mesh.clone();
    for prim in &mut out.primitives {
        prim.indices.clear();
    }
    for i in chosen {
        let (k, c, _) = tris[i];
        let corners = mesh
            .primitives
            .get(k)
            .and_then(|pr| pr.indices.get(c..c + 3));
        if let (Some(dst), Some(src)) = (out.primitives.get_mut(k), corners) {
            dst.indices.extend_from_slice(src);
        }
    }
    out.primitives.retain(|p| !p.indices.is_empty());
    Some(out)
}

/// A collision mesh for a part whose lod0 is `mesh`: positions only, simplified when lod0 is large,
/// a box around lod0 when it is too thin or small to close a shape.
pub(crate) fn collision(mesh: &Mesh) -> Result<Mesh> {
    let base = positions_mesh(
        &mesh.name,
        mesh.vertices.positions.clone(),
        mesh.primitives
            .iter()
            .flat_map(|p| p.indices.iter().copied())
            .collect(),
    );
    let (lo, hi) = used_bounds(&base)
        .ok_or_else(|| Error::refused("mesh", "the part's lod0 has no triangles"))?;
    #[cfg(feature = "native")]
    let base = {
        let n = base.triangle_count();
        let mut best = base;
        if n > COLLISION_TRIANGLES {
            let ratio = COLLISION_TRIANGLES as f64 / n as f64;
            let welded = Welded::new(&best);
            for (error, sloppy) in [(0.02f32, false), (0.05, false), (0.05, true)] {
                let indices = welded.simplified(ratio, error, false, sloppy);
                if let (4.., true) = judged(&best, Some((lo, hi)), &indices, 0.05) {
                    best = with_indices(&best, indices);
                    break;
                }
            }
        }
        best
    };
    #[cfg(not(feature = "native"))]
    let _ = COLLISION_TRIANGLES;
    let base = compact(base);
    let thin = (0..3).any(|k| hi[k] - lo[k] <= 1e-4);
    if base.triangle_count() >= 4 && !thin {
        return Ok(base);
    }
    Ok(box_mesh(&mesh.name, lo, hi))
}

/// A closed box of 12 triangles from `lo` to `hi`, a flat side thickened a little.
fn box_mesh(name: &str, lo: [f32; 3], hi: [f32; 3]) -> Mesh {
    let diag = (0..3).map(|k| (hi[k] - lo[k]).powi(2)).sum::<f32>().sqrt();
    let pad = (diag * 0.005).max(0.001);
    let (mut lo, mut hi) = (lo, hi);
    for k in 0..3 {
        if hi[k] - lo[k] < pad {
            lo[k] -= pad;
            hi[k] += pad;
        }
    }
    let positions: Vec<[f32; 3]> = (0..8)
        .map(|i| {
            [
                if i & 1 == 0 { lo[0] } else { hi[0] },
                if i & 2 == 0 { lo[1] } else { hi[1] },
                if i & 4 == 0 { lo[2] } else { hi[2] },
            ]
        })
        .collect();
    let indices = vec![
        0, 2, 1, 1, 2, 3, // -z
        4, 5, 6, 5, 7, 6, // +z
        0, 1, 4, 1, 5, 4, // -y
        2, 6, 3, 3, 6, 7, // +y
        0, 4, 2, 2, 4, 6, // -x
        1, 3, 5, 3, 7, 5, // +x
    ];
    positions_mesh(name, positions, indices)
}

/// A mesh of positions alone, one primitive without material.
pub(crate) fn positions_mesh(name: &str, positions: Vec<[f32; 3]>, indices: Vec<u32>) -> Mesh {
    Mesh {
        name: name.to_string(),
        vertices: Vertices {
            positions,
            ..Default::default()
        },
        primitives: vec![Primitive {
            indices,
            material: None,
        }],
        ..Default::default()
    }
}

/// `mesh` with only the vertices its triangles use, in first-use order.
fn compact(mut mesh: Mesh) -> Mesh {
    let n = mesh.vertices.positions.len();
    let mut new_of = vec![u32::MAX; n];
    let mut order: Vec<usize> = Vec::new();
    for p in &mut mesh.primitives {
        for i in &mut p.indices {
            let Some(slot) = new_of.get_mut(*i as usize) else {
                continue;
            };
            if *slot == u32::MAX {
                *slot = order.len() as u32;
                order.push(*i as usize);
            }
            *i = *slot;
        }
    }
    if order.len() == n {
        return mesh;
    }
    let v = &mesh.vertices;
    let pick = |src: &Vec<[f32; 3]>| order.iter().filter_map(|&i| src.get(i).copied()).collect();
    let pick4 = |src: &Vec<[f32; 4]>| order.iter().filter_map(|&i| src.get(i).copied()).collect();
    mesh.vertices = Vertices {
        positions: pick(&v.positions),
        normals: v.normals.as_ref().map(pick),
        tangents: v.tangents.as_ref().map(pick4),
        uvs: v
            .uvs
            .iter()
            .map(|u| order.iter().filter_map(|&i| u.get(i).copied()).collect())
            .collect(),
        colors: v.colors.iter().map(pick4).collect(),
        color_names: v.color_names.clone(),
        custom: Vec::new(),
        joints: None,
        weights: None,
    };
    mesh.morph_targets.clear();
    mesh
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A grid of `n` x `n` quads in the XY plane.
    fn grid(n: u32) -> Mesh {
        let mut positions = Vec::new();
        for y in 0..=n {
            for x in 0..=n {
                let h = ((x * 7 + y * 3) % 5) as f32 * 0.01;
                positions.push([x as f32, y as f32, h]);
            }
        }
        let mut indices = Vec::new();
        for y in 0..n {
            for x in 0..n {
                let i = y * (n + 1) + x;
                indices.extend([i, i + 1, i + n + 1, i + 1, i + n + 2, i + n + 1]);
            }
        }
        positions_mesh("grid", positions, indices)
    }

    #[test]
    fn a_lod_has_at_most_60_percent_and_the_same_box() {
        let g = grid(30);
        assert_eq!(g.triangle_count(), 1800);
        let l1 = next_lod(&g).unwrap();
        assert!(l1.triangle_count() <= 1080, "{}", l1.triangle_count());
        assert!(same_box(&g, &l1, 0.001));
        let l2 = next_lod(&l1).unwrap();
        assert!(l2.triangle_count() * 10 <= l1.triangle_count() * 6);
    }

    #[test]
    fn a_collision_mesh_covers_lod0_and_a_flat_one_is_a_box() {
        let g = grid(4);
        let c = collision(&g).unwrap();
        assert!(c.vertices.normals.is_none());
        assert!(same_box(&g, &c, 0.02));
        let flat = positions_mesh(
            "flat",
            vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
            vec![0, 1, 2],
        );
        let c = collision(&flat).unwrap();
        assert_eq!(c.triangle_count(), 12);
        assert_eq!(c.vertices.positions.len(), 8);
    }
}
