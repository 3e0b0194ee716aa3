//! Pictures to DDS: PNG (and TGA, and DDS itself) decoded to RGBA, its mip chain made here (each
//! level the rounded average of 2x2 pixels of the one above), block-compressed by
//! `block_compression` (a pure-Rust port of Intel's ISPC texture compressor's kernels: the same
//! bytes on every platform, no C++ to link), behind a DDS header written here. BC1, BC3, BC4 and
//! BC5 get the legacy FourCC header every engine reads (`DXT1`, `DXT5`, `ATI1`, `ATI2`); BC7 has
//! no FourCC and gets the DX10 extension (DXGI 98, BC7_UNORM). BC1 blocks with a transparent
//! pixel are written in its three-colour mode (`bc1`).
//!
//! Every output is read back with [`super::read_header`] before it is handed out: its sizes must
//! be exactly the bytes written.

use super::{Image, MAX_EDGE, MAX_PIXELS};
use crate::error::{Error, ErrorKind, Result, Warning};

/// The block compression a DDS is written with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Encoding {
    /// RGB with 1-bit alpha, 8 bytes a block (DXT1): opaque colour maps.
    Bc1,
    /// RGB with smooth alpha, 16 bytes a block (DXT5).
    Bc3,
    /// One channel (red), 8 bytes a block (ATI1): masks, heights, roughness.
    Bc4,
    /// Two channels (red, green), 16 bytes a block (ATI2): normal maps' X and Y.
    Bc5,
    /// RGBA at the best quality of the five, 16 bytes a block (DX10 header).
    #[default]
    Bc7,
}

impl Encoding {
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Bc1 => "BC1",
            Encoding::Bc3 => "BC3",
            Encoding::Bc4 => "BC4",
            Encoding::Bc5 => "BC5",
            Encoding::Bc7 => "BC7",
        }
    }

    /// The format hangar's reader gives the written file.
    pub fn format(self) -> super::Format {
        match self {
            Encoding::Bc1 => super::Format::Bc1,
            Encoding::Bc3 => super::Format::Bc3,
            Encoding::Bc4 => super::Format::Bc4,
            Encoding::Bc5 => super::Format::Bc5,
            Encoding::Bc7 => super::Format::Bc7,
        }
    }
}

/// Which mip levels are written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Mipmaps {
    /// Every level down to 1x1 (what engines sample at a distance).
    #[default]
    Full,
    /// The full-size level only.
    None,
}

/// How a picture becomes a DDS.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    pub encoding: Encoding,
    pub mipmaps: Mipmaps,
}

/// Levels of a full mip chain for a `w` x `h` picture: 1 + log2 of the longer edge.
pub fn full_chain(w: u32, h: u32) -> u32 {
    32 - w.max(h).max(1).leading_zeros()
}

const DDSD_CAPS: u32 = 0x1;
const DDSD_HEIGHT: u32 = 0x2;
const DDSD_WIDTH: u32 = 0x4;
const DDSD_PIXELFORMAT: u32 = 0x1000;
const DDSD_MIPMAPCOUNT: u32 = 0x2_0000;
const DDSD_LINEARSIZE: u32 = 0x8_0000;
const DDSCAPS_COMPLEX: u32 = 0x8;
const DDSCAPS_TEXTURE: u32 = 0x1000;
const DDSCAPS_MIPMAP: u32 = 0x40_0000;
const DXGI_BC7_UNORM: u32 = 98;
const DIMENSION_TEXTURE2D: u32 = 3;
const ALPHA_MODE_STRAIGHT: u32 = 1;

