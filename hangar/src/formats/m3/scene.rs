//! The neutral scene of an M3 model: one mesh a region (vertices decoded by MODL.vertexFlags), its
//! material through the batch and the material map, the bones as a skinned skeleton, attachment
//! points, cameras and lights as nodes, and one animation a sequence.
//!
//! Axes: M3 is right-handed with +Z up. Everything is kept in file space under one root node that
//! turns +Z up into glTF's +Y up (a -90 degree rotation about X), so bone tracks need no conversion.
//! Skinned meshes sit at the scene root (glTF ignores their own transform; the joints carry it).

use super::model::Model;
use super::table::{floats, le, AnimRef, Entry, Reference};
use super::M3;
use crate::error::{Error, Result, Warning};
use crate::model::{
    Animation, Camera, Channel, Interpolation, Keys, Light, LightKind, Material, Mesh, Node,
    Primitive, Property, Scene, Skin, Vertices,
};
use crate::normalized::from_unorm8;
use glam::{Quat, Vec3, Vec4};
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

/// Where each part of a vertex sits, from MODL.vertexFlags.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VertexLayout {
    pub size: usize,
    /// Offset of the weights (then as many lookup indices) and how many pairs.
    pub skin: Option<(usize, usize)>,
    pub normal: Option<usize>,
    pub color: Option<usize>,
    pub float_uvs: Vec<usize>,
    pub uvs: Vec<usize>,
    pub tangent: Option<usize>,
}

impl VertexLayout {
    /// Field order as real files have it: position, weights, lookups, (0x80 float normal), normal,
    /// (0x100), colour, (0x400, 0x800, 0x1000), float UVs, int16 UVs, (0x200000, 0x400000 float
    /// vectors), tangent, then the remaining unnamed parts.
    pub fn from_flags(flags: u32) -> Result<VertexLayout, String> {
        if flags & 1 == 0 {
            return Err(format!(
                "vertex flags 0x{flags:x} have no position (bit 0x1)"
            ));
        }
        if flags & 0x8000_0002 != 0 {
            return Err(format!(
                "vertex flags 0x{flags:x} set bits of unknown size (0x2 or 0x80000000)"
            ));
        }
        let mut l = VertexLayout::default();
        let mut at = 12;
        let bit = |b: u32| flags & b != 0;
        let pairs = 2 * (bit(0x20) as usize + bit(0x40) as usize);
        if pairs > 0 {
            l.skin = Some((at, pairs));
            at += 2 * pairs;
        }
        if bit(0x80) {
            at += 12;
        }
        if bit(0x80_0000) {
            l.normal = Some(at);
            at += 4;
        }
        if bit(0x100) {
            at += 4;
        }
        if bit(0x200) {
            l.color = Some(at);
            at += 4;
        }
        for b in [0x400, 0x800, 0x1000] {
            if bit(b) {
                at += 4;
            }
        }
        for b in [0x2000, 0x4000, 0x8000, 0x1_0000] {
            if bit(b) {
                l.float_uvs.push(at);
                at += 8;
            }
        }
        for b in [0x2_0000, 0x4_0000, 0x8_0000, 0x10_0000, 0x4000_0000] {
            if bit(b) {
                l.uvs.push(at);
                at += 4;
            }
        }
        for b in [0x20_0000, 0x40_0000] {
            if bit(b) {
                at += 12;
            }
        }
        if bit(0x100_0000) {
            l.tangent = Some(at);
            at += 4;
        }
        for (b, n) in [
            (0x200_0000, 4),
            (0x400_0000, 12),
            (0x800_0000, 12),
            (0x1000_0000, 4),
            (0x2000_0000, 4),
        ] {
            if bit(b) {
                at += n;
            }
        }
        l.size = at;
        Ok(l)
    }
}

/// A byte of a packed normal or tangent as a coordinate in [-1, 1], from a table made at compile
/// time (three divisions a vector were a tenth of the mesh decoding).
fn unit(b: u8) -> f32 {
    const UNIT: [f32; 256] = {
        let mut t = [0.0; 256];
        let mut i = 0;
        while i < 256 {
            t[i] = i as f32 / 255.0 * 2.0 - 1.0;
            i += 1;
        }
        t
    };
    UNIT[b as usize]
}

/// The unit vector packed in three bytes at `o` of each `size`-byte vertex in `region`, given to
/// `each` with its vertex and added to `out`: the floats of glam's `Vec3::normalize_or(fallback)`,
/// computed four vertices at a time (one vertex's square root and division at a time kept the divider busy
/// for most of the normals' time).
fn unit_vectors<T>(
    out: &mut Vec<T>,
    region: &[u8],
    size: usize,
    o: usize,
    fallback: Vec3,
    mut each: impl FnMut(&[u8], [f32; 3]) -> T,
) {
    if size == 0 {
        return;
    }
    out.reserve(region.len() / size);
    let mut quads = region.chunks_exact(4 * size);
    for q in &mut quads {
        let v: [&[u8]; 4] = std::array::from_fn(|i| &q[i * size..(i + 1) * size]);
        let lane = |k: usize| Vec4::from_array(v.map(|v| unit(v[o + k])));
        let (x, y, z) = (lane(0), lane(1), lane(2));
        // As Vec3::dot, length and recip: ((x * x) + (y * y)) + (z * z), its root, one over it.
        let length = Vec4::from_array((x * x + y * y + z * z).to_array().map(f32::sqrt));
        let rcp = Vec4::ONE / length;
        let ok = rcp.is_finite_mask() & rcp.cmpgt(Vec4::ZERO);
        let x = Vec4::select(ok, x * rcp, Vec4::splat(fallback.x));
        let y = Vec4::select(ok, y * rcp, Vec4::splat(fallback.y));
        let z = Vec4::select(ok, z * rcp, Vec4::splat(fallback.z));
        for (i, v) in v.into_iter().enumerate() {
            out.push(each(v, [x[i], y[i], z[i]]));
        }
    }
    for v in quads.remainder().chunks_exact(size) {
        let n = Vec3::new(unit(v[o]), unit(v[o + 1]), unit(v[o + 2])).normalize_or(fallback);
        out.push(each(v, n.to_array()));
    }
}

const MATERIAL_LISTS: [(&str, &str); 12] = [
    ("standardMaterials", "MAT_"),
    ("displacementMaterials", "DIS_"),
    ("compositeMaterials", "CMP_"),
    ("terrainMaterials", "TER_"),
    ("volumeMaterials", "VOL_"),
    ("hairMaterials", "HAI_"),
    ("creepMaterials", "CREP"),
    ("volumeNoiseMaterials", "VON_"),
    ("splatTerrainBakeMaterials", "STBM"),
    ("reflectionMaterials", "REF_"),
    ("lensFlareMaterials", "LFLR"),
    ("bufferMaterials", "MADD"),
];

