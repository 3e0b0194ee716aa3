//! Building an M3 (MD34) from the neutral scene: glTF from Blender, or any model hangar reads.
//!
//! The builder does not serialize anything itself: it lists sections as the JSON dump does
//! (entries field by field, references by section index) and hands them to [`dump::from_json`] and
//! [`write::write`], so layouts, counts, offsets and the index come from the one table and writer.
//!
//! Space: M3 is +Z up; the scene is glTF's +Y up. Every world matrix is turned by +90 degrees
//! about X (undoing the root node the M3 reader adds). Bones are the skin joints, the animated
//! nodes and the unskinned mesh nodes (a static mesh is bound whole to its own bone).
//!
//! Vertices are written in the layout the game's own models use: position, four weight and lookup
//! pairs, packed normal, the colour when the scene has vertex colours, one to four int16 UV sets,
//! packed tangent (vertex flags `0x1820061`, `0x1860061`, `0x18e0061`, `0x19e0061`, plus `0x200`
//! with colours: the formats m3addon lists).

use super::table::{table, Layout, Ty};
use super::{dump, write, Tag};
use crate::error::{Error, Result, Warning};
use crate::model::{Interpolation, Property, Scene};
use crate::normalized::unorm8;
use glam::{Mat4, Quat, Vec3};
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, HashMap};

/// The MODL version current StarCraft II models in the corpus use, which mdx-m3-viewer also reads.
pub const DEFAULT_MODL_VERSION: u32 = 29;

/// The versions of the structures written with one MODL version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Versions {
    pub modl: u32,
    pub regn: u32,
    pub mat: u32,
    pub layr: u32,
    pub seqs: u32,
    pub cam: u32,
}

/// The MODL versions hangar writes, each with the structure versions the corpus files of that
/// MODL version use (a choice where they differ), as far as the game and mdx-m3-viewer 5.12.0 both
/// read them. mdx-m3-viewer knows MODL 23, 25, 26, 28, 29, MAT_ 15-19, LAYR 22 and 24-26 and CAM_ 3
/// and 5, but reads a LAYR 26 entry as if it were a 468-byte LAYR 25 and fails on every one of the
/// 20 corpus files that have LAYR 26: MODL 28 and 29 files get LAYR 25 (the game reads either).
/// MODL 20, 21, 24 and 30 are described, but no corpus file shows what goes with them and
/// mdx-m3-viewer reads none of them, so they are not written.
#[rustfmt::skip]
pub const VERSIONS: [Versions; 5] = [
    // 16 corpus files: REGN 3, MAT_ 15, LAYR 22, SEQS 1, CAM_ 3.
    Versions { modl: 23, regn: 3, mat: 15, layr: 22, seqs: 1, cam: 3 },
    // 3 files: REGN 3, MAT_ 17 or 18, LAYR 25, SEQS 2 (no camera: CAM_ 3 as MODL 23 and 26).
    Versions { modl: 25, regn: 3, mat: 18, layr: 25, seqs: 2, cam: 3 },
    // 23 files: REGN 3, MAT_ 18, LAYR 25, SEQS 2, CAM_ 3.
    Versions { modl: 26, regn: 3, mat: 18, layr: 25, seqs: 2, cam: 3 },
    // 3 files: REGN 4, MAT_ 18, LAYR 26 (25 written), SEQS 2 (no camera: CAM_ 3 as MODL 26).
    Versions { modl: 28, regn: 4, mat: 18, layr: 25, seqs: 2, cam: 3 },
    // 37 files: REGN 5, MAT_ 19 (20 in 8 files, which mdx-m3-viewer does not read), LAYR 26 (25
    // written), SEQS 2, CAM_ 5.
    Versions { modl: 29, regn: 5, mat: 19, layr: 25, seqs: 2, cam: 5 },
];

/// The structure versions written with MODL `modl`, or why it is not written.
pub fn versions(modl: u32) -> Result<Versions> {
    VERSIONS
        .iter()
        .copied()
        .find(|v| v.modl == modl)
        .ok_or_else(|| {
            let list: Vec<String> = VERSIONS.iter().map(|v| v.modl.to_string()).collect();
            Error::refused(
                "--modl-version",
                format!(
                    "MODL version {modl} is not written; hangar writes MODL {} (the versions of \
                 the StarCraft II files it has seen that mdx-m3-viewer also reads)",
                    list.join(", ")
                ),
            )
        })
}
/// Face indices are 16-bit and region-relative.
const MAX_REGION_VERTICES: usize = 65_535;
/// A vertex names its bones by an 8-bit index into the region's bone lookup.
const MAX_REGION_BONES: usize = 256;
/// Longest name written (the game's own names are far shorter).
const MAX_NAME: usize = 255;

#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// One of [`VERSIONS`]; the structure versions follow from it.
    pub modl_version: u32,
    /// `.m3a`: the sequences and the bones they move, no geometry or materials.
    pub motions_only: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            modl_version: DEFAULT_MODL_VERSION,
            motions_only: false,
        }
    }
}

/// Sections as the JSON dump lists them; references are `{"index": i}`.
struct Doc {
    sections: Vec<Value>,
    next_id: u32,
    /// The structure versions written.
    v: Versions,
    /// Names cut to [`MAX_NAME`] bytes.
    cut_names: Vec<String>,
    /// Texture file names given the game's texture folder: (as named, as written).
    moved_textures: Vec<(String, String)>,
}

impl Doc {
    fn push(&mut self, tag: &str, version: u32, body: (&str, Value)) -> Value {
        let index = self.sections.len();
        let mut o = Map::new();
        o.insert("tag".into(), tag.into());
        o.insert("version".into(), version.into());
        o.insert(body.0.into(), body.1);
        self.sections.push(Value::Object(o));
        json!({ "index": index })
    }

    fn entries(&mut self, tag: &str, version: u32, entries: Vec<Value>) -> Value {
        if entries.is_empty() {
            return Value::Null;
        }
        self.push(tag, version, ("entries", Value::Array(entries)))
    }

    fn text(&mut self, s: &str) -> Value {
        let mut s: String = s.chars().filter(|&c| c != '\0').collect();
        if s.len() > MAX_NAME {
            let mut cut = MAX_NAME;
            while !s.is_char_boundary(cut) {
                cut -= 1;
            }
            s.truncate(cut);
            self.cut_names.push(s.clone());
        }
        self.push("CHAR", 0, ("text", s.into()))
    }

    fn bytes(&mut self, tag: &str, b: Vec<u8>) -> Value {
        if b.is_empty() {
            return Value::Null;
        }
        self.push(
            tag,
            0,
            ("data", crate::raw::Bytes::owned(b).to_base64().into()),
        )
    }

    fn plain<T: Into<Value>>(&mut self, tag: &str, v: Vec<T>) -> Value {
        self.entries(tag, 0, v.into_iter().map(Into::into).collect())
    }

    fn id(&mut self) -> u32 {
        // Animation ids only need to be unique within the file.
        self.next_id = self.next_id.wrapping_add(0x9E37_79B1);
        self.next_id
    }

    /// An animation reference holding `init` at rest.
    fn anim(&mut self, init: Value) -> Value {
        json!({ "interpolation": 1, "id": self.id(), "init": init.clone(), "null": init })
    }
}

fn layout(tag: &str, version: u32) -> Result<&'static Layout> {
    table()
        .layout(Tag::from_name(tag), version, false)
        .ok_or_else(|| Error::unsupported(format!("{tag} version {version} is not described")))
}

/// An entry with every field zero (references null), to be filled in.
fn blank(l: &Layout) -> Map<String, Value> {
    l.slots
        .iter()
        .map(|s| (s.name.to_string(), zero(s.ty)))
        .collect()
}

fn zero(ty: Ty) -> Value {
    match ty {
        Ty::F32 => json!(0.0),
        Ty::Floats(n) => Value::Array(vec![json!(0.0); n]),
        Ty::Col => json!([0, 0, 0, 0]),
        Ty::Bytes(n) => crate::raw::Bytes::owned(vec![0; n]).to_base64().into(),
        Ty::Ref(_) => Value::Null,
        Ty::Anim(k) => {
            let v = zero(k.value_ty());
            json!({ "interpolation": 0, "id": 0, "init": v.clone(), "null": v })
        }
        Ty::Struct(t) => Value::Object(blank(table().inline(t, false))),
        _ => json!(0),
    }
}

