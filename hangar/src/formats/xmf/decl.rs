//! Direct3D 9 vertex declaration types and usages as XMF stores them, decoded to and encoded from floats.
//!
//! Decoding follows Direct3D: missing components read as (0, 0, 0, 1); D3DCOLOR bytes are B, G, R, A and
//! decode to (R, G, B, A) / 255. Meaning (a normal stored in a colour) is applied by the model adapter.

use crate::normalized::{from_snorm16, from_unorm16, snorm16, unorm16, unorm8};
use half::f16;

/// D3DDECLTYPE.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum DeclType {
    Float1 = 0,
    Float2 = 1,
    Float3 = 2,
    Float4 = 3,
    D3dColor = 4,
    UByte4 = 5,
    Short2 = 6,
    Short4 = 7,
    UByte4N = 8,
    Short2N = 9,
    Short4N = 10,
    UShort2N = 11,
    UShort4N = 12,
    UDec3 = 13,
    Dec3N = 14,
    Float16x2 = 15,
    Float16x4 = 16,
}

impl DeclType {
    pub fn from_raw(v: i32) -> Option<Self> {
        use DeclType::*;
        Some(match v {
            0 => Float1,
            1 => Float2,
            2 => Float3,
            3 => Float4,
            4 => D3dColor,
            5 => UByte4,
            6 => Short2,
            7 => Short4,
            8 => UByte4N,
            9 => Short2N,
            10 => Short4N,
            11 => UShort2N,
            12 => UShort4N,
            13 => UDec3,
            14 => Dec3N,
            15 => Float16x2,
            16 => Float16x4,
            _ => return None,
        })
    }

    /// Bytes one value takes in a vertex.
    pub fn size(self) -> usize {
        use DeclType::*;
        match self {
            Float1 | D3dColor | UByte4 | Short2 | UByte4N | Short2N | UShort2N | UDec3 | Dec3N
            | Float16x2 => 4,
            Float2 | Short4 | Short4N | UShort4N | Float16x4 => 8,
            Float3 => 12,
            Float4 => 16,
        }
    }

    /// Meaningful components (Direct3D fills the rest with 0, 0, 1).
    pub fn components(self) -> usize {
        use DeclType::*;
        match self {
            Float1 => 1,
            Float2 | Short2 | Short2N | UShort2N | Float16x2 => 2,
            Float3 | UDec3 | Dec3N => 3,
            _ => 4,
        }
    }

    /// True for types whose values lie in 0..1 (a normal stored in one needs `v * 2 - 1`).
    pub fn unsigned_normalized(self) -> bool {
        matches!(
            self,
            DeclType::D3dColor | DeclType::UByte4N | DeclType::UShort2N | DeclType::UShort4N
        )
    }

