//! Writing an XMF file: the exact bytes of an [`Xmf`], and the rules a game-ready file must keep.

use super::*;
use crate::bytes::Writer;
use crate::error::{Error, Result};
use std::path::Path;

/// What the game will use a file as, from its name: `*-collision.xmf` (also `-collision1.xmf`) is a
/// collision mesh, everything else a visual mesh.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Visual,
    Collision,
}

impl Target {
    pub fn from_path(path: &Path) -> Target {
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        let base = stem.trim_end_matches(|c: char| c.is_ascii_digit());
        if base.ends_with("-collision") || base.ends_with("_collision") {
            Target::Collision
        } else {
            Target::Visual
        }
    }
}

/// Serialises `x` exactly: a file read by [`super::read::read`] comes back byte for byte.
/// Fields that cannot be stored (a count past 255, a value that falls outside a shortened
/// descriptor) are refused rather than cut.
pub fn write(x: &Xmf<'_>) -> Result<Vec<u8>> {
    let h = &x.header;
    let nb = u8::try_from(x.buffers.len()).map_err(|_| {
        Error::refused(
            "XMF.buffers",
            format!("{} buffers; the header counts at most 255", x.buffers.len()),
        )
    })?;
    let nm = u8::try_from(x.materials.len()).map_err(|_| {
        Error::refused(
            "XMF.materials",
            format!(
                "{} materials; the header counts at most 255",
                x.materials.len()
            ),
        )
    })?;
    let be = h.big_endian == 1;

    let mut w = Writer::new(be);
    w.bytes(MAGIC);
    w.bytes(&[
        h.version,
        h.big_endian,
        h.desc_offset,
        h.pad7,
        nb,
        h.desc_size,
        nm,
        h.material_size,
    ]);
    w.u8(h.culling);
    w.u8(h.right_handed);
    w.u32(h.vertex_count);
    w.u32(h.index_count);
    w.u32(h.primitive_type);
    w.u32(h.optimized);
    for v in h.bbox_center.iter().chain(&h.bbox_size) {
        w.u32(v.0);
    }
    w.bytes(&h.reserved);
    fit(&mut w.buf, h.desc_offset as usize, 0, "XMF.header")?;

    // Data offsets: explicit where the file had them, else right after the previous buffer.
    let mut offsets = Vec::with_capacity(x.buffers.len());
    let mut packed = 0usize;
    for b in &x.buffers {
        let off = b.data_offset.map_or(packed, |o| o as usize);
        offsets.push(off);
        packed = off.saturating_add(b.data.len());
    }
    // Offsets (from a dump anyone can edit) only place the bytes the file holds: a data area much
    // larger than its contents would be a multi-GiB file of zeros.
    let held = x
        .buffers
        .iter()
        .map(|b| b.data.len())
        .chain(x.filler.iter().map(|f| f.bytes.len()))
        .fold(0usize, usize::saturating_add);
    let limit = held.saturating_mul(2).saturating_add(MAX_DATA_GAP);
    let area = offsets
        .iter()
        .zip(&x.buffers)
        .map(|(o, b)| o.saturating_add(b.data.len()))
        .chain(
            x.filler
                .iter()
                .map(|f| (f.offset as usize).saturating_add(f.bytes.len())),
        )
        .max()
        .unwrap_or(0);
    if area > limit {
        return Err(Error::refused(
            "XMF.buffers",
            format!(
                "data offsets span {area} bytes for {held} bytes of data: over the limit of twice the data plus {MAX_DATA_GAP}"
            ),
        ));
    }

    for (i, (b, &off)) in x.buffers.iter().zip(&offsets).enumerate() {
        let path = format!("XMF.buffers[{i}]");
        if b.elements.len() > MAX_ELEMENTS {
            return Err(Error::refused(
                path,
                format!(
                    "{} declaration elements; the array holds 16",
                    b.elements.len()
                ),
            ));
        }
        let size = i32::try_from(b.data.len())
            .map_err(|_| Error::refused(&path, "data larger than 2 GiB"))?;
        let off =
            i32::try_from(off).map_err(|_| Error::refused(&path, "data offset past 2 GiB"))?;
        let start = w.len();
        w.i32(b.kind);
        w.i32(b.usage_index);
        w.i32(off);
        w.u32(b.compressed);
        w.u32(b.pad);
        w.i32(b.format);
        w.i32(size);
        w.u32(b.items);
        w.u32(b.item_size);
        w.u32(b.sections);
        w.u64(b.bounds[0].0);
        w.u64(b.bounds[1].0);
        w.u32(b.elements.len() as u32);
        for e in &b.elements {
            w.i32(e.ty);
            w.u8(e.usage);
            w.u8(e.usage_index);
            w.bytes(&e.pad);
        }
        let unused = (MAX_ELEMENTS - b.elements.len()) * 8;
        let mut garbage = b.unused_elements.to_vec();
        garbage.resize(unused, 0);
        w.bytes(&garbage);
        w.bytes(&b.extra);
        fit(&mut w.buf, h.desc_size as usize, start, &path)?;
    }

    for (i, m) in x.materials.iter().enumerate() {
        let path = format!("XMF.materials[{i}]");
        let start = w.len();
        w.i32(m.first_index);
        w.i32(m.num_indices);
        let mut name = m.name.bytes.clone();
        if name.len() > MATERIAL_NAME_SIZE
            || (name.len() == MATERIAL_NAME_SIZE && !name.contains(&0))
        {
            return Err(Error::refused(
                format!("{path}.name"),
                format!(
                    "name {:?} does not fit the 128-byte field with its NUL",
                    m.name.text()
                ),
            ));
        }
        name.resize(MATERIAL_NAME_SIZE, 0);
        w.bytes(&name);
        w.bytes(&m.extra);
        fit(&mut w.buf, h.material_size as usize, start, &path)?;
    }

    let base = w.len();
    let end = offsets
        .iter()
        .zip(&x.buffers)
        .map(|(o, b)| o + b.data.len())
        .chain(x.filler.iter().map(|f| f.offset as usize + f.bytes.len()))
        .max()
        .unwrap_or(0);
    w.buf.resize(base + end, 0);
    for f in &x.filler {
        let s = base + f.offset as usize;
        w.buf[s..s + f.bytes.len()].copy_from_slice(&f.bytes);
    }
    for (b, &o) in x.buffers.iter().zip(&offsets) {
        w.buf[base + o..base + o + b.data.len()].copy_from_slice(&b.data);
    }
    Ok(w.buf)
}