/// The M3 bytes of `scene`, with what was changed on the way.
pub fn build(scene: &Scene, opts: &Options) -> Result<(Vec<u8>, Vec<Warning>)> {
    let built = sections(scene, versions(opts.modl_version)?, opts.motions_only)?;
    let m3 = dump::from_json(&json!({ "kind": "MD34", "sections": built.sections }))?;
    Ok((write::write(&m3)?, built.warnings))
}

/// An M3 built from a scene, as the JSON dump lists its sections, with what ties it to the scene.
pub(crate) struct Built {
    /// Sections as [`dump::to_json`] lists them (references `{"index": i}`, counts implied).
    pub sections: Vec<Value>,
    /// The scene mesh each region was made from.
    pub region_mesh: Vec<usize>,
    /// The scene node each bone was made from.
    pub bone_nodes: Vec<usize>,
    pub warnings: Vec<Warning>,
}

/// The sections of `scene` written with the structure versions `versions`.
pub(crate) fn sections(scene: &Scene, versions: Versions, motions_only: bool) -> Result<Built> {
    finite(scene)?;
    let modl_layout = layout("MODL", versions.modl)?;
    let mut w = Vec::new();
    for (i, m) in scene.meshes.iter().enumerate() {
        if !m.morph_targets.is_empty() {
            return Err(Error::refused(
                format!("meshes[{i}].targets"),
                format!(
                    "mesh {:?} has {} morph targets: M3 has no morph targets (apply or remove them in Blender)",
                    m.name,
                    m.morph_targets.len()
                ),
            ));
        }
    }
    if scene
        .animations
        .iter()
        .any(|a| a.channels.iter().any(|c| c.property == Property::Weights))
    {
        return Err(Error::refused(
            "animations",
            "an animation drives morph target weights: M3 has no morph targets",
        ));
    }

    let mut doc = Doc {
        sections: Vec::new(),
        next_id: 0x1234_5678,
        v: versions,
        cut_names: Vec::new(),
        moved_textures: Vec::new(),
    };
    // Header and MODL come first; both are filled at the end.
    doc.sections.push(Value::Null);
    doc.sections.push(Value::Null);
    let mut modl = blank(modl_layout);
    modl.insert("name".into(), doc.text(&scene.name));
    modl.insert("flags".into(), json!(0x81853));

    let world = world_matrices(scene);
    let helpers = if motions_only {
        Vec::new()
    } else {
        find_helpers(scene)
    };
    let bones = Bones::new(scene, &helpers);
    let mut bounds = Bounds::default();

    let region_mesh = if motions_only {
        Default::default()
    } else {
        geometry(
            scene,
            &bones,
            &world,
            &mut doc,
            &mut modl,
            &mut bounds,
            &mut w,
        )?
    };
    let b = bounds.value();
    modl.insert("boundings".into(), b.clone());
    bone_entries(scene, &bones, &mut doc, &mut modl, &world, &b, &mut w)?;
    helper_entries(scene, &helpers, &bones, &mut doc, &mut modl)?;
    let modl_ref_index = 1;
    let header = json!({
        "magic": 0x4D44_3334u32,
        "indexOffset": 0,
        "indexCount": 0,
        "model": { "index": modl_ref_index },
    });
    if let Some(s) = doc.sections.get_mut(0) {
        *s = json!({ "tag": "MD34", "version": 11, "entries": [header] });
    }
    if let Some(s) = doc.sections.get_mut(1) {
        *s = json!({ "tag": "MODL", "version": doc.v.modl, "entries": [Value::Object(modl)] });
    }
    if let Some(first) = doc.cut_names.first() {
        w.push(Warning::new(
            None,
            "names",
            format!(
                "{} names are longer than {MAX_NAME} bytes and were cut (the first now reads {first:?})",
                doc.cut_names.len()
            ),
        ));
    }
    doc.moved_textures.sort();
    doc.moved_textures.dedup();
    if !doc.moved_textures.is_empty() {
        let list: Vec<String> = doc
            .moved_textures
            .iter()
            .map(|(a, b)| format!("{a} -> {b}"))
            .collect();
        w.push(Warning::note(
            None,
            "materials",
            format!(
                "texture file names without a folder point into the game's texture folder, as DDS \
                 (put the converted images there: hangar convert NAME.png NAME.dds --format bc3): {}",
                list.join(", ")
            ),
        ));
    }
    Ok(Built {
        sections: doc.sections,
        region_mesh,
        bone_nodes: bones.nodes,
        warnings: w,
    })
}

/// Refuses a scene with a NaN or infinite number where the M3 takes it (node transforms,
/// vertices, inverse bind matrices, keys), naming the first: the sections are made as JSON, which
/// has no NaN, and a file the game reads NaN from is not what an edit means.
fn finite(scene: &Scene) -> Result<()> {
    let bad = |v: &[f32]| v.iter().position(|x| !x.is_finite());
    let refuse = |path: String, v: &[f32], at: usize| {
        Err(Error::refused(
            path,
            format!(
                "{} is not a number (NaN or infinite): fix it in the tool, or write the original with --original",
                v.get(at).copied().unwrap_or(f32::NAN)
            ),
        ))
    };
    for (i, n) in scene.nodes.iter().enumerate() {
        let trs: Vec<f32> = [
            &n.translation.to_array()[..],
            &n.rotation.to_array(),
            &n.scale.to_array(),
        ]
        .concat();
        if let Some(at) = bad(&trs) {
            return refuse(
                format!("nodes[{i}] ({:?}).transform[{at}]", n.name),
                &trs,
                at,
            );
        }
    }
    for (i, m) in scene.meshes.iter().enumerate() {
        let v = &m.vertices;
        let lists: [(&str, Vec<f32>); 3] = [
            ("positions", v.positions.iter().flatten().copied().collect()),
            (
                "normals",
                v.normals.iter().flatten().flatten().copied().collect(),
            ),
            ("uvs", v.uvs.iter().flatten().flatten().copied().collect()),
        ];
        for (what, values) in &lists {
            if let Some(at) = bad(values) {
                return refuse(format!("meshes[{i}].{what}[{at}]"), values, at);
            }
        }
    }
    for (i, k) in scene.skins.iter().enumerate() {
        let flat: Vec<f32> = k.inverse_bind.iter().flatten().copied().collect();
        if let Some(at) = bad(&flat) {
            return refuse(format!("skins[{i}].inverseBindMatrices[{at}]"), &flat, at);
        }
    }
    for (i, a) in scene.animations.iter().enumerate() {
        for (j, c) in a.channels.iter().enumerate() {
            for (what, v) in [("times", &c.times), ("values", &c.values)] {
                if let Some(at) = bad(v) {
                    return refuse(
                        format!("animations[{i}] ({:?}).channels[{j}].{what}[{at}]", a.name),
                        v,
                        at,
                    );
                }
            }
        }
    }
    Ok(())
}

/// glTF's +Y up turned to M3's +Z up.
fn to_m3() -> Mat4 {
    Mat4::from_rotation_x(std::f32::consts::FRAC_PI_2)
}

/// Where a skin's vertices are stored, in M3 space: the world of the node above its top joint
/// (glTF binds in the skeleton's parent space: Blender's armature, or the root hangar's M3 reader
/// adds, which turns back to the identity). Vertices are stored through it and the inverse bind
/// matrices take it out again, so the stored mesh stands as it does at rest (+Z up), not lying as
/// glTF's +Y up would leave it.
fn bind_space(scene: &Scene, skin: &crate::model::Skin, world: &[Mat4]) -> Mat4 {
    let above = skin.joints.iter().find_map(|&j| {
        let p = scene.nodes.get(j)?.parent;
        p.is_none_or(|p| !skin.joints.contains(&p)).then_some(p)
    });
    let m = above
        .flatten()
        .and_then(|p| world.get(p).copied())
        .unwrap_or_else(to_m3);
    if m.is_finite() && m.determinant().abs() > 1e-12 {
        m
    } else {
        to_m3()
    }
}

