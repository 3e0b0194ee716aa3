//! XMF buffers to the neutral model and back.
//!
//! # Axes and winding
//! X4 stores meshes left-handed with +Y up and +Z forward (Direct3D). The neutral model is glTF's
//! right-handed +Y up frame. The transform is a mirror of X: `(x, y, z) -> (-x, y, z)` for positions,
//! normals and tangents, applied the same way back.
//! The index order is kept as it is: in every corpus file the triangles wind clockwise around their
//! stored normals in file space, and the mirror turns that into glTF's counter-clockwise front faces
//! (tests/xmf_corpus.rs checks this on every corpus mesh with normals).
//! UVs are kept: Direct3D and glTF both put the UV origin at the top left.
//! Tangents: the stored tangent points along -U and the normal's fourth byte (0 or 255; the
//! tangent's own is always 0) gives `cross(N, T) * w` along -V once mirrored. glTF wants the tangent
//! along +U (and its bitangent along -V), so tangent and sign are both negated, back and forth
//! (measured on every corpus mesh with tangents, tests/tangents.rs and docs/CONVENTIONS.md).

use super::colors;
use super::decl::{DeclType, Usage};
use super::*;
use crate::error::{Error, ErrorKind, Result, Warning};
use crate::model::{self, CustomAttribute, Mesh, Primitive, Role, Scene, Vertices};
use flate2::{Decompress, FlushDecompress, Status};
use glam::Vec3;
use rayon::prelude::*;
use serde_json::json;
use std::borrow::Cow;

/// zlib cannot expand data by more than about 1032:1; a descriptor that claims more is lying, and
/// believing it would let a small file allocate gigabytes.
pub(crate) const MAX_INFLATE_RATIO: usize = 1032;

/// The whole zlib stream `data` at once into a buffer of the `expected` size, `None` unless it
/// inflates to exactly that: libdeflate does that 1.3-1.7x faster than streaming zlib on the corpus.
#[cfg(feature = "native")]
fn inflate_whole(data: &[u8], expected: usize) -> Option<Vec<u8>> {
    let mut whole = vec![0; expected];
    (libdeflater::Decompressor::new().zlib_decompress(data, &mut whole) == Ok(expected))
        .then_some(whole)
}

/// Without libdeflate (C) every stream takes the streaming zlib-rs path.
#[cfg(not(feature = "native"))]
fn inflate_whole(_: &[u8], _: usize) -> Option<Vec<u8>> {
    None
}

/// The buffer's bytes as the GPU sees them: inflated if the file stores a zlib stream.
pub fn inflate<'a>(b: &'a Buffer<'_>, index: usize) -> Result<Cow<'a, [u8]>> {
    let path = format!("XMF.buffers[{index}].data");
    let expected = b.decoded_len().ok_or_else(|| {
        Error::new(
            ErrorKind::Invalid,
            None,
            &path,
            "sections * items * itemSize overflows",
        )
    })?;
    if b.compressed == 0 {
        if b.data.len() < expected {
            return Err(Error::new(
                ErrorKind::Truncated,
                None,
                path,
                format!(
                    "{} bytes stored, the descriptor needs {expected}",
                    b.data.len()
                ),
            ));
        }
        return Ok(Cow::Borrowed(&b.data[..expected]));
    }
    if expected
        > b.data
            .len()
            .saturating_mul(MAX_INFLATE_RATIO)
            .saturating_add(64)
    {
        return Err(Error::new(
            ErrorKind::Invalid,
            None,
            path,
            format!(
                "the descriptor claims {expected} bytes, more than a {}-byte zlib stream can hold",
                b.data.len()
            ),
        ));
    }
    // Anything unusual (a wrong size, a broken stream) takes the streaming path below, which says
    // exactly what is wrong.
    if let Some(whole) = inflate_whole(&b.data, expected) {
        return Ok(Cow::Owned(whole));
    }
    let mut out = Vec::with_capacity(expected);
    let mut z = Decompress::new(true);
    loop {
        let consumed = z.total_in() as usize;
        let status = z
            .decompress_vec(&b.data[consumed..], &mut out, FlushDecompress::Finish)
            .map_err(|e| {
                Error::new(
                    ErrorKind::Invalid,
                    Some(z.total_in()),
                    &path,
                    format!("zlib stream is broken: {e}"),
                )
            })?;
        match status {
            Status::StreamEnd => break,
            _ if out.len() == out.capacity() => {
                return Err(Error::new(
                    ErrorKind::Invalid,
                    None,
                    path,
                    format!("inflates to more than the {expected} bytes the descriptor gives"),
                ));
            }
            _ if z.total_in() as usize == consumed => {
                return Err(Error::new(
                    ErrorKind::Truncated,
                    Some(z.total_in()),
                    path,
                    format!(
                        "zlib stream ends early, after {} of {expected} bytes",
                        out.len()
                    ),
                ));
            }
            _ => {}
        }
    }
    if out.len() != expected {
        return Err(Error::new(
            ErrorKind::Invalid,
            None,
            path,
            format!(
                "inflates to {} bytes, the descriptor gives {expected}",
                out.len()
            ),
        ));
    }
    Ok(Cow::Owned(out))
}

