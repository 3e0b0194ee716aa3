//! XMF: X Rebirth / X4 static meshes ("Xu Mesh File").
//!
//! The layout is in `shared/seeds` (XMF spec) with the real-file facts of FORMAT-NOTES.md:
//! a header, `numDataBuffers` buffer descriptors, `numMaterials` material ranges, then the buffer bytes
//! (zlib streams when `compressed` is 1).
//!
//! - This file: the on-disk structures, kept raw and reversible (garbage bytes included).
//! - [`read`]: bytes -> [`Xmf`], zero-copy, tolerant (warnings for what real files get wrong).
//! - [`write`](mod@write): [`Xmf`] -> bytes, and the game-ready builder with its strict rules.
//! - [`decl`]: Direct3D declaration types.
//! - [`mesh`]: decoding buffers into the neutral model and back.
//! - [`check`]: `hangar validate` rules.

pub mod check;
pub mod colors;
pub mod decl;
pub mod document;
pub mod mesh;
pub mod read;
pub mod write;

use crate::raw::{Bytes, F32Bits, F64Bits, FixedString};
use serde::{Deserialize, Serialize};

pub const MAGIC: &[u8; 4] = b"XUMF";
/// Size of a full buffer descriptor; files may declare a smaller one (the rest reads as zero).
pub const DESC_SIZE: usize = 0xBC;
/// Size of a material range record.
pub const MATERIAL_SIZE: usize = 0x88;
/// Bytes of the material name field.
pub const MATERIAL_NAME_SIZE: usize = 128;
/// The header fields hangar names end here; the rest up to `descOffset` is kept raw.
pub const HEADER_FIELDS_END: usize = 54;
pub const MAX_ELEMENTS: usize = 16;

/// `type` of an index buffer.
pub const INDEX_BUFFER_TYPE: i32 = 0x1E;
pub const INDEX_U16: i32 = 0x1E;
pub const INDEX_U32: i32 = 0x1F;
/// `format` of a vertex buffer that carries a declaration.
pub const FORMAT_DECLARED: i32 = 0x20;
pub const PRIMITIVE_TRIANGLE_LIST: u32 = 4;

/// A whole XMF file, every byte accounted for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Xmf<'a> {
    pub header: Header,
    pub buffers: Vec<Buffer<'a>>,
    pub materials: Vec<Material>,
    /// Bytes of the data area that no buffer covers (gaps, trailing bytes), by offset from its start.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub filler: Vec<Filler<'a>>,
}

/// The file header. Counts of buffers and materials are the lengths of [`Xmf::buffers`] and
/// [`Xmf::materials`]; byte offsets in the comments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// 4: 3 in every known file.
    pub version: u8,
    /// 5: 1 for a big-endian (console) file.
    pub big_endian: u8,
    /// 6: where the first descriptor starts (0x40).
    pub desc_offset: u8,
    /// 7: a pad byte that exporters leave uninitialised.
    pub pad7: u8,
    /// 9: bytes of one descriptor as stored (at most 0xBC is read as fields, more is kept raw).
    pub desc_size: u8,
    /// 11: bytes of one material record (0x88).
    pub material_size: u8,
    /// 12: culling mode (1 = clockwise in game files).
    pub culling: u8,
    /// 13: right-handed flag.
    pub right_handed: u8,
    /// 14: vertex count as the game wrote it (garbage in some exporters' files).
    pub vertex_count: u32,
    /// 18: index count.
    pub index_count: u32,
    /// 22: D3DPRIMITIVETYPE, 4 = triangle list.
    pub primitive_type: u32,
    /// 26: 1 in optimised game meshes.
    pub optimized: u32,
    /// 30: bounding box centre (often zero).
    pub bbox_center: [F32Bits; 3],
    /// 42: bounding box size (often zero).
    pub bbox_size: [F32Bits; 3],
    /// 54..descOffset: unnamed bytes.
    #[serde(skip_serializing_if = "Bytes::is_zero", default)]
    pub reserved: Bytes<'static>,
}