/// World matrix of every node in M3 space (+Z up).
fn world_matrices(scene: &Scene) -> Vec<Mat4> {
    let to_m3 = to_m3();
    let mut out: Vec<Option<Mat4>> = vec![None; scene.nodes.len()];
    for i in 0..scene.nodes.len() {
        // Walk up to a known ancestor (depth capped by the node count: loops end at the root).
        let mut chain = vec![i];
        let mut at = i;
        while let Some(p) = scene.nodes.get(at).and_then(|n| n.parent) {
            if chain.len() > scene.nodes.len() || out.get(p).is_some_and(|m| m.is_some()) {
                break;
            }
            chain.push(p);
            at = p;
        }
        let top = scene.nodes.get(at).and_then(|n| n.parent);
        let mut m = top
            .and_then(|p| out.get(p).copied().flatten())
            .unwrap_or(to_m3);
        for &k in chain.iter().rev() {
            if let Some(done) = out.get(k).copied().flatten() {
                m = done;
                continue;
            }
            if let Some(n) = scene.nodes.get(k) {
                m *= n.local_matrix();
            }
            if let Some(slot) = out.get_mut(k) {
                *slot = Some(m);
            }
        }
    }
    out.into_iter()
        .map(|m| m.filter(|m| m.is_finite()).unwrap_or(Mat4::IDENTITY))
        .collect()
}

/// Which nodes become bones, in an order where parents come first.
struct Bones {
    /// Node index of each bone.
    nodes: Vec<usize>,
    of_node: HashMap<usize, usize>,
    parent: Vec<i64>,
}

impl Bones {
    fn new(scene: &Scene, helpers: &[Helper]) -> Bones {
        let mut wanted = vec![false; scene.nodes.len()];
        let mut mark = |i: usize| {
            if let Some(x) = wanted.get_mut(i) {
                *x = true;
            }
        };
        for s in &scene.skins {
            s.joints.iter().for_each(|&j| mark(j));
        }
        for a in &scene.animations {
            a.channels.iter().for_each(|c| mark(c.node));
        }
        for (i, n) in scene.nodes.iter().enumerate() {
            if n.mesh.is_some() && n.skin.is_none() {
                mark(i);
            }
        }
        // A helper rides on its parent's bone when it sits exactly there (as the M3 reader puts
        // them), and gets a bone of its own otherwise.
        // A helper at rest under another empty at rest (Blender parents a repeated name to its
        // namesake) rides on the bone above both.
        let helper: Vec<usize> = helpers.iter().map(|h| h.node).collect();
        for h in helpers {
            let on_parent = bone_above(scene, h.node, &helper, |p| {
                wanted.get(p).copied().unwrap_or(false)
            })
            .is_some();
            if let (false, Some(x)) = (on_parent, wanted.get_mut(h.node)) {
                *x = true;
            }
        }
        // Depth-first order so parents precede children.
        let depth = |mut i: usize| {
            let mut d = 0usize;
            while let Some(p) = scene.nodes.get(i).and_then(|n| n.parent) {
                d += 1;
                i = p;
                if d > scene.nodes.len() {
                    break;
                }
            }
            d
        };
        let mut nodes: Vec<usize> = (0..scene.nodes.len())
            .filter(|&i| wanted.get(i).copied().unwrap_or(false))
            .collect();
        nodes.sort_by_key(|&i| (depth(i), i));
        let of_node: HashMap<usize, usize> =
            nodes.iter().enumerate().map(|(b, &n)| (n, b)).collect();
        let parent = nodes
            .iter()
            .map(|&n| {
                let mut at = scene.nodes.get(n).and_then(|x| x.parent);
                let mut steps = 0;
                while let Some(p) = at {
                    if let Some(&b) = of_node.get(&p) {
                        return b as i64;
                    }
                    steps += 1;
                    if steps > scene.nodes.len() {
                        break;
                    }
                    at = scene.nodes.get(p).and_then(|x| x.parent);
                }
                -1
            })
            .collect();
        Bones {
            nodes,
            of_node,
            parent,
        }
    }

    /// The bone a helper is bound to: its own, or the one it rides on (see [`bone_above`]).
    fn of_helper(&self, scene: &Scene, node: usize, helpers: &[Helper]) -> i64 {
        let helper: Vec<usize> = helpers.iter().map(|h| h.node).collect();
        self.of_node
            .get(&node)
            .copied()
            .or_else(|| {
                bone_above(scene, node, &helper, |p| self.of_node.contains_key(&p))
                    .and_then(|p| self.of_node.get(&p).copied())
            })
            .or_else(|| {
                let parent = scene.nodes.get(node).and_then(|n| n.parent);
                parent.and_then(|p| self.of_node.get(&p).copied())
            })
            .map_or(-1, |b| b as i64)
    }

    /// From the space of node `node`'s glTF parent (where its transform and tracks are) to the
    /// space of its bone `b`'s parent bone, which may be a further ancestor. The identity when
    /// they are one node: a parent scaled to zero (a bone the game hides) has no inverse, and
    /// its NaN reached the file as `null`s.
    fn parent_bone_space(&self, b: usize, scene: &Scene, node: usize, world: &[Mat4]) -> Mat4 {
        let parent = scene.nodes.get(node).and_then(|n| n.parent);
        let parent_bone = self.parent.get(b).and_then(|&p| usize::try_from(p).ok());
        if parent.is_some() && parent == parent_bone.and_then(|p| self.nodes.get(p).copied()) {
            return Mat4::IDENTITY;
        }
        let pw = parent
            .and_then(|p| world.get(p).copied())
            .unwrap_or_else(to_m3);
        let fix = self.parent_world(b, world).inverse() * pw;
        if fix.is_finite() {
            fix
        } else {
            Mat4::IDENTITY
        }
    }

    /// World matrix (M3 space) of the bone's parent, identity for a root bone.
    fn parent_world(&self, b: usize, world: &[Mat4]) -> Mat4 {
        self.parent
            .get(b)
            .and_then(|&p| usize::try_from(p).ok())
            .and_then(|p| self.nodes.get(p))
            .and_then(|&n| world.get(n).copied())
            .unwrap_or(Mat4::IDENTITY)
    }
}

#[derive(Default)]
struct Bounds {
    min: Option<Vec3>,
    max: Vec3,
}

impl Bounds {
    fn add(&mut self, p: Vec3) {
        match self.min {
            None => {
                self.min = Some(p);
                self.max = p;
            }
            Some(m) => {
                self.min = Some(m.min(p));
                self.max = self.max.max(p);
            }
        }
    }

    /// `[min, max, radius]` (a box and the sphere around it).
    fn value(&self) -> Value {
        let min = self.min.unwrap_or(Vec3::ZERO);
        let r = (self.max - min).length() / 2.0;
        json!([min.x, min.y, min.z, self.max.x, self.max.y, self.max.z, r])
    }
}

fn pack_unit(v: f32) -> u8 {
    ((v.clamp(-1.0, 1.0) + 1.0) / 2.0 * 255.0).round() as u8
}

/// One region's worth of vertices ready to pack.
struct RegionOut {
    mesh: usize,
    first_vertex: usize,
    vertex_count: usize,
    first_face: usize,
    face_count: usize,
    first_lookup: usize,
    lookup_count: usize,
    root_lookup: usize,
    pairs: u8,
    uv_multiply: f32,
    material: Option<usize>,
}

