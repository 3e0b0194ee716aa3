//! DDS textures (and X4's gzip'd ones) to RGBA pixels and PNG.
//!
//! The header (with its DX10 extension) is read here and every size is checked against the bytes
//! before anything is decoded; the block decoding itself is `texture2ddecoder`'s, PNG encoding the
//! `png` crate's. A `.gz` is inflated no further than the size its DDS header allows, so a small
//! file cannot ask for gigabytes.

#[cfg(feature = "native")]
mod bc1;
pub mod document;
pub mod encode;

use crate::bytes::Cursor;
use crate::error::{Error, ErrorKind, Result, Warning};
use std::borrow::Cow;
use std::io::Read;

/// How a surface's pixels are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Bc1,
    Bc2,
    Bc3,
    /// One channel (ATI1); decoded as grey.
    Bc4,
    /// Two channels (ATI2), a normal map's X and Y; Z is rebuilt into blue.
    Bc5,
    Bc6hUnsigned,
    Bc6hSigned,
    Bc7,
    /// Uncompressed, described by bit masks (`luminance`: the red mask is grey).
    Masked {
        bits: u32,
        masks: [u32; 4],
        luminance: bool,
    },
    /// 16-bit floats, RGBA (DXGI 10).
    Rgba16F,
    /// 32-bit floats, RGBA (DXGI 2).
    Rgba32F,
}

impl Format {
    /// Bytes of one 4x4 block, for block-compressed formats.
    fn block_bytes(self) -> Option<usize> {
        match self {
            Format::Bc1 | Format::Bc4 => Some(8),
            Format::Bc2
            | Format::Bc3
            | Format::Bc5
            | Format::Bc6hUnsigned
            | Format::Bc6hSigned
            | Format::Bc7 => Some(16),
            _ => None,
        }
    }

    fn pixel_bytes(self) -> usize {
        match self {
            Format::Masked { bits, .. } => (bits as usize).div_ceil(8),
            Format::Rgba16F => 8,
            Format::Rgba32F => 16,
            _ => 0,
        }
    }

    /// The bytes of a `w` x `h` surface, or `None` when that does not fit in memory sizes.
    pub fn surface_bytes(self, w: u32, h: u32) -> Option<usize> {
        let (w, h) = (w as usize, h as usize);
        match self.block_bytes() {
            Some(b) => w.div_ceil(4).checked_mul(h.div_ceil(4))?.checked_mul(b),
            None => w.checked_mul(h)?.checked_mul(self.pixel_bytes()),
        }
    }

    pub fn name(self) -> String {
        match self {
            Format::Masked {
                bits, luminance, ..
            } => format!("{}{bits}", if luminance { "L" } else { "RGBA" }),
            f => format!("{f:?}").to_uppercase(),
        }
    }
}

/// The facts of a DDS header that decoding needs.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    pub width: u32,
    pub height: u32,
    /// Slices of a volume texture (1 otherwise).
    pub depth: u32,
    pub mips: u32,
    pub format: Format,
    /// Six faces a surface.
    pub cube: bool,
    /// Array layers (1 unless DX10 says more).
    pub layers: u32,
    /// Where the first surface's pixels start.
    pub data_offset: usize,
    /// The DX10 format says its colours are sRGB (`_SRGB`); a legacy header never does.
    pub srgb: bool,
}

/// Largest edge accepted: the biggest textures the engines load are 16384 wide.
const MAX_EDGE: u32 = 32768;
/// Most pixels decoded at once (a 16384 x 16384 surface), so memory stays bounded.
const MAX_PIXELS: usize = 1 << 28;
/// Most bytes a gzip'd PNG may inflate to.
const MAX_GZ_PNG: u64 = 1 << 28;

const DDSD_DEPTH: u32 = 0x80_0000;
const DDPF_ALPHAPIXELS: u32 = 0x1;
const DDPF_ALPHA: u32 = 0x2;
const DDPF_FOURCC: u32 = 0x4;
const DDPF_RGB: u32 = 0x40;
const DDPF_LUMINANCE: u32 = 0x2_0000;
const CAPS2_CUBEMAP: u32 = 0x200;

