//! Integer vertex and animation data (glTF's normalized types, KHR_mesh_quantization), both ways:
//! what `--quantize` writes and what the importer reads back as floats.
//!
//! Written: normals and tangents as signed 8-bit (the games store them in 8 bits), texture
//! coordinates as 16-bit when every value lies in [0, 1] or [-1, 1], colours and skin weights as
//! 8-bit, rotation keys as signed 16-bit. Positions stay 32-bit floats: 16-bit positions need a
//! dequantizing node transform, which a skinned mesh ignores and Blender would show as a scale.

use crate::normalized::{
    from_snorm16, from_snorm8, from_unorm16, from_unorm8, snorm16, snorm8, unorm16, unorm8,
};
use gltf_json::accessor::ComponentType;

/// Unit vectors as 4 bytes each (x, y, z, and w or a zero pad: vertex elements are 4-byte
/// aligned). Of the 8 ways to round x, y and z, the one whose length is closest to 1 is kept:
/// rounding each alone can leave a vector further from unit length than glTF accepts.
pub fn unit_vectors<const N: usize>(v: &[[f32; N]]) -> Vec<u8> {
    let mut out = Vec::with_capacity(v.len() * 4);
    for x in v {
        let c: [f32; 4] = std::array::from_fn(|k| {
            x.get(k).map_or(0.0, |c| {
                if c.is_finite() {
                    c.clamp(-1.0, 1.0) * 127.0
                } else {
                    0.0
                }
            })
        });
        let mut best = [0i32; 3];
        let mut err = f32::MAX;
        for m in 0..8 {
            let q: [i32; 3] = std::array::from_fn(|k| {
                let f = c[k].floor() as i32;
                if m >> k & 1 == 1 { f + 1 } else { f }.clamp(-127, 127)
            });
            let len = q.iter().map(|&a| (a * a) as f32).sum::<f32>().sqrt() / 127.0;
            // Ties keep the plain rounding's neighbourhood: compare with a tiny bias to it.
            let near = q
                .iter()
                .zip(&c)
                .map(|(&a, &f)| (a as f32 - f).abs())
                .sum::<f32>();
            let e = (len - 1.0).abs() + near * 1e-4;
            if e < err {
                err = e;
                best = q;
            }
        }
        let w = snorm8(c[3] / 127.0);
        out.extend_from_slice(&[
            best[0] as i8 as u8,
            best[1] as i8 as u8,
            best[2] as i8 as u8,
        ]);
        out.push(if N == 4 { w as u8 } else { 0 });
    }
    out
}

/// Texture coordinates as 16-bit normalized integers when they all fit (unsigned for [0, 1],
/// signed for [-1, 1]); `None` when some lie outside and must stay floats.
pub fn tex_coords(v: &[[f32; 2]]) -> Option<(Vec<u8>, ComponentType)> {
    let all = |lo: f32| v.iter().flatten().all(|c| (lo..=1.0).contains(c));
    let mut out = Vec::with_capacity(v.len() * 4);
    if all(0.0) {
        for c in v.iter().flatten() {
            out.extend_from_slice(&unorm16(*c).to_le_bytes());
        }
        Some((out, ComponentType::U16))
    } else if all(-1.0) {
        for c in v.iter().flatten() {
            out.extend_from_slice(&snorm16(*c).to_le_bytes());
        }
        Some((out, ComponentType::I16))
    } else {
        None
    }
}

/// Colours in [0, 1] as 8-bit; `None` when some lie outside (HDR vertex colours stay floats).
pub fn colors(v: &[[f32; 4]]) -> Option<Vec<u8>> {
    v.iter()
        .flatten()
        .all(|c| (0.0..=1.0).contains(c))
        .then(|| v.iter().flatten().map(|c| unorm8(*c)).collect())
}