#[allow(clippy::too_many_arguments)]
fn geometry(
    scene: &Scene,
    bones: &Bones,
    world: &[Mat4],
    doc: &mut Doc,
    modl: &mut Map<String, Value>,
    bounds: &mut Bounds,
    w: &mut Vec<Warning>,
) -> Result<Vec<usize>> {
    let uv_sets = scene
        .meshes
        .iter()
        .map(|m| m.vertices.uvs.len())
        .max()
        .unwrap_or(0)
        .clamp(1, 4);
    if scene.meshes.iter().any(|m| m.vertices.uvs.len() > 4) {
        w.push(Warning::new(
            None,
            "meshes",
            "more than four UV sets: the first four are written (an M3 vertex holds four)",
        ));
    }
    // Vertex colours (flag 0x200, B G R A after the normal) when any mesh has them; a mesh
    // without is white.
    let colors = scene.meshes.iter().any(|m| !m.vertices.colors.is_empty());
    let mut vbytes: Vec<u8> = Vec::new();
    let mut faces: Vec<u16> = Vec::new();
    let mut lookup: Vec<u16> = Vec::new();
    let mut regions: Vec<RegionOut> = Vec::new();
    let mut vertex_total = 0usize;

    for (ni, node) in scene.nodes.iter().enumerate() {
        let Some(mi) = node.mesh else { continue };
        let Some(mesh) = scene.meshes.get(mi) else {
            continue;
        };
        let v = &mesh.vertices;
        let n = v.positions.len();
        let path = format!("meshes[{mi}]");
        // Per vertex: M3-space position, normal, tangent, and up to 4 (bone, weight).
        let skin = node.skin.and_then(|s| scene.skins.get(s));
        let space = skin.map_or(Mat4::IDENTITY, |s| bind_space(scene, s, world));
        let own_bone = bones.of_node.get(&ni).copied();
        let node_world = world.get(ni).copied().unwrap_or(Mat4::IDENTITY);
        let mut pos = Vec::with_capacity(n);
        let mut nor = Vec::with_capacity(n);
        let mut tan = Vec::with_capacity(n);
        let mut infl: Vec<[(usize, f32); 4]> = Vec::with_capacity(n);
        let mut nan = 0usize;
        let mut reweighted = 0usize;
        let normals = match &v.normals {
            Some(ns) if ns.len() == n => ns.clone(),
            _ => {
                w.push(Warning::new(
                    None,
                    format!("{path}.normals"),
                    "no normals: computed from the faces",
                ));
                face_normals(v.positions.as_slice(), mesh)
            }
        };
        for k in 0..n {
            let p = v.positions.get(k).copied().unwrap_or([0.0; 3]);
            let mut p = Vec3::from(p);
            if !p.is_finite() {
                nan += 1;
                p = Vec3::ZERO;
            }
            let nrm = Vec3::from(normals.get(k).copied().unwrap_or([0.0, 0.0, 1.0]));
            let t4 = v
                .tangents
                .as_ref()
                .and_then(|t| t.get(k).copied())
                .unwrap_or([0.0; 4]);
            let mut inf = [(0usize, 0.0f32); 4];
            // Whether the stored place bounds the model (a skinned vertex is bounded at rest).
            let mut bound = true;
            let m = match (skin, &v.joints, &v.weights) {
                (Some(s), Some(js), Some(ws)) => {
                    let j = js.get(k).copied().unwrap_or([0; 4]);
                    let wt = ws.get(k).copied().unwrap_or([0.0; 4]);
                    let mut m = Mat4::ZERO;
                    let mut sum = 0.0;
                    let mut c = 0;
                    for (&ji, &wi) in j.iter().zip(&wt) {
                        if !(wi.is_finite() && wi > 0.0) {
                            continue;
                        }
                        let Some(&jn) = s.joints.get(ji as usize) else {
                            continue;
                        };
                        let Some(&b) = bones.of_node.get(&jn) else {
                            continue;
                        };
                        let ibm = s
                            .inverse_bind
                            .get(ji as usize)
                            .map(Mat4::from_cols_array)
                            .unwrap_or(Mat4::IDENTITY);
                        let jw = world.get(jn).copied().unwrap_or(Mat4::IDENTITY);
                        m += (jw * ibm) * wi;
                        sum += wi;
                        if c < 4 {
                            inf[c] = (b, wi);
                            c += 1;
                        }
                    }
                    if sum > 0.0 {
                        if (sum - 1.0).abs() > 0.01 {
                            reweighted += 1;
                        }
                        // Stored in bind space turned to M3's (the bones' IREF are the inverse
                        // bind matrices out of it); the rest pose only places the bounds.
                        let rest = m * (1.0 / sum);
                        if rest.is_finite() {
                            bounds.add(rest.transform_point3(p));
                        }
                        bound = false;
                        space
                    } else {
                        // No weight: bound to the mesh node's own bone or the first bone.
                        inf[0] = (own_bone.unwrap_or(0), 1.0);
                        node_world
                    }
                }
                _ => {
                    inf[0] = (own_bone.unwrap_or(0), 1.0);
                    node_world
                }
            };
            let m = if m.is_finite() { m } else { Mat4::IDENTITY };
            let p = m.transform_point3(p);
            let nm = m.inverse().transpose();
            let nrm = nm.transform_vector3(nrm).normalize_or(Vec3::Z);
            let t = m
                .transform_vector3(Vec3::new(t4[0], t4[1], t4[2]))
                .normalize_or(nrm.any_orthonormal_vector());
            pos.push(p);
            nor.push((nrm, if t4[3] < 0.0 { -1.0 } else { 1.0 }));
            tan.push(t);
            if bound {
                bounds.add(p);
            }
            infl.push(inf);
        }
        if nan > 0 {
            w.push(Warning::new(
                None,
                format!("{path}.positions"),
                format!("{nan} positions are not numbers: set to 0"),
            ));
        }
        if reweighted > 0 {
            w.push(Warning::new(
                None,
                format!("{path}.weights"),
                format!("{reweighted} vertices' weights did not add up to 1: renormalised"),
            ));
        }

        for (pi, prim) in mesh.primitives.iter().enumerate() {
            let tris: Vec<[u32; 3]> = prim
                .indices
                .chunks_exact(3)
                .filter_map(|t| Some([*t.first()?, *t.get(1)?, *t.get(2)?]))
                .filter(|t| t.iter().all(|&i| (i as usize) < n))
                .collect();
            if tris.len() * 3 != prim.indices.len() {
                w.push(Warning::new(
                    None,
                    format!("{path}.primitives[{pi}]"),
                    "indices past the vertices or not a whole triangle: dropped",
                ));
            }
            // Greedy split: a region takes triangles while its vertices and bones fit.
            let mut at = 0;
            while at < tris.len() {
                let mut remap: HashMap<u32, u16> = HashMap::new();
                let mut order: Vec<u32> = Vec::new();
                let mut rbones: BTreeMap<usize, u8> = BTreeMap::new();
                let mut rfaces: Vec<u16> = Vec::new();
                while let Some(t) = tris.get(at) {
                    let new_v: Vec<u32> = t
                        .iter()
                        .copied()
                        .filter(|i| !remap.contains_key(i))
                        .collect();
                    let mut new_b: Vec<usize> = Vec::new();
                    for &i in &new_v {
                        for &(b, wt) in infl.get(i as usize).into_iter().flatten() {
                            if wt > 0.0 && !rbones.contains_key(&b) && !new_b.contains(&b) {
                                new_b.push(b);
                            }
                        }
                    }
                    if order.len() + new_v.len() > MAX_REGION_VERTICES
                        || rbones.len() + new_b.len() > MAX_REGION_BONES
                    {
                        break;
                    }
                    for b in new_b {
                        let k = rbones.len() as u8;
                        rbones.insert(b, k);
                    }
                    for &i in t {
                        let next = order.len() as u16;
                        let r = *remap.entry(i).or_insert_with(|| {
                            order.push(i);
                            next
                        });
                        rfaces.push(r);
                    }
                    at += 1;
                }
                // Keep the source vertex order (a region that is the whole mesh stays as it was).
                let mut sorted = order.clone();
                sorted.sort_unstable();
                let pos_of: HashMap<u32, u16> = sorted
                    .iter()
                    .enumerate()
                    .map(|(k, &i)| (i, k as u16))
                    .collect();
                for f in rfaces.iter_mut() {
                    let src = order.get(*f as usize).copied().unwrap_or(0);
                    *f = pos_of.get(&src).copied().unwrap_or(0);
                }
                let order = sorted;
                if rfaces.is_empty() {
                    // One triangle needs more bones than a region holds: cannot happen with 4 weights.
                    break;
                }
                let uv_max = order
                    .iter()
                    .flat_map(|&i| {
                        v.uvs
                            .iter()
                            .take(uv_sets)
                            .filter_map(move |s| s.get(i as usize))
                    })
                    .flat_map(|uv| uv.iter().copied())
                    .filter(|c| c.is_finite())
                    .fold(0.0f32, |a, c| a.max(c.abs()));
                let uv_multiply = if uv_max < 15.9 {
                    16.0
                } else {
                    (uv_max + 1.0).ceil()
                };
                if rbones.is_empty() {
                    rbones.insert(own_bone.unwrap_or(0), 0);
                }
                let first_lookup = lookup.len();
                let mut lk: Vec<(usize, u8)> = rbones.iter().map(|(&b, &k)| (b, k)).collect();
                lk.sort_by_key(|&(_, k)| k);
                lookup.extend(lk.iter().map(|&(b, _)| b as u16));
                let root_lookup = own_bone
                    .and_then(|b| rbones.get(&b))
                    .map_or(0, |&k| k as usize);
                let first_vertex = vertex_total;
                for &i in &order {
                    let i = i as usize;
                    let p = pos.get(i).copied().unwrap_or(Vec3::ZERO);
                    vbytes.extend(p.to_array().iter().flat_map(|c| c.to_le_bytes()));
                    let inf = infl.get(i).copied().unwrap_or_default();
                    let q = quantize(&inf);
                    for (wq, _) in &q {
                        vbytes.push(*wq);
                    }
                    for (wq, b) in &q {
                        vbytes.push(if *wq > 0 {
                            rbones.get(b).copied().unwrap_or(0)
                        } else {
                            0
                        });
                    }
                    let (nrm, sign) = nor.get(i).copied().unwrap_or((Vec3::Z, 1.0));
                    vbytes.extend([
                        pack_unit(nrm.x),
                        pack_unit(nrm.y),
                        pack_unit(nrm.z),
                        if sign > 0.0 { 255 } else { 0 },
                    ]);
                    if colors {
                        let c = v
                            .colors
                            .first()
                            .and_then(|c| c.get(i))
                            .copied()
                            .unwrap_or([1.0; 4])
                            .map(|x| unorm8(if x.is_finite() { x } else { 1.0 }));
                        vbytes.extend([c[2], c[1], c[0], c[3]]);
                    }
                    for s in 0..uv_sets {
                        let uv = v
                            .uvs
                            .get(s)
                            .and_then(|u| u.get(i))
                            .copied()
                            .unwrap_or([0.0; 2]);
                        for c in uv {
                            let c = if c.is_finite() { c } else { 0.0 };
                            let q = (c * 32768.0 / uv_multiply).round().clamp(-32768.0, 32767.0);
                            vbytes.extend((q as i16).to_le_bytes());
                        }
                    }
                    let t = tan.get(i).copied().unwrap_or(Vec3::X);
                    vbytes.extend([pack_unit(t.x), pack_unit(t.y), pack_unit(t.z), 0]);
                }
                let pairs = infl_pairs(&order, &infl);
                let first_face = faces.len();
                faces.extend(&rfaces);
                regions.push(RegionOut {
                    mesh: mi,
                    first_vertex,
                    vertex_count: order.len(),
                    first_face,
                    face_count: rfaces.len(),
                    first_lookup,
                    lookup_count: lk.len(),
                    root_lookup,
                    pairs,
                    uv_multiply,
                    material: prim.material,
                });
                vertex_total += order.len();
            }
        }
    }
    if regions.is_empty() {
        // Materials with no mesh (an effect model's particle materials) still come back.
        materials(scene, &regions, doc, modl)?;
        return Ok(Vec::new());
    }
    if regions.len() > u16::MAX as usize {
        return Err(Error::refused("meshes", "more than 65535 regions"));
    }

    let used = materials(scene, &regions, doc, modl)?;

    let regn: Vec<Value> = regions
        .iter()
        .map(|r| {
            json!({
                "unknown0": 0, "unknown1": 0,
                "firstVertex": r.first_vertex, "vertexCount": r.vertex_count,
                "firstFace": r.first_face, "faceCount": r.face_count,
                "boneCount": r.lookup_count, "firstBoneLookup": r.first_lookup,
                "boneLookupCount": r.lookup_count, "unknown2": 0,
                "boneWeightPairs": r.pairs, "unknown3": 0,
                "rootBone": r.root_lookup, "flags": 0,
                "uvMultiply": r.uv_multiply, "uvOffset": 0.0,
            })
        })
        .collect();
    let bat: Vec<Value> = regions
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let m = r.material.filter(|&m| m < scene.materials.len());
            let k = used.iter().position(|&u| u == m).unwrap_or(0);
            json!({ "flags": 0, "priorityPlane": 0, "region": i, "boundsIndex": 0,
                    "colorIndex": 0, "materialMap": k, "bone": -1 })
        })
        .collect();
    let faces_ref = doc.plain("U16_", faces);
    let regn_ref = doc.entries("REGN", doc.v.regn, regn);
    let bat_ref = doc.entries("BAT_", 1, bat);
    let mut msec = blank(layout("MSEC", 1)?);
    let mut b = doc.anim(bounds.value());
    if let Some(o) = b.as_object_mut() {
        o.insert("interpolation".into(), json!(0));
    }
    msec.insert("boundings".into(), b);
    let msec_ref = doc.entries("MSEC", 1, vec![Value::Object(msec)]);
    let div = json!({ "faces": faces_ref, "regions": regn_ref, "batches": bat_ref,
                      "boundingShapes": msec_ref, "unknown0": 1 });
    let div_ref = doc.entries("DIV_", 2, vec![div]);
    // One bit a UV set: 0x20000, 0x40000, 0x80000, 0x100000.
    let uv_flags = (0..uv_sets).fold(0u32, |f, k| f | (0x2_0000 << k));
    let color_flag = if colors { 0x200 } else { 0 };
    modl.insert(
        "vertexFlags".into(),
        json!(0x1 | 0x20 | 0x40 | 0x80_0000 | color_flag | uv_flags | 0x100_0000),
    );
    modl.insert("vertices".into(), doc.bytes("U8__", vbytes));
    modl.insert("divisions".into(), div_ref);
    modl.insert("boneLookup".into(), doc.plain("U16_", lookup));
    Ok(regions.iter().map(|r| r.mesh).collect())
}