fn dxgi_format(code: u32, at: u64) -> Result<Format> {
    Ok(match code {
        70..=72 => Format::Bc1,
        73..=75 => Format::Bc2,
        76..=78 => Format::Bc3,
        79 | 80 => Format::Bc4,
        82 | 83 => Format::Bc5,
        94 | 95 => Format::Bc6hUnsigned,
        96 => Format::Bc6hSigned,
        97..=99 => Format::Bc7,
        27..=29 => Format::Masked {
            bits: 32,
            masks: [0xff, 0xff00, 0xff_0000, 0xff00_0000],
            luminance: false,
        },
        87 | 90 | 91 => Format::Masked {
            bits: 32,
            masks: [0xff_0000, 0xff00, 0xff, 0xff00_0000],
            luminance: false,
        },
        88 | 92 | 93 => Format::Masked {
            bits: 32,
            masks: [0xff_0000, 0xff00, 0xff, 0],
            luminance: false,
        },
        60..=62 => Format::Masked {
            bits: 8,
            masks: [0xff, 0, 0, 0],
            luminance: true,
        },
        10 => Format::Rgba16F,
        2 => Format::Rgba32F,
        _ => {
            return Err(Error::new(
                ErrorKind::Unsupported,
                Some(at),
                "DDS.dx10.dxgiFormat",
                format!("DXGI format {code} is not decoded (BC1-7, RGBA8, BGRA8, R8, RGBA16F and RGBA32F are)"),
            ))
        }
    })
}

/// Reads the header of a DDS file (not gzip'd: see [`unpack`]).
pub fn read_header(data: &[u8]) -> Result<Header> {
    let mut c = Cursor::new(data, "DDS");
    let magic = c.bytes(4, "magic")?;
    if magic != b"DDS " {
        return Err(Error::invalid(
            0,
            "DDS.magic",
            "not a DDS file (no \"DDS \" magic)",
        ));
    }
    let size = c.u32("size")?;
    if size != 124 {
        return Err(Error::invalid(
            4,
            "DDS.size",
            format!("header size {size}, not 124"),
        ));
    }
    let flags = c.u32("flags")?;
    let height = c.u32("height")?;
    let width = c.u32("width")?;
    let _pitch = c.u32("pitchOrLinearSize")?;
    let depth = c.u32("depth")?;
    let mips = c.u32("mipMapCount")?.max(1);
    c.seek(76, "pixelFormat")?;
    let _pf_size = c.u32("pixelFormat.size")?;
    let pf_flags = c.u32("pixelFormat.flags")?;
    let fourcc = c.bytes(4, "pixelFormat.fourCC")?;
    let bits = c.u32("pixelFormat.rgbBitCount")?;
    let masks = [
        c.u32("pixelFormat.rBitMask")?,
        c.u32("pixelFormat.gBitMask")?,
        c.u32("pixelFormat.bBitMask")?,
        c.u32("pixelFormat.aBitMask")?,
    ];
    let _caps = c.u32("caps")?;
    let caps2 = c.u32("caps2")?;
    let mut cube = caps2 & CAPS2_CUBEMAP != 0;
    let mut depth = if flags & DDSD_DEPTH != 0 {
        depth.max(1)
    } else {
        1
    };
    let mut layers = 1;
    let mut data_offset = 128;
    let mut srgb = false;
    let format = if pf_flags & DDPF_FOURCC != 0 {
        match fourcc {
            b"DXT1" => Format::Bc1,
            b"DXT2" | b"DXT3" => Format::Bc2,
            b"DXT4" | b"DXT5" => Format::Bc3,
            b"ATI1" | b"BC4U" => Format::Bc4,
            b"ATI2" | b"BC5U" => Format::Bc5,
            b"DX10" => {
                c.seek(128, "dx10")?;
                let code = c.u32("dx10.dxgiFormat")?;
                let dimension = c.u32("dx10.resourceDimension")?;
                let misc = c.u32("dx10.miscFlag")?;
                let array = c.u32("dx10.arraySize")?;
                data_offset = 148;
                if misc & 0x4 != 0 {
                    cube = true;
                }
                if dimension != 4 {
                    depth = 1;
                }
                layers = array.max(1);
                srgb = matches!(code, 29 | 72 | 75 | 78 | 91 | 93 | 99);
                dxgi_format(code, 128)?
            }
            // D3DFMT codes stored as numbers in the FourCC field.
            [113, 0, 0, 0] => Format::Rgba16F,
            [116, 0, 0, 0] => Format::Rgba32F,
            other => {
                return Err(Error::new(
                    ErrorKind::Unsupported,
                    Some(84),
                    "DDS.pixelFormat.fourCC",
                    format!(
                        "FourCC {:?} is not decoded (DXT1-5, ATI1/2, BC4U/BC5U and DX10 are)",
                        String::from_utf8_lossy(other)
                    ),
                ))
            }
        }
    } else if pf_flags & (DDPF_RGB | DDPF_LUMINANCE | DDPF_ALPHA) != 0 {
        if !matches!(bits, 8 | 16 | 24 | 32) {
            return Err(Error::new(
                ErrorKind::Unsupported,
                Some(88),
                "DDS.pixelFormat.rgbBitCount",
                format!("{bits} bits a pixel is not decoded (8, 16, 24 and 32 are)"),
            ));
        }
        let mut masks = masks;
        if pf_flags & DDPF_ALPHAPIXELS == 0 && pf_flags & DDPF_ALPHA == 0 {
            masks[3] = 0;
        }
        Format::Masked {
            bits,
            masks,
            luminance: pf_flags & DDPF_LUMINANCE != 0,
        }
    } else {
        return Err(Error::new(
            ErrorKind::Unsupported,
            Some(80),
            "DDS.pixelFormat.flags",
            format!("pixel format flags {pf_flags:#x} name no format hangar decodes"),
        ));
    };
    if width == 0 || height == 0 || width > MAX_EDGE || height > MAX_EDGE || depth > MAX_EDGE {
        return Err(Error::invalid(
            12,
            "DDS.width",
            format!("size {width}x{height}x{depth} is outside 1..={MAX_EDGE}"),
        ));
    }
    if layers > 2048 || mips > 32 {
        return Err(Error::invalid(
            28,
            "DDS.mipMapCount",
            format!("{mips} mips and {layers} array layers: more than a texture can have"),
        ));
    }
    Ok(Header {
        width,
        height,
        depth,
        mips,
        format,
        cube,
        layers,
        data_offset,
        srgb,
    })
}

