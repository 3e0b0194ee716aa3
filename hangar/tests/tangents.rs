//! Tangent handedness (issue 14 item 6): for every corpus XMF, M3 and XAC mesh with tangents, the
//! sign of the exported TANGENT.w is compared with (a) the UV winding of the triangles around each
//! vertex and (b) the `mikktspace` crate run on the same positions, normals and UVs, both in glTF's
//! convention: `bitangent = cross(N, T.xyz) * w` points up the image, that is along -V with glTF's
//! top-left UV origin (+V after Blender's `v -> 1 - v` on import). Figures in docs/CONVENTIONS.md.

mod common;

use glam::Vec3;
use hangar::model::Mesh;
use std::path::PathBuf;

/// Agreement counts of one format.
#[derive(Default, Debug)]
struct Tally {
    files: usize,
    meshes: usize,
    /// Triangle corners whose UV winding says which way the bitangent goes.
    corners: u64,
    corners_agree: u64,
    /// Triangle corners mikktspace gave a tangent to.
    mikk: u64,
    mikk_agree: u64,
    /// Triangles, and those wound counter-clockwise around their normals (mikktspace relies on it).
    tris: u64,
    ccw: u64,
    /// Corners whose tangent points along +U.
    t_along_u: u64,
}

impl Tally {
    fn uv_share(&self) -> f64 {
        self.corners_agree as f64 / self.corners.max(1) as f64
    }
    fn mikk_share(&self) -> f64 {
        self.mikk_agree as f64 / self.mikk.max(1) as f64
    }
    fn along_u_share(&self) -> f64 {
        self.t_along_u as f64 / self.corners.max(1) as f64
    }
    fn print(&self, format: &str) {
        println!(
            "{format}: {} files, {} meshes with tangents, {} of {} triangles counter-clockwise; \
             tangent along +U at {} corners ({:.4}); UV winding agrees on {} of {} corners \
             ({:.4}); mikktspace agrees on {} of {} ({:.4})",
            self.files,
            self.meshes,
            self.ccw,
            self.tris,
            self.t_along_u,
            self.along_u_share(),
            self.corners_agree,
            self.corners,
            self.uv_share(),
            self.mikk_agree,
            self.mikk,
            self.mikk_share()
        );
    }
}

/// The mesh as mikktspace sees it: triangle corners, UVs with V negated so that mikktspace's
/// bitangent (along +V of what it is given) comes out along glTF's -V.
struct Mikk<'m> {
    mesh: &'m Mesh,
    tris: Vec<[usize; 3]>,
    /// The sign mikktspace gives each corner.
    signs: Vec<f32>,
}

impl mikktspace::Geometry for Mikk<'_> {
    fn num_faces(&self) -> usize {
        self.tris.len()
    }
    fn num_vertices_of_face(&self, _face: usize) -> usize {
        3
    }
    fn position(&self, face: usize, vert: usize) -> [f32; 3] {
        self.mesh.vertices.positions[self.tris[face][vert]]
    }
    fn normal(&self, face: usize, vert: usize) -> [f32; 3] {
        self.mesh.vertices.normals.as_ref().unwrap()[self.tris[face][vert]]
    }
    fn tex_coord(&self, face: usize, vert: usize) -> [f32; 2] {
        let uv = self.mesh.vertices.uvs[0][self.tris[face][vert]];
        [uv[0], -uv[1]]
    }
    fn set_tangent_encoded(&mut self, tangent: [f32; 4], face: usize, vert: usize) {
        self.signs[face * 3 + vert] = tangent[3];
    }
}

/// Adds one mesh's comparisons to `t`; false when it has no tangents, normals or UVs.
fn measure(mesh: &Mesh, t: &mut Tally) -> bool {
    let v = &mesh.vertices;
    let (Some(ns), Some(ts), Some(uv)) = (&v.normals, &v.tangents, v.uvs.first()) else {
        return false;
    };
    let tris: Vec<[usize; 3]> = mesh
        .primitives
        .iter()
        .flat_map(|p| p.indices.chunks_exact(3))
        .map(|c| [c[0] as usize, c[1] as usize, c[2] as usize])
        .collect();
    if tris.is_empty() {
        return false;
    }
    let derived = |i: usize| {
        let tg = ts[i];
        Vec3::from(ns[i]).cross(Vec3::new(tg[0], tg[1], tg[2])) * tg[3]
    };
    // (a) The direction of -V over each triangle, seen from each corner.
    for &[a, b, c] in &tris {
        let p = |i: usize| Vec3::from(v.positions[i]);
        let (e1, e2) = (p(b) - p(a), p(c) - p(a));
        let (du1, dv1) = (uv[b][0] - uv[a][0], uv[b][1] - uv[a][1]);
        let (du2, dv2) = (uv[c][0] - uv[a][0], uv[c][1] - uv[a][1]);
        let det = du1 * dv2 - du2 * dv1;
        if det.abs() < 1e-12 || e1.cross(e2).length_squared() < 1e-20 {
            continue;
        }
        let nsum = Vec3::from(ns[a]) + Vec3::from(ns[b]) + Vec3::from(ns[c]);
        if e1.cross(e2).dot(nsum) > 0.0 {
            t.ccw += 1;
        }
        t.tris += 1;
        let up = -(e2 * du1 - e1 * du2) / det;
        for i in [a, b, c] {
            let n = Vec3::from(ns[i]);
            // The bitangent direction within the vertex's tangent plane.
            let want = up - n * n.dot(up);
            if want.length_squared() < 1e-20 {
                continue;
            }
            let right = (e1 * dv2 - e2 * dv1) / det;
            if Vec3::new(ts[i][0], ts[i][1], ts[i][2]).dot(right) > 0.0 {
                t.t_along_u += 1;
            }
            t.corners += 1;
            if derived(i).dot(want) > 0.0 {
                t.corners_agree += 1;
            }
        }
    }
    // (b) mikktspace on the same corners.
    let mut g = Mikk {
        mesh,
        signs: vec![0.0; tris.len() * 3],
        tris,
    };
    if mikktspace::generate_tangents(&mut g) {
        for (k, &s) in g.signs.iter().enumerate() {
            if s == 0.0 {
                continue;
            }
            let i = g.tris[k / 3][k % 3];
            t.mikk += 1;
            if (ts[i][3] > 0.0) == (s > 0.0) {
                t.mikk_agree += 1;
            }
        }
    }
    t.meshes += 1;
    true
}