/// Values that are all exactly `k / 255` (as the games store colours and skin weights) as those
/// bytes, which read back as the very same floats: glTF's core spec takes normalized bytes for
/// colours and weights, a quarter of the floats' size with nothing lost. `None` as soon as one
/// value is not such a byte; with `sum_255` also when a vertex's bytes do not add up to 255
/// (glTF checks that weights sum to one).
pub fn exact_unorm8<const N: usize>(v: &[[f32; N]], sum_255: bool) -> Option<Vec<u8>> {
    let floats = v.as_flattened();
    let mut out = vec![0u8; floats.len()];
    let mut exact = true;
    // One branch-free pass the compiler vectorizes (a float-to-integer `as`, which saturates, does
    // not): adding 1.5 * 2^23 rounds a value times 255 to an integer held in the low mantissa
    // bits. A value counts when it lies in [0, 1] and that integer's float is it, bit for bit.
    const ROUND: f32 = 12_582_912.0;
    for (b, &f) in out.iter_mut().zip(floats) {
        let y = f * 255.0 + ROUND;
        *b = y.to_bits() as u8;
        exact &= (0.0..=1.0).contains(&f) & (((y - ROUND) / 255.0).to_bits() == f.to_bits());
    }
    let sums = || {
        out.chunks_exact(N)
            .all(|q| q.iter().map(|&b| b as u32).sum::<u32>() == 255)
    };
    (exact && (!sum_255 || sums())).then_some(out)
}

/// Skin weights as bytes that add up to exactly 255 (glTF checks the sum): rounded, then the
/// remainder given to the largest weights.
pub fn weights(v: &[[f32; 4]]) -> Vec<u8> {
    let mut out = Vec::with_capacity(v.len() * 4);
    for w in v {
        let w = w.map(|x| if x.is_finite() && x > 0.0 { x } else { 0.0 });
        let sum: f32 = w.iter().sum();
        if sum <= 0.0 {
            out.extend_from_slice(&[255, 0, 0, 0]);
            continue;
        }
        let scaled = w.map(|x| x / sum * 255.0);
        let mut q = scaled.map(|x| x.floor() as i32);
        let mut left = 255 - q.iter().sum::<i32>();
        let mut order = [0usize, 1, 2, 3];
        order.sort_by(|&a, &b| {
            (scaled[b] - scaled[b].floor()).total_cmp(&(scaled[a] - scaled[a].floor()))
        });
        for &k in order.iter().cycle() {
            if left <= 0 {
                break;
            }
            q[k] += 1;
            left -= 1;
        }
        out.extend(q.map(|x| x.clamp(0, 255) as u8));
    }
    out
}

/// Rotation keys (x, y, z, w) as signed 16-bit.
pub fn rotations(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|c| snorm16(*c).to_le_bytes()).collect()
}

/// The float value of one component as glTF defines it for `component` (normalized or not).
pub fn component(bytes: &[u8], component: ComponentType, normalized: bool) -> f32 {
    let i16_at = || i16::from_le_bytes([bytes[0], bytes[1]]);
    let u16_at = || u16::from_le_bytes([bytes[0], bytes[1]]);
    match (component, normalized) {
        (ComponentType::F32, _) => bytes.try_into().map(f32::from_le_bytes).unwrap_or(f32::NAN),
        (ComponentType::I8, true) => from_snorm8(bytes[0] as i8),
        (ComponentType::I8, false) => bytes[0] as i8 as f32,
        (ComponentType::U8, true) => from_unorm8(bytes[0]),
        (ComponentType::U8, false) => bytes[0] as f32,
        (ComponentType::I16, true) => from_snorm16(i16_at()),
        (ComponentType::I16, false) => i16_at() as f32,
        (ComponentType::U16, true) => from_unorm16(u16_at()),
        (ComponentType::U16, false) => u16_at() as f32,
        (ComponentType::U32, _) => {
            u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as f32
        }
    }
}