impl Header {
    /// Bytes of the first mip's first surface (one slice, one face, one layer).
    pub fn first_surface_bytes(&self) -> Option<usize> {
        self.format.surface_bytes(self.width, self.height)
    }

    /// Bytes of the whole file the header describes: every mip of every slice, face and layer.
    pub fn file_bytes(&self) -> Option<usize> {
        let mut total = self.data_offset;
        let (mut w, mut h, mut d) = (self.width, self.height, self.depth);
        let faces = if self.cube { 6 } else { 1 } * self.layers as usize;
        for _ in 0..self.mips {
            let s = self.format.surface_bytes(w, h)?.checked_mul(d as usize)?;
            total = total.checked_add(s.checked_mul(faces)?)?;
            w = (w / 2).max(1);
            h = (h / 2).max(1);
            d = (d / 2).max(1);
        }
        Some(total)
    }
}

/// What a texture file holds once unpacked.
pub enum Content<'a> {
    Dds(Cow<'a, [u8]>),
    Png(Cow<'a, [u8]>),
}

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
pub const PNG_MAGIC: [u8; 8] = *b"\x89PNG\r\n\x1a\n";

/// Tells by content what a texture file is: a DDS, a PNG, or either inside gzip (X4's `.gz`). A
/// gzip'd DDS is inflated up to the size its header allows and no further.
pub fn unpack(data: &[u8]) -> Result<Content<'_>> {
    if data.starts_with(b"DDS ") {
        return Ok(Content::Dds(Cow::Borrowed(data)));
    }
    if data.starts_with(&PNG_MAGIC) {
        return Ok(Content::Png(Cow::Borrowed(data)));
    }
    if !data.starts_with(&GZIP_MAGIC) {
        return Err(Error::invalid(
            0,
            "texture",
            "neither DDS, PNG nor gzip (by the first bytes)",
        ));
    }
    let broken = |e: std::io::Error| Error::invalid(0, "gzip", format!("broken gzip stream: {e}"));
    let mut z = flate2::read::GzDecoder::new(data);
    let mut head = Vec::with_capacity(148);
    (&mut z).take(148).read_to_end(&mut head).map_err(broken)?;
    if head.starts_with(&PNG_MAGIC) {
        let mut out = head;
        (&mut z)
            .take(MAX_GZ_PNG + 1 - out.len() as u64)
            .read_to_end(&mut out)
            .map_err(broken)?;
        if out.len() as u64 > MAX_GZ_PNG {
            return Err(Error::refused(
                "gzip",
                format!("the PNG inside inflates past {MAX_GZ_PNG} bytes: refused"),
            ));
        }
        return Ok(Content::Png(Cow::Owned(out)));
    }
    if !head.starts_with(b"DDS ") {
        return Err(Error::invalid(
            0,
            "gzip",
            "the gzip stream holds neither a DDS nor a PNG",
        ));
    }
    let header = read_header(&head)?;
    let allowed = header
        .file_bytes()
        .ok_or_else(|| Error::invalid(12, "DDS", "the sizes in the header overflow"))?;
    let mut out = head;
    out.reserve(allowed.saturating_sub(out.len()).min(1 << 26));
    let more = (allowed as u64).saturating_sub(out.len() as u64) + 1;
    (&mut z).take(more).read_to_end(&mut out).map_err(broken)?;
    if out.len() > allowed {
        return Err(Error::refused(
            "gzip",
            format!(
                "inflates past the {allowed} bytes its DDS header allows ({}x{}, {} mips): refused as a gzip bomb",
                header.width, header.height, header.mips
            ),
        ));
    }
    Ok(Content::Dds(Cow::Owned(out)))
}