/// Writes the standard materials and the material map; returns the scene material of each map
/// entry (`None`: the plain material of regions without one).
fn materials(
    scene: &Scene,
    regions: &[RegionOut],
    doc: &mut Doc,
    modl: &mut Map<String, Value>,
) -> Result<Vec<Option<usize>>> {
    // Materials: one standard material per scene material, in order (those no region uses too: an
    // M3 read into glTF keeps its particle materials, and their texture paths come back), plus a
    // plain one for regions without.
    let mut used: Vec<Option<usize>> = (0..scene.materials.len()).map(Some).collect();
    for r in regions {
        let m = r.material.filter(|&m| m < scene.materials.len());
        if !used.contains(&m) {
            used.push(m);
        }
    }
    let mut mats = Vec::new();
    for &m in &used {
        mats.push(material(scene, m, doc)?);
    }
    let mat_ref = doc.entries("MAT_", doc.v.mat, mats);
    let matm: Vec<Value> = (0..used.len())
        .map(|k| json!({ "materialType": 1, "materialIndex": k }))
        .collect();
    let matm_ref = doc.entries("MATM", 0, matm);
    modl.insert("materialMaps".into(), matm_ref);
    modl.insert("standardMaterials".into(), mat_ref);
    Ok(used)
}

/// Weights as bytes adding up to 255, strongest first.
fn quantize(inf: &[(usize, f32); 4]) -> [(u8, usize); 4] {
    let mut v: Vec<(usize, f32)> = inf.iter().copied().filter(|x| x.1 > 0.0).collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1));
    let sum: f32 = v.iter().map(|x| x.1).sum();
    let mut out = [(0u8, 0usize); 4];
    if sum <= 0.0 {
        out[0] = (255, inf[0].0);
        return out;
    }
    let mut left = 255i32;
    for (k, &(b, wt)) in v.iter().enumerate().take(4) {
        let q = if k + 1 == v.len().min(4) {
            left
        } else {
            ((wt / sum * 255.0).round() as i32).clamp(0, left)
        };
        left -= q;
        if let Some(o) = out.get_mut(k) {
            *o = (q as u8, b);
        }
    }
    out
}