/// The 128-byte DDS header (148 with the DX10 extension) of a 2D texture.
fn header(w: u32, h: u32, mips: u32, encoding: Encoding, top_bytes: usize) -> Vec<u8> {
    let mut b = Vec::with_capacity(148);
    let mut put = |v: u32| b.extend_from_slice(&v.to_le_bytes());
    put(u32::from_le_bytes(*b"DDS "));
    put(124);
    let mut flags = DDSD_CAPS | DDSD_HEIGHT | DDSD_WIDTH | DDSD_PIXELFORMAT | DDSD_LINEARSIZE;
    if mips > 1 {
        flags |= DDSD_MIPMAPCOUNT;
    }
    put(flags);
    put(h);
    put(w);
    put(u32::try_from(top_bytes).unwrap_or(u32::MAX));
    put(0); // depth
    put(mips);
    for _ in 0..11 {
        put(0); // reserved
    }
    // Pixel format: size, flags (FOURCC), FourCC, then bit count and masks (unused).
    put(32);
    put(0x4);
    let fourcc = match encoding {
        Encoding::Bc1 => *b"DXT1",
        Encoding::Bc3 => *b"DXT5",
        Encoding::Bc4 => *b"ATI1",
        Encoding::Bc5 => *b"ATI2",
        Encoding::Bc7 => *b"DX10",
    };
    put(u32::from_le_bytes(fourcc));
    for _ in 0..5 {
        put(0);
    }
    let caps = if mips > 1 {
        DDSCAPS_TEXTURE | DDSCAPS_COMPLEX | DDSCAPS_MIPMAP
    } else {
        DDSCAPS_TEXTURE
    };
    put(caps);
    for _ in 0..4 {
        put(0); // caps2, caps3, caps4, reserved2
    }
    if encoding == Encoding::Bc7 {
        put(DXGI_BC7_UNORM);
        put(DIMENSION_TEXTURE2D);
        put(0); // misc flags
        put(1); // array size
        put(ALPHA_MODE_STRAIGHT);
    }
    b
}

/// The blocks of `img` and its `mips - 1` smaller levels, one level after the other.
#[cfg(feature = "native")]
fn block_compress(img: &Image, encoding: Encoding, mips: u32) -> Result<Vec<u8>> {
    use block_compression::{BC7Settings, CompressionVariant as V};
    use rayon::prelude::*;
    let opaque = img.rgba.chunks_exact(4).all(|p| p[3] == 255);
    let variant = match encoding {
        Encoding::Bc1 => V::BC1,
        Encoding::Bc3 => V::BC3,
        Encoding::Bc4 => V::BC4,
        Encoding::Bc5 => V::BC5,
        Encoding::Bc7 if opaque => V::BC7(BC7Settings::opaque_basic()),
        Encoding::Bc7 => V::BC7(BC7Settings::alpha_basic()),
    };
    let mut out = Vec::new();
    let mut level = std::borrow::Cow::Borrowed(img);
    for l in 0..mips {
        if l > 0 {
            level = std::borrow::Cow::Owned(half_size(&level));
        }
        let padded = padded_to_blocks(&level);
        let (w, h) = (padded.width, padded.height);
        let mut blocks = vec![0u8; variant.blocks_byte_size(w, h)];
        // One row of blocks a task: the encoder's rows are independent.
        let row_bytes = variant.bytes_per_row(w) as usize;
        blocks
            .par_chunks_mut(row_bytes)
            .zip(padded.rgba.par_chunks(w as usize * 16))
            .for_each(|(dst, src)| {
                block_compression::encode::compress_rgba8(variant, src, dst, w, 4, w * 4);
                if encoding == Encoding::Bc7 && !opaque {
                    mend_bc7_alpha(dst, src, w);
                }
            });
        if encoding == Encoding::Bc1 {
            // The block encoder writes BC1 opaque; SC2 keeps its team-colour mask in the one-bit alpha.
            super::bc1::keep_alpha(&padded, &mut blocks);
        }
        out.extend_from_slice(&blocks);
    }
    Ok(out)
}

/// `blocks`, one row of BC7 blocks encoded from the 4 rows of pixels `src` (`w` wide), with each
/// block that the modes with alpha (4, 5, 6: `alpha_ultrafast`) encode closer replaced by theirs.
/// `block_compression` 0.11 never adds a transparent block's alpha error to modes 0 to 3, which
/// store none (its `compute_opaque_err` is not called), so its other settings can make such a
/// block opaque: four colours, one of them half transparent, came back all opaque.
#[cfg(feature = "native")]
fn mend_bc7_alpha(blocks: &mut [u8], src: &[u8], w: u32) {
    use block_compression::{BC7Settings, CompressionVariant as V};
    let mut fast = vec![0u8; blocks.len()];
    let alpha_modes = V::BC7(BC7Settings::alpha_ultrafast());
    block_compression::encode::compress_rgba8(alpha_modes, src, &mut fast, w, 4, w * 4);
    let stride = w as usize * 4;
    let error = |block: &[u8], bx: usize| -> Option<u64> {
        let mut px = [0u32; 16];
        texture2ddecoder::decode_bc7(block, 4, 4, &mut px).ok()?;
        let mut sum = 0u64;
        for (i, p) in px.iter().enumerate() {
            let [b, g, r, a] = p.to_le_bytes();
            let at = (i / 4) * stride + (bx * 4 + i % 4) * 4;
            for (got, want) in [r, g, b, a].into_iter().zip(src.get(at..at + 4)?) {
                sum += u64::from(got.abs_diff(*want)).pow(2);
            }
        }
        Some(sum)
    };
    for (bx, (thorough, quick)) in blocks
        .chunks_exact_mut(16)
        .zip(fast.chunks_exact(16))
        .enumerate()
    {
        if let (Some(a), Some(b)) = (error(thorough, bx), error(quick, bx)) {
            if b < a {
                thorough.copy_from_slice(quick);
            }
        }
    }
}