/// One vertex element with its place in its buffer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Layout {
    pub buffer: usize,
    pub ty: DeclType,
    pub usage: Usage,
    pub usage_index: u8,
    pub offset: usize,
}

/// The elements of every vertex buffer: the declared ones packed in order, or the one implicit
/// element a buffer without a declaration describes with type/usageIndex/format.
pub fn layout(x: &Xmf<'_>) -> Result<Vec<Layout>> {
    let mut out = Vec::new();
    for (bi, b) in x.buffers.iter().enumerate().filter(|(_, b)| !b.is_index()) {
        let path = |f: &str| format!("XMF.buffers[{bi}].{f}");
        let mut offset = 0;
        let implicit;
        let elements: &[Element] = if b.elements.is_empty() {
            implicit = [Element {
                ty: b.format,
                usage: Usage::from_buffer_type(b.kind).to_raw(),
                usage_index: b.usage_index.clamp(0, 255) as u8,
                pad: [0; 2],
            }];
            &implicit
        } else {
            &b.elements
        };
        for (ei, e) in elements.iter().enumerate() {
            let ty = DeclType::from_raw(e.ty).ok_or_else(|| {
                let field = if b.elements.is_empty() {
                    "format".to_string()
                } else {
                    format!("elements[{ei}].type")
                };
                Error::new(
                    ErrorKind::Unsupported,
                    None,
                    path(&field),
                    format!("unknown D3DDECLTYPE {}", e.ty),
                )
            })?;
            out.push(Layout {
                buffer: bi,
                ty,
                usage: Usage::from_raw(e.usage),
                usage_index: e.usage_index,
                offset,
            });
            offset += ty.size();
        }
        if offset > b.item_size as usize {
            return Err(Error::new(
                ErrorKind::Invalid,
                None,
                path("itemSize"),
                format!(
                    "{} bytes per vertex, but the elements take {offset}",
                    b.item_size
                ),
            ));
        }
    }
    Ok(out)
}

/// The index buffer decoded to u32.
pub fn indices(x: &Xmf<'_>) -> Result<Vec<u32>> {
    let (i, b) = x.index_buffer().ok_or_else(|| {
        Error::new(
            ErrorKind::Invalid,
            None,
            "XMF.buffers",
            "no index buffer (type 0x1E)",
        )
    })?;
    let data = inflate(b, i)?;
    let width = match (b.format, b.item_size) {
        (INDEX_U16, _) | (_, 2) => 2,
        (INDEX_U32, _) | (_, 4) => 4,
        _ => {
            return Err(Error::new(
                ErrorKind::Invalid,
                None,
                format!("XMF.buffers[{i}].format"),
                format!(
                    "index format 0x{:x} with itemSize {} is neither u16 nor u32",
                    b.format, b.item_size
                ),
            ))
        }
    };
    let stride = b.item_size as usize;
    if stride < width {
        return Err(Error::new(
            ErrorKind::Invalid,
            None,
            format!("XMF.buffers[{i}].itemSize"),
            format!("{stride} is smaller than a {width}-byte index"),
        ));
    }
    Ok(if width == 2 {
        data.chunks_exact(stride)
            .map(|c| u16::from_le_bytes([c[0], c[1]]) as u32)
            .collect()
    } else {
        data.chunks_exact(stride)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    })
}

/// One element's values for every vertex.
pub type Decoded = (Layout, Vec<[f32; 4]>);

/// The inflated vertex buffers of a file with their element layout: what every decoder starts from.
pub struct VertexData<'x> {
    pub count: usize,
    pub layout: Vec<Layout>,
    buffers: Vec<Option<Cow<'x, [u8]>>>,
    strides: Vec<usize>,
}