/// One vertex or index buffer: its descriptor and its stored bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Buffer<'a> {
    /// 0x1E for the index buffer; for an undeclared vertex buffer, its usage (see `decl::Usage`).
    #[serde(rename = "type")]
    pub kind: i32,
    pub usage_index: i32,
    /// Offset in the data area; `None` when the buffer sits right after the previous one
    /// (the writer recomputes it, so a dump can change a buffer's size).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_offset: Option<u32>,
    pub compressed: u32,
    /// Descriptor bytes 16..20.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub pad: u32,
    /// Index format (0x1E u16, 0x1F u32), the implicit element's D3DDECLTYPE, or 0x20.
    pub format: i32,
    /// Items (vertices or indices) per section.
    pub items: u32,
    pub item_size: u32,
    pub sections: u32,
    /// Descriptor bytes 40..56: index min and max, or the position extent (min, max over all coordinates).
    pub bounds: [F64Bits; 2],
    /// The used declaration elements (`numVertexElements` of them).
    pub elements: Vec<Element>,
    /// The unused element slots, kept for a byte-exact rewrite (exporters leave garbage there).
    #[serde(default, skip_serializing_if = "Bytes::is_zero")]
    pub unused_elements: Bytes<'static>,
    /// Descriptor bytes past 0xBC when `desc_size` is larger.
    #[serde(default, skip_serializing_if = "Bytes::is_zero")]
    pub extra: Bytes<'static>,
    /// The bytes as stored in the file (a zlib stream when `compressed` is 1).
    pub data: Bytes<'a>,
}

fn is_zero_u32(v: &u32) -> bool {
    *v == 0
}

/// A vertex declaration element: D3DDECLTYPE, D3DDECLUSAGE, usage index, and two pad bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Element {
    #[serde(rename = "type")]
    pub ty: i32,
    pub usage: u8,
    pub usage_index: u8,
    #[serde(default, skip_serializing_if = "is_zero_pad")]
    pub pad: [u8; 2],
}

fn is_zero_pad(p: &[u8; 2]) -> bool {
    *p == [0, 0]
}

/// A material range over the index buffer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Material {
    pub first_index: i32,
    pub num_indices: i32,
    /// `collection.material` as in `libraries/material_library.xml`.
    pub name: FixedString,
    /// Bytes past 0x88 when `material_size` is larger.
    #[serde(default, skip_serializing_if = "Bytes::is_zero")]
    pub extra: Bytes<'static>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Filler<'a> {
    pub offset: u32,
    pub bytes: Bytes<'a>,
}

impl Buffer<'_> {
    pub fn is_index(&self) -> bool {
        self.kind == INDEX_BUFFER_TYPE
    }

    /// Bytes the data has once inflated: sections * items * itemSize (None on overflow).
    pub fn decoded_len(&self) -> Option<usize> {
        (self.sections as usize)
            .checked_mul(self.items as usize)?
            .checked_mul(self.item_size as usize)
    }
}

impl Xmf<'_> {
    /// The index buffer (the first buffer of type 0x1E).
    pub fn index_buffer(&self) -> Option<(usize, &Buffer<'_>)> {
        self.buffers.iter().enumerate().find(|(_, b)| b.is_index())
    }

    pub fn into_owned(self) -> Xmf<'static> {
        Xmf {
            header: self.header,
            buffers: self
                .buffers
                .into_iter()
                .map(|b| Buffer {
                    kind: b.kind,
                    usage_index: b.usage_index,
                    data_offset: b.data_offset,
                    compressed: b.compressed,
                    pad: b.pad,
                    format: b.format,
                    items: b.items,
                    item_size: b.item_size,
                    sections: b.sections,
                    bounds: b.bounds,
                    elements: b.elements,
                    unused_elements: b.unused_elements,
                    extra: b.extra,
                    data: b.data.into_owned(),
                })
                .collect(),
            materials: self.materials,
            filler: self
                .filler
                .into_iter()
                .map(|f| Filler {
                    offset: f.offset,
                    bytes: f.bytes.into_owned(),
                })
                .collect(),
        }
    }
}