    pub fn name(self) -> &'static str {
        use DeclType::*;
        match self {
            Float1 => "FLOAT1",
            Float2 => "FLOAT2",
            Float3 => "FLOAT3",
            Float4 => "FLOAT4",
            D3dColor => "D3DCOLOR",
            UByte4 => "UBYTE4",
            Short2 => "SHORT2",
            Short4 => "SHORT4",
            UByte4N => "UBYTE4N",
            Short2N => "SHORT2N",
            Short4N => "SHORT4N",
            UShort2N => "USHORT2N",
            UShort4N => "USHORT4N",
            UDec3 => "UDEC3",
            Dec3N => "DEC3N",
            Float16x2 => "FLOAT16_2",
            Float16x4 => "FLOAT16_4",
        }
    }

    /// Decodes one value; `b` holds at least `self.size()` bytes, little-endian.
    #[inline(always)]
    pub fn decode(self, b: &[u8]) -> [f32; 4] {
        use DeclType::*;
        let f = |i: usize| f32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        let i16_at = |i: usize| i16::from_le_bytes([b[i], b[i + 1]]);
        let u16_at = |i: usize| u16::from_le_bytes([b[i], b[i + 1]]);
        let h = |i: usize| f16::from_bits(u16_at(i)).to_f32();
        let snorm16 = |i: usize| from_snorm16(i16_at(i));
        let unorm16 = |i: usize| from_unorm16(u16_at(i));
        match self {
            Float1 => [f(0), 0.0, 0.0, 1.0],
            Float2 => [f(0), f(4), 0.0, 1.0],
            Float3 => [f(0), f(4), f(8), 1.0],
            Float4 => [f(0), f(4), f(8), f(12)],
            D3dColor => [
                b[2] as f32 / 255.0,
                b[1] as f32 / 255.0,
                b[0] as f32 / 255.0,
                b[3] as f32 / 255.0,
            ],
            UByte4 => [b[0] as f32, b[1] as f32, b[2] as f32, b[3] as f32],
            Short2 => [i16_at(0) as f32, i16_at(2) as f32, 0.0, 1.0],
            Short4 => [
                i16_at(0) as f32,
                i16_at(2) as f32,
                i16_at(4) as f32,
                i16_at(6) as f32,
            ],
            UByte4N => [
                b[0] as f32 / 255.0,
                b[1] as f32 / 255.0,
                b[2] as f32 / 255.0,
                b[3] as f32 / 255.0,
            ],
            Short2N => [snorm16(0), snorm16(2), 0.0, 1.0],
            Short4N => [snorm16(0), snorm16(2), snorm16(4), snorm16(6)],
            UShort2N => [unorm16(0), unorm16(2), 0.0, 1.0],
            UShort4N => [unorm16(0), unorm16(2), unorm16(4), unorm16(6)],
            UDec3 => {
                let v = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                [
                    (v & 0x3ff) as f32,
                    ((v >> 10) & 0x3ff) as f32,
                    ((v >> 20) & 0x3ff) as f32,
                    1.0,
                ]
            }
            Dec3N => {
                let v = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                let s = |x: u32| (((x << 22) as i32 >> 22) as f32 / 511.0).max(-1.0);
                [
                    s(v & 0x3ff),
                    s((v >> 10) & 0x3ff),
                    s((v >> 20) & 0x3ff),
                    1.0,
                ]
            }
            Float16x2 => [h(0), h(2), 0.0, 1.0],
            Float16x4 => [h(0), h(2), h(4), h(6)],
        }
    }

    /// Decodes `count` values `stride` bytes apart, starting at `offset`, each passed through `f`.
    /// The type is matched once, outside the loop, so each loop is specialised for its type, and the
    /// result lands in its final form without an intermediate `[f32; 4]` array.
    pub fn decode_map<T>(
        self,
        data: &[u8],
        stride: usize,
        offset: usize,
        count: usize,
        mut f: impl FnMut([f32; 4]) -> T,
    ) -> Vec<T> {
        use DeclType::*;
        // One loop per value size: each reads a fixed-size array (no bounds checks inside).
        fn gather<const N: usize, T>(
            t: DeclType,
            data: &[u8],
            stride: usize,
            offset: usize,
            count: usize,
            f: impl FnMut([f32; 4]) -> T,
        ) -> Vec<T> {
            (0..count)
                .map(|v| {
                    let at = v * stride + offset;
                    let b: [u8; N] = data
                        .get(at..at + N)
                        .and_then(|b| b.try_into().ok())
                        .unwrap_or([0; N]);
                    t.decode(&b)
                })
                .map(f)
                .collect()
        }
        let mut run = |t: DeclType| -> Vec<T> {
            match t.size() {
                4 => gather::<4, T>(t, data, stride, offset, count, &mut f),
                8 => gather::<8, T>(t, data, stride, offset, count, &mut f),
                12 => gather::<12, T>(t, data, stride, offset, count, &mut f),
                _ => gather::<16, T>(t, data, stride, offset, count, &mut f),
            }
        };
        match self {
            Float1 => run(Float1),
            Float2 => run(Float2),
            Float3 => run(Float3),
            Float4 => run(Float4),
            D3dColor => run(D3dColor),
            UByte4 => run(UByte4),
            Short2 => run(Short2),
            Short4 => run(Short4),
            UByte4N => run(UByte4N),
            Short2N => run(Short2N),
            Short4N => run(Short4N),
            UShort2N => run(UShort2N),
            UShort4N => run(UShort4N),
            UDec3 => run(UDec3),
            Dec3N => run(Dec3N),
            Float16x2 => run(Float16x2),
            Float16x4 => run(Float16x4),
        }
    }

    /// Encodes one value into `out` (little-endian, `self.size()` bytes), rounding to the nearest
    /// representable value and clamping to the type's range.
    pub fn encode(self, v: [f32; 4], out: &mut Vec<u8>) {
        use DeclType::*;
        let snorm16 = |x: f32| snorm16(x).to_le_bytes();
        let unorm16 = |x: f32| unorm16(x).to_le_bytes();
        let short =
            |x: f32| (x.round().clamp(i16::MIN as f32, i16::MAX as f32) as i16).to_le_bytes();
        let h = |x: f32| f16::from_f32(x).to_bits().to_le_bytes();
        match self {
            Float1 | Float2 | Float3 | Float4 => {
                for x in &v[..self.components()] {
                    out.extend_from_slice(&x.to_le_bytes());
                }
            }
            D3dColor => {
                out.extend_from_slice(&[unorm8(v[2]), unorm8(v[1]), unorm8(v[0]), unorm8(v[3])])
            }
            UByte4 => out.extend(v.iter().map(|x| x.round().clamp(0.0, 255.0) as u8)),
            UByte4N => out.extend(v.iter().map(|&x| unorm8(x))),
            Short2 | Short4 => v[..self.components()]
                .iter()
                .for_each(|&x| out.extend_from_slice(&short(x))),
            Short2N | Short4N => v[..self.components()]
                .iter()
                .for_each(|&x| out.extend_from_slice(&snorm16(x))),
            UShort2N | UShort4N => v[..self.components()]
                .iter()
                .for_each(|&x| out.extend_from_slice(&unorm16(x))),
            UDec3 => {
                let c = |x: f32| (x.round().clamp(0.0, 1023.0) as u32) & 0x3ff;
                out.extend_from_slice(&(c(v[0]) | c(v[1]) << 10 | c(v[2]) << 20).to_le_bytes())
            }
            Dec3N => {
                let c = |x: f32| ((x.clamp(-1.0, 1.0) * 511.0).round() as i32 as u32) & 0x3ff;
                out.extend_from_slice(&(c(v[0]) | c(v[1]) << 10 | c(v[2]) << 20).to_le_bytes())
            }
            Float16x2 | Float16x4 => v[..self.components()]
                .iter()
                .for_each(|&x| out.extend_from_slice(&h(x))),
        }
    }
}

