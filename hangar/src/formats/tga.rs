//! Truevision TGA pictures to RGBA: colour-mapped, true-colour and grey images, plain or
//! run-length encoded (image types 1, 2, 3, 9, 10, 11), 8 to 32 bits a pixel, any origin corner.
//!
//! TGA has no magic bytes: a file is read as TGA because its name says so. Every size is checked
//! against the bytes before anything is allocated, and a run-length stream may not describe more
//! pixels than its bytes can (128 a packet), so a small file cannot ask for gigabytes.

use crate::bytes::Cursor;
use crate::error::{Error, ErrorKind, Result};
use crate::formats::rgba::Image;

/// Largest picture accepted (as for DDS: a 16384 x 16384 surface).
const MAX_PIXELS: usize = 1 << 28;

/// The fields of the 18-byte header that decoding needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub id_length: u8,
    pub map_type: u8,
    pub image_type: u8,
    pub map_first: u16,
    pub map_length: u16,
    pub map_bits: u8,
    pub width: u16,
    pub height: u16,
    pub bits: u8,
    pub descriptor: u8,
}

/// Reads the header.
pub fn read_header(data: &[u8]) -> Result<Header> {
    let mut c = Cursor::new(data, "TGA");
    let id_length = c.u8("idLength")?;
    let map_type = c.u8("colorMapType")?;
    let image_type = c.u8("imageType")?;
    let map_first = c.u16("colorMap.firstEntry")?;
    let map_length = c.u16("colorMap.length")?;
    let map_bits = c.u8("colorMap.entryBits")?;
    let _origin = c.bytes(4, "origin")?;
    let width = c.u16("width")?;
    let height = c.u16("height")?;
    let bits = c.u8("pixelDepth")?;
    let descriptor = c.u8("imageDescriptor")?;
    let h = Header {
        id_length,
        map_type,
        image_type,
        map_first,
        map_length,
        map_bits,
        width,
        height,
        bits,
        descriptor,
    };
    let bad = |at: u64, field: &str, msg: String| Error::invalid(at, format!("TGA.{field}"), msg);
    let unsupported = |at: u64, field: &str, msg: String| {
        Error::new(
            ErrorKind::Unsupported,
            Some(at),
            format!("TGA.{field}"),
            msg,
        )
    };
    match image_type {
        1 | 9 => {
            if map_type != 1 {
                return Err(bad(
                    1,
                    "colorMapType",
                    format!("a colour-mapped image (type {image_type}) without a colour map"),
                ));
            }
            if !matches!(bits, 8 | 16) {
                return Err(unsupported(
                    16,
                    "pixelDepth",
                    format!("colour-map indices of {bits} bits (8 and 16 are read)"),
                ));
            }
            if !matches!(map_bits, 15 | 16 | 24 | 32) {
                return Err(unsupported(
                    7,
                    "colorMap.entryBits",
                    format!("colour-map entries of {map_bits} bits (15, 16, 24 and 32 are read)"),
                ));
            }
        }
        2 | 10 => {
            if !matches!(bits, 15 | 16 | 24 | 32) {
                return Err(unsupported(
                    16,
                    "pixelDepth",
                    format!("true-colour pixels of {bits} bits (15, 16, 24 and 32 are read)"),
                ));
            }
        }
        3 | 11 => {
            if !matches!(bits, 8 | 16) {
                return Err(unsupported(
                    16,
                    "pixelDepth",
                    format!("grey pixels of {bits} bits (8, and 16 as grey + alpha, are read)"),
                ));
            }
        }
        0 => {
            return Err(bad(
                2,
                "imageType",
                "type 0: the file holds no image".into(),
            ))
        }
        t => {
            return Err(unsupported(
                2,
                "imageType",
                format!("image type {t} (1, 2, 3 and their run-length forms 9, 10, 11 are read)"),
            ))
        }
    }
    if width == 0 || height == 0 {
        return Err(bad(12, "width", format!("size {width}x{height}")));
    }
    Ok(h)
}

impl Header {
    fn pixel_bytes(&self) -> usize {
        usize::from(self.bits).div_ceil(8)
    }

    fn rle(&self) -> bool {
        self.image_type >= 9
    }
}

/// A 15/16-bit A1R5G5B5 value as RGBA (alpha only when the file says it has an alpha bit).
fn rgb555(v: u16, alpha: bool) -> [u8; 4] {
    let five = |x: u16| (((x & 0x1f) * 255 + 15) / 31) as u8;
    let a = if alpha && v & 0x8000 == 0 { 0 } else { 255 };
    [five(v >> 10), five(v >> 5), five(v), a]
}

/// One stored value (`bytes` long, little-endian) as RGBA, for true-colour and colour-map entries.
fn colour(p: &[u8], alpha: bool) -> [u8; 4] {
    match *p {
        [b, g, r, a] => [r, g, b, a],
        [b, g, r] => [r, g, b, 255],
        [lo, hi] => rgb555(u16::from_le_bytes([lo, hi]), alpha),
        _ => [0, 0, 0, 255],
    }
}