/// The sequence data block types, in the order of STC_'s sd* references (animRefs' high half).
pub const SD_FIELDS: [(&str, &str); 13] = [
    ("sdev", "SDEV"),
    ("sd2v", "SD2V"),
    ("sd3v", "SD3V"),
    ("sd4q", "SD4Q"),
    ("sdcc", "SDCC"),
    ("sdr3", "SDR3"),
    ("sdu8", "SDU8"),
    ("sds6", "SDS6"),
    ("sdu6", "SDU6"),
    ("sds3", "SDS3"),
    ("sdu3", "SDU3"),
    ("sdfg", "SDFG"),
    ("sdmb", "SDMB"),
];

/// Builds the scene of `m3`, adding the sequences of each `motions` file (.m3a).
pub fn to_scene(
    m3: &M3<'_>,
    name: &str,
    motions: &[(&str, &M3<'_>)],
) -> Result<(Scene, Vec<Warning>)> {
    let model = Model::new(m3);
    let modl = model.modl()?;
    let mut scene = Scene {
        name: name.to_string(),
        ..Default::default()
    };
    let mut warnings = Vec::new();

    // Root: +Z up to +Y up.
    let mut root = Node::new(name);
    root.rotation = Quat::from_rotation_x(-std::f32::consts::FRAC_PI_2);
    root.extras.insert(
        "hangar".into(),
        json!({ "m3_axes": "Z up, turned to glTF Y up" }),
    );
    scene.nodes.push(root);

    // Bones.
    let bones = model.follow(&modl, "bones", "BONE", "MODL")?;
    let bone_base = scene.nodes.len();
    for (i, b) in bones.iter().enumerate() {
        let mut n = Node::new(model.name_of(b, "name", || format!("MODL.bones[{i}]")));
        let parent = b.int("parent").unwrap_or(-1);
        n.parent = Some(
            if parent >= 0 && (parent as usize) < bones.len() && parent as usize != i {
                bone_base + parent as usize
            } else {
                0
            },
        );
        let (t, r, s) = rest_pose(b);
        n.translation = t;
        n.rotation = r;
        n.scale = s;
        n.extras.insert(
            "m3".into(),
            json!({ "bone": i, "flags": b.u32("flags").unwrap_or(0) }),
        );
        scene.nodes.push(n);
    }
    let bones_end = scene.nodes.len();
    for i in scene.cut_parent_loops(bone_base..bones_end, Some(0)) {
        warnings.push(Warning::new(
            None,
            format!("MODL.bones[{}].parent", i - bone_base),
            "the parent chain loops: the bone is put under the root",
        ));
    }
    let bone_node = |i: i64| -> usize {
        if i >= 0 && (i as usize) < bones.len() {
            bone_base + i as usize
        } else {
            0
        }
    };

    // Skin: every bone, with MODL.initialReference as the inverse bind matrices.
    let irefs = model.follow(&modl, "initialReference", "IREF", "MODL")?;
    let mut skin = None;
    if !bones.is_empty() {
        let mut inverse_bind = Vec::with_capacity(bones.len());
        for i in 0..bones.len() {
            let m = irefs
                .get(i)
                .and_then(|e| e.floats::<16>("matrix"))
                .unwrap_or(glam::Mat4::IDENTITY.to_cols_array());
            inverse_bind.push(m);
        }
        if irefs.len() != bones.len() {
            warnings.push(Warning::new(
                None,
                "MODL.initialReference",
                format!(
                    "{} bind matrices for {} bones: the missing ones are identity",
                    irefs.len(),
                    bones.len()
                ),
            ));
        }
        scene.skins.push(Skin {
            name: format!("{name} skeleton"),
            joints: (0..bones.len()).map(|i| bone_base + i).collect(),
            inverse_bind,
        });
        skin = Some(0);
    }

    // Geometry must read; materials, helpers and the file's own sequences are reported and skipped
    // when they cannot be interpreted (a structure kept as raw bytes, a broken reference).
    if let Err(e) = materials(&model, &modl, &mut scene, &mut warnings) {
        skipped(&mut warnings, "materials", e);
    }
    meshes(&model, &modl, &mut scene, skin, bones.len(), &mut warnings)?;
    if let Err(e) = helpers(&model, &modl, &mut scene, &bone_node, &mut warnings) {
        skipped(&mut warnings, "attachment points, cameras and lights", e);
    }

    // Animations: the model's own sequences, then each motion file's.
    let bone_refs: Vec<[Option<AnimRef<'_>>; 3]> = bones
        .iter()
        .map(|b| [b.anim("location"), b.anim("rotation"), b.anim("scale")])
        .collect();
    if let Err(e) = animations(
        &model,
        None,
        &bone_refs,
        bone_base,
        &mut scene,
        &mut warnings,
    ) {
        skipped(&mut warnings, "animations", e);
    }
    for (label, motion) in motions {
        let before = scene.animations.len();
        animations(
            &Model::new(motion),
            Some(label),
            &bone_refs,
            bone_base,
            &mut scene,
            &mut warnings,
        )
        .map_err(|e| Error {
            path: format!("{label}: {}", e.path),
            ..e
        })?;
        if scene.animations.len() == before {
            warnings.push(Warning::new(
                None,
                *label,
                "no sequence of this motion file animates a bone of the model (animation ids do not match)",
            ));
        }
    }
    Ok((scene, warnings))
}

fn skipped(warnings: &mut Vec<Warning>, what: &str, e: Error) {
    warnings.push(Warning::new(
        e.offset,
        e.path,
        format!("{what} left out: {}", e.message),
    ));
}

/// A bone's rest transform: the init values of its location, rotation and scale.
fn rest_pose(b: &Entry<'_>) -> (Vec3, Quat, Vec3) {
    let t = b
        .anim("location")
        .map_or([0.0; 3], |a| a.init_floats::<3>());
    let r = b
        .anim("rotation")
        .map_or([0.0, 0.0, 0.0, 1.0], |a| a.init_floats::<4>());
    let s = b.anim("scale").map_or([1.0; 3], |a| a.init_floats::<3>());
    (finite3(t, 0.0), quat(r), finite3(s, 1.0))
}

/// `c`, or `or` when it is NaN or infinite.
fn finite(c: f32, or: f32) -> f32 {
    if c.is_finite() {
        c
    } else {
        or
    }
}

fn finite3(v: [f32; 3], default: f32) -> Vec3 {
    Vec3::from(v.map(|c| finite(c, default)))
}

fn quat(q: [f32; 4]) -> Quat {
    let q = Quat::from_array(q);
    if q.is_finite() && q.length_squared() > 1e-12 {
        q.normalize()
    } else {
        Quat::IDENTITY
    }
}

fn materials(
    model: &Model<'_, '_>,
    modl: &Entry<'_>,
    scene: &mut Scene,
    warnings: &mut Vec<Warning>,
) -> Result<()> {
    let maps = model.follow(modl, "materialMaps", "MATM", "MODL")?;
    let mut composites = Vec::new();
    for (i, m) in maps.iter().enumerate() {
        let path = format!("MODL.materialMaps[{i}]");
        let ty = m.u32("materialType").unwrap_or(0);
        let index = m.u32("materialIndex").unwrap_or(0) as usize;
        let mut extras = Map::new();
        let mut mat = Material {
            name: format!("material {i}"),
            look: crate::model::Look {
                metallic: 0.0,
                ..Default::default()
            },
            ..Default::default()
        };
        let Some(&(list, tag)) = (ty as usize)
            .checked_sub(1)
            .and_then(|k| MATERIAL_LISTS.get(k))
        else {
            warnings.push(Warning::new(
                None,
                &path,
                format!("unknown material type {ty}"),
            ));
            scene.materials.push(mat);
            continue;
        };
        extras.insert("type".into(), json!(tag));
        let entry = if modl.has(list) {
            model
                .follow(modl, list, tag, "MODL")
                .ok()
                .and_then(|v| v.get(index).copied())
        } else {
            None
        };
        match entry {
            Some(e) => {
                // Paths are made only for a message (thousands of layers in a batch).
                let mpath = || format!("MODL.{list}[{index}]");
                mat.name = model.name_of(&e, "name", mpath);
                let mut fields = Map::new();
                for (s, b) in e.fields() {
                    if let Some(v) = super::table::int_value(s, b) {
                        fields.insert(s.name.into(), v.into());
                    } else if let Some(v) = super::table::f32_value(s, b) {
                        fields.insert(s.name.into(), super::table::float_value(v.to_bits()));
                    }
                }
                let mut layers = Map::new();
                let mut images: Vec<(&str, String)> = Vec::new();
                for s in &e.layout.slots {
                    if !matches!(s.ty, super::table::Ty::Ref(t) if t == super::Tag::from_name("LAYR"))
                    {
                        continue;
                    }
                    let Ok(ls) = model.follow(&e, s.name, "LAYR", mpath) else {
                        continue;
                    };
                    if let Some(l) = ls.first() {
                        let lp = || format!("{}.{}", mpath(), s.name);
                        let image = model.name_of(l, "imagePath", lp);
                        if !image.is_empty() {
                            layers.insert(
                                s.name.into(),
                                json!({
                                    "image": image,
                                    "flags": l.u32("flags").unwrap_or(0),
                                    "uvSource": l.u32("uvSource").unwrap_or(0),
                                }),
                            );
                            images.push((s.name, image));
                        }
                    }
                }
                // A buffer material (Heroes) lists its texture paths instead of layers.
                if tag == "MADD" {
                    if let Ok(paths) = model.follow(&e, "texturePaths", "SCHR", mpath) {
                        for p in paths.iter().take(16) {
                            let name = model.name_of(p, "path", mpath);
                            if !name.is_empty() {
                                images.push(("texture", name));
                            }
                        }
                    }
                }
                (mat.textures, mat.look) = crate::material::m3(tag, &fields, &images);
                if tag == "CMP_" {
                    let first = model
                        .follow(&e, "sections", "CMS_", mpath)
                        .ok()
                        .and_then(|v| v.first().and_then(|c| c.u32("materialMap")));
                    if let Some(section) = first {
                        composites.push((i, section as usize));
                    }
                }
                if let Some(note) = crate::material::m3_note(tag) {
                    extras.insert("note".into(), json!(note));
                }
                extras.insert("fields".into(), Value::Object(fields));
                if !layers.is_empty() {
                    extras.insert("layers".into(), Value::Object(layers));
                }
            }
            None => warnings.push(Warning::new(
                None,
                &path,
                format!("material {index} of {list} does not exist or cannot be read"),
            )),
        }
        mat.extras.insert("m3".into(), Value::Object(extras));
        scene.materials.push(mat);
    }
    for (composite, section) in composites {
        crate::material::m3_composite(&mut scene.materials, composite, section);
    }
    Ok(())
}

fn meshes(
    model: &Model<'_, '_>,
    modl: &Entry<'_>,
    scene: &mut Scene,
    skin: Option<usize>,
    bone_count: usize,
    warnings: &mut Vec<Warning>,
) -> Result<()> {
    let flags = modl.u32("vertexFlags").unwrap_or(0);
    let vref = modl.reference("vertices").unwrap_or_default();
    let divisions = model.follow(modl, "divisions", "DIV_", "MODL")?;
    let Some(div) = divisions.first() else {
        return Ok(());
    };
    if divisions.len() > 1 {
        warnings.push(Warning::new(
            None,
            "MODL.divisions",
            format!("{} divisions: only the first is read", divisions.len()),
        ));
    }
    let dpath = "MODL.divisions[0]";
    let regions = model.follow(div, "regions", "REGN", dpath)?;
    if regions.is_empty() {
        return Ok(());
    }
    let layout = VertexLayout::from_flags(flags)
        .map_err(|m| Error::invalid(modl.offset_of("vertexFlags"), "MODL.vertexFlags", m))?;
    let vbytes = model.values(vref, "U8__", "MODL.vertices")?;
    if vbytes.len() % layout.size != 0 {
        return Err(Error::invalid(
            model.section(vref, "U8__", "MODL.vertices")?.map_or(0, |s| s.offset),
            "MODL.vertices",
            format!(
                "{} vertex bytes are not a whole number of {}-byte vertices (vertex flags 0x{flags:x})",
                vbytes.len(),
                layout.size
            ),
        ));
    }
    let vcount = vbytes.len() / layout.size;
    let faces = model.u16s(
        div.reference("faces").unwrap_or_default(),
        &format!("{dpath}.faces"),
    )?;
    let lookup = model.u16s(
        modl.reference("boneLookup").unwrap_or_default(),
        "MODL.boneLookup",
    )?;
    let batches = model
        .follow(div, "batches", "BAT_", dpath)
        .unwrap_or_else(|e| {
            skipped(warnings, "batches (region materials)", e);
            Vec::new()
        });
    let mut region_material: HashMap<usize, Vec<usize>> = HashMap::new();
    for b in &batches {
        let r = b.int("region").unwrap_or(-1);
        let m = b.int("materialMap").unwrap_or(-1);
        if r >= 0 && m >= 0 {
            region_material
                .entry(r as usize)
                .or_default()
                .push(m as usize);
        }
    }
    let skinned = skin.is_some() && layout.skin.is_some();
    for (ri, r) in regions.iter().enumerate() {
        let path = format!("{dpath}.regions[{ri}]");
        let first = r.u32("firstVertex").unwrap_or(0) as usize;
        let count = r.u32("vertexCount").unwrap_or(0) as usize;
        let first_face = r.u32("firstFace").unwrap_or(0) as usize;
        let face_count = r.u32("faceCount").unwrap_or(0) as usize;
        if first.checked_add(count).is_none_or(|e| e > vcount) {
            return Err(Error::invalid(
                r.offset_of("firstVertex"),
                format!("{path}.firstVertex"),
                format!(
                    "vertices {first}..{} are outside the {vcount} vertices",
                    first as u64 + count as u64
                ),
            ));
        }
        if first_face
            .checked_add(face_count)
            .is_none_or(|e| e > faces.len())
        {
            return Err(Error::invalid(
                r.offset_of("firstFace"),
                format!("{path}.firstFace"),
                format!(
                    "faces {first_face}..{} are outside the {} face indices",
                    first_face as u64 + face_count as u64,
                    faces.len()
                ),
            ));
        }
        let (multiply, offset) = match (r.f32("uvMultiply"), r.f32("uvOffset")) {
            (Some(m), Some(o)) if m.is_finite() && o.is_finite() => (m, o),
            _ => (16.0, 0.0),
        };
        let lookup_first = r.u32("firstBoneLookup").unwrap_or(0) as usize;
        let lookup_count = r.u32("boneLookupCount").unwrap_or(0) as usize;
        // Vertices without weight follow the first bone of the region's lookup range, as the game
        // binds them (the region's `rootBone` field is not an index into that range).
        let root_bone = lookup.get(lookup_first).map_or(0, |&b| b as usize);
        // Each column is extended from an exact-size iterator (a loop pushing into every column
        // at once was half the scene time), a block of vertices at a time: the block stays in the
        // first-level cache from one column to the next, where whole regions were read from
        // memory once a column.
        let region = &vbytes[first * layout.size..(first + count) * layout.size];
        fn column<T>(count: usize) -> Vec<T> {
            Vec::with_capacity(count)
        }
        let mut v = Vertices {
            positions: column(count),
            normals: layout.normal.map(|_| column(count)),
            tangents: layout.tangent.and(layout.normal).map(|_| column(count)),
            colors: layout.color.iter().map(|_| column(count)).collect(),
            uvs: (0..layout.float_uvs.len() + layout.uvs.len())
                .map(|_| column(count))
                .collect(),
            ..Default::default()
        };
        let skin_layout = layout.skin.filter(|_| skinned);
        let mut skin_columns: (Vec<[u16; 4]>, Vec<[f32; 4]>) = match skin_layout {
            Some(_) => (column(count), column(count)),
            None => Default::default(),
        };
        // The region's bone lookup resolved once for the 256 indices a vertex can hold.
        let bone_of: [Option<u16>; 256] = std::array::from_fn(|li| {
            (li < lookup_count)
                .then(|| lookup.get(lookup_first + li))
                .flatten()
                .filter(|&&b| (b as usize) < bone_count)
                .copied()
        });
        let mut bad_lookup = 0usize;
        let mut unweighted = 0usize;
        const BLOCK: usize = 256;
        for block in region.chunks(BLOCK * layout.size) {
            let verts = || block.chunks_exact(layout.size);
            v.positions
                .extend(verts().map(|vb| floats::<3>(vb).map(|c| finite(c, 0.0))));
            if let (Some(o), Some(normals)) = (layout.normal, &mut v.normals) {
                unit_vectors(normals, block, layout.size, o, Vec3::Z, |_, n| n);
            }
            if let (Some(t), Some(o), Some(tangents)) =
                (layout.tangent, layout.normal, &mut v.tangents)
            {
                // The normal's fourth byte is the bitangent sign: 255 for glTF's -1 (measured on
                // the corpus against the UV layout and mikktspace, see tests/tangents.rs).
                unit_vectors(tangents, block, layout.size, t, Vec3::X, |vb, [x, y, z]| {
                    [x, y, z, if vb[o + 3] >= 128 { -1.0 } else { 1.0 }]
                });
            }
            if let (Some(o), Some(colors)) = (layout.color, v.colors.first_mut()) {
                // Stored B G R A.
                colors.extend(
                    verts().map(|vb| [vb[o + 2], vb[o + 1], vb[o], vb[o + 3]].map(from_unorm8)),
                );
            }
            let (float_uvs, int_uvs) = v.uvs.split_at_mut(layout.float_uvs.len());
            for (&o, uvs) in layout.float_uvs.iter().zip(float_uvs) {
                uvs.extend(verts().map(|vb| floats::<2>(&vb[o..]).map(|c| finite(c, 0.0))));
            }
            for (&o, uvs) in layout.uvs.iter().zip(int_uvs) {
                let scaled = |lo: u8, hi: u8| {
                    i16::from_le_bytes([lo, hi]) as f32 * multiply / 32768.0 + offset
                };
                uvs.extend(
                    verts().map(|vb| [scaled(vb[o], vb[o + 1]), scaled(vb[o + 2], vb[o + 3])]),
                );
            }
            let Some((o, pairs)) = skin_layout else {
                continue;
            };
            skin_columns.extend(verts().map(|vb| {
                // Most vertices hang on one bone (four in five of the corpus's): a first weight
                // and no other is the whole weight on its bone, as the loop below would find.
                let others = vb[o + 1..o + pairs.min(4)].iter().fold(0, |a, &w| a | w);
                if let (true, 0, Some(bone)) = (vb[o] != 0, others, bone_of[vb[o + pairs] as usize])
                {
                    return ([bone, 0, 0, 0], [1.0, 0.0, 0.0, 0.0]);
                }
                // Up to four (bone, weight) pairs packed 16 bits each in two integers: arrays
                // written element by element and read back as vectors stalled every vertex
                // (most of the skin's time).
                let (mut bones, mut raw) = (0u64, 0u64);
                let mut total = 0;
                let mut n = 0;
                for k in 0..pairs.min(4) {
                    let w = vb[o + k];
                    if w == 0 {
                        continue;
                    }
                    let Some(bone) = bone_of[vb[o + pairs + k] as usize] else {
                        bad_lookup += 1;
                        continue;
                    };
                    total += w as u32;
                    // The same bone twice adds up.
                    let at = (0..n)
                        .find(|&i| (bones >> (16 * i)) as u16 == bone)
                        .unwrap_or_else(|| {
                            bones |= (bone as u64) << (16 * n);
                            n += 1;
                            n - 1
                        });
                    raw += (w as u64) << (16 * at);
                }
                if total == 0 {
                    unweighted += 1;
                    let root = root_bone.min(bone_count.saturating_sub(1)) as u16;
                    return ([root, 0, 0, 0], [1.0, 0.0, 0.0, 0.0]);
                }
                let lane = |v: u64, i: u32| (v >> (16 * i)) as u16;
                // One vector division, not four (each waited for the one before: a third of the
                // skin's time).
                let raw = glam::Vec4::from_array([0, 1, 2, 3].map(|i| lane(raw, i) as f32));
                (
                    [0, 1, 2, 3].map(|i| lane(bones, i)),
                    (raw / total as f32).to_array(),
                )
            }));
        }
        if skin_layout.is_some() {
            v.joints = Some(skin_columns.0);
            v.weights = Some(skin_columns.1);
        }
        if bad_lookup > 0 {
            warnings.push(Warning::new(None, format!("{path}.firstBoneLookup"), format!("{bad_lookup} bone weights point outside the region's bone lookup and are dropped")));
        }
        // The game binds these the same way (valid models carry them).
        if unweighted > 0 {
            warnings.push(Warning::note(
                None,
                &path,
                format!("{unweighted} vertices have no weight: bound to the region's root bone"),
            ));
        }
        let mut indices = Vec::with_capacity(face_count);
        let mut out_of_range = 0;
        for &f in &faces[first_face..first_face + face_count] {
            if (f as usize) < count {
                indices.push(f as u32);
            } else {
                out_of_range += 1;
                indices.push(0);
            }
        }
        if out_of_range > 0 {
            warnings.push(Warning::new(
                None,
                format!("{path}.faces"),
                format!(
                    "{out_of_range} face indices are past the region's {count} vertices: set to 0"
                ),
            ));
        }
        indices.truncate(indices.len() - indices.len() % 3);
        let mats = region_material.get(&ri).cloned().unwrap_or_default();
        let material = mats.first().copied().filter(|&m| m < scene.materials.len());
        let mut extras = Map::new();
        extras.insert(
            "m3".into(),
            json!({ "region": ri, "firstVertex": first, "firstFace": first_face, "materialMaps": mats }),
        );
        let mesh_name = material.map_or_else(
            || format!("region {ri}"),
            |m| format!("region {ri} {}", scene.materials[m].name),
        );
        scene.meshes.push(Mesh {
            name: mesh_name.clone(),
            vertices: v,
            primitives: vec![Primitive { indices, material }],
            extras,
            morph_targets: Vec::new(),
        });
        let mut node = Node::new(mesh_name);
        node.mesh = Some(scene.meshes.len() - 1);
        if skinned {
            node.skin = skin;
        } else {
            node.parent = Some(0);
        }
        scene.nodes.push(node);
    }
    Ok(())
}

fn helpers(
    model: &Model<'_, '_>,
    modl: &Entry<'_>,
    scene: &mut Scene,
    bone_node: &dyn Fn(i64) -> usize,
    warnings: &mut Vec<Warning>,
) -> Result<()> {
    for (i, a) in model
        .follow(modl, "attachmentPoints", "ATT_", "MODL")?
        .iter()
        .enumerate()
    {
        let mut n = Node::new(model.name_of(a, "name", &format!("MODL.attachmentPoints[{i}]")));
        n.parent = Some(bone_node(a.int("bone").unwrap_or(-1)));
        n.extras
            .insert("m3".into(), json!({ "attachmentPoint": i }));
        scene.nodes.push(n);
    }
    if modl.has("cameras") {
        for (i, c) in model
            .follow(modl, "cameras", "CAM_", "MODL")?
            .iter()
            .enumerate()
        {
            let name = model.name_of(c, "name", &format!("MODL.cameras[{i}]"));
            let init = |f: &str| {
                c.anim(f)
                    .map(|a| a.init_floats::<1>()[0])
                    .filter(|v| v.is_finite() && *v > 0.0)
            };
            scene.cameras.push(Camera {
                name: name.clone(),
                yfov: init("fieldOfView").unwrap_or(0.8).min(3.1),
                znear: init("nearClip").unwrap_or(0.1),
                zfar: init("farClip"),
            });
            let mut n = Node::new(name);
            n.parent = Some(bone_node(c.int("bone").unwrap_or(-1)));
            n.camera = Some(scene.cameras.len() - 1);
            n.extras.insert("m3".into(), json!({ "camera": i }));
            scene.nodes.push(n);
        }
    }
    for (i, l) in model
        .follow(modl, "lights", "LITE", "MODL")?
        .iter()
        .enumerate()
    {
        let init1 = |f: &str| {
            l.anim(f)
                .map(|a| a.init_floats::<1>()[0])
                .filter(|v| v.is_finite())
        };
        let color = l
            .anim("color")
            .map_or([1.0; 3], |a| a.init_floats::<3>())
            .map(|c| {
                if c.is_finite() {
                    c.clamp(0.0, 1.0)
                } else {
                    1.0
                }
            });
        let ty = l.u32("type").unwrap_or(1);
        let kind = match ty {
            0 => LightKind::Directional,
            2 => {
                let outer = init1("falloff")
                    .unwrap_or(0.8)
                    .clamp(0.01, std::f32::consts::FRAC_PI_2);
                let inner = init1("hotSpot").unwrap_or(0.0).clamp(0.0, outer * 0.999);
                LightKind::Spot { inner, outer }
            }
            _ => LightKind::Point,
        };
        if ty > 2 {
            warnings.push(Warning::new(
                None,
                format!("MODL.lights[{i}].type"),
                format!("unknown light type {ty}: exported as a point light"),
            ));
        }
        scene.lights.push(Light {
            name: format!("light {i}"),
            kind,
            color,
            intensity: init1("intensity").unwrap_or(1.0).max(0.0),
            range: init1("attenuationFar").filter(|r| *r > 0.0),
        });
        let mut n = Node::new(format!("light {i}"));
        n.parent = Some(bone_node(l.int("bone").unwrap_or(-1)));
        n.light = Some(scene.lights.len() - 1);
        n.extras
            .insert("m3".into(), json!({ "light": i, "type": ty }));
        scene.nodes.push(n);
    }
    Ok(())
}

/// Key times (ms) and the raw values (VEC3 or QUAT) of one animated property.
#[derive(Clone, Copy)]
struct Track<'m> {
    /// The key times (ms), as the file stores them: little-endian i32s.
    frames: &'m [u8],
    values: &'m [u8],
    value_tag: &'static str,
}

/// Resolves animation ids through one file's sequences (STG -> STC in priority order -> SD blocks).
struct Tracks<'m, 'a> {
    model: Model<'m, 'a>,
    stcs: Vec<Entry<'m>>,
    /// Per STC: (anim id, animRefs value), sorted by id, to be walked beside the bones' ids.
    ids: Vec<Vec<(u32, u32)>>,
    /// Per STC: its sd* references in [`SD_FIELDS`] order, read once (by name a track, they were a
    /// tenth of the animation time).
    sd: Vec<[Reference; SD_FIELDS.len()]>,
}

impl<'m, 'a> Tracks<'m, 'a> {
    fn new(model: Model<'m, 'a>, modl: &Entry<'m>) -> Result<Self> {
        let stcs = model.follow(modl, "stc", "STC_", "MODL")?;
        let mut ids = Vec::with_capacity(stcs.len());
        for (i, s) in stcs.iter().enumerate() {
            let path = format!("MODL.stc[{i}]");
            let a = model.field_u32s(s, "animIds", &path)?;
            let r = model.field_u32s(s, "animRefs", &path)?;
            let mut pairs: Vec<(u32, u32)> = a.into_iter().zip(r).collect();
            // Stable, so of two equal ids the one stored last is found last (and wins).
            pairs.sort_by_key(|p| p.0);
            ids.push(pairs);
        }
        let sd = stcs
            .iter()
            .map(|s| SD_FIELDS.map(|(field, _)| s.reference(field).unwrap_or_default()))
            .collect();
        Ok(Tracks {
            model,
            stcs,
            ids,
            sd,
        })
    }

    /// The key times (ms) and values that animRefs value `r` of STC `si` points at; `None` for
    /// a track of another type than VEC3 or QUAT.
    fn resolve(&self, si: usize, r: u32) -> Result<Option<Track<'m>>> {
        let (ty, block) = ((r >> 16) as usize, (r & 0xffff) as usize);
        let (Some(&(field, tag)), Some(&sd)) = (SD_FIELDS.get(ty), self.sd[si].get(ty)) else {
            return Err(Error::invalid(
                self.stcs[si].offset_of("animRefs"),
                format!("MODL.stc[{si}].animRefs"),
                format!("sequence data type {ty} does not exist"),
            ));
        };
        let value_tag = match tag {
            "SD3V" => "VEC3",
            "SD4Q" => "QUAT",
            _ => return Ok(None),
        };
        let b = self
            .model
            .entry(sd, block, tag, || format!("MODL.stc[{si}].{field}"))?;
        // Paths are formatted only when an error needs one: this runs once a track.
        let frames =
            self.model
                .values(b.reference("frames").unwrap_or_default(), "I32_", || {
                    format!("MODL.stc[{si}].{field}[{block}].frames")
                })?;
        let vref = b.reference("values").unwrap_or_default();
        let values = self.model.values(vref, value_tag, || {
            format!("MODL.stc[{si}].{field}[{block}].values")
        })?;
        Ok(Some(Track {
            frames,
            values,
            value_tag,
        }))
    }

    /// The track of each target (bone * 3 + property) of `targets` (anim id, target; sorted) in
    /// the STCs `order`: the first STC that has the id decides, and of one id twice in an STC
    /// the one stored last. Each STC's ids are walked beside the targets' (a search of every
    /// STC for every bone's three ids was most of the animation time).
    fn tracks(
        &self,
        order: &[usize],
        targets: &[(u32, usize)],
        out: &mut [Option<Option<Track<'m>>>],
    ) -> Result<()> {
        for &si in order {
            let pairs = &self.ids[si];
            let mut t = 0;
            for (i, &(id, r)) in pairs.iter().enumerate() {
                if pairs.get(i + 1).is_some_and(|next| next.0 == id) {
                    continue;
                }
                while targets.get(t).is_some_and(|x| x.0 < id) {
                    t += 1;
                }
                let mut same = t;
                while let Some(&(_, target)) = targets.get(same).filter(|x| x.0 == id) {
                    if let Some(slot @ None) = out.get_mut(target) {
                        *slot = Some(self.resolve(si, r)?);
                    }
                    same += 1;
                }
            }
        }
        Ok(())
    }
}

/// Key times already decoded in one sequence, by their raw frames: a sequence's bones mostly share
/// a few arrays. The latest few are kept and compared (bounded: a file of all-different arrays
/// costs a few comparisons a track, not a search of all of them).
#[derive(Default)]
struct SharedTimes<'m>(Vec<(&'m [u8], Range<usize>)>);