impl VertexData<'_> {
    /// The values of element `l` for every vertex, each passed through `f`.
    pub fn decode_map<T>(&self, l: &Layout, f: impl FnMut([f32; 4]) -> T) -> Vec<T> {
        let data = self.buffers[l.buffer].as_deref().unwrap_or_default();
        l.ty.decode_map(data, self.strides[l.buffer], l.offset, self.count, f)
    }
}

/// Inflates every vertex buffer (in parallel); all of them must describe the same number of vertices.
pub fn vertex_data<'x>(x: &'x Xmf<'_>) -> Result<VertexData<'x>> {
    if x.header.big_endian == 1 {
        return Err(Error::unsupported(
            "big-endian XMF vertex data is not supported yet (no such file has been seen)",
        ));
    }
    let layout = layout(x)?;
    let mut count = None;
    for (bi, b) in x.buffers.iter().enumerate().filter(|(_, b)| !b.is_index()) {
        let n = b.sections as usize * b.items as usize;
        match count {
            None => count = Some(n),
            Some(c) if c != n => {
                return Err(Error::new(
                    ErrorKind::Invalid,
                    None,
                    format!("XMF.buffers[{bi}].itemsPerSection"),
                    format!("{n} vertices, but the first vertex buffer has {c}"),
                ))
            }
            _ => {}
        }
    }
    let results: Vec<(usize, Result<Cow<'x, [u8]>>)> = x
        .buffers
        .par_iter()
        .enumerate()
        .filter(|(_, b)| !b.is_index())
        .map(|(bi, b)| (bi, inflate(b, bi)))
        .collect();
    let mut buffers: Vec<Option<Cow<'x, [u8]>>> = vec![None; x.buffers.len()];
    for (bi, r) in results {
        buffers[bi] = Some(r?);
    }
    let strides = x.buffers.iter().map(|b| b.item_size as usize).collect();
    Ok(VertexData {
        count: count.unwrap_or(0),
        layout,
        buffers,
        strides,
    })
}

/// Decodes every vertex element to raw Direct3D values (no axis change).
pub fn decode_elements(x: &Xmf<'_>) -> Result<(usize, Vec<Decoded>)> {
    let vd = vertex_data(x)?;
    let out = vd
        .layout
        .par_iter()
        .map(|l| (*l, vd.decode_map(l, |a| a)))
        .collect();
    Ok((vd.count, out))
}

/// `v` scaled to unit length, or `fallback` (counted in `fixed`) when it has none.
#[inline(always)]
fn unit_or(v: [f32; 3], fallback: [f32; 3], fixed: &mut usize) -> [f32; 3] {
    let l2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
    if l2 > 1e-24 && l2 < f32::INFINITY {
        let r = 1.0 / l2.sqrt();
        [v[0] * r, v[1] * r, v[2] * r]
    } else {
        *fixed += 1;
        fallback
    }
}

/// Where an element goes in the neutral model: the first POSITION0, NORMAL0 and TANGENT0 take
/// those places, every TEXCOORD and COLOR a set, the rest a custom attribute.
#[derive(Clone, Copy, PartialEq)]
enum Place {
    Position,
    Normal,
    Tangent,
    Uv,
    Color,
    Custom,
}

enum Attr {
    Position(Vec<[f32; 3]>),
    Normal(Vec<[f32; 3]>, Option<Vec<f32>>),
    Tangent(Vec<[f32; 4]>, Option<Vec<f32>>),
    Uv(u8, Vec<[f32; 2]>),
    Color(u8, Vec<[f32; 4]>),
    Custom(String, Vec<[f32; 4]>),
}

/// The sign of a handedness component: 0/255 bytes for unsigned types, the sign otherwise.
fn sign(ty: DeclType, w: f32) -> f32 {
    let positive = if ty.unsigned_normalized() {
        w >= 0.5
    } else {
        w >= 0.0
    };
    if positive {
        1.0
    } else {
        -1.0
    }
}

/// Converts one element into glTF's frame: X mirrored, unsigned-normalized directions expanded
/// from 0..1 to -1..1 and made unit length. Returns the attribute and how many zero vectors it fixed.
fn convert(vd: &VertexData<'_>, l: &Layout, role: Place) -> (Attr, usize) {
    let ty = l.ty;
    let expand = move |a: [f32; 4]| {
        if ty.unsigned_normalized() {
            [-(a[0] * 2.0 - 1.0), a[1] * 2.0 - 1.0, a[2] * 2.0 - 1.0]
        } else {
            [-a[0], a[1], a[2]]
        }
    };
    let signs = || (ty.components() == 4).then(|| vd.decode_map(l, |a| sign(ty, a[3])));
    let mut fixed = 0;
    let attr = match role {
        Place::Position => Attr::Position(vd.decode_map(l, |a| [-a[0], a[1], a[2]])),
        Place::Normal => {
            let n = vd.decode_map(l, |a| unit_or(expand(a), [0.0, 1.0, 0.0], &mut fixed));
            Attr::Normal(n, signs())
        }
        Place::Tangent => {
            let t = vd.decode_map(l, |a| {
                let t = unit_or(expand(a), [-1.0, 0.0, 0.0], &mut fixed);
                [-t[0], -t[1], -t[2], 1.0]
            });
            Attr::Tangent(t, signs())
        }
        Place::Uv => Attr::Uv(l.usage_index, vd.decode_map(l, |a| [a[0], a[1]])),
        Place::Color => Attr::Color(
            l.usage_index,
            vd.decode_map(l, |a| a.map(|c| c.clamp(0.0, 1.0))),
        ),
        Place::Custom => Attr::Custom(
            format!("{}_{}", l.usage.name(), l.usage_index),
            vd.decode_map(l, |a| a),
        ),
    };
    (attr, fixed)
}

/// The decoded file as a neutral mesh in glTF's frame (see the module docs), one primitive per
/// material range, plus the warnings met on the way.
pub fn to_mesh(x: &Xmf<'_>, name: &str) -> Result<(Mesh, Vec<String>, Vec<Warning>)> {
    let mut warnings = Vec::new();
    if x.header.primitive_type != PRIMITIVE_TRIANGLE_LIST {
        return Err(Error::new(
            ErrorKind::Unsupported,
            Some(22),
            "XMF.primitiveType",
            format!(
                "primitive type {} is not supported (only 4, triangle list)",
                x.header.primitive_type
            ),
        ));
    }
    // Vertex buffers and the index buffer inflate at the same time.
    let (vd, idx) = rayon::join(|| vertex_data(x), || indices(x));
    let (vd, idx) = (vd?, idx?);
    let count = vd.count;
    if let Some((pos, &bad)) = idx.iter().enumerate().find(|(_, &i)| i as usize >= count) {
        let bi = x.index_buffer().map_or(0, |(bi, _)| bi);
        return Err(Error::new(
            ErrorKind::Invalid,
            None,
            format!("XMF.buffers[{bi}].data[{pos}]"),
            format!("index {bad} is out of range: there are {count} vertices"),
        ));
    }
    if idx.len() % 3 != 0 {
        warnings.push(Warning::new(
            None,
            "XMF.indexBuffer",
            format!(
                "{} indices is not a whole number of triangles: the last {} are dropped",
                idx.len(),
                idx.len() % 3
            ),
        ));
    }

    let mut taken = Vec::new();
    let roles: Vec<(Layout, Place)> = vd
        .layout
        .iter()
        .map(|l| {
            let role = match (l.usage, l.usage_index) {
                (Usage::Position, 0) => Place::Position,
                (Usage::Normal, 0) => Place::Normal,
                (Usage::Tangent, 0) => Place::Tangent,
                (Usage::TexCoord, _) => Place::Uv,
                (Usage::Color, _) => Place::Color,
                _ => Place::Custom,
            };
            let role = if matches!(role, Place::Position | Place::Normal | Place::Tangent)
                && taken.contains(&role)
            {
                Place::Custom
            } else {
                role
            };
            taken.push(role);
            (*l, role)
        })
        .collect();
    // Elements convert on all cores.
    let converted: Vec<(Attr, usize)> = roles
        .par_iter()
        .map(|(l, role)| convert(&vd, l, *role))
        .collect();

    let mut v = Vertices::default();
    let mut fixed = 0usize;
    let mut normal_sign: Option<Vec<f32>> = None;
    let mut tangent_sign: Option<Vec<f32>> = None;
    let mut uv_sets = Vec::new();
    let mut color_sets = Vec::new();
    for (attr, f) in converted {
        fixed += f;
        match attr {
            Attr::Position(p) => v.positions = p,
            Attr::Normal(n, s) => {
                v.normals = Some(n);
                normal_sign = s;
            }
            Attr::Tangent(t, s) => {
                v.tangents = Some(t);
                tangent_sign = s;
            }
            Attr::Uv(n, s) => uv_sets.push((n, s)),
            Attr::Color(n, s) => color_sets.push((n, s)),
            Attr::Custom(name, values) => v.custom.push(CustomAttribute { name, values }),
        }
    }
    if let Some(t) = v.tangents.as_mut() {
        if let Some(signs) = normal_sign.as_ref().or(tangent_sign.as_ref()) {
            for (t, s) in t.iter_mut().zip(signs) {
                t[3] = -*s;
            }
        }
    }
    if v.positions.is_empty() && count > 0 {
        return Err(Error::new(
            ErrorKind::Invalid,
            None,
            "XMF.buffers",
            "no POSITION element",
        ));
    }
    if fixed > 0 {
        warnings.push(Warning::new(
            None,
            "XMF",
            format!("{fixed} zero-length normals or tangents replaced by a unit vector"),
        ));
    }
    uv_sets.sort_by_key(|(n, _)| *n);
    color_sets.sort_by_key(|(n, _)| *n);
    let mut extras = serde_json::Map::new();
    extras.insert(
        "xmf".into(),
        json!({
            "layout": vd.layout.iter().map(|l| format!("{}{} {}", l.usage.name(), l.usage_index, l.ty.name())).collect::<Vec<_>>(),
            "texcoord_sets": uv_sets.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
            "color_sets": color_sets.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
        }),
    );
    v.uvs = uv_sets.into_iter().map(|(_, s)| s).collect();
    let material_names: Vec<_> = x.materials.iter().map(|m| m.name.text()).collect();
    let material_names: Vec<&str> = material_names.iter().map(|n| n.as_ref()).collect();
    let ids: Vec<u8> = color_sets.iter().map(|(n, _)| *n).collect();
    v.color_names = colors::roles(&ids, &material_names);
    v.colors = color_sets.into_iter().map(|(_, s)| s).collect();

    // One primitive per material range; indices outside every range get a primitive of their own.
    let whole = idx.len() - idx.len() % 3;
    let mut primitives = Vec::new();
    let mut material_names: Vec<String> = Vec::new();
    let mut covered = vec![false; whole / 3];
    for (mi, m) in x.materials.iter().enumerate() {
        let (first, num) = (m.first_index.max(0) as usize, m.num_indices.max(0) as usize);
        let end = first.saturating_add(num).min(whole);
        if first.saturating_add(num) > whole || m.first_index < 0 || m.num_indices < 0 {
            warnings.push(Warning::new(
                None,
                format!("XMF.materials[{mi}]"),
                format!(
                    "range {}..+{} runs past the {whole} indices: cut",
                    m.first_index, m.num_indices
                ),
            ));
        }
        let (first, end) = (first.min(end) / 3 * 3, end / 3 * 3);
        let name = m.name.text().into_owned();
        let slot = material_names
            .iter()
            .position(|n| *n == name)
            .unwrap_or_else(|| {
                material_names.push(name);
                material_names.len() - 1
            });
        covered[first / 3..end / 3]
            .iter_mut()
            .for_each(|c| *c = true);
        if end > first {
            primitives.push(Primitive {
                indices: idx[first..end].to_vec(),
                material: Some(slot),
            });
        }
    }
    let rest: Vec<u32> = covered
        .iter()
        .enumerate()
        .filter(|(_, &c)| !c)
        .flat_map(|(t, _)| idx[t * 3..t * 3 + 3].iter().copied())
        .collect();
    if !rest.is_empty() {
        if !x.materials.is_empty() {
            warnings.push(Warning::new(
                None,
                "XMF.materials",
                format!("{} triangles are in no material range", rest.len() / 3),
            ));
        }
        primitives.push(Primitive {
            indices: rest,
            material: None,
        });
    }
    Ok((
        Mesh {
            name: name.to_string(),
            vertices: v,
            primitives,
            extras,
            morph_targets: Vec::new(),
        },
        material_names,
        warnings,
    ))
}

/// The file as a scene of one node holding its mesh.
pub fn to_scene(x: &Xmf<'_>, name: &str, role: Role) -> Result<(Scene, Vec<Warning>)> {
    let (mesh, names, warnings) = to_mesh(x, name)?;
    let materials = names
        .into_iter()
        .map(|n| {
            let mut extras = serde_json::Map::new();
            extras.insert("xmf_name".into(), json!(n));
            model::Material {
                name: n,
                extras,
                ..Default::default()
            }
        })
        .collect();
    let mut node = model::Node::new(name);
    node.mesh = Some(0);
    node.role = role;
    Ok((
        Scene {
            name: name.to_string(),
            nodes: vec![node],
            meshes: vec![mesh],
            materials,
            ..Default::default()
        },
        warnings,
    ))
}

/// The name a material gets in an XMF: the one it was read under (`xmf_name`), else its own.
fn xmf_name(m: &model::Material) -> &str {
    m.extras
        .get("xmf_name")
        .and_then(|n| n.as_str())
        .unwrap_or(&m.name)
}

/// The materials a visual XMF written by [`from_mesh`] names, each once, in the order of its
/// ranges (a primitive without one is `unnamed`); none when no primitive has one.
pub fn material_names(mesh: &Mesh, materials: &[model::Material]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    if !mesh.primitives.iter().any(|p| p.material.is_some()) {
        return out;
    }
    for p in &mesh.primitives {
        let name = p
            .material
            .and_then(|m| materials.get(m))
            .map_or("unnamed", xmf_name);
        if !out.iter().any(|n| n == name) {
            out.push(name.to_string());
        }
    }
    out
}

/// Builds a game-ready XMF from a neutral mesh (see [`write::Target`] for the two kinds).
///
/// A visual mesh gets one vertex buffer declared as POSITION FLOAT3, NORMAL D3DCOLOR (fourth byte the
/// bitangent sign), TANGENT D3DCOLOR, TEXCOORDn FLOAT2 and COLORn D3DCOLOR as present, u16 indices when
/// they fit else u32, one material range per primitive, zlib-compressed buffers, descriptor format 0x20.
/// A collision mesh gets exactly what the spec demands: one implicit FLOAT3 POSITION buffer, u32 indices,
/// no materials.
pub fn from_mesh(
    mesh: &Mesh,
    materials: &[model::Material],
    target: write::Target,
) -> Result<(Xmf<'static>, Vec<Warning>)> {
    let mut warnings = Vec::new();
    let v = &mesh.vertices;
    let n = v.len();
    let all: Vec<u32> = mesh
        .primitives
        .iter()
        .flat_map(|p| p.indices.iter().copied())
        .collect();
    if n == 0 || all.len() < 3 {
        return Err(Error::refused(
            "mesh",
            format!("mesh {:?} has no triangles to write", mesh.name),
        ));
    }
    if let Some(bad) = all.iter().find(|&&i| i as usize >= n) {
        return Err(Error::refused(
            "mesh.indices",
            format!("index {bad} is out of range: there are {n} vertices"),
        ));
    }
    if let Some(i) = v
        .positions
        .iter()
        .position(|p| p.iter().any(|c| !c.is_finite()))
    {
        return Err(Error::refused(
            format!("mesh.positions[{i}]"),
            "position is not finite",
        ));
    }
    if all.len() % 3 != 0 || mesh.primitives.iter().any(|p| p.indices.len() % 3 != 0) {
        return Err(Error::refused(
            "mesh.indices",
            "a primitive's index count is not a multiple of 3",
        ));
    }
    if u32::try_from(n).is_err() || u32::try_from(all.len()).is_err() {
        return Err(Error::refused("mesh", "more than 2^32 vertices or indices"));
    }
    let pos_file: Vec<[f32; 3]> = v.positions.iter().map(|p| [-p[0], p[1], p[2]]).collect();
    let (lo, hi) = pos_file.iter().fold(
        (Vec3::splat(f32::MAX), Vec3::splat(f32::MIN)),
        |(lo, hi), p| (lo.min(Vec3::from(*p)), hi.max(Vec3::from(*p))),
    );

    let collision = target == write::Target::Collision;
    let mut buffers = Vec::new();
    let (pos_file, all) = if collision {
        weld(&pos_file, &all)
    } else {
        (pos_file, all)
    };
    let n = pos_file.len();
    let max_index = *all.iter().max().ok_or_else(|| {
        Error::refused(
            "mesh.indices",
            if collision {
                "the collision mesh has no triangles left: welding removed every degenerate one"
            } else {
                "the mesh has no triangles"
            },
        )
    })?;
    if collision {
        if v.normals.is_some() || !v.uvs.is_empty() || !v.colors.is_empty() {
            warnings.push(Warning::new(
                None,
                "mesh",
                "a collision mesh keeps positions only: normals, UVs and colours dropped",
            ));
        }
        let bytes: &[u8] = bytemuck::cast_slice(&pos_file);
        let mut b = new_buffer(0, decl::DeclType::Float3 as i32, n as u32, 12, bytes);
        b.bounds = [
            F64Bits::new(lo.min_element() as f64),
            F64Bits::new(hi.max_element() as f64),
        ];
        buffers.push(b);
    } else {
        let mut elements = vec![(DeclType::Float3, Usage::Position, 0u8)];
        if v.normals.is_some() {
            elements.push((DeclType::D3dColor, Usage::Normal, 0));
        }
        if v.tangents.is_some() {
            elements.push((DeclType::D3dColor, Usage::Tangent, 0));
        }
        // The indices the sets were read with, when the mesh carries them.
        let given_ids = |key: &str, len: usize| -> Option<Vec<u8>> {
            mesh.extras
                .get("xmf")
                .and_then(|x| x.get(key))
                .and_then(|a| serde_json::from_value::<Vec<u8>>(a.clone()).ok())
                .filter(|g| g.len() == len)
        };
        let in_order = |len: usize| (0..len as u8).collect::<Vec<u8>>();
        let uv_ids =
            given_ids("texcoord_sets", v.uvs.len()).unwrap_or_else(|| in_order(v.uvs.len()));
        // Else the colour sets take the indices their roles name.
        let color_ids = given_ids("color_sets", v.colors.len())
            .or_else(|| colors::ids_from_roles(&v.color_names, v.colors.len()))
            .unwrap_or_else(|| in_order(v.colors.len()));
        elements.extend(
            uv_ids
                .iter()
                .map(|&i| (DeclType::Float2, Usage::TexCoord, i)),
        );
        elements.extend(
            color_ids
                .iter()
                .map(|&i| (DeclType::D3dColor, Usage::Color, i)),
        );
        if elements.len() > MAX_ELEMENTS {
            return Err(Error::refused(
                "mesh",
                format!(
                    "{} vertex attributes; XMF declares at most 16",
                    elements.len()
                ),
            ));
        }
        if !v.custom.is_empty() {
            let names: Vec<&str> = v.custom.iter().map(|c| c.name.as_str()).collect();
            warnings.push(Warning::new(
                None,
                "mesh",
                format!(
                    "attributes XMF has no place for are dropped: {}",
                    names.join(", ")
                ),
            ));
        }
        let stride: usize = elements.iter().map(|e| e.0.size()).sum();
        let mut data = Vec::with_capacity(stride * n);
        let unit = |x: f32| x * 0.5 + 0.5;
        for i in 0..n {
            let p = pos_file[i];
            DeclType::Float3.encode([p[0], p[1], p[2], 1.0], &mut data);
            // The file's sign byte is the negated glTF sign (see the module docs).
            let w = v.tangents.as_ref().map_or(1.0, |t| t[i][3]);
            if let Some(ns) = &v.normals {
                let m = ns[i];
                DeclType::D3dColor.encode(
                    [
                        unit(-m[0]),
                        unit(m[1]),
                        unit(m[2]),
                        if w > 0.0 { 0.0 } else { 1.0 },
                    ],
                    &mut data,
                );
            }
            if let Some(ts) = &v.tangents {
                let t = ts[i];
                DeclType::D3dColor.encode([unit(t[0]), unit(-t[1]), unit(-t[2]), 0.0], &mut data);
            }
            for s in &v.uvs {
                DeclType::Float2.encode([s[i][0], s[i][1], 0.0, 1.0], &mut data);
            }
            for s in &v.colors {
                DeclType::D3dColor.encode(s[i], &mut data);
            }
        }
        let mut b = new_buffer(0, FORMAT_DECLARED, n as u32, stride as u32, &data);
        b.elements = elements
            .iter()
            .map(|&(ty, usage, usage_index)| Element {
                ty: ty as i32,
                usage: usage.to_raw(),
                usage_index,
                pad: [0; 2],
            })
            .collect();
        buffers.push(b);
    }

    let wide = collision || max_index > u16::MAX as u32;
    let index_bytes: Vec<u8> = if wide {
        bytemuck::cast_slice(&all).to_vec()
    } else {
        all.iter().flat_map(|&i| (i as u16).to_le_bytes()).collect()
    };
    let mut ib = new_buffer(
        INDEX_BUFFER_TYPE,
        if wide { INDEX_U32 } else { INDEX_U16 },
        all.len() as u32,
        if wide { 4 } else { 2 },
        &index_bytes,
    );
    ib.bounds = [
        F64Bits::new(all.iter().min().copied().unwrap_or(0) as f64),
        F64Bits::new(max_index as f64),
    ];
    buffers.push(ib);

    let mut xmf_materials = Vec::new();
    // A mesh with no material at all stays without (XMF allows it); otherwise every range is named.
    if !collision && mesh.primitives.iter().any(|p| p.material.is_some()) {
        let mut first = 0usize;
        for p in &mesh.primitives {
            let name = match p.material.and_then(|m| materials.get(m)) {
                Some(m) => xmf_name(m).to_string(),
                None => {
                    warnings.push(Warning::new(
                        None,
                        "mesh.primitives",
                        "a primitive has no material: named \"unnamed\"",
                    ));
                    "unnamed".to_string()
                }
            };
            if !name.contains('.') {
                warnings.push(Warning::new(None, "mesh.materials", format!("material {name:?} is not collection.material: X4 looks names up in material_library.xml")));
            }
            let fixed = FixedString::from_text(&name, MATERIAL_NAME_SIZE).ok_or_else(|| {
                Error::refused(
                    "mesh.materials",
                    format!("material name {name:?} does not fit 127 bytes"),
                )
            })?;
            let num = p.indices.len();
            // Consecutive primitives of one material become one range.
            match xmf_materials.last_mut() {
                Some(Material {
                    name: last,
                    num_indices,
                    ..
                }) if *last == fixed => *num_indices += num as i32,
                _ => xmf_materials.push(Material {
                    first_index: first as i32,
                    num_indices: num as i32,
                    name: fixed,
                    extra: Bytes::default(),
                }),
            }
            first += num;
        }
        if xmf_materials.len() > 255 {
            return Err(Error::refused(
                "mesh.materials",
                format!(
                    "{} material ranges; XMF holds at most 255",
                    xmf_materials.len()
                ),
            ));
        }
    }

    let center = (lo + hi) * 0.5;
    let size = hi - lo;
    let header = Header {
        version: 3,
        big_endian: 0,
        desc_offset: 0x40,
        pad7: 0,
        desc_size: DESC_SIZE as u8,
        material_size: MATERIAL_SIZE as u8,
        culling: 1,
        right_handed: 0,
        vertex_count: n as u32,
        index_count: all.len() as u32,
        primitive_type: PRIMITIVE_TRIANGLE_LIST,
        optimized: 0,
        bbox_center: center.to_array().map(F32Bits::new),
        bbox_size: size.to_array().map(F32Bits::new),
        reserved: Bytes::default(),
    };
    let x = Xmf {
        header,
        buffers,
        materials: xmf_materials,
        filler: Vec::new(),
    };
    if collision {
        write::check_collision_rule(&x)?;
    }
    Ok((x, warnings))
}

/// Merges vertices at the same position (a collision mesh needs no seams) and drops triangles that
/// become degenerate.
pub fn weld(positions: &[[f32; 3]], indices: &[u32]) -> (Vec<[f32; 3]>, Vec<u32>) {
    let mut map = std::collections::HashMap::with_capacity(positions.len());
    let mut out = Vec::with_capacity(positions.len());
    let remap: Vec<u32> = positions
        .iter()
        .map(|p| {
            *map.entry(p.map(|c| if c == 0.0 { 0 } else { c.to_bits() }))
                .or_insert_with(|| {
                    out.push(*p);
                    out.len() as u32 - 1
                })
        })
        .collect();
    let tris = indices
        .chunks_exact(3)
        .map(|t| {
            [
                remap[t[0] as usize],
                remap[t[1] as usize],
                remap[t[2] as usize],
            ]
        })
        .filter(|t| t[0] != t[1] && t[1] != t[2] && t[0] != t[2])
        .flatten()
        .collect();
    (out, tris)
}

fn new_buffer(kind: i32, format: i32, items: u32, item_size: u32, data: &[u8]) -> Buffer<'static> {
    use flate2::{write::ZlibEncoder, Compression};
    use std::io::Write;
    let mut z = ZlibEncoder::new(Vec::with_capacity(data.len() / 2), Compression::default());
    // Writing to a Vec cannot fail: an error would only leave the stream short.
    let _ = z.write_all(data);
    let stored = z.finish().unwrap_or_default();
    Buffer {
        kind,
        usage_index: 0,
        data_offset: None,
        compressed: 1,
        pad: 0,
        format,
        items,
        item_size,
        sections: 1,
        bounds: [F64Bits::default(); 2],
        elements: Vec::new(),
        unused_elements: Bytes::default(),
        extra: Bytes::default(),
        data: Bytes::owned(stored),
    }
}