pub use super::rgba::Image;

/// Decodes the first mip of the first surface of a DDS file (not gzip'd). Extra faces, layers and
/// slices are reported, not decoded.
pub fn decode(data: &[u8]) -> Result<(Image, Vec<Warning>)> {
    decode_with(data, Surfaces::First)
}

/// Which surfaces of a cube map, an array or a volume become the picture.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Surfaces {
    /// The first face, layer or slice (what a glTF material can use), with a warning.
    #[default]
    First,
    /// Every face, layer or slice of the first mip side by side, left to right in file order
    /// (a cube map's faces: +X, -X, +Y, -Y, +Z, -Z).
    Strip,
    /// One mip level (0 the largest) of one face, layer or slice (in file order, as [`Levels`]
    /// counts them): what a viewer's pickers choose.
    One { mip: u32, surface: u32 },
}

/// How many mip levels and surfaces (faces, layers or slices) a texture holds: what
/// [`Surfaces::One`] picks from. A PNG or TGA has one of each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Levels {
    pub mips: u32,
    pub surfaces: u32,
}

/// The [`Levels`] of a texture file named `name` (DDS, X4's .gz, PNG, TGA).
pub fn levels(data: &[u8], name: &std::path::Path) -> Result<Levels> {
    let one = Levels {
        mips: 1,
        surfaces: 1,
    };
    if is_tga(name) {
        return Ok(one);
    }
    match unpack(data)? {
        Content::Png(_) => Ok(one),
        Content::Dds(d) => {
            let h = read_header(&d)?;
            Ok(Levels {
                mips: mip_count(&h),
                surfaces: surface_count(&h),
            })
        }
    }
}

/// Mip levels: as the header says, at most down to 1x1 (a damaged header may say billions).
fn mip_count(h: &Header) -> u32 {
    let chain = u32::BITS - h.width.max(h.height).max(1).leading_zeros();
    h.mips.clamp(1, chain)
}

/// Faces, layers or slices of the first mip.
fn surface_count(h: &Header) -> u32 {
    if h.depth > 1 {
        h.depth
    } else {
        (if h.cube { 6 } else { 1 }) * h.layers.max(1)
    }
}

/// Where surface `surface` of mip `mip` starts (relative to the first surface), and its size.
fn one_surface(h: &Header, mip: u32, surface: u32) -> Result<(usize, u32, u32)> {
    let (mips, count) = (mip_count(h), surface_count(h));
    if mip >= mips || surface >= count {
        return Err(Error::refused(
            "DDS",
            format!(
                "mip {mip} of surface {surface} asked for: the file has {mips} mip level{} and {count} surface{}",
                if mips == 1 { "" } else { "s" },
                if count == 1 { "" } else { "s" }
            ),
        ));
    }
    let overflow = || Error::invalid(12, "DDS", "the sizes in the header overflow");
    let half = |x: u32, k: u32| x.checked_shr(k).unwrap_or(0).max(1);
    let bytes = |k: u32| h.format.surface_bytes(half(h.width, k), half(h.height, k));
    let mut start = 0usize;
    if h.depth > 1 {
        // A volume: each mip's slices one after another, the slices halving too.
        for k in 0..mip {
            let slices = half(h.depth, k) as usize;
            start = bytes(k)
                .and_then(|b| b.checked_mul(slices))
                .and_then(|b| start.checked_add(b))
                .ok_or_else(overflow)?;
        }
        if surface >= half(h.depth, mip) {
            return Err(Error::refused(
                "DDS",
                format!(
                    "slice {surface} of mip {mip} asked for: it has {}",
                    half(h.depth, mip)
                ),
            ));
        }
        start = bytes(mip)
            .and_then(|b| b.checked_mul(surface as usize))
            .and_then(|b| start.checked_add(b))
            .ok_or_else(overflow)?;
    } else {
        // Faces and layers each carry their own mip chain.
        let chain = surface_offsets(h)
            .and_then(|o| o.get(1).copied())
            .unwrap_or(0);
        start = chain.checked_mul(surface as usize).ok_or_else(overflow)?;
        for k in 0..mip {
            start = bytes(k)
                .and_then(|b| start.checked_add(b))
                .ok_or_else(overflow)?;
        }
    }
    Ok((start, half(h.width, mip), half(h.height, mip)))
}