pub fn component_size(c: ComponentType) -> usize {
    match c {
        ComponentType::I8 | ComponentType::U8 => 1,
        ComponentType::I16 | ComponentType::U16 => 2,
        ComponentType::U32 | ComponentType::F32 => 4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_bytes_are_every_k_over_255_and_nothing_else() {
        let all: Vec<[f32; 1]> = (0..=255u8).map(|k| [from_unorm8(k)]).collect();
        let bytes = exact_unorm8(&all, false).unwrap();
        assert_eq!(bytes, (0..=255u8).collect::<Vec<_>>());
        // Each byte reads back as the float it came from, bit for bit.
        for (b, [f]) in bytes.iter().zip(&all) {
            assert_eq!(
                component(&[*b], ComponentType::U8, true).to_bits(),
                f.to_bits()
            );
        }
        for odd in [0.5, 0.3, -0.0, 1.5, -1.0 / 255.0, f32::NAN, f32::INFINITY] {
            assert_eq!(exact_unorm8(&[[1.0, odd]], false), None, "{odd}");
        }
        // One step past a byte's float is no longer that byte.
        let next = f32::from_bits(from_unorm8(7).to_bits() + 1);
        assert_eq!(exact_unorm8(&[[next]], false), None);
        let w = [
            [from_unorm8(200), from_unorm8(55), 0.0, 0.0],
            [1.0, 0.0, 0.0, 0.0],
        ];
        assert_eq!(
            exact_unorm8(&w, true),
            Some(vec![200, 55, 0, 0, 255, 0, 0, 0])
        );
        // Weights whose bytes miss 255 stay floats (glTF checks the sum).
        let short = [[from_unorm8(200), from_unorm8(54), 0.0, 0.0]];
        assert_eq!(exact_unorm8(&short, true), None);
        assert_eq!(exact_unorm8(&short, false), Some(vec![200, 54, 0, 0]));
    }

    #[test]
    fn weights_add_up_to_255_and_keep_their_order() {
        let third = 1.0 / 3.0;
        let q = weights(&[[0.5, 0.25, 0.25, 0.0], [third, third, third, 0.0], [0.0; 4]]);
        assert_eq!(&q[..4], &[127, 64, 64, 0]);
        for w in q.chunks(4) {
            assert_eq!(w.iter().map(|&x| x as u32).sum::<u32>(), 255);
        }
        assert_eq!(&q[4..8], &[85, 85, 85, 0]);
        assert_eq!(&q[8..], &[255, 0, 0, 0]);
    }

    #[test]
    fn unit_vectors_stay_unit_after_rounding() {
        let t = [
            [0.5774f32, 0.5774, 0.5774, -1.0],
            [0.0, 0.0, 0.0, 1.0],
            [0.1, 0.995, 0.0, 1.0],
        ];
        let q = unit_vectors(&t);
        for (v, src) in q.chunks(4).zip(&t).take(3) {
            let f: Vec<f32> = v
                .iter()
                .map(|&b| component(&[b], ComponentType::I8, true))
                .collect();
            let len = (f[0] * f[0] + f[1] * f[1] + f[2] * f[2]).sqrt();
            if src[..3] != [0.0; 3] {
                assert!((len - 1.0).abs() < 0.005, "{f:?} has length {len}");
            }
            assert_eq!(f[3], src[3]);
        }
    }

    #[test]
    fn normalized_values_come_back_within_half_a_step() {
        for v in [-1.0f32, -0.3, 0.0, 0.6, 1.0] {
            let b = snorm8(v).to_le_bytes();
            assert!((component(&b, ComponentType::I8, true) - v).abs() <= 0.5 / 127.0);
            let b = snorm16(v).to_le_bytes();
            assert!((component(&b, ComponentType::I16, true) - v).abs() <= 0.5 / 32767.0);
        }
        let b = unorm16(0.25).to_le_bytes();
        assert!((component(&b, ComponentType::U16, true) - 0.25).abs() <= 0.5 / 65535.0);
        // -128 is -1 too (glTF clamps it).
        assert_eq!(component(&[0x80], ComponentType::I8, true), -1.0);
        assert_eq!(tex_coords(&[[0.0, 2.0]]), None);
        assert_eq!(
            tex_coords(&[[-0.5, 1.0]]).map(|t| t.1),
            Some(ComponentType::I16)
        );
    }
}