impl<'m> SharedTimes<'m> {
    const KEPT: usize = 8;

    fn get(&self, frames: &[u8]) -> Option<Range<usize>> {
        let (_, r) = self.0.iter().rev().find(|(f, _)| *f == frames)?;
        Some(r.clone())
    }

    fn insert(&mut self, frames: &'m [u8], times: Range<usize>) {
        if self.0.len() == Self::KEPT {
            self.0.remove(0);
        }
        self.0.push((frames, times));
    }
}

/// One track's keys, appended to `pool`: times in seconds from the sequence `start` (ms) and
/// `width` floats each (rotations normalized, other values finite); returns where each lies.
/// Times must rise strictly in glTF: a key earlier than the one before is dropped, and of keys at
/// the same time the later value is kept. Times the sequence decoded before (`shared`) are reused.
fn keys<'m>(
    frames: &'m [u8],
    values: &[u8],
    width: usize,
    start: i64,
    pool: &mut Vec<f32>,
    shared: &mut SharedTimes<'m>,
) -> (Range<usize>, Range<usize>) {
    let time = |f: &[u8]| {
        let ms = i32::from_le_bytes(le(f, 0)) as i64;
        (ms - start).max(0) as f32 / 1000.0
    };
    let rotation = |raw: &[u8]| quat(floats::<4>(raw)).to_array();
    let vector = |raw: &[u8]| floats::<3>(raw).map(|c| finite(c, 0.0));
    let value = |raw: &[u8], slot: &mut [f32]| {
        if width == 4 {
            slot.copy_from_slice(&rotation(raw));
        } else {
            slot.copy_from_slice(&vector(raw));
        }
    };
    let n = frames.len() / 4;
    let times = match shared.get(frames) {
        Some(r) => r,
        None => {
            let at = pool.len();
            pool.extend(frames.chunks_exact(4).map(time));
            at..pool.len()
        }
    };
    if pool[times.clone()].windows(2).all(|w| w[0] < w[1]) {
        // The usual track: every key kept.
        if times.end == pool.len() && !times.is_empty() {
            shared.insert(frames, times.clone());
        }
        let at = pool.len();
        if width == 4 {
            for raw in values.chunks_exact(16) {
                pool.extend_from_slice(&rotation(raw));
            }
        } else {
            for raw in values.chunks_exact(12) {
                pool.extend_from_slice(&vector(raw));
            }
        }
        return (times, at..pool.len());
    }
    // Rising times were shared, so these were decoded just now and are the pool's end.
    debug_assert_eq!(times.end, pool.len());
    let all: Vec<f32> = pool.drain(times).collect();
    let kept_at = pool.len();
    let mut out = Vec::with_capacity(n * width);
    for (&t, raw) in all.iter().zip(values.chunks_exact(4 * width)) {
        let at = match pool[kept_at..].last() {
            Some(&l) if t < l => continue,
            Some(&l) if t == l => out.len() - width,
            _ => {
                pool.push(t);
                out.resize(out.len() + width, 0.0);
                out.len() - width
            }
        };
        value(raw, &mut out[at..]);
    }
    let values_at = pool.len();
    pool.extend_from_slice(&out);
    (kept_at..values_at, values_at..pool.len())
}