/// What a DDS holds beyond one surface, for messages: "a cube map", "an array of 4 layers"...
fn extra_surfaces(h: &Header) -> Option<String> {
    if h.cube && h.layers > 1 {
        Some(format!("an array of {} cube maps", h.layers))
    } else if h.cube {
        Some("a cube map".to_string())
    } else if h.depth > 1 {
        Some(format!("a volume of {} slices", h.depth))
    } else if h.layers > 1 {
        Some(format!("an array of {} layers", h.layers))
    } else {
        None
    }
}

/// Where each surface of the first mip starts (relative to the first), in file order: the faces
/// and layers each carry their own mip chain; a volume's slices lie one after another.
fn surface_offsets(h: &Header) -> Option<Vec<usize>> {
    let one = h.first_surface_bytes()?;
    if h.depth > 1 {
        return (0..h.depth as usize).map(|s| s.checked_mul(one)).collect();
    }
    let count = if h.cube { 6 } else { 1 } * h.layers as usize;
    let mut chain = 0usize;
    let (mut w, mut hh) = (h.width, h.height);
    for _ in 0..h.mips {
        chain = chain.checked_add(h.format.surface_bytes(w, hh)?)?;
        w = (w / 2).max(1);
        hh = (hh / 2).max(1);
    }
    (0..count).map(|i| i.checked_mul(chain)).collect()
}

/// [`decode`], with every face, layer or slice side by side when `surfaces` says
/// [`Surfaces::Strip`].
pub fn decode_with(data: &[u8], surfaces: Surfaces) -> Result<(Image, Vec<Warning>)> {
    let h = read_header(data)?;
    let mut warnings = Vec::new();
    let overflow = || Error::invalid(12, "DDS", "the sizes in the header overflow");
    let (offsets, width, height) = match (surfaces, extra_surfaces(&h)) {
        (Surfaces::Strip, Some(_)) => {
            (surface_offsets(&h).ok_or_else(overflow)?, h.width, h.height)
        }
        (Surfaces::One { mip, surface }, _) => {
            let (start, w, hh) = one_surface(&h, mip, surface)?;
            (vec![start], w, hh)
        }
        _ => (vec![0], h.width, h.height),
    };
    let n = offsets.len();
    let pixels = (width as usize)
        .checked_mul(height as usize)
        .filter(|&p| p.saturating_mul(n) <= MAX_PIXELS)
        .ok_or_else(|| {
            Error::refused(
                "DDS.width",
                format!(
                    "{} surfaces of {}x{} are more than {MAX_PIXELS} pixels",
                    n, width, height
                ),
            )
        })?;
    let need = h.format.surface_bytes(width, height).ok_or_else(overflow)?;
    let mut decoded = Vec::with_capacity(n);
    for (i, off) in offsets.iter().enumerate() {
        let start = h.data_offset.saturating_add(*off);
        let src = data.get(start..start.saturating_add(need)).ok_or_else(|| {
            let what = if n > 1 {
                format!("surface {i} of {n}")
            } else {
                "the first surface".to_string()
            };
            Error::new(
                ErrorKind::Truncated,
                Some(data.len() as u64),
                if n > 1 {
                    format!("DDS.data.surfaces[{i}]")
                } else {
                    "DDS.data".to_string()
                },
                format!(
                    "{}x{} {} needs {need} bytes of pixels from byte {start} for {what}, the file has {}",
                    width,
                    height,
                    h.format.name(),
                    data.len().saturating_sub(start)
                ),
            )
        })?;
        decoded.push(decode_surface(
            h.format,
            src,
            width as usize,
            height as usize,
            pixels,
        )?);
    }
    let one = matches!(surfaces, Surfaces::One { .. });
    match (extra_surfaces(&h), n) {
        // One surface picked out of several: the picker says how many there are.
        _ if one => {}
        (Some(what), 1) => warnings.push(Warning::new(
            None,
            "DDS",
            format!("{what}: only the first surface is converted"),
        )),
        (Some(what), _) => warnings.push(Warning::note(
            None,
            "DDS",
            format!(
                "{what}: its {n} surfaces side by side, {}x{} each{}",
                width,
                height,
                if h.cube {
                    " (faces +X, -X, +Y, -Y, +Z, -Z)"
                } else {
                    ""
                }
            ),
        )),
        _ => {}
    }
    if let Some(total) = h.file_bytes() {
        if data.len() < total {
            warnings.push(Warning::new(
                Some(data.len() as u64),
                "DDS.data",
                format!(
                    "the header describes {total} bytes, the file has {}: later mips are missing",
                    data.len()
                ),
            ));
        }
    }
    let rgba = if n == 1 {
        decoded.pop().unwrap_or_default()
    } else {
        side_by_side(&decoded, width as usize, height as usize)
    };
    let width = u32::try_from(n)
        .ok()
        .and_then(|n| n.checked_mul(width))
        .ok_or_else(overflow)?;
    Ok((
        Image {
            width,
            height,
            rgba,
        },
        warnings,
    ))
}