/// D3DDECLUSAGE.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Usage {
    Position,
    BlendWeight,
    BlendIndices,
    Normal,
    PSize,
    TexCoord,
    Tangent,
    Binormal,
    TessFactor,
    PositionT,
    Color,
    Fog,
    Depth,
    Sample,
    Other(u8),
}

impl Usage {
    pub fn from_raw(v: u8) -> Self {
        use Usage::*;
        match v {
            0 => Position,
            1 => BlendWeight,
            2 => BlendIndices,
            3 => Normal,
            4 => PSize,
            5 => TexCoord,
            6 => Tangent,
            7 => Binormal,
            8 => TessFactor,
            9 => PositionT,
            10 => Color,
            11 => Fog,
            12 => Depth,
            13 => Sample,
            n => Other(n),
        }
    }

    pub fn to_raw(self) -> u8 {
        use Usage::*;
        match self {
            Position => 0,
            BlendWeight => 1,
            BlendIndices => 2,
            Normal => 3,
            PSize => 4,
            TexCoord => 5,
            Tangent => 6,
            Binormal => 7,
            TessFactor => 8,
            PositionT => 9,
            Color => 10,
            Fog => 11,
            Depth => 12,
            Sample => 13,
            Other(n) => n,
        }
    }

    /// The usage of the one implicit element of a buffer with no declaration, from its `type` field
    /// (the mapping table of the XMF spec).
    pub fn from_buffer_type(t: i32) -> Self {
        match t {
            0 | 1 => Usage::Position,
            2 | 3 => Usage::Normal,
            4 => Usage::Tangent,
            5 => Usage::Binormal,
            8 => Usage::Color,
            20 => Usage::PSize,
            _ => Usage::TexCoord,
        }
    }

