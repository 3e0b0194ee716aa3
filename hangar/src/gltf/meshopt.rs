//! EXT_meshopt_compression, both ways: `--compress` encodes a glTF's vertex, index, skin and
//! animation streams with meshoptimizer, and the importer decodes files that use it (gltfpack's
//! too, filters included) before reading them as any other glTF.
//!
//! Layout written: buffer 0 (the GLB's BIN chunk) holds the compressed streams and whatever stays
//! plain (images); buffer 1 is the fallback buffer of the extension, with no data, whose layout
//! the buffer views keep, so a decoder fills it and reads the file unchanged.

use crate::error::{Error, ErrorKind, Result};
use gltf_json::buffer::{Target, View};
use gltf_json::validation::Checked::Valid;
use gltf_json::validation::USize64;
use gltf_json::{accessor, Index, Root};
use serde_json::{json, Value};
use std::borrow::Cow;

const EXT: &str = "EXT_meshopt_compression";

/// The element size of the one accessor on each buffer view (`None`: no accessor, e.g. images).
fn element_sizes(root: &Root) -> Vec<Option<(usize, accessor::ComponentType)>> {
    let mut out = vec![None; root.buffer_views.len()];
    for a in &root.accessors {
        let (Some(v), Valid(c), Valid(t)) = (a.buffer_view, &a.component_type, &a.type_) else {
            continue;
        };
        if let Some(slot) = out.get_mut(v.value()) {
            let size = super::quantize::component_size(c.0) * t.multiplicity();
            slot.get_or_insert((size, c.0));
        }
    }
    out
}

/// A stream encoded as the extension's `mode` with its element size, when that is smaller.
fn encode(
    view: &View,
    bytes: &[u8],
    element: Option<(usize, accessor::ComponentType)>,
) -> Option<(Vec<u8>, usize, &'static str)> {
    let (size, component) = element?;
    let is_index = view.target == Some(Valid(Target::ElementArrayBuffer));
    let encoded = if is_index {
        let indices: Vec<u32> = match component {
            accessor::ComponentType::U16 => bytes
                .chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]) as u32)
                .collect(),
            accessor::ComponentType::U32 => bytes
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
            _ => return None,
        };
        if indices.len() % 3 != 0 {
            return None;
        }
        let vertices = indices.iter().max().map_or(0, |&m| m as usize + 1);
        (
            meshopt::encode_index_buffer(&indices, vertices).ok()?,
            size,
            "TRIANGLES",
        )
    } else {
        let stride = view.byte_stride.map_or(size, |s| s.0);
        if stride == 0 || stride % 4 != 0 || bytes.len() % stride != 0 {
            return None;
        }
        (encode_vertices(bytes, stride)?, stride, "ATTRIBUTES")
    };
    (encoded.0.len() < bytes.len()).then_some(encoded)
}