/// Pictures of `w` x `h` RGBA pixels as one picture, left to right.
fn side_by_side(parts: &[Vec<u8>], w: usize, h: usize) -> Vec<u8> {
    let row = w * 4;
    let mut out = Vec::with_capacity(parts.len() * row * h);
    for y in 0..h {
        for p in parts {
            out.extend_from_slice(p.get(y * row..(y + 1) * row).unwrap_or_default());
        }
    }
    out
}

/// texture2ddecoder's whole-surface decoders.
type BlockDecoder = fn(&[u8], usize, usize, &mut [u32]) -> std::result::Result<(), &'static str>;

fn decode_surface(f: Format, src: &[u8], w: usize, h: usize, pixels: usize) -> Result<Vec<u8>> {
    use texture2ddecoder as t;
    let blocks_of = |src: &[u8], decoder: BlockDecoder| {
        let mut out = vec![0u32; pixels];
        decoder(src, w, h, &mut out)
            .map_err(|e| Error::invalid(0, "DDS.data", format!("block decoding failed: {e}")))?;
        // The decoder's pixels are B, G, R, A in memory.
        let mut rgba = Vec::with_capacity(pixels * 4);
        for p in out {
            let [b, g, r, a] = p.to_le_bytes();
            rgba.extend_from_slice(&[r, g, b, a]);
        }
        Ok::<_, Error>(rgba)
    };
    let blocks = |decoder: BlockDecoder| blocks_of(src, decoder);
    Ok(match f {
        Format::Bc1 => blocks(t::decode_bc1a)?,
        Format::Bc2 => {
            let src = four_colour_blocks(src);
            blocks_of(&src, t::decode_bc2)?
        }
        Format::Bc3 => {
            let src = four_colour_blocks(src);
            blocks_of(&src, t::decode_bc3)?
        }
        Format::Bc4 => {
            let mut v = blocks(t::decode_bc4)?;
            for p in v.chunks_exact_mut(4) {
                if let [r, g, b, a] = p {
                    (*g, *b, *a) = (*r, *r, 255);
                }
            }
            v
        }
        Format::Bc5 => {
            let mut v = blocks(t::decode_bc5)?;
            for p in v.chunks_exact_mut(4) {
                if let [r, g, b, a] = p {
                    *b = rebuild_z(*r, *g);
                    *a = 255;
                }
            }
            v
        }
        Format::Bc6hUnsigned => blocks(t::decode_bc6_unsigned)?,
        Format::Bc6hSigned => blocks(t::decode_bc6_signed)?,
        Format::Bc7 => blocks(t::decode_bc7)?,
        Format::Masked {
            bits,
            masks,
            luminance,
        } => unmask(src, pixels, bits, masks, luminance),
        Format::Rgba16F => src
            .chunks_exact(2)
            .take(pixels * 4)
            .map(|b| unit(half::f16::from_le_bytes(b.try_into().unwrap_or([0; 2])).to_f32()))
            .collect(),
        Format::Rgba32F => src
            .chunks_exact(4)
            .take(pixels * 4)
            .map(|b| unit(f32::from_le_bytes(b.try_into().unwrap_or([0; 4]))))
            .collect(),
    })
}

/// BC2 and BC3 blocks whose colour half always means four colours, as texture2ddecoder reads them.
///
/// The colour half of a BC2/BC3 block is BC1's, but always in four-colour mode: `c0 <= c1` does not
/// switch to BC1's three colours and transparent black, which texture2ddecoder 0.1 applies to
/// them too (Pillow's `dxt5-colorblock-alpha-issue-4142.dds`: 10 of 16 pixels wrong). Such a block
/// is stored again with the same four colours in BC1's other order: with `c0 < c1` the endpoints
/// swap and each 2-bit index flips its low bit (0<->1, 2<->3: the two thirds swap with them);
/// with `c0 == c1` all four colours are `c0`, so every index becomes 0. The copy is made only when
/// some block needs it.
fn four_colour_blocks(src: &[u8]) -> Cow<'_, [u8]> {
    let endpoints = |b: &[u8]| -> Option<(u16, u16)> {
        let c = b.get(8..12)?;
        Some((
            u16::from_le_bytes([c[0], c[1]]),
            u16::from_le_bytes([c[2], c[3]]),
        ))
    };
    let three_colour = |b: &[u8]| endpoints(b).is_some_and(|(c0, c1)| c0 <= c1);
    if !src.chunks_exact(16).any(three_colour) {
        return Cow::Borrowed(src);
    }
    let mut out = src.to_vec();
    for b in out.chunks_exact_mut(16) {
        let Some((c0, c1)) = endpoints(b) else {
            continue;
        };
        if c0 > c1 {
            continue;
        }
        let indices = u32::from_le_bytes([b[12], b[13], b[14], b[15]]);
        let indices = if c0 == c1 { 0 } else { indices ^ 0x5555_5555 };
        b[8..10].copy_from_slice(&c1.to_le_bytes());
        b[10..12].copy_from_slice(&c0.to_le_bytes());
        b[12..16].copy_from_slice(&indices.to_le_bytes());
    }
    Cow::Owned(out)
}