/// How many weight pairs a region's vertices use (1 to 4).
fn infl_pairs(order: &[u32], infl: &[[(usize, f32); 4]]) -> u8 {
    order
        .iter()
        .filter_map(|&i| infl.get(i as usize))
        .map(|inf| inf.iter().filter(|x| x.1 > 0.0).count())
        .max()
        .unwrap_or(1)
        .clamp(1, 4) as u8
}

/// Area-weighted face normals, for meshes that come without.
fn face_normals(p: &[[f32; 3]], mesh: &crate::model::Mesh) -> Vec<[f32; 3]> {
    let mut acc = vec![Vec3::ZERO; p.len()];
    for prim in &mesh.primitives {
        for t in prim.indices.chunks_exact(3) {
            let ix: Vec<usize> = t.iter().map(|&i| i as usize).collect();
            let [Some(a), Some(b), Some(c)] =
                [0, 1, 2].map(|k| ix.get(k).and_then(|&i| p.get(i)).map(|&v| Vec3::from(v)))
            else {
                continue;
            };
            let n = (b - a).cross(c - a);
            if !n.is_finite() {
                continue;
            }
            for &i in &ix {
                if let Some(x) = acc.get_mut(i) {
                    *x += n;
                }
            }
        }
    }
    acc.into_iter()
        .map(|n| n.normalize_or(Vec3::Z).to_array())
        .collect()
}

/// A standard material (MAT_) with every layer; texture paths from extras when the M3 reader put
/// them there, otherwise from the glTF image names.
fn material(scene: &Scene, m: Option<usize>, doc: &mut Doc) -> Result<Value> {
    let l = layout("MAT_", doc.v.mat)?;
    let mut e = blank(l);
    let mat = m.and_then(|m| scene.materials.get(m));
    let extras = mat
        .and_then(|m| m.extras.get("m3"))
        .cloned()
        .unwrap_or(Value::Null);
    let name = mat.map_or("default", |m| m.name.as_str());
    e.insert("name".into(), doc.text(name));
    for (k, v) in [
        ("layerBlendType", json!(2)),
        ("emissiveBlendType", json!(2)),
        ("emissive2BlendType", json!(2)),
        ("emissiveMultiplier", json!(1.0)),
        ("specularMultiplier", json!(1.0)),
        ("depthBlendFalloff", json!(0.2)),
    ] {
        e.insert(k.into(), v);
    }
    // Scalar fields the reader kept come back as they were.
    if let Some(fields) = extras.get("fields").and_then(Value::as_object) {
        for s in &l.slots {
            if let (Some(v), Ty::U8 | Ty::I8 | Ty::U16 | Ty::I16 | Ty::U32 | Ty::I32 | Ty::F32) =
                (fields.get(s.name), s.ty)
            {
                e.insert(s.name.into(), v.clone());
            }
        }
    }
    let textures = mat.map(|m| m.textures.clone()).unwrap_or_default();
    let layers = extras.get("layers").cloned().unwrap_or(Value::Null);
    for s in &l.slots {
        if !matches!(s.ty, Ty::Ref(t) if t == Tag::from_name("LAYR")) {
            continue;
        }
        let kept = layers.get(s.name);
        let image = kept
            .and_then(|k| k.get("image"))
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| match s.name {
                "diffuseLayer" => textures.base_color.as_deref().map(|p| game_path(p, doc)),
                "normalLayer" => textures.normal.as_deref().map(|p| game_path(p, doc)),
                "emissiveLayer" => textures.emissive.as_deref().map(|p| game_path(p, doc)),
                _ => None,
            });
        let r = layer(doc, image.as_deref(), kept)?;
        e.insert(s.name.into(), r);
    }
    Ok(Value::Object(e))
}

/// A glTF image named by its file alone (`crate_diffuse.png`, as Blender writes them) is looked for
/// where the game keeps textures, as the DDS the game reads: `Assets\Textures\crate_diffuse.dds`.
/// A path with a folder (a game path hangar's own export keeps) gets the game's `\` separators.
fn game_path(image: &str, doc: &mut Doc) -> String {
    let image_ext = [".png", ".jpg", ".jpeg", ".tga", ".bmp", ".dds"];
    let lower = image.to_ascii_lowercase();
    match image_ext.iter().find(|e| lower.ends_with(*e)) {
        Some(ext) if !image.contains(['/', '\\']) => {
            let stem = image.get(..image.len() - ext.len()).unwrap_or(image);
            let path = format!("Assets\\Textures\\{stem}.dds");
            doc.moved_textures.push((image.to_string(), path.clone()));
            path
        }
        // The game writes `\`; a path the M3 reader kept in extras comes back as it was.
        _ => image.replace('/', "\\"),
    }
}

fn layer(doc: &mut Doc, image: Option<&str>, kept: Option<&Value>) -> Result<Value> {
    let l = layout("LAYR", doc.v.layr)?;
    let mut e = blank(l);
    let path = image.unwrap_or_default();
    e.insert("imagePath".into(), doc.text(path));
    let flags = kept
        .and_then(|k| k.get("flags"))
        .cloned()
        .unwrap_or(json!(236));
    e.insert("flags".into(), flags);
    let uv = kept
        .and_then(|k| k.get("uvSource"))
        .cloned()
        .unwrap_or(json!(0));
    e.insert("uvSource".into(), uv);
    e.insert("uvSourceRelated".into(), json!(-1));
    e.insert("videoChannel".into(), json!(-1));
    e.insert("fresnelExponent".into(), json!(4.0));
    e.insert("fresnelMaxOffset".into(), json!(1.0));
    e.insert("fresnelInvertMask".into(), json!([1.0, 1.0, 1.0]));
    e.insert("noiseAmplitude".into(), json!(0.8));
    e.insert("noiseFrequency".into(), json!(0.5));
    for (k, v) in [
        ("brightness", json!(1.0)),
        ("rgbMultiply", json!(1.0)),
        ("uvTiling", json!([1.0, 1.0])),
        ("triPlanarScale", json!([1.0, 1.0, 1.0])),
        ("uvWScale", json!(1.0)),
    ] {
        if l.slot(k).is_some() {
            let a = doc.anim(v);
            e.insert(k.into(), a);
        }
    }
    // Every other animated field gets its own id too.
    for s in &l.slots {
        if let (Ty::Anim(_), Some(a)) = (s.ty, e.get(s.name)) {
            if a.get("id").and_then(Value::as_u64) == Some(0) {
                let init = a.get("init").cloned().unwrap_or(Value::Null);
                let a = doc.anim(init);
                e.insert(s.name.into(), a);
            }
        }
    }
    Ok(doc.entries("LAYR", doc.v.layr, vec![Value::Object(e)]))
}

/// A node that is an attachment point, a camera or a light.
struct Helper {
    node: usize,
    kind: HelperKind,
}

enum HelperKind {
    Attachment,
    Camera(usize),
    Light(usize),
}

/// A node with no offset from its parent.
/// The bone `node` (a helper at rest) sits exactly on: its parent when that is a bone, else
/// through parents at rest that are helpers or empties, the first bone above them.
fn bone_above(
    scene: &Scene,
    node: usize,
    helpers: &[usize],
    is_bone: impl Fn(usize) -> bool,
) -> Option<usize> {
    let mut at = node;
    for _ in 0..scene.nodes.len() {
        let n = scene.nodes.get(at)?;
        if !at_rest(n) || (at != node && !helpers.contains(&at) && n.mesh.is_some()) {
            return None;
        }
        let p = n.parent?;
        if is_bone(p) {
            return Some(p);
        }
        at = p;
    }
    None
}

/// Within a tool's float noise (Blender moves a bone's child by up to about 1.4e-6).
fn at_rest(n: &crate::model::Node) -> bool {
    n.translation.abs_diff_eq(Vec3::ZERO, 1e-5)
        && n.rotation.abs_diff_eq(Quat::IDENTITY, 1e-5)
        && n.scale.abs_diff_eq(Vec3::ONE, 1e-5)
}