/// Decodes a TGA file to RGBA, rows top to bottom.
pub fn decode(data: &[u8]) -> Result<Image> {
    let h = read_header(data)?;
    let (w, hh) = (usize::from(h.width), usize::from(h.height));
    let pixels = w * hh;
    if pixels > MAX_PIXELS {
        return Err(Error::refused(
            "TGA.width",
            format!("{w}x{hh} is more than {MAX_PIXELS} pixels"),
        ));
    }
    let alpha_bits = h.descriptor & 0x0f;
    let mut c = Cursor::new(data, "TGA");
    c.seek(18, "imageId")?;
    c.bytes(usize::from(h.id_length), "imageId")?;
    // The colour map, as RGBA entries (present in some true-colour files too: skipped there).
    let mut map: Vec<[u8; 4]> = Vec::new();
    if h.map_type == 1 {
        let entry = usize::from(h.map_bits).div_ceil(8);
        let at = c.pos();
        let raw = c.bytes(usize::from(h.map_length) * entry, "colorMap")?;
        if matches!(h.image_type, 1 | 9) {
            map = raw
                .chunks_exact(entry)
                .map(|e| colour(e, h.map_bits == 32 || (h.map_bits == 16 && alpha_bits > 0)))
                .collect();
            if map.is_empty() {
                return Err(Error::invalid(
                    at as u64,
                    "TGA.colorMap",
                    "a colour-mapped image with an empty colour map",
                ));
            }
        }
    }
    let pb = h.pixel_bytes();
    let start = c.pos();
    let body = data.get(start..).unwrap_or_default();
    // The stored values, one `pb`-byte value a pixel, in file order.
    let values: Vec<u8> = if h.rle() {
        // A packet of at most 1 + pb bytes gives at most 128 pixels.
        if pixels > body.len().saturating_mul(128) {
            return Err(Error::new(
                ErrorKind::Truncated,
                Some(data.len() as u64),
                "TGA.imageData",
                format!(
                    "{w}x{hh} pixels cannot come out of the {} run-length bytes left",
                    body.len()
                ),
            ));
        }
        unpack_rle(body, pixels, pb, start)?
    } else {
        let need = pixels * pb;
        body.get(..need)
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::Truncated,
                    Some(data.len() as u64),
                    "TGA.imageData",
                    format!(
                        "{w}x{hh} at {} bits needs {need} bytes from byte {start}, the file has {}",
                        h.bits,
                        body.len()
                    ),
                )
            })?
            .to_vec()
    };
    let mut rgba = Vec::with_capacity(pixels * 4);
    let mut bad_index = None;
    for (i, v) in values.chunks_exact(pb).enumerate() {
        let px = match h.image_type {
            1 | 9 => {
                let idx = match *v {
                    [a] => usize::from(a),
                    [lo, hi] => usize::from(u16::from_le_bytes([lo, hi])),
                    _ => 0,
                };
                let e = idx.checked_sub(usize::from(h.map_first));
                match e.and_then(|e| map.get(e)) {
                    Some(p) => *p,
                    None => {
                        bad_index.get_or_insert((i, idx));
                        [0, 0, 0, 255]
                    }
                }
            }
            3 | 11 => match *v {
                [l] => [l, l, l, 255],
                [l, a] => [l, l, l, a],
                _ => [0, 0, 0, 255],
            },
            _ => colour(v, h.bits == 32 || (h.bits == 16 && alpha_bits > 0)),
        };
        rgba.extend_from_slice(&px);
    }
    if let Some((i, idx)) = bad_index {
        return Err(Error::invalid(
            start as u64,
            "TGA.imageData",
            format!(
                "pixel {i} names colour-map entry {idx}, the map holds {} from {}",
                map.len(),
                h.map_first
            ),
        ));
    }
    // A 32-bit file that says it has no alpha, and whose alpha bytes are all 0, is opaque.
    if h.bits == 32 && alpha_bits == 0 && rgba.chunks_exact(4).all(|p| p.get(3) == Some(&0)) {
        for p in rgba.chunks_exact_mut(4) {
            if let Some(a) = p.get_mut(3) {
                *a = 255;
            }
        }
    }
    let rgba = orient(rgba, w, hh, h.descriptor);
    Ok(Image {
        width: u32::from(h.width),
        height: u32::from(h.height),
        rgba,
    })
}

/// The values of a run-length stream: packets of a count byte (high bit: one value repeated,
/// otherwise that many raw values; low 7 bits + 1 values), which may cross rows.
fn unpack_rle(body: &[u8], pixels: usize, pb: usize, start: usize) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(pixels * pb);
    let mut pos = 0usize;
    let cut = |pos: usize, done: usize| {
        Error::new(
            ErrorKind::Truncated,
            Some((start + pos) as u64),
            "TGA.imageData",
            format!("the run-length data ends after {done} of {pixels} pixels"),
        )
    };
    while out.len() < pixels * pb {
        let done = out.len() / pb;
        let Some(&head) = body.get(pos) else {
            return Err(cut(pos, done));
        };
        pos += 1;
        let count = (usize::from(head & 0x7f) + 1).min(pixels - done);
        if head & 0x80 != 0 {
            let v = body.get(pos..pos + pb).ok_or_else(|| cut(pos, done))?;
            pos += pb;
            for _ in 0..count {
                out.extend_from_slice(v);
            }
        } else {
            let n = (usize::from(head & 0x7f) + 1) * pb;
            let v = body.get(pos..pos + n).ok_or_else(|| cut(pos, done))?;
            pos += n;
            out.extend_from_slice(v.get(..count * pb).unwrap_or_default());
        }
    }
    Ok(out)
}

/// Rows from the file's origin corner (bottom-left unless the descriptor says top or right) to
/// top-to-bottom, left-to-right.
fn orient(rgba: Vec<u8>, w: usize, h: usize, descriptor: u8) -> Vec<u8> {
    let top = descriptor & 0x20 != 0;
    let right = descriptor & 0x10 != 0;
    if top && !right {
        return rgba;
    }
    let row = w * 4;
    let mut out = Vec::with_capacity(rgba.len());
    for y in 0..h {
        let src_y = if top { y } else { h - 1 - y };
        let line = rgba.get(src_y * row..(src_y + 1) * row).unwrap_or_default();
        if right {
            for p in line.chunks_exact(4).rev() {
                out.extend_from_slice(p);
            }
        } else {
            out.extend_from_slice(line);
        }
    }
    out
}