fn encode_vertices(bytes: &[u8], stride: usize) -> Option<Vec<u8>> {
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

/// Compresses the streams of an export in place: `pieces` (one per buffer view, at its offset
/// in a buffer of `bin_len` bytes) become buffer 0's new content; see the module's layout.
pub fn compress(
    root: &mut Root,
    pieces: &mut Vec<(usize, Cow<'_, [u8]>)>,
    bin_len: &mut usize,
) -> Result<()> {
    if pieces.is_empty() || pieces.len() != root.buffer_views.len() || root.buffers.len() != 1 {
        return Ok(());
    }
    let sizes = element_sizes(root);
    let encoded: Vec<Option<(Vec<u8>, usize, &str)>> = pieces
        .iter()
        .zip(&root.buffer_views)
        .zip(&sizes)
        .map(|(((_, bytes), view), size)| encode(view, bytes, *size))
        .collect();
    let saved: usize = pieces
        .iter()
        .zip(&encoded)
        .filter_map(|((_, b), e)| e.as_ref().map(|e| b.len() - e.0.len()))
        .sum();
    // The extension costs about 150 bytes of JSON a view and a fallback buffer: a tiny file
    // stays plain.
    if saved < 256 + 150 * root.buffer_views.len() {
        return Ok(());
    }
    let mut out: Vec<(usize, Cow<'_, [u8]>)> = Vec::with_capacity(pieces.len());
    let mut len = 0usize;
    for (i, ((old_offset, bytes), enc)) in
        std::mem::take(pieces).into_iter().zip(encoded).enumerate()
    {
        let offset = len.next_multiple_of(4);
        let view = &mut root.buffer_views[i];
        match enc {
            Some((data, stride, mode)) => {
                let ext = json!({
                    "buffer": 0,
                    "byteOffset": offset,
                    "byteLength": data.len(),
                    "byteStride": stride,
                    "count": bytes.len() / stride,
                    "mode": mode,
                });
                view.buffer = Index::new(1);
                view.byte_offset = Some(USize64::from(old_offset));
                view.extensions
                    .get_or_insert_with(Default::default)
                    .others
                    .insert(EXT.into(), ext);
                len = offset + data.len();
                out.push((offset, Cow::Owned(data)));
            }
            None => {
                view.byte_offset = Some(USize64::from(offset));
                len = offset + bytes.len();
                out.push((offset, bytes));
            }
        }
    }
    let fallback_len = *bin_len;
    *pieces = out;
    *bin_len = len.next_multiple_of(4);
    root.buffers[0].byte_length = USize64::from(*bin_len);
    let mut fallback = gltf_json::Buffer {
        byte_length: USize64::from(fallback_len),
        name: None,
        uri: None,
        extensions: Some(Default::default()),
        extras: Default::default(),
    };
    if let Some(e) = fallback.extensions.as_mut() {
        e.others.insert(EXT.into(), json!({ "fallback": true }));
    }
    root.buffers.push(fallback);
    for list in [&mut root.extensions_used, &mut root.extensions_required] {
        if !list.iter().any(|e| e == EXT) {
            list.push(EXT.into());
        }
    }
    Ok(())
}

fn bad(path: String, message: impl Into<String>) -> Error {
    Error::new(ErrorKind::Invalid, None, path, message)
}

/// The fallback buffers of the extension (no data of their own): their indices.
pub fn fallback_buffers(root: &Root) -> Vec<bool> {
    root.buffers
        .iter()
        .map(|b| {
            b.extensions
                .as_ref()
                .and_then(|e| e.others.get(EXT))
                .and_then(|v| v.get("fallback"))
                .and_then(Value::as_bool)
                == Some(true)
        })
        .collect()
}

/// Decodes every compressed buffer view into its place in its (fallback) buffer. `budget` is
/// the most bytes decoding may produce (a hostile file can claim any count).
pub fn decompress(root: &Root, buffers: &mut [Vec<u8>], budget: usize) -> Result<()> {
    let mut spent = 0usize;
    for (vi, view) in root.buffer_views.iter().enumerate() {
        let Some(ext) = view.extensions.as_ref().and_then(|e| e.others.get(EXT)) else {
            continue;
        };
        let path = format!("bufferViews[{vi}].extensions.{EXT}");
        let num = |k: &str| -> Result<usize> {
            ext.get(k)
                .and_then(Value::as_u64)
                .and_then(|v| usize::try_from(v).ok())
                .ok_or_else(|| bad(format!("{path}.{k}"), "missing or not a count"))
        };
        let (src_buffer, src_offset, src_len) =
            (num("buffer")?, num("byteOffset")?, num("byteLength")?);
        let (stride, count) = (num("byteStride")?, num("count")?);
        let mode = ext.get("mode").and_then(Value::as_str).unwrap_or("");
        let filter = ext.get("filter").and_then(Value::as_str).unwrap_or("NONE");
        let size = stride
            .checked_mul(count)
            .filter(|&s| s <= budget.saturating_sub(spent))
            .ok_or_else(|| {
                Error::refused(
                    path.clone(),
                    format!("{count} elements of {stride} bytes: more than this file can hold"),
                )
            })?;
        spent += size;
        let src = buffers
            .get(src_buffer)
            .and_then(|b| b.get(src_offset..src_offset.checked_add(src_len)?))
            .ok_or_else(|| bad(format!("{path}.byteOffset"), "runs past its buffer"))?
            .to_vec();
        let decoded =
            decode(&src, mode, filter, stride, count).map_err(|m| bad(path.clone(), m))?;
        let dst_offset = view.byte_offset.map_or(0, |o| o.0 as usize);
        let dst = buffers
            .get_mut(view.buffer.value())
            .and_then(|b| b.get_mut(dst_offset..dst_offset.checked_add(decoded.len())?))
            .ok_or_else(|| {
                bad(
                    format!("bufferViews[{vi}]"),
                    "the decoded stream runs past the view's buffer",
                )
            })?;
        dst.copy_from_slice(&decoded);
    }
    Ok(())
}

fn decode(
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