fn unit(v: f32) -> u8 {
    (v.clamp(0.0, 1.0) * 255.0).round() as u8
}

/// A normal map's Z from X and Y (stored as 0..255 for -1..1), as blue.
fn rebuild_z(x: u8, y: u8) -> u8 {
    let x = f32::from(x) / 127.5 - 1.0;
    let y = f32::from(y) / 127.5 - 1.0;
    let z = (1.0 - x * x - y * y).max(0.0).sqrt();
    ((z + 1.0) * 127.5).round().clamp(0.0, 255.0) as u8
}

/// One channel out of a pixel by its mask, scaled to 8 bits.
fn channel(px: u32, mask: u32) -> Option<u8> {
    if mask == 0 {
        return None;
    }
    let shift = mask.trailing_zeros();
    let max = mask >> shift;
    let v = (px & mask) >> shift;
    Some(((u64::from(v) * 255 + u64::from(max) / 2) / u64::from(max)) as u8)
}

fn unmask(src: &[u8], pixels: usize, bits: u32, masks: [u32; 4], luminance: bool) -> Vec<u8> {
    let n = (bits as usize).div_ceil(8);
    let mut out = Vec::with_capacity(pixels * 4);
    for p in src.chunks_exact(n).take(pixels) {
        let mut b = [0u8; 4];
        for (d, s) in b.iter_mut().zip(p) {
            *d = *s;
        }
        let px = u32::from_le_bytes(b);
        let a = channel(px, masks[3]).unwrap_or(255);
        if luminance {
            let l = channel(px, masks[0]).unwrap_or(0);
            out.extend_from_slice(&[l, l, l, a]);
        } else {
            let [r, g, bl] =
                [0, 1, 2].map(|k| masks.get(k).and_then(|&m| channel(px, m)).unwrap_or(0));
            // An alpha-only texture (DDPF_ALPHA) keeps its colour white.
            let rgb = if masks[..3].iter().all(|&m| m == 0) {
                [255; 3]
            } else {
                [r, g, bl]
            };
            out.extend_from_slice(&[rgb[0], rgb[1], rgb[2], a]);
        }
    }
    out
}

/// PNG compression: fast by default (converted textures are intermediates), or smallest.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum PngCompression {
    #[default]
    Fast,
    Best,
}

/// Encodes RGBA pixels as a PNG.
pub fn encode_png(img: &Image, level: PngCompression) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    let fail = |e: png::EncodingError| Error::new(ErrorKind::Invalid, None, "png", e.to_string());
    {
        let mut enc = png::Encoder::new(&mut out, img.width, img.height);
        enc.set_color(png::ColorType::Rgba);
        enc.set_depth(png::BitDepth::Eight);
        enc.set_compression(match level {
            PngCompression::Fast => png::Compression::Fast,
            PngCompression::Best => png::Compression::Best,
        });
        let mut w = enc.write_header().map_err(fail)?;
        w.write_image_data(&img.rgba).map_err(fail)?;
        w.finish().map_err(fail)?;
    }
    Ok(out)
}

/// A texture as a PNG file.
pub struct Png {
    pub bytes: Vec<u8>,
    pub width: u32,
    pub height: u32,
    pub warnings: Vec<Warning>,
}

/// The PNG of a texture file's content (`.dds`, `.gz`, or a PNG, which is passed through), its size,
/// and the warnings found on the way. A cube map, array or volume gives its first surface.
pub fn to_png(data: &[u8], level: PngCompression) -> Result<Png> {
    to_png_with(
        data,
        std::path::Path::new(""),
        PngOptions {
            level,
            surfaces: Surfaces::First,
        },
    )
}