/// The next mip level: half the size (at least 1), each pixel the rounded average of the 2x2
/// pixels above it (an odd edge's last pixel stands in for its missing neighbour).
#[cfg(feature = "native")]
fn half_size(img: &Image) -> Image {
    let (w, h) = (img.width as usize, img.height as usize);
    let (nw, nh) = ((w / 2).max(1), (h / 2).max(1));
    let at = |x: usize, y: usize, c: usize| {
        u32::from(img.rgba[(y.min(h - 1) * w + x.min(w - 1)) * 4 + c])
    };
    let mut rgba = Vec::with_capacity(nw * nh * 4);
    for y in 0..nh {
        for x in 0..nw {
            let (x0, y0) = (2 * x, 2 * y);
            for c in 0..4 {
                let sum =
                    at(x0, y0, c) + at(x0 + 1, y0, c) + at(x0, y0 + 1, c) + at(x0 + 1, y0 + 1, c);
                rgba.push(((sum + 2) / 4) as u8);
            }
        }
    }
    Image {
        width: nw as u32,
        height: nh as u32,
        rgba,
    }
}

/// `img` grown to whole 4x4 blocks by repeating its last column and row (the padding a decoder
/// never shows, chosen so it does not pull the edge blocks' colours).
#[cfg(feature = "native")]
fn padded_to_blocks(img: &Image) -> std::borrow::Cow<'_, Image> {
    let (w, h) = (img.width as usize, img.height as usize);
    let (pw, ph) = (w.div_ceil(4) * 4, h.div_ceil(4) * 4);
    if (pw, ph) == (w, h) {
        return std::borrow::Cow::Borrowed(img);
    }
    let mut rgba = Vec::with_capacity(pw * ph * 4);
    for y in 0..ph {
        let row = &img.rgba[y.min(h - 1) * w * 4..][..w * 4];
        rgba.extend_from_slice(row);
        for _ in w..pw {
            rgba.extend_from_slice(&row[(w - 1) * 4..]);
        }
    }
    std::borrow::Cow::Owned(Image {
        width: pw as u32,
        height: ph as u32,
        rgba,
    })
}

#[cfg(not(feature = "native"))]
fn block_compress(_: &Image, encoding: Encoding, _: u32) -> Result<Vec<u8>> {
    Err(Error::unsupported(format!(
        "writing {} DDS needs the native build of hangar",
        encoding.name()
    )))
}

/// `img` as a DDS file: block-compressed as `opts` says, with its mip chain. Any size works
/// (blocks at the right and bottom edges are padded, as DDS does).
pub fn encode(img: &Image, opts: Options) -> Result<Vec<u8>> {
    let (w, h) = (img.width, img.height);
    let pixels = (w as usize).checked_mul(h as usize);
    if w == 0 || h == 0 || w > MAX_EDGE || h > MAX_EDGE || pixels.is_none_or(|p| p > MAX_PIXELS) {
        return Err(Error::refused(
            "DDS.width",
            format!("{w}x{h} is outside 1..={MAX_EDGE} a side or more than {MAX_PIXELS} pixels"),
        ));
    }
    if pixels.and_then(|p| p.checked_mul(4)) != Some(img.rgba.len()) {
        return Err(Error::new(
            ErrorKind::Invalid,
            None,
            "image",
            format!("{} bytes of pixels for {w}x{h} RGBA", img.rgba.len()),
        ));
    }
    let mips = match opts.mipmaps {
        Mipmaps::Full => full_chain(w, h),
        Mipmaps::None => 1,
    };
    let encoded = block_compress(img, opts.encoding, mips)?;
    let top = opts.encoding.format().surface_bytes(w, h).unwrap_or(0);
    let mut out = header(w, h, mips, opts.encoding, top);
    out.extend_from_slice(&encoded);
    // What is handed out must read back as exactly what was written.
    let back = super::read_header(&out)?;
    if back.file_bytes() != Some(out.len()) || back.format != opts.encoding.format() {
        return Err(Error::new(
            ErrorKind::Invalid,
            None,
            "DDS.data",
            format!(
                "the encoder gave {} bytes for {w}x{h} {} with {mips} mips, the header describes {:?}",
                encoded.len(),
                opts.encoding.name(),
                back.file_bytes()
            ),
        ));
    }
    Ok(out)
}

