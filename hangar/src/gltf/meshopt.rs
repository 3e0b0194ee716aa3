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

// The calls into meshoptimizer (C++): the native build's, or a twin that refuses.
#[cfg(feature = "native")]
mod codec;
#[cfg(not(feature = "native"))]
#[path = "meshopt/refused.rs"]
mod codec;

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
            codec::encode_indices(&indices, vertices)?,
            size,
            "TRIANGLES",
        )
    } else {
        let stride = view.byte_stride.map_or(size, |s| s.0);
        if stride == 0 || stride % 4 != 0 || bytes.len() % stride != 0 {
            return None;
        }
        (codec::encode_vertices(bytes, stride)?, stride, "ATTRIBUTES")
    };
    (encoded.0.len() < bytes.len()).then_some(encoded)
}

/// Compresses the streams of an export in place: `pieces` (one per buffer view, at its offset
/// in a buffer of `bin_len` bytes) become buffer 0's new content; see the module's layout.
pub fn compress(
    root: &mut Root,
    pieces: &mut Vec<(usize, Cow<'_, [u8]>)>,
    bin_len: &mut usize,
) -> Result<()> {
    codec::check("--compress (EXT_meshopt_compression)")?;
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
        codec::check(&format!("bufferViews[{vi}]: reading {EXT}"))?;
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
            codec::decode(&src, mode, filter, stride, count).map_err(|m| bad(path.clone(), m))?;
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
