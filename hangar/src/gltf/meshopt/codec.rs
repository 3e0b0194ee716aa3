//! The meshoptimizer codec calls of [`super`] (native build).

use crate::error::Result;

/// Nothing to refuse: the native build has meshoptimizer.
pub(super) fn check(_: &str) -> Result<()> {
    Ok(())
}

/// A triangle list as the extension's TRIANGLES stream.
pub(super) fn encode_indices(indices: &[u32], vertices: usize) -> Option<Vec<u8>> {
    meshopt::encode_index_buffer(indices, vertices).ok()
}

/// A vertex stream of `stride`-byte elements (4 to 64, a multiple of 4) as an ATTRIBUTES stream.
pub(super) fn encode_vertices(bytes: &[u8], stride: usize) -> Option<Vec<u8>> {
    fn enc<const N: usize>(bytes: &[u8]) -> Option<Vec<u8>> {
        if bytes.len() % N != 0 {
            return None;
        }
        let elements: Vec<[u8; N]> = bytes
            .chunks_exact(N)
            .map(|c| std::array::from_fn(|k| c[k]))
            .collect();
        // Version 0: the vertex codec EXT_meshopt_compression specifies.
        meshopt::encode_vertex_buffer_level(&elements, 2, Some(0)).ok()
    }
    macro_rules! e {
        ($($n:literal)*) => { match stride { $($n => enc::<$n>(bytes),)* _ => None } };
    }
    e!(4 8 12 16 20 24 28 32 36 40 44 48 52 56 60 64)
}

/// One stream of the extension decoded (and unfiltered): `count` elements of `stride` bytes.
pub(super) fn decode(
    src: &[u8],
    mode: &str,
    filter: &str,
    stride: usize,
    count: usize,
) -> std::result::Result<Vec<u8>, String> {
    let failed = |e: meshopt::Error| format!("meshoptimizer could not decode it: {e:?}");
    match (mode, stride) {
        ("TRIANGLES", 2) => meshopt::decode_index_buffer::<u16>(src, count)
            .map(|v| bytemuck::cast_slice(&v).to_vec())
            .map_err(failed),
        ("TRIANGLES", 4) => meshopt::decode_index_buffer::<u32>(src, count)
            .map(|v| bytemuck::cast_slice(&v).to_vec())
            .map_err(failed),
        ("INDICES", 2) => meshopt::decode_index_sequence::<u16>(src, count)
            .map(|v| bytemuck::cast_slice(&v).to_vec())
            .map_err(failed),
        ("INDICES", 4) => meshopt::decode_index_sequence::<u32>(src, count)
            .map(|v| bytemuck::cast_slice(&v).to_vec())
            .map_err(failed),
        ("ATTRIBUTES", _) => {
            let mut v = decode_vertices(src, stride, count)
                .ok_or_else(|| {
                    format!("byteStride {stride} is not read (4 to 64, a multiple of 4)")
                })?
                .map_err(failed)?;
            unfilter(&mut v, filter, stride)?;
            Ok(v)
        }
        _ => Err(format!(
            "mode {mode:?} with byteStride {stride} is not defined"
        )),
    }
}

fn decode_vertices(src: &[u8], stride: usize, count: usize) -> Option<meshopt::Result<Vec<u8>>> {
    let dec = |n: usize| -> Option<meshopt::Result<Vec<u8>>> {
        #[derive(Clone, Copy)]
        struct Element<const N: usize>([u8; N]);
        impl<const N: usize> Default for Element<N> {
            fn default() -> Self {
                Element([0; N])
            }
        }
        fn one<const N: usize>(src: &[u8], count: usize) -> meshopt::Result<Vec<u8>> {
            meshopt::decode_vertex_buffer::<Element<N>>(src, count)
                .map(|v| v.iter().flat_map(|e| e.0).collect())
        }
        macro_rules! d {
            ($($n:literal)*) => { match n { $($n => Some(one::<$n>(src, count)),)* _ => None } };
        }
        d!(4 8 12 16 20 24 28 32 36 40 44 48 52 56 60 64)
    };
    dec(stride)
}

/// Undoes a filter gltfpack applies before encoding (octahedral normals, quaternions,
/// exponent-packed floats, YCoCg colours).
fn unfilter(v: &mut [u8], filter: &str, stride: usize) -> std::result::Result<(), String> {
    match (filter, stride) {
        ("NONE", _) => {}
        ("OCTAHEDRAL", 4) => meshopt::decode_filter_oct::<i8>(bytemuck::cast_slice_mut(v)),
        ("OCTAHEDRAL", 8) => {
            let mut w: Vec<[i16; 4]> = copied(v);
            meshopt::decode_filter_oct::<i16>(&mut w);
            v.copy_from_slice(bytemuck::cast_slice(&w));
        }
        ("QUATERNION", 8) => {
            let mut w: Vec<[i16; 4]> = copied(v);
            meshopt::decode_filter_quat(&mut w);
            v.copy_from_slice(bytemuck::cast_slice(&w));
        }
        ("EXPONENTIAL", 4) => {
            let mut w: Vec<[u32; 1]> = copied(v);
            meshopt::decode_filter_exp(&mut w);
            v.copy_from_slice(bytemuck::cast_slice(&w));
        }
        ("COLOR", 4) => meshopt::decode_filter_color::<u8>(bytemuck::cast_slice_mut(v)),
        ("COLOR", 8) => {
            let mut w: Vec<[u16; 4]> = copied(v);
            meshopt::decode_filter_color::<u16>(&mut w);
            v.copy_from_slice(bytemuck::cast_slice(&w));
        }
        _ => {
            return Err(format!(
                "filter {filter:?} with byteStride {stride} is not read"
            ))
        }
    }
    Ok(())
}

/// `v` as elements of `T` (an aligned copy: `v` is a byte buffer).
fn copied<T: bytemuck::Pod>(v: &[u8]) -> Vec<T> {
    let mut w = vec![T::zeroed(); v.len() / std::mem::size_of::<T>()];
    bytemuck::cast_slice_mut::<T, u8>(&mut w).copy_from_slice(v);
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_come_back_as_they_were() {
        let v: Vec<u8> = (0..1200u32)
            .flat_map(|i| ((i / 3) as f32 * 0.25).to_le_bytes())
            .collect();
        let e = encode_vertices(&v, 12).unwrap();
        assert!(e.len() < v.len());
        assert_eq!(decode(&e, "ATTRIBUTES", "NONE", 12, 400).unwrap(), v);
        let idx: Vec<u32> = (0..300).map(|i| (i * 7) % 100).collect();
        let e = meshopt::encode_index_buffer(&idx, 100).unwrap();
        let back = decode(&e, "TRIANGLES", "NONE", 2, 300).unwrap();
        let back: Vec<u32> = back
            .chunks(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]) as u32)
            .collect();
        // The codec may start a triangle at another corner; the winding stays.
        let canon = |t: &[u32]| {
            let k = (0..3).min_by_key(|&k| t[k]).unwrap_or(0);
            [t[k], t[(k + 1) % 3], t[(k + 2) % 3]]
        };
        let tris = |v: &[u32]| v.chunks(3).map(canon).collect::<Vec<_>>();
        assert_eq!(tris(&back), tris(&idx));
        assert!(decode(&e, "LINES", "NONE", 2, 300).is_err());
        assert!(decode(&e, "ATTRIBUTES", "NONE", 68, 3).is_err());
    }
}
