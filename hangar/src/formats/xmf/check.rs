//! `hangar validate` for XMF: what would break the game or a converter.

use super::*;
use crate::validate::Finding;

/// Checks `x` (named `name`, whose `-collision` suffix turns on the collision rule).
pub fn check(x: &Xmf<'_>, target: write::Target) -> Vec<Finding> {
    let mut out = Vec::new();
    let index_buffers: Vec<usize> = x
        .buffers
        .iter()
        .enumerate()
        .filter(|(_, b)| b.is_index())
        .map(|(i, _)| i)
        .collect();
    if index_buffers.len() != 1 {
        out.push(Finding::error(
            "XMF.buffers",
            format!(
                "{} index buffers; a mesh has exactly one",
                index_buffers.len()
            ),
        ));
    }
    if x.buffers.iter().all(|b| b.is_index()) {
        out.push(Finding::error("XMF.buffers", "no vertex buffer"));
    }
    if x.header.primitive_type != PRIMITIVE_TRIANGLE_LIST {
        out.push(Finding::error(
            "XMF.primitiveType",
            format!(
                "{}; the game draws triangle lists (4)",
                x.header.primitive_type
            ),
        ));
    }
    for (i, b) in x.buffers.iter().enumerate() {
        let p = format!("XMF.buffers[{i}]");
        if b.sections != 1 {
            out.push(Finding::warning(
                format!("{p}.numSections"),
                format!("{}; every known file has 1", b.sections),
            ));
        }
        if b.is_index() && !matches!((b.format, b.item_size), (INDEX_U16, 2) | (INDEX_U32, 4)) {
            out.push(Finding::error(
                format!("{p}.format"),
                format!(
                    "index format 0x{:x} with itemSize {}: want 0x1E/2 or 0x1F/4",
                    b.format, b.item_size
                ),
            ));
        }
        if let Err(e) = mesh::inflate(b, i) {
            out.push(e.into());
        }
    }
    if let Err(e) = mesh::layout(x) {
        out.push(e.into());
    }

    // Decoded content: index bounds, material ranges, NaNs.
    let index_count = x.index_buffer().map(|(_, b)| b.items as i64).unwrap_or(0);
    if index_count % 3 != 0 {
        out.push(Finding::error(
            "XMF.indexBuffer.itemsPerSection",
            format!("{index_count} indices is not a whole number of triangles"),
        ));
    }
    if !x.materials.is_empty() {
        let mut sum = 0i64;
        let mut ranges: Vec<(i64, i64, usize)> = Vec::new();
        for (i, m) in x.materials.iter().enumerate() {
            let p = format!("XMF.materials[{i}]");
            let (first, num) = (m.first_index as i64, m.num_indices as i64);
            if first % 3 != 0 || num % 3 != 0 {
                out.push(Finding::error(
                    &p,
                    format!("range {first}..+{num} is not on triangle boundaries (multiples of 3)"),
                ));
            }
            if first < 0 || num < 0 || first + num > index_count {
                out.push(Finding::error(
                    &p,
                    format!("range {first}..+{num} is outside the {index_count} indices"),
                ));
            }
            if m.name.text().is_empty() {
                out.push(Finding::warning(format!("{p}.name"), "empty material name"));
            }
            sum += num;
            ranges.push((first, first + num, i));
        }
        if sum != index_count {
            out.push(Finding::error(
                "XMF.materials",
                format!("ranges cover {sum} indices, the index buffer has {index_count}"),
            ));
        }
        ranges.sort_unstable();
        for w in ranges.windows(2) {
            if w[1].0 < w[0].1 {
                out.push(Finding::error(
                    format!("XMF.materials[{}]", w[1].2),
                    format!("overlaps materials[{}]", w[0].2),
                ));
            }
        }
    }
    if let (Ok((count, elements)), Ok(idx)) = (mesh::decode_elements(x), mesh::indices(x)) {
        let bad = idx.iter().filter(|&&i| i as usize >= count).count();
        if let Some(first) = idx.iter().position(|&i| i as usize >= count) {
            out.push(Finding::error(
                format!("XMF.indexBuffer.data[{first}]"),
                format!(
                    "{bad} indices point past the {count} vertices (first: {})",
                    idx[first]
                ),
            ));
        }
        for (l, values) in &elements {
            let nan = values
                .iter()
                .filter(|v| v.iter().any(|c| !c.is_finite()))
                .count();
            if nan > 0 {
                out.push(Finding::error(
                    format!(
                        "XMF.buffers[{}].{}{}",
                        l.buffer,
                        l.usage.name(),
                        l.usage_index
                    ),
                    format!("{nan} values are NaN or infinite"),
                ));
            }
        }
    }
    let vertex_items = x.buffers.iter().find(|b| !b.is_index()).map(|b| b.items);
    // Real visual meshes without materials exist (FORMAT-NOTES; 2 corpus files).
    if x.materials.is_empty() && target == write::Target::Visual {
        out.push(Finding::note(
            "XMF.materials",
            "a visual mesh with no material: the game draws it with a default",
        ));
    }
    if target == write::Target::Collision {
        if let Err(e) = write::check_collision_rule(x) {
            out.push(Finding::error("XMF", e.message));
        }
        if let Some((i, b)) = x.index_buffer() {
            // Published mods ship 16-bit collision meshes (8 corpus files): unusual, not broken.
            if b.format == INDEX_U16 {
                out.push(Finding::note(
                    format!("XMF.buffers[{i}].format"),
                    "16-bit indices in a collision mesh; game collision meshes use 32-bit",
                ));
            }
        }
    }
    if let Some(n) = vertex_items {
        if n == 0 {
            out.push(Finding::error("XMF.buffers", "the vertex buffer is empty"));
        }
    }
    out
}