/// The helpers of `scene`: nodes with a camera or a light, nodes the M3 reader marked as
/// attachment points (`extras.m3.attachmentPoint`), and empties named `Ref_...` (the game's names
/// for attachment points: `Ref_Origin`, `Ref_Weapon`) that are not joints or animated.
fn find_helpers(scene: &Scene) -> Vec<Helper> {
    let mut moving = vec![false; scene.nodes.len()];
    for i in scene
        .skins
        .iter()
        .flat_map(|s| s.joints.iter().copied())
        .chain(
            scene
                .animations
                .iter()
                .flat_map(|a| a.channels.iter().map(|c| c.node)),
        )
    {
        if let Some(x) = moving.get_mut(i) {
            *x = true;
        }
    }
    let mut out = Vec::new();
    for (i, n) in scene.nodes.iter().enumerate() {
        let m3 = n.extras.get("m3");
        let kind = if let Some(c) = n.camera.filter(|&c| c < scene.cameras.len()) {
            HelperKind::Camera(c)
        } else if let Some(l) = n.light.filter(|&l| l < scene.lights.len()) {
            HelperKind::Light(l)
        } else if m3.is_some_and(|m| m.get("attachmentPoint").is_some())
            || (n
                .name
                .get(..4)
                .is_some_and(|p| p.eq_ignore_ascii_case("ref_"))
                && n.mesh.is_none()
                && n.skin.is_none()
                && !moving.get(i).copied().unwrap_or(false)
                && m3.is_none_or(|m| m.get("bone").is_none()))
        {
            HelperKind::Attachment
        } else {
            continue;
        };
        out.push(Helper { node: i, kind });
    }
    out
}

/// Attachment points (ATT_), cameras (CAM_) and lights (LITE), each bound to a bone.
fn helper_entries(
    scene: &Scene,
    helpers: &[Helper],
    bones: &Bones,
    doc: &mut Doc,
    modl: &mut Map<String, Value>,
) -> Result<()> {
    let (mut atts, mut cams, mut lights) = (Vec::new(), Vec::new(), Vec::new());
    for h in helpers {
        let bone = bones.of_helper(scene, h.node, helpers);
        let name = scene.nodes.get(h.node).map_or("", |n| n.name.as_str());
        match h.kind {
            HelperKind::Attachment => {
                atts.push(json!({ "unknown0": -1, "name": doc.text(name), "bone": bone.max(0) }))
            }
            HelperKind::Camera(c) => {
                if let Some(c) = scene.cameras.get(c) {
                    cams.push(camera(doc, c, bone)?);
                }
            }
            HelperKind::Light(l) => {
                if let Some(l) = scene.lights.get(l) {
                    lights.push(light(doc, l, bone)?);
                }
            }
        }
    }
    // One "no addon" (0xffff) an attachment point and a camera, as in the corpus files.
    let addons = |n: usize| vec![u16::MAX; n];
    let (na, nc) = (atts.len(), cams.len());
    modl.insert("attachmentPoints".into(), doc.entries("ATT_", 1, atts));
    modl.insert(
        "attachmentPointAddons".into(),
        doc.plain("U16_", addons(na)),
    );
    modl.insert("cameras".into(), doc.entries("CAM_", doc.v.cam, cams));
    modl.insert("cameraAddons".into(), doc.plain("U16_", addons(nc)));
    modl.insert("lights".into(), doc.entries("LITE", 7, lights));
    Ok(())
}

/// `v` when it is a finite positive number (a clip plane, a field of view, a range), else `or`.
fn positive_or(v: Option<f32>, or: f32) -> f32 {
    v.filter(|v| v.is_finite() && *v > 0.0).unwrap_or(or)
}

/// A CAM_ entry: the glTF camera's field of view and clip planes; the depth-of-field values a
/// corpus portrait camera has.
fn camera(doc: &mut Doc, c: &crate::model::Camera, bone: i64) -> Result<Value> {
    let l = layout("CAM_", doc.v.cam)?;
    let mut e = blank(l);
    let far = positive_or(c.zfar, 100.0);
    let near = positive_or(Some(c.znear), 0.1);
    let yfov = positive_or(Some(c.yfov), 0.8);
    e.insert("bone".into(), json!(bone.max(0)));
    e.insert("name".into(), doc.text(&c.name));
    e.insert("useVerticalFov".into(), json!(1));
    for (k, v) in [
        ("fieldOfView", yfov),
        ("farClip", far),
        ("nearClip", near),
        ("clip2", far * 2.0),
        ("focalDepth", 0.05),
        ("falloffStart", 0.01),
        ("falloffEnd", 0.02),
        ("depthOfField", 0.0),
        ("unknown1", 0.0),
        ("unknown2", 0.0),
        ("unknown3", 1.0),
        ("unknown4", 27.0),
    ] {
        if l.slot(k).is_some() {
            let a = doc.anim(json!(v));
            e.insert(k.into(), a);
        }
    }
    if l.slot("depthOfFieldType").is_some() {
        e.insert("depthOfFieldType".into(), json!(3));
    }
    Ok(Value::Object(e))
}

/// A LITE entry: type, colour, intensity and range as the M3 reader turns them into glTF; a spot
/// light's cone angles as its hot spot and falloff.
fn light(doc: &mut Doc, l: &crate::model::Light, bone: i64) -> Result<Value> {
    use crate::model::LightKind;
    let mut e = blank(layout("LITE", 7)?);
    let (ty, hot, fall) = match l.kind {
        LightKind::Directional => (0, 0.0, 0.0),
        LightKind::Point => (1, 0.0, 0.0),
        LightKind::Spot { inner, outer } => (2, inner, outer),
    };
    let far = positive_or(l.range, 5.0);
    let finite = |v: f32, d: f32| if v.is_finite() { v } else { d };
    e.insert("type".into(), json!(ty));
    e.insert("bone".into(), json!(bone.clamp(0, u16::MAX as i64)));
    // Bit 0x8: the light is on.
    e.insert("flags".into(), json!(8));
    e.insert("unknown0".into(), json!(far));
    let color = l.color.map(|c| finite(c, 1.0).max(0.0));
    for (k, v) in [
        ("color", json!(color)),
        ("intensity", json!(finite(l.intensity, 1.0).max(0.0))),
        ("specularColor", json!([1.0, 1.0, 1.0])),
        ("specularIntensity", json!(1.0)),
        ("attenuationFar", json!(far)),
        ("attenuationNear", json!(far / 3.0)),
        ("hotSpot", json!(finite(hot, 0.0))),
        ("falloff", json!(finite(fall, 0.0))),
    ] {
        let a = doc.anim(v);
        e.insert(k.into(), a);
    }
    Ok(Value::Object(e))
}

/// Bones with rest poses and bind matrices, and the sequences that move them.
#[allow(clippy::too_many_arguments)]
fn bone_entries(
    scene: &Scene,
    bones: &Bones,
    doc: &mut Doc,
    modl: &mut Map<String, Value>,
    world: &[Mat4],
    bounds: &Value,
    w: &mut Vec<Warning>,
) -> Result<()> {
    let bl = layout("BONE", 1)?;
    let mut entries = Vec::with_capacity(bones.nodes.len());
    let mut irefs = Vec::with_capacity(bones.nodes.len());
    // Per bone: the animation ids of location, rotation, scale.
    let mut ids: Vec<[u32; 3]> = Vec::with_capacity(bones.nodes.len());
    for (b, &ni) in bones.nodes.iter().enumerate() {
        let node = scene.nodes.get(ni);
        let name = node.map_or(String::new(), |n| n.name.clone());
        let name = if name.is_empty() {
            format!("Bone{b}")
        } else {
            name
        };
        let bw = world.get(ni).copied().unwrap_or(Mat4::IDENTITY);
        let local = node.map_or(Mat4::IDENTITY, |n| {
            bones.parent_bone_space(b, scene, ni, world) * n.local_matrix()
        });
        let (s, r, t) = local.to_scale_rotation_translation();
        let (s, r, t) = if s.is_finite() && r.is_finite() && t.is_finite() {
            (s, r.normalize(), t)
        } else {
            (Vec3::ONE, Quat::IDENTITY, Vec3::ZERO)
        };
        let mut e = blank(bl);
        e.insert("unknown0".into(), json!(-1));
        e.insert("name".into(), doc.text(&name));
        e.insert(
            "parent".into(),
            json!(bones.parent.get(b).copied().unwrap_or(-1)),
        );
        let loc = doc.anim(json!(t.to_array()));
        let rot = doc.anim(json!(r.to_array()));
        let scl = doc.anim(json!(s.to_array()));
        let vis = doc.anim(json!(1));
        let id = |a: &Value| a.get("id").and_then(Value::as_u64).unwrap_or(0) as u32;
        ids.push([id(&loc), id(&rot), id(&scl)]);
        e.insert("location".into(), loc);
        e.insert("rotation".into(), rot);
        e.insert("scale".into(), scl);
        e.insert("visibility".into(), vis);
        entries.push(Value::Object(e));
        // A joint keeps its inverse bind matrix, out of the space its skin's vertices are stored
        // in (see bind_space).
        let ibm = scene.skins.iter().find_map(|s| {
            let k = s.joints.iter().position(|&j| j == ni)?;
            let ib = Mat4::from_cols_array(s.inverse_bind.get(k)?);
            Some(ib * bind_space(scene, s, world).inverse())
        });
        let inv = ibm.unwrap_or_else(|| bw.inverse());
        let inv = if inv.is_finite() { inv } else { Mat4::IDENTITY };
        irefs.push(json!({ "matrix": inv.to_cols_array() }));
    }
    if entries.is_empty() {
        return sequences(scene, bones, doc, modl, world, bounds, &ids, w);
    }
    modl.insert("skinBones".into(), json!(entries.len()));
    modl.insert("bones".into(), doc.entries("BONE", 1, entries));
    modl.insert("initialReference".into(), doc.entries("IREF", 0, irefs));
    sequences(scene, bones, doc, modl, world, bounds, &ids, w)
}

