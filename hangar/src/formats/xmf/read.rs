//! Reading an XMF file: zero-copy, every field checked against the bytes that remain.

use super::*;
use crate::bytes::Cursor;
use crate::error::{ErrorKind, Result, Warning};

/// Parses `data` as XMF. Buffer bytes are borrowed, not inflated: see [`super::mesh`] for that.
pub fn read(data: &[u8]) -> Result<(Xmf<'_>, Vec<Warning>)> {
    let mut warnings = Vec::new();
    let mut c = Cursor::new(data, "XMF");
    let magic = c.bytes(4, "magic")?;
    if magic != MAGIC {
        return Err(c.error_at(
            0,
            "magic",
            format!("expected \"XUMF\", found {:02x?}", magic),
        ));
    }
    let version = c.u8("version")?;
    let big_endian = c.u8("bigEndian")?;
    let desc_offset = c.u8("dataBufferDescOffset")?;
    let pad7 = c.u8("pad")?;
    let num_buffers = c.u8("numDataBuffers")? as usize;
    let desc_size = c.u8("dataBufferDescSize")?;
    let num_materials = c.u8("numMaterials")? as usize;
    let material_size = c.u8("materialSize")?;
    if version != 3 {
        warnings.push(c.warning(
            4,
            "version",
            format!("version {version}; every known file has 3"),
        ));
    }
    match big_endian {
        0 => {}
        1 => c.set_big_endian(true),
        b => warnings.push(c.warning(
            5,
            "bigEndian",
            format!("value {b} is neither 0 nor 1; read as little-endian"),
        )),
    }
    if (desc_offset as usize) < 12 {
        return Err(c.error_at(
            6,
            "dataBufferDescOffset",
            format!("{desc_offset} points inside the 12 fixed header bytes"),
        ));
    }
    if (desc_size as usize) < DESC_SIZE {
        warnings.push(c.warning(
            9,
            "dataBufferDescSize",
            format!("{desc_size} bytes, less than 0xBC: the rest reads as zero"),
        ));
    }
    if (material_size as usize) < MATERIAL_SIZE && num_materials > 0 {
        warnings.push(c.warning(
            11,
            "materialSize",
            format!("{material_size} bytes, less than 0x88: the rest reads as zero"),
        ));
    }

    // Header fields 12..54, read from a zero-padded copy when descOffset cuts them short.
    let header_len = (desc_offset as usize).min(HEADER_FIELDS_END);
    let header_bytes = c.within("header", |c| {
        c.seek(0, "")?;
        c.bytes(desc_offset as usize, "")
    })?;
    if header_len < HEADER_FIELDS_END {
        warnings.push(c.warning(
            6,
            "dataBufferDescOffset",
            format!(
                "{desc_offset} leaves no room for header bytes {header_len}..54: they read as zero"
            ),
        ));
    }
    let mut padded = [0u8; HEADER_FIELDS_END];
    padded[..header_len].copy_from_slice(&header_bytes[..header_len]);
    let mut h = Cursor::new(&padded, "XMF");
    h.set_big_endian(c.big_endian());
    h.seek(12, "")?;
    let culling = h.u8("culling")?;
    let right_handed = h.u8("rightHanded")?;
    let vertex_count = h.u32("vertexCount")?;
    let index_count = h.u32("indexCount")?;
    let primitive_type = h.u32("primitiveType")?;
    let optimized = h.u32("optimized")?;
    let mut f3 = |name| -> Result<[F32Bits; 3]> {
        Ok([
            F32Bits(h.u32(name)?),
            F32Bits(h.u32(name)?),
            F32Bits(h.u32(name)?),
        ])
    };
    let bbox_center = f3("bboxCenter")?;
    let bbox_size = f3("bboxSize")?;
    let reserved = Bytes::unless_zero(header_bytes.get(HEADER_FIELDS_END..).unwrap_or_default());
    let header = Header {
        version,
        big_endian,
        desc_offset,
        pad7,
        desc_size,
        material_size,
        culling,
        right_handed,
        vertex_count,
        index_count,
        primitive_type,
        optimized,
        bbox_center,
        bbox_size,
        reserved,
    };

    // Descriptors.
    let mut descs = Vec::with_capacity(num_buffers);
    c.seek(desc_offset as usize, "buffers")?;
    for i in 0..num_buffers {
        let start = c.pos();
        let raw = c.within_item("buffers", i, |c| c.bytes(desc_size as usize, ""))?;
        descs.push(c.within_item("buffers", i, |c| read_desc(c, raw, start))?);
    }

    // Material ranges.
    let mut materials = Vec::with_capacity(num_materials);
    for i in 0..num_materials {
        let raw = c.within_item("materials", i, |c| c.bytes(material_size as usize, ""))?;
        let mut padded = [0u8; MATERIAL_SIZE];
        let n = raw.len().min(MATERIAL_SIZE);
        padded[..n].copy_from_slice(&raw[..n]);
        let mut m = Cursor::new(&padded, "");
        m.set_big_endian(c.big_endian());
        let first_index = m.i32("firstIndex")?;
        let num_indices = m.i32("numIndices")?;
        let name = FixedString {
            bytes: m.bytes(MATERIAL_NAME_SIZE, "name")?.to_vec(),
        };
        let extra = Bytes::unless_zero(raw.get(MATERIAL_SIZE..).unwrap_or_default());
        materials.push(Material {
            first_index,
            num_indices,
            name,
            extra,
        });
    }

    // Buffer data: each at base + dataOffset.
    let base = c.pos();
    let mut buffers = Vec::with_capacity(num_buffers);
    let mut packed_end = 0usize;
    let mut covered: Vec<(usize, usize)> = Vec::with_capacity(num_buffers);
    for (i, d) in descs.into_iter().enumerate() {
        let path = |f: &str| format!("{}.{f}", c.path_to(&format!("buffers[{i}]")));
        if d.data_offset < 0 || d.size < 0 {
            return Err(Error::invalid(
                d.at as u64 + 8,
                path(if d.data_offset < 0 {
                    "dataOffset"
                } else {
                    "compressedDataSize"
                }),
                "negative value",
            ));
        }
        let (off, size) = (d.data_offset as usize, d.size as usize);
        let start = base + off;
        let end = start
            .checked_add(size)
            .filter(|&e| e <= data.len())
            .ok_or_else(|| {
                let mut e = Error::invalid(
                    d.at as u64 + 8,
                    path("compressedDataSize"),
                    format!(
                        "data at {start} of {size} bytes runs past the end of the file ({} bytes)",
                        data.len()
                    ),
                );
                e.kind = ErrorKind::Truncated;
                e
            })?;
        let data_offset = if off == packed_end {
            None
        } else {
            Some(off as u32)
        };
        packed_end = off + size;
        if covered.iter().any(|&(s, e)| start < e && s < end) {
            warnings.push(Warning::new(
                Some(start as u64),
                path("data"),
                "overlaps another buffer's data",
            ));
        }
        covered.push((start, end));
        let mut b = d.buffer;
        b.data = Bytes::borrowed(&data[start..end]);
        b.data_offset = data_offset;
        if b.compressed > 1 {
            warnings.push(Warning::new(
                Some(d.at as u64 + 12),
                path("compressed"),
                format!("value {}: treated as compressed", b.compressed),
            ));
        }
        buffers.push(b);
    }
    // What inflating every buffer would allocate, against what this file can honestly hold (buffers
    // sharing one zlib stream could otherwise each claim its full expansion).
    let inflated = buffers
        .iter()
        .filter(|b| b.compressed != 0)
        // A claim past what its own stream could hold is refused when inflated, with its place.
        .map(|b| {
            let honest = b
                .data
                .len()
                .saturating_mul(super::mesh::MAX_INFLATE_RATIO)
                .saturating_add(64);
            b.decoded_len().unwrap_or(usize::MAX).min(honest)
        })
        .fold(0usize, usize::saturating_add);
    let budget = inflate_budget(data.len());
    if inflated > budget {
        return Err(Error::new(
            ErrorKind::Refused,
            None,
            "XMF.buffers",
            format!(
                "the buffers inflate to {inflated} bytes in all, over the limit of 64 MiB + 16 x the {}-byte file ({budget} bytes)",
                data.len()
            ),
        ));
    }

    // Bytes of the data area no buffer covers.
    covered.sort_unstable();
    let mut filler = Vec::new();
    let mut pos = base;
    for &(s, e) in covered
        .iter()
        .chain(std::iter::once(&(data.len(), data.len())))
    {
        if s > pos {
            filler.push(Filler {
                offset: (pos - base) as u32,
                bytes: Bytes::borrowed(&data[pos..s]),
            });
            warnings.push(Warning::new(
                Some(pos as u64),
                "XMF.data",
                format!("{} bytes that no buffer covers (kept)", s - pos),
            ));
        }
        pos = pos.max(e);
    }

    let xmf = Xmf {
        header,
        buffers,
        materials,
        filler,
    };
    check_header_counts(&xmf, &mut warnings);
    Ok((xmf, warnings))
}