fn measure_files(files: &[PathBuf]) -> Tally {
    let mut t = Tally::default();
    for f in files {
        let bytes = std::fs::read(f).unwrap();
        let opened = common::open(&bytes, f).unwrap();
        let (scene, _) = opened.to_scene().unwrap();
        let mut any_mesh = false;
        for m in &scene.meshes {
            any_mesh |= measure(m, &mut t);
        }
        t.files += usize::from(any_mesh);
    }
    t
}

#[test]
fn xmf_tangent_signs_follow_the_uv_winding() {
    let Some(mut files) = common::corpus("x4", "xmf") else {
        return;
    };
    let root = PathBuf::from(std::env::var_os("HANGAR_CORPUS").unwrap());
    for sub in ["x4-components", "textures"] {
        common::walk(&root.join(sub), &["xmf"], &mut files);
    }
    files.sort();
    let t = measure_files(&files);
    t.print("XMF");
    // Measured: 40 files, 553 509 corners; +U 0.989, UV winding 0.931, mikktspace 0.889.
    assert!(t.files >= 40, "{t:?}");
    assert!(t.corners > 500_000, "{t:?}");
    assert!(t.along_u_share() >= 0.98, "{t:?}");
    assert!(t.uv_share() >= 0.92, "{t:?}");
    assert!(t.mikk_share() >= 0.88, "{t:?}");
}

#[test]
fn m3_tangent_signs_follow_the_uv_winding() {
    let Some(files) = common::corpus("m3", "m3") else {
        return;
    };
    let t = measure_files(&files);
    t.print("M3");
    // Measured: 70 files, 1 066 650 corners; +U 0.877, UV winding 0.878, mikktspace 0.954.
    assert!(t.files >= 70, "{t:?}");
    assert!(t.corners > 1_000_000, "{t:?}");
    assert!(t.along_u_share() >= 0.87, "{t:?}");
    assert!(t.uv_share() >= 0.87, "{t:?}");
    assert!(t.mikk_share() >= 0.95, "{t:?}");
}

#[test]
fn xac_tangent_signs_follow_the_uv_winding() {
    let Some(files) = common::corpus("emfx", "xac") else {
        return;
    };
    let t = measure_files(&files);
    t.print("XAC");
    // Measured: 33 files, 315 969 corners; +U 0.995, UV winding 0.989, mikktspace 0.983.
    assert!(t.files >= 33, "{t:?}");
    assert!(t.corners > 300_000, "{t:?}");
    assert!(t.along_u_share() >= 0.99, "{t:?}");
    assert!(t.uv_share() >= 0.98, "{t:?}");
    assert!(t.mikk_share() >= 0.98, "{t:?}");
}

/// The measure itself: a quad laid out the glTF way (V down the image, tangent +X, bitangent +Y up
/// the image, w = +1) agrees everywhere, and the opposite sign nowhere.
#[test]
fn the_measure_agrees_with_a_gltf_quad() {
    let mut m = Mesh::default();
    m.vertices.positions = vec![
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0],
        [1.0, 1.0, 0.0],
    ];
    m.vertices.normals = Some(vec![[0.0, 0.0, 1.0]; 4]);
    m.vertices.uvs = vec![vec![[0.0, 1.0], [1.0, 1.0], [0.0, 0.0], [1.0, 0.0]]];
    m.vertices.tangents = Some(vec![[1.0, 0.0, 0.0, 1.0]; 4]);
    m.primitives = vec![hangar::model::Primitive {
        indices: vec![0, 1, 2, 2, 1, 3],
        material: None,
    }];
    let mut t = Tally::default();
    assert!(measure(&m, &mut t));
    assert_eq!(
        (t.corners, t.corners_agree, t.mikk, t.mikk_agree),
        (6, 6, 6, 6)
    );
    assert_eq!((t.tris, t.ccw, t.t_along_u), (2, 2, 6));
    for tg in m.vertices.tangents.as_mut().unwrap() {
        tg[3] = -1.0;
    }
    let mut t = Tally::default();
    measure(&m, &mut t);
    assert_eq!((t.corners_agree, t.mikk_agree), (0, 0));
}