    pub fn name(self) -> String {
        use Usage::*;
        match self {
            Position => "POSITION".into(),
            BlendWeight => "BLENDWEIGHT".into(),
            BlendIndices => "BLENDINDICES".into(),
            Normal => "NORMAL".into(),
            PSize => "PSIZE".into(),
            TexCoord => "TEXCOORD".into(),
            Tangent => "TANGENT".into(),
            Binormal => "BINORMAL".into(),
            TessFactor => "TESSFACTOR".into(),
            PositionT => "POSITIONT".into(),
            Color => "COLOR".into(),
            Fog => "FOG".into(),
            Depth => "DEPTH".into(),
            Sample => "SAMPLE".into(),
            Other(n) => format!("USAGE{n}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(t: DeclType, v: [f32; 4]) -> [f32; 4] {
        let mut out = Vec::new();
        t.encode(v, &mut out);
        assert_eq!(out.len(), t.size(), "{}", t.name());
        t.decode(&out)
    }

    #[test]
    fn every_type_has_its_size_and_round_trips() {
        let v = [0.25, -0.5, 0.75, 1.0];
        assert_eq!(round_trip(DeclType::Float1, v), [0.25, 0.0, 0.0, 1.0]);
        assert_eq!(round_trip(DeclType::Float2, v), [0.25, -0.5, 0.0, 1.0]);
        assert_eq!(round_trip(DeclType::Float3, v), [0.25, -0.5, 0.75, 1.0]);
        assert_eq!(round_trip(DeclType::Float4, v), v);
        assert_eq!(round_trip(DeclType::Float16x2, v), [0.25, -0.5, 0.0, 1.0]);
        assert_eq!(round_trip(DeclType::Float16x4, v), v);
        assert_eq!(
            round_trip(DeclType::Short2, [3.0, -7.0, 0.0, 0.0]),
            [3.0, -7.0, 0.0, 1.0]
        );
        assert_eq!(
            round_trip(DeclType::Short4, [3.0, -7.0, 9.0, 1.0]),
            [3.0, -7.0, 9.0, 1.0]
        );
        assert_eq!(
            round_trip(DeclType::UByte4, [1.0, 2.0, 3.0, 255.0]),
            [1.0, 2.0, 3.0, 255.0]
        );
        assert_eq!(
            round_trip(DeclType::Short2N, [1.0, -1.0, 0.0, 0.0]),
            [1.0, -1.0, 0.0, 1.0]
        );
        assert_eq!(
            round_trip(DeclType::UShort2N, [1.0, 0.0, 0.0, 0.0]),
            [1.0, 0.0, 0.0, 1.0]
        );
        assert_eq!(
            round_trip(DeclType::UShort4N, [1.0, 0.0, 1.0, 0.0]),
            [1.0, 0.0, 1.0, 0.0]
        );
        assert_eq!(
            round_trip(DeclType::UDec3, [1023.0, 5.0, 0.0, 0.0]),
            [1023.0, 5.0, 0.0, 1.0]
        );
        let d = round_trip(DeclType::Dec3N, [1.0, -1.0, 0.5, 0.0]);
        assert_eq!(&d[..2], &[1.0, -1.0]);
        assert!((d[2] - 0.5).abs() < 1.0 / 511.0);
        let s = round_trip(DeclType::Short4N, [0.5, -0.5, 0.0, 1.0]);
        assert!((s[0] - 0.5).abs() < 1e-4 && (s[1] + 0.5).abs() < 1e-4);
        let u = round_trip(DeclType::UByte4N, [0.0, 1.0, 0.5, 1.0]);
        assert_eq!(u[0], 0.0);
        assert!((u[2] - 128.0 / 255.0).abs() < 1e-6);
    }

    #[test]
    fn d3dcolor_is_stored_bgra() {
        // Bytes B=0x10, G=0x20, R=0x30, A=0xff decode to (R, G, B, A).
        let v = DeclType::D3dColor.decode(&[0x10, 0x20, 0x30, 0xff]);
        assert_eq!(
            v,
            [
                0x30 as f32 / 255.0,
                0x20 as f32 / 255.0,
                0x10 as f32 / 255.0,
                1.0
            ]
        );
        let mut out = Vec::new();
        DeclType::D3dColor.encode(v, &mut out);
        assert_eq!(out, [0x10, 0x20, 0x30, 0xff]);
    }

    #[test]
    fn dec3n_sign_extends_ten_bits() {
        // x = -511 (0x201), y = 511 (0x1ff), z = 0.
        let raw: u32 = 0x201 | 0x1ff << 10;
        let v = DeclType::Dec3N.decode(&raw.to_le_bytes());
        assert_eq!(v, [-1.0, 1.0, 0.0, 1.0]);
    }

    #[test]
    fn implicit_usage_follows_the_spec_table() {
        assert_eq!(Usage::from_buffer_type(0), Usage::Position);
        assert_eq!(Usage::from_buffer_type(1), Usage::Position);
        assert_eq!(Usage::from_buffer_type(3), Usage::Normal);
        assert_eq!(Usage::from_buffer_type(4), Usage::Tangent);
        assert_eq!(Usage::from_buffer_type(5), Usage::Binormal);
        assert_eq!(Usage::from_buffer_type(8), Usage::Color);
        assert_eq!(Usage::from_buffer_type(20), Usage::PSize);
        assert_eq!(Usage::from_buffer_type(6), Usage::TexCoord);
    }
}