/// How a texture becomes a PNG.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PngOptions {
    pub level: PngCompression,
    pub surfaces: Surfaces,
}

/// True when `name` ends in `.tga`: TGA has no magic bytes, so only its name tells.
fn is_tga(name: &std::path::Path) -> bool {
    crate::io::has_ext(name, "tga")
}

/// [`to_png`] for a file named `name` (a `.tga` is read as TGA), with every surface of a cube map,
/// array or volume side by side when `opts` says [`Surfaces::Strip`].
pub fn to_png_with(data: &[u8], name: &std::path::Path, opts: PngOptions) -> Result<Png> {
    if !is_tga(name) {
        if let Content::Png(p) = unpack(data)? {
            let size = png_size(&p).ok_or_else(|| {
                Error::new(
                    ErrorKind::Truncated,
                    Some(0),
                    "png",
                    "a PNG shorter than its header",
                )
            })?;
            return Ok(Png {
                bytes: p.into_owned(),
                width: size.0,
                height: size.1,
                warnings: Vec::new(),
            });
        }
    }
    let (img, warnings) = load_with(data, name, opts.surfaces)?;
    Ok(Png {
        bytes: encode_png(&img, opts.level)?,
        width: img.width,
        height: img.height,
        warnings,
    })
}

/// The RGBA pixels of a texture file: DDS (first surface), PNG, either gzip'd (X4's `.gz`), or a
/// TGA when `name` ends in `.tga`.
pub fn load(data: &[u8], name: &std::path::Path) -> Result<(Image, Vec<Warning>)> {
    load_with(data, name, Surfaces::First)
}

fn load_with(
    data: &[u8],
    name: &std::path::Path,
    surfaces: Surfaces,
) -> Result<(Image, Vec<Warning>)> {
    if is_tga(name) {
        return Ok((crate::formats::tga::decode(data)?, Vec::new()));
    }
    match unpack(data)? {
        Content::Png(p) => Ok((encode::read_png(&p)?, Vec::new())),
        Content::Dds(d) => decode_with(&d, surfaces),
    }
}

/// Width and height from a PNG's IHDR.
pub fn png_size(p: &[u8]) -> Option<(u32, u32)> {
    let w = u32::from_be_bytes(p.get(16..20)?.try_into().ok()?);
    let h = u32::from_be_bytes(p.get(20..24)?.try_into().ok()?);
    Some((w, h))
}

/// How a texture file converted alone becomes a picture file: the PNG's compression and surfaces,
/// the DDS's encoding.
#[derive(Debug, Clone, Copy, Default)]
pub struct PictureOptions {
    pub png: PngCompression,
    /// A cube map, array or volume converted to a .png: one surface or all side by side.
    pub surfaces: Surfaces,
    pub dds: encode::Options,
}

/// A texture file converted to a picture file.
pub struct Picture {
    pub bytes: Vec<u8>,
    pub width: u32,
    pub height: u32,
    /// What was written beyond the size, for messages (", BC7, 10 mip levels").
    pub what: String,
    pub warnings: Vec<Warning>,
}

/// A texture file (`input`: DDS, X4's .gz, PNG, or TGA by its name) converted to what `output`
/// names: a `.png`, or a `.dds` encoded as `opts.dds` says. `None` when `output` is neither.
pub fn convert(
    bytes: &[u8],
    input: &std::path::Path,
    output: &std::path::Path,
    opts: PictureOptions,
) -> Option<Result<Picture>> {
    use crate::io::has_ext;
    let named = |e: crate::error::Error| e.in_file(input);
    if has_ext(output, "png") {
        let png_options = PngOptions {
            level: opts.png,
            surfaces: opts.surfaces,
        };
        return Some(
            to_png_with(bytes, input, png_options)
                .map(|p| Picture {
                    bytes: p.bytes,
                    width: p.width,
                    height: p.height,
                    what: String::new(),
                    warnings: p.warnings,
                })
                .map_err(named),
        );
    }
    if has_ext(output, "dds") {
        return Some(
            (|| {
                let (img, warnings) = load(bytes, input)?;
                let bytes = encode::encode(&img, opts.dds)?;
                let mips = match opts.dds.mipmaps {
                    encode::Mipmaps::Full => encode::full_chain(img.width, img.height),
                    encode::Mipmaps::None => 1,
                };
                Ok(Picture {
                    bytes,
                    width: img.width,
                    height: img.height,
                    what: format!(
                        ", {}, {mips} mip level{}",
                        opts.dds.encoding.name(),
                        if mips == 1 { "" } else { "s" }
                    ),
                    warnings,
                })
            })()
            .map_err(named),
        );
    }
    None
}