#[allow(clippy::too_many_arguments)]
fn sequences(
    scene: &Scene,
    bones: &Bones,
    doc: &mut Doc,
    modl: &mut Map<String, Value>,
    world: &[Mat4],
    bounds: &Value,
    ids: &[[u32; 3]],
    w: &mut Vec<Warning>,
) -> Result<()> {
    if scene.animations.is_empty() {
        return Ok(());
    }
    let mut seqs = Vec::new();
    let mut stcs = Vec::new();
    let mut stgs = Vec::new();
    let mut stss = Vec::new();
    for (ai, a) in scene.animations.iter().enumerate() {
        let m3 = a.extras.get("m3");
        let start = m3
            .and_then(|m| m.get("startMs"))
            .and_then(Value::as_i64)
            .unwrap_or(0)
            .clamp(0, i32::MAX as i64 / 2);
        let last = a
            .channels
            .iter()
            .filter_map(|c| c.times.last().copied())
            .filter(|t| t.is_finite())
            .fold(0.0f32, f32::max);
        let end_default = start + (last * 1000.0).round() as i64;
        let end = m3
            .and_then(|m| m.get("endMs"))
            .and_then(Value::as_i64)
            .filter(|&e| e >= start)
            .unwrap_or(end_default.max(start + 1))
            .min(i32::MAX as i64);
        let mut anim_ids = Vec::new();
        let mut anim_refs = Vec::new();
        let mut sd3v = Vec::new();
        let mut sd4q = Vec::new();
        for c in &a.channels {
            let Some(&b) = bones.of_node.get(&c.node) else {
                continue;
            };
            let k = match c.property {
                Property::Translation => 0,
                Property::Rotation => 1,
                Property::Scale => 2,
                Property::Weights => continue,
            };
            let width = if k == 1 { 4 } else { 3 };
            let fix = bones.parent_bone_space(b, scene, c.node, world);
            let (_, fix_r, _) = fix.to_scale_rotation_translation();
            let mut frames = Vec::new();
            let mut values: Vec<Value> = Vec::new();
            for (ti, &t) in c.times.iter().enumerate() {
                let Some(v) = c.values.get(ti * width..(ti + 1) * width) else {
                    break;
                };
                if !t.is_finite() || v.iter().any(|x| !x.is_finite()) {
                    continue;
                }
                let frame = start + (t * 1000.0).round() as i64;
                frames.push(frame.min(i32::MAX as i64) as i32);
                let out = match k {
                    0 => json!(fix.transform_point3(Vec3::new(v[0], v[1], v[2])).to_array()),
                    1 => json!((fix_r * Quat::from_xyzw(v[0], v[1], v[2], v[3]))
                        .normalize()
                        .to_array()),
                    _ => json!([v[0], v[1], v[2]]),
                };
                values.push(out);
            }
            if frames.is_empty() {
                continue;
            }
            if c.interpolation == Interpolation::Step {
                // M3 keys interpolate linearly; a step track stays exact at its keys.
            }
            let biggest = frames.last().copied().unwrap_or(0);
            let fr = doc.plain("I32_", frames);
            let vr = doc.entries(if k == 1 { "QUAT" } else { "VEC3" }, 0, values);
            let block = json!({ "frames": fr, "flags": 0, "biggestKey": biggest, "values": vr });
            let (ty, list) = if k == 1 {
                (3u32, &mut sd4q)
            } else {
                (2u32, &mut sd3v)
            };
            anim_refs.push((ty << 16) | list.len() as u32);
            list.push(block);
            anim_ids.push(ids.get(b).map_or(0, |i| i[k]));
        }
        let name = if a.name.is_empty() {
            format!("Sequence{ai}")
        } else {
            a.name.clone()
        };
        if anim_ids.is_empty() {
            w.push(Warning::new(
                None,
                format!("animations[{ai}]"),
                format!("animation {name:?} moves no bone: written as an empty sequence"),
            ));
        }
        let ids_ref = doc.plain("U32_", anim_ids.clone());
        let refs_ref = doc.plain("U32_", anim_refs);
        let stc_name = doc.text(&format!("{name}_full"));
        let sd3v_ref = doc.entries("SD3V", 0, sd3v);
        let sd4q_ref = doc.entries("SD4Q", 0, sd4q);
        let mut stc = blank(layout("STC_", 4)?);
        stc.insert("name".into(), stc_name);
        stc.insert("stsIndex".into(), json!(ai));
        stc.insert("stsIndexCopy".into(), json!(ai));
        stc.insert("animIds".into(), ids_ref);
        stc.insert("animRefs".into(), refs_ref);
        // `refCount` stays 0, as in all 657 corpus STC_ entries (m3addon refuses anything else).
        stc.insert("sd3v".into(), sd3v_ref);
        stc.insert("sd4q".into(), sd4q_ref);
        stcs.push(Value::Object(stc));
        let sts_ids = doc.plain("U32_", anim_ids);
        stss.push(
            json!({ "animIds": sts_ids, "parentIndex": -1, "nextIndex": -1,
                          "childIndex": -1, "unknown0": -1, "unknown1": 0 }),
        );
        let stg_name = doc.text(&name);
        let stg_idx = doc.plain("U32_", vec![ai as u32]);
        stgs.push(json!({ "name": stg_name, "stcIndices": stg_idx }));
        let mut seq = blank(layout("SEQS", doc.v.seqs)?);
        seq.insert("unknown0".into(), json!(-1));
        seq.insert("unknown1".into(), json!(-1));
        seq.insert("name".into(), doc.text(&name));
        seq.insert("animationStart".into(), json!(start));
        seq.insert("animationEnd".into(), json!(end));
        if let Some(f) = m3.and_then(|m| m.get("flags")).filter(|f| f.is_u64()) {
            seq.insert("flags".into(), f.clone());
        }
        // A number, or the bits of a NaN as the reader keeps it ("0x7fc00000").
        if let Some(s) = m3
            .and_then(|m| m.get("movementSpeed"))
            .filter(|s| crate::raw::float_bits(s).is_some())
        {
            seq.insert("movementSpeed".into(), s.clone());
        }
        seq.insert("frequency".into(), json!(100));
        seq.insert("replayStart".into(), json!(1));
        seq.insert("replayEnd".into(), json!(1));
        // 100 in every corpus sequence; m3addon refuses any other value.
        seq.insert("blendTime".into(), json!(100));
        seq.insert("boundingSphere".into(), bounds.clone());
        seqs.push(Value::Object(seq));
    }
    modl.insert("sequences".into(), doc.entries("SEQS", doc.v.seqs, seqs));
    modl.insert("stc".into(), doc.entries("STC_", 4, stcs));
    modl.insert("stg".into(), doc.entries("STG_", 0, stgs));
    modl.insert("sts".into(), doc.entries("STS_", 0, stss));
    Ok(())
}