use crate::error::Error;

struct Desc {
    at: usize,
    data_offset: i32,
    size: i32,
    buffer: Buffer<'static>,
}

fn read_desc(c: &Cursor<'_>, raw: &[u8], at: usize) -> Result<Desc> {
    let mut padded = [0u8; DESC_SIZE];
    let n = raw.len().min(DESC_SIZE);
    padded[..n].copy_from_slice(&raw[..n]);
    let mut d = Cursor::new(&padded, "");
    d.set_big_endian(c.big_endian());
    let kind = d.i32("type")?;
    let usage_index = d.i32("usageIndex")?;
    let data_offset = d.i32("dataOffset")?;
    let compressed = d.u32("compressed")?;
    let pad = d.u32("pad")?;
    let format = d.i32("format")?;
    let size = d.i32("compressedDataSize")?;
    let items = d.u32("itemsPerSection")?;
    let item_size = d.u32("itemSize")?;
    let sections = d.u32("numSections")?;
    let bounds = [F64Bits(d.u64("bounds")?), F64Bits(d.u64("bounds")?)];
    let num_elements = d.u32("numVertexElements")?;
    if num_elements as usize > MAX_ELEMENTS {
        return Err(c.error_at(
            at + 56,
            "numVertexElements",
            format!("{num_elements} elements, but the array holds 16"),
        ));
    }
    let mut elements = Vec::with_capacity(num_elements as usize);
    for _ in 0..num_elements {
        let ty = d.i32("type")?;
        let usage = d.u8("usage")?;
        let usage_index = d.u8("usageIndex")?;
        let pad = d.array::<2>("pad")?;
        elements.push(Element {
            ty,
            usage,
            usage_index,
            pad,
        });
    }
    let unused_elements = Bytes::unless_zero(d.bytes(DESC_SIZE - d.pos(), "")?);
    let extra = Bytes::unless_zero(raw.get(DESC_SIZE..).unwrap_or_default());
    let buffer = Buffer {
        kind,
        usage_index,
        data_offset: None,
        compressed,
        pad,
        format,
        items,
        item_size,
        sections,
        bounds,
        elements,
        unused_elements,
        extra,
        data: Bytes::default(),
    };
    Ok(Desc {
        at,
        data_offset,
        size,
        buffer,
    })
}

/// Third-party exporters leave the header counts uninitialised: the descriptors are the truth.
fn check_header_counts(x: &Xmf<'_>, warnings: &mut Vec<Warning>) {
    let vertices = x.buffers.iter().find(|b| !b.is_index()).map(|b| b.items);
    let indices = x.index_buffer().map(|(_, b)| b.items);
    if let Some(v) = vertices {
        if x.header.vertex_count != v {
            // Third-party exporters leave the header counts uninitialised; the buffers say.
            warnings.push(Warning::note(
                Some(14),
                "XMF.vertexCount",
                format!(
                    "header says {}, the vertex buffer has {v}",
                    x.header.vertex_count
                ),
            ));
        }
    }
    if let Some(i) = indices {
        if x.header.index_count != i {
            warnings.push(Warning::note(
                Some(18),
                "XMF.indexCount",
                format!(
                    "header says {}, the index buffer has {i}",
                    x.header.index_count
                ),
            ));
        }
    }
}

/// The most bytes a file's compressed buffers may inflate to in all: 64 MiB + 16 x the file.
pub fn inflate_budget(file_len: usize) -> usize {
    file_len.saturating_mul(16).saturating_add(64 << 20)
}