fn animations(
    model: &Model<'_, '_>,
    label: Option<&str>,
    bone_refs: &[[Option<AnimRef<'_>>; 3]],
    bone_base: usize,
    scene: &mut Scene,
    warnings: &mut Vec<Warning>,
) -> Result<()> {
    let modl = model.modl()?;
    let seqs = model.follow(&modl, "sequences", "SEQS", "MODL")?;
    let stgs = model.follow(&modl, "stg", "STG_", "MODL")?;
    if seqs.is_empty() {
        return Ok(());
    }
    let tracks = Tracks::new(*model, &modl)?;
    // (anim id, bone * 3 + property) of every animated bone property, sorted by id.
    let mut targets: Vec<(u32, usize)> = bone_refs
        .iter()
        .enumerate()
        .flat_map(|(bi, refs)| {
            refs.iter().enumerate().filter_map(move |(k, r)| {
                r.as_ref().filter(|r| r.id != 0).map(|r| (r.id, 3 * bi + k))
            })
        })
        .collect();
    targets.sort_unstable();
    // Per bone property, its track in the sequence at hand (decided, maybe as none).
    let mut found: Vec<Option<Option<Track<'_>>>> = vec![None; 3 * bone_refs.len()];
    // Bone properties that share an anim id share its track: each one's first such property
    // (the lowest), whose keys it reuses rather than holding a copy (a hostile file naming one
    // large track from thousands of bones would otherwise make thousands).
    let mut leader: Vec<usize> = (0..found.len()).collect();
    for w in targets.windows(2) {
        if w[0].0 == w[1].0 {
            leader[w[1].1] = leader[w[0].1];
        }
    }
    let mut decoded_at: Vec<Option<(Range<usize>, Range<usize>)>> = vec![None; found.len()];
    for (si, seq) in seqs.iter().enumerate() {
        let spath = format!("MODL.sequences[{si}]");
        let name = model.name_of(seq, "name", &spath);
        let start = seq.u32("animationStart").unwrap_or(0) as i64;
        let end = seq.u32("animationEnd").unwrap_or(0) as i64;
        let Some(stg) = stgs.get(si) else {
            warnings.push(Warning::new(
                None,
                &spath,
                "no STG_ for this sequence: skipped",
            ));
            continue;
        };
        let mut order = model
            .u32s(
                stg.reference("stcIndices").unwrap_or_default(),
                &format!("MODL.stg[{si}].stcIndices"),
            )?
            .into_iter()
            .map(|i| i as usize)
            .filter(|&i| i < tracks.stcs.len())
            .collect::<Vec<_>>();
        // Highest priority first; equal priorities keep the stored order.
        order.sort_by_key(|&i| std::cmp::Reverse(tracks.stcs[i].u32("priority").unwrap_or(0)));
        found.iter_mut().for_each(|f| *f = None);
        tracks.tracks(&order, &targets, &mut found)?;
        // The tracks to decode: a bone property, its keys (as many times as values), their width.
        let mut wanted = Vec::with_capacity(targets.len());
        for (target, track) in found.iter().enumerate() {
            let Some(Some(Track {
                frames,
                values,
                value_tag: vt,
            })) = *track
            else {
                continue;
            };
            let (bi, k) = (target / 3, target % 3);
            let Some(r) = &bone_refs[bi][k] else { continue };
            let width = if vt == "QUAT" { 4 } else { 3 };
            let n = (frames.len() / 4).min(values.len() / (4 * width));
            let property = [Property::Translation, Property::Rotation, Property::Scale][k];
            if n == 0 || (property == Property::Rotation) != (width == 4) {
                continue;
            }
            let interpolation = if r.interpolation == 0 {
                Interpolation::Step
            } else {
                Interpolation::Linear
            };
            let keys = (&frames[..4 * n], &values[..4 * width * n], width);
            wanted.push((target, property, interpolation, keys));
        }
        // Every track's keys go into one buffer the sequence's channels share, sized from the keys
        // the file holds (a failed reservation just grows the buffer step by step).
        let floats = wanted
            .iter()
            .filter(|w| leader.get(w.0) == Some(&w.0))
            .map(|(.., (frames, values, _))| (frames.len() + values.len()) / 4)
            .fold(0usize, usize::saturating_add);
        let mut pool = Vec::new();
        let _ = pool.try_reserve_exact(floats);
        let mut shared = SharedTimes::default();
        decoded_at.iter_mut().for_each(|d| *d = None);
        let mut decoded = Vec::with_capacity(wanted.len());
        for (target, property, interpolation, (frames, values, width)) in wanted {
            // The same track as its leader's (the same keys in the file, so the same width) takes
            // the leader's ranges.
            let lead = leader.get(target).copied().unwrap_or(target);
            let same = |l: usize| {
                found.get(l).copied().flatten().flatten().is_some_and(|t| {
                    std::ptr::eq(t.frames.as_ptr(), frames.as_ptr())
                        && std::ptr::eq(t.values.as_ptr(), values.as_ptr())
                })
            };
            let reused = match decoded_at.get(lead) {
                Some(Some(r)) if lead != target && same(lead) => Some(r.clone()),
                _ => None,
            };
            let (times, out) = reused
                .unwrap_or_else(|| keys(frames, values, width, start, &mut pool, &mut shared));
            if let Some(d) = decoded_at.get_mut(target) {
                *d = Some((times.clone(), out.clone()));
            }
            if !times.is_empty() {
                decoded.push((bone_base + target / 3, property, interpolation, times, out));
            }
        }
        let pool = Arc::new(pool);
        let mut channels: Vec<Channel> = decoded
            .into_iter()
            .map(|(node, property, interpolation, times, values)| Channel {
                node,
                property,
                interpolation,
                times: Keys::shared(&pool, times).unwrap_or_default(),
                values: Keys::shared(&pool, values).unwrap_or_default(),
            })
            .collect();
        if channels.is_empty() {
            if label.is_some() {
                continue;
            }
            // A sequence that moves no bone still shows up as a clip: the first bone at rest.
            if let Some(n) = scene.nodes.get(bone_base).filter(|_| !bone_refs.is_empty()) {
                channels.push(Channel {
                    node: bone_base,
                    property: Property::Translation,
                    interpolation: Interpolation::Step,
                    times: vec![0.0].into(),
                    values: n.translation.to_array().to_vec().into(),
                });
            } else {
                warnings.push(Warning::new(
                    None,
                    &spath,
                    format!("sequence {name:?} has no bone to animate: skipped"),
                ));
                continue;
            }
        }
        let mut extras = Map::new();
        extras.insert(
            "m3".into(),
            json!({
                "sequence": si,
                "startMs": start,
                "endMs": end,
                "flags": seq.u32("flags").unwrap_or(0),
                "movementSpeed": seq.f32("movementSpeed").map(|v| super::table::float_value(v.to_bits())),
                "source": label,
            }),
        );
        scene.animations.push(Animation {
            name: label.map_or(name.clone(), |l| format!("{l}: {name}")),
            channels,
            extras,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{keys, SharedTimes};

    #[test]
    fn unit_vectors_four_at_a_time_are_the_floats_of_one_at_a_time() {
        use super::{unit, unit_vectors};
        use glam::Vec3;
        // 4099 five-byte vertices (a remainder of three after the quads), the vector at byte 1,
        // bytes from a fixed pseudo-random walk plus the all-equal corners.
        let mut x = 12345u32;
        let mut region = Vec::new();
        for i in 0..4099u32 {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let b = x.to_le_bytes();
            let v = match i {
                0 => [0, 0, 0],
                1 => [255, 255, 255],
                2 => [127, 128, 127],
                _ => [b[1], b[2], b[3]],
            };
            region.extend([b[0], v[0], v[1], v[2], 9]);
        }
        let mut got = Vec::new();
        unit_vectors(&mut got, &region, 5, 1, Vec3::Z, |vb, n| (vb[4], n));
        assert_eq!(got.len(), 4099);
        for (k, (tag, n)) in got.iter().enumerate() {
            let v = &region[5 * k..5 * k + 5];
            let want = Vec3::new(unit(v[1]), unit(v[2]), unit(v[3])).normalize_or(Vec3::Z);
            assert_eq!(*tag, 9);
            assert_eq!(
                n.map(f32::to_bits),
                want.to_array().map(f32::to_bits),
                "vertex {k}"
            );
        }
    }

    #[test]
    fn packed_unit_bytes_map_to_minus_one_to_one_as_computed_at_run_time() {
        // The table is made at compile time: each entry must be the bits the formula gives here.
        let at_run_time = |b: u8| b as f32 / std::hint::black_box(255.0) * 2.0 - 1.0;
        for b in 0..=255u8 {
            assert_eq!(
                super::unit(b).to_bits(),
                at_run_time(b).to_bits(),
                "byte {b}"
            );
        }
        assert_eq!(super::unit(0), -1.0);
        assert_eq!(super::unit(255), 1.0);
    }

    fn bytes_i32(v: &[i32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn bytes_f32(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn rising_keys_are_kept_in_seconds_from_the_sequence_start() {
        let frames = bytes_i32(&[100, 600, 1100]);
        let values = bytes_f32(&[1.0, 2.0, 3.0, f32::NAN, 5.0, 6.0, 7.0, 8.0, f32::INFINITY]);
        let mut pool = vec![9.0];
        let mut shared = SharedTimes::default();
        let (t, v) = keys(&frames, &values, 3, 100, &mut pool, &mut shared);
        assert_eq!((t.clone(), v.clone()), (1..4, 4..13));
        assert_eq!(pool[t], [0.0, 0.5, 1.0]);
        assert_eq!(pool[v], [1.0, 2.0, 3.0, 0.0, 5.0, 6.0, 7.0, 8.0, 0.0]);
        // The same frames again share the times; the values are the track's own.
        let (t2, v2) = keys(&frames, &values, 3, 100, &mut pool, &mut shared);
        assert_eq!((t2, v2), (1..4, 13..22));
        assert_eq!(pool.len(), 22);
    }

    #[test]
    fn a_repeated_time_keeps_the_later_value_and_a_falling_one_is_dropped() {
        // Times 0, 0, 500, 200 (falls), 900; the start clamps 0 - 100 to 0.
        let frames = bytes_i32(&[0, 100, 600, 300, 1000]);
        let q = |z: f32| [0.0, 0.0, z, 1.0];
        let raw: Vec<f32> = [q(0.0), q(1.0), q(2.0), q(3.0), q(4.0)].concat();
        let mut pool = Vec::new();
        let (t, v) = keys(
            &frames,
            &bytes_f32(&raw),
            4,
            100,
            &mut pool,
            &mut Default::default(),
        );
        assert_eq!((t.clone(), v.clone()), (0..3, 3..15));
        let (t, v) = (&pool[t], &pool[v]);
        assert_eq!(t, [0.0, 0.5, 0.9]);
        // Rotations come back normalized: (0, 0, z, 1) / sqrt(z^2 + 1).
        let n = |z: f32| {
            [
                0.0,
                0.0,
                z / (z * z + 1.0).sqrt(),
                1.0 / (z * z + 1.0).sqrt(),
            ]
        };
        let want: Vec<f32> = [n(1.0), n(2.0), n(4.0)].concat();
        assert_eq!(v.len(), want.len());
        for (a, b) in v.iter().zip(&want) {
            assert!((a - b).abs() < 1e-6, "{v:?} != {want:?}");
        }
    }
}
