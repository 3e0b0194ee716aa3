//! BC1's one-bit alpha. A BC1 block whose first colour is not above its second has three colours
//! and a fourth index that is transparent black (DXT1 punch-through). StarCraft II keeps its
//! team-colour mask there, so a block with a transparent pixel must not be written opaque, as a
//! colour-only encoder does: [`keep_alpha`] rewrites those blocks in the three-colour mode.

use super::Image;

/// Alpha below this is transparent (as the BC1 encoders that keep alpha decide).
const CUTOFF: u8 = 128;

/// Rewrites, in `blocks` (the BC1 data of one mip level, `level`), every block where `level` has a
/// transparent pixel. The other blocks are left as the encoder made them.
pub fn keep_alpha(level: &Image, blocks: &mut [u8]) {
    if level.rgba.chunks_exact(4).all(|p| p[3] >= CUTOFF) {
        return;
    }
    let (bw, bh) = (level.width.div_ceil(4), level.height.div_ceil(4));
    let mut at = 0usize;
    for by in 0..bh {
        for bx in 0..bw {
            let px = pixels(level, bx, by);
            if let Some(b) = blocks.get_mut(at..at + 8) {
                if px.iter().any(|p| p[3] < CUTOFF) {
                    b.copy_from_slice(&three_colour(&px));
                }
            }
            at += 8;
        }
    }
}

/// The 16 pixels of block (`bx`, `by`), edge pixels repeated past the image.
fn pixels(img: &Image, bx: u32, by: u32) -> [[u8; 4]; 16] {
    let mut out = [[0u8; 4]; 16];
    for (i, p) in out.iter_mut().enumerate() {
        let x = (bx * 4 + i as u32 % 4).min(img.width.saturating_sub(1));
        let y = (by * 4 + i as u32 / 4).min(img.height.saturating_sub(1));
        let o = (y as usize * img.width as usize + x as usize) * 4;
        if let Some(s) = img.rgba.get(o..o + 4) {
            p.copy_from_slice(s);
        }
    }
    out
}

fn to565(c: [i32; 3]) -> u16 {
    let q = |v: i32, bits: u32| ((v.clamp(0, 255) * ((1 << bits) - 1) + 127) / 255) as u16;
    (q(c[0], 5) << 11) | (q(c[1], 6) << 5) | q(c[2], 5)
}

fn from565(c: u16) -> [i32; 3] {
    let (r, g, b) = ((c >> 11) as i32, ((c >> 5) & 63) as i32, (c & 31) as i32);
    [
        (r << 3) | (r >> 2),
        (g << 2) | (g >> 4),
        (b << 3) | (b >> 2),
    ]
}

/// A block in BC1's three-colour mode: the opaque pixels' colour line (the bounding box along
/// the channel that varies most, the others following its direction), its midpoint, and index 3
/// (transparent) for the transparent pixels.
fn three_colour(px: &[[u8; 4]; 16]) -> [u8; 8] {
    let opaque: Vec<[i32; 3]> = px
        .iter()
        .filter(|p| p[3] >= CUTOFF)
        .map(|p| [p[0] as i32, p[1] as i32, p[2] as i32])
        .collect();
    let mut lo = [255i32; 3];
    let mut hi = [0i32; 3];
    for p in &opaque {
        for c in 0..3 {
            lo[c] = lo[c].min(p[c]);
            hi[c] = hi[c].max(p[c]);
        }
    }
    if let Some(main) = (0..3).max_by_key(|&c| hi[c] - lo[c]) {
        let n = opaque.len().max(1) as i32;
        let mean = |c: usize| opaque.iter().map(|p| p[c]).sum::<i32>() / n;
        for c in 0..3 {
            let cov: i64 = opaque
                .iter()
                .map(|p| ((p[main] - mean(main)) * (p[c] - mean(c))) as i64)
                .sum();
            if cov < 0 {
                std::mem::swap(&mut lo[c], &mut hi[c]);
            }
        }
    }
    let (mut c0, mut c1) = (to565(lo), to565(hi));
    if opaque.is_empty() {
        (c0, c1) = (0, 0);
    }
    // Three-colour mode needs the first colour not above the second.
    if c0 > c1 {
        std::mem::swap(&mut c0, &mut c1);
    }
    let (p0, p1) = (from565(c0), from565(c1));
    let palette = [p0, p1, [0, 1, 2].map(|c| (p0[c] + p1[c]) / 2)];
    let mut indices = 0u32;
    for (i, p) in px.iter().enumerate() {
        let index = if p[3] < CUTOFF {
            3
        } else {
            let d = |q: &[i32; 3]| (0..3).map(|c| (q[c] - p[c] as i32).pow(2)).sum::<i32>();
            (0..3).min_by_key(|&k| d(&palette[k])).unwrap_or(0) as u32
        };
        indices |= index << (2 * i);
    }
    let mut out = [0u8; 8];
    out[..2].copy_from_slice(&c0.to_le_bytes());
    out[2..4].copy_from_slice(&c1.to_le_bytes());
    out[4..].copy_from_slice(&indices.to_le_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A block half transparent: the transparent pixels decode transparent, the others keep their
    /// two colours within BC1's precision.
    #[test]
    fn a_block_with_transparent_pixels_keeps_them() {
        let mut px = [[0u8; 4]; 16];
        for (i, p) in px.iter_mut().enumerate() {
            *p = match i % 3 {
                0 => [200, 40, 10, 255],
                1 => [20, 180, 90, 255],
                _ => [0, 0, 0, 0],
            };
        }
        let b = three_colour(&px);
        let (c0, c1) = (
            u16::from_le_bytes([b[0], b[1]]),
            u16::from_le_bytes([b[2], b[3]]),
        );
        assert!(c0 <= c1, "three-colour mode");
        let idx = u32::from_le_bytes([b[4], b[5], b[6], b[7]]);
        let palette = [from565(c0), from565(c1)];
        for (i, p) in px.iter().enumerate() {
            let k = (idx >> (2 * i)) & 3;
            if p[3] == 0 {
                assert_eq!(k, 3, "pixel {i}");
            } else {
                let q = palette[k as usize];
                for c in 0..3 {
                    assert!((q[c] - p[c] as i32).abs() <= 8, "pixel {i}: {q:?} vs {p:?}");
                }
            }
        }
    }

    /// Only blocks with a transparent pixel change, at every mip level.
    #[test]
    fn opaque_blocks_are_left_alone() {
        let mut img = Image {
            width: 8,
            height: 4,
            rgba: vec![255; 8 * 4 * 4],
        };
        img.rgba[3] = 0; // pixel (0, 0) transparent: block 0 only
        let mut blocks = vec![0xAAu8; 8 * 2];
        keep_alpha(&img, &mut blocks);
        assert_ne!(&blocks[..8], &[0xAA; 8]);
        assert_eq!(
            &blocks[8..16],
            &[0xAA; 8],
            "the opaque block is the encoder's"
        );
        // Level 1 (4x2): its (0, 0) averages alpha 0 with three 255s: 191, opaque.
        let mut level1 = Image {
            width: 4,
            height: 2,
            rgba: vec![255; 4 * 2 * 4],
        };
        level1.rgba[3] = 191;
        let mut blocks = vec![0xAAu8; 8];
        keep_alpha(&level1, &mut blocks);
        assert_eq!(&blocks[..], &[0xAA; 8]);
    }
}