/// The RGBA pixels of a PNG file (any colour type and depth: palette, grey and 16-bit are
/// expanded to 8-bit RGBA; an animated PNG gives its first frame).
pub fn read_png(data: &[u8]) -> Result<Image> {
    let fail = |e: png::DecodingError| {
        let kind = match e {
            png::DecodingError::IoError(_) => ErrorKind::Truncated,
            png::DecodingError::LimitsExceeded => ErrorKind::Refused,
            _ => ErrorKind::Invalid,
        };
        Error::new(kind, None, "PNG", format!("not a readable PNG: {e}"))
    };
    let mut dec = png::Decoder::new(data);
    dec.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = dec.read_info().map_err(fail)?;
    let (w, h) = reader.info().size();
    let pixels = (w as usize).checked_mul(h as usize);
    if w == 0 || h == 0 || w > MAX_EDGE || h > MAX_EDGE || pixels.is_none_or(|p| p > MAX_PIXELS) {
        return Err(Error::refused(
            "PNG.IHDR",
            format!("{w}x{h} is outside 1..={MAX_EDGE} a side or more than {MAX_PIXELS} pixels"),
        ));
    }
    let mut buf = vec![0u8; reader.output_buffer_size()];
    let frame = reader.next_frame(&mut buf).map_err(fail)?;
    let src = buf.get(..frame.buffer_size()).unwrap_or_default();
    let n = pixels.unwrap_or(0);
    let mut rgba = Vec::with_capacity(n * 4);
    match frame.color_type {
        png::ColorType::Rgba => rgba.extend_from_slice(src),
        png::ColorType::Rgb => {
            for p in src.chunks_exact(3) {
                rgba.extend_from_slice(p);
                rgba.push(255);
            }
        }
        png::ColorType::GrayscaleAlpha => {
            for p in src.chunks_exact(2) {
                if let [l, a] = *p {
                    rgba.extend_from_slice(&[l, l, l, a]);
                }
            }
        }
        png::ColorType::Grayscale => {
            for &l in src {
                rgba.extend_from_slice(&[l, l, l, 255]);
            }
        }
        png::ColorType::Indexed => {
            return Err(Error::new(
                ErrorKind::Unsupported,
                None,
                "PNG.PLTE",
                "a palette image the decoder did not expand",
            ))
        }
    }
    if rgba.len() != n * 4 {
        return Err(Error::new(
            ErrorKind::Truncated,
            None,
            "PNG.IDAT",
            format!("{w}x{h} pixels, the image data gives {} bytes", rgba.len()),
        ));
    }
    Ok(Image {
        width: w,
        height: h,
        rgba,
    })
}

/// A texture file's content (PNG, DDS, X4's `.gz`, or a TGA when `name` ends in `.tga`) as a DDS
/// encoded as `opts` says. A DDS input is decoded first (its first surface), so this also
/// re-encodes one DDS into another format.
pub fn to_dds(
    data: &[u8],
    name: &std::path::Path,
    opts: Options,
) -> Result<(Vec<u8>, Vec<Warning>)> {
    let (img, warnings) = super::load(data, name)?;
    Ok((encode(&img, opts)?, warnings))
}

#[cfg(all(test, not(feature = "native")))]
mod tests {
    #[test]
    fn writing_a_dds_without_the_native_build_is_refused() {
        let img = super::Image {
            width: 4,
            height: 4,
            rgba: vec![255; 64],
        };
        let e = super::encode(&img, super::Options::default()).unwrap_err();
        assert_eq!(e.kind, super::ErrorKind::Unsupported);
        assert_eq!(
            e.message,
            "writing BC7 DDS needs the native build of hangar"
        );
    }
}