/// The most zero bytes offsets may leave between the pieces of a data area beyond its contents.
const MAX_DATA_GAP: usize = 1 << 20;

/// Pads or cuts the record that began at `start` to `size` bytes; cutting is refused unless it drops
/// only zeros (a field the record has no room for).
fn fit(buf: &mut Vec<u8>, size: usize, start: usize, path: &str) -> Result<()> {
    let want = start + size;
    if buf.len() > want {
        if buf[want..].iter().any(|&b| b != 0) {
            return Err(Error::refused(
                path,
                format!("non-zero fields past the record size of {size} bytes"),
            ));
        }
        buf.truncate(want);
    } else {
        buf.resize(want, 0);
    }
    Ok(())
}

/// The rule the game enforces on collision meshes (XMF spec): exactly one vertex attribute,
/// POSITION as FLOAT3, stored in the descriptor's own type/usageIndex/format fields (no declaration),
/// and no materials. Breaking it crashes the game, so the writer refuses.
pub fn check_collision_rule(x: &Xmf<'_>) -> Result<()> {
    let mut problems = Vec::new();
    let vertex: Vec<(usize, &Buffer<'_>)> = x
        .buffers
        .iter()
        .enumerate()
        .filter(|(_, b)| !b.is_index())
        .collect();
    if vertex.len() != 1 {
        problems.push(format!(
            "it has {} vertex buffers, the rule wants exactly 1",
            vertex.len()
        ));
    }
    for (i, b) in vertex {
        if !b.elements.is_empty() {
            let names: Vec<String> = b
                .elements
                .iter()
                .map(|e| decl::Usage::from_raw(e.usage).name())
                .collect();
            problems.push(format!(
                "buffers[{i}] declares {} elements ({}), the rule wants none",
                b.elements.len(),
                names.join(", ")
            ));
        }
        if decl::Usage::from_buffer_type(b.kind) != decl::Usage::Position || b.usage_index != 0 {
            problems.push(format!(
                "buffers[{i}] has type {} usageIndex {}, the rule wants POSITION 0",
                b.kind, b.usage_index
            ));
        }
        if b.format != decl::DeclType::Float3 as i32 || b.item_size != 12 {
            problems.push(format!(
                "buffers[{i}] has format {} and itemSize {}, the rule wants FLOAT3 (2) and 12",
                b.format, b.item_size
            ));
        }
    }
    if !x.materials.is_empty() {
        problems.push(format!(
            "it has {} materials, the rule wants none",
            x.materials.len()
        ));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Error::refused(
            "XMF",
            format!(
                "refusing to write a collision mesh the game would crash on: {}",
                problems.join("; ")
            ),
        ))
    }
}
