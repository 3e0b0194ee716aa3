//! Reading the M3 container: header, index, and each section's bytes with its padding.
//!
//! Tolerant: entry sizes are checked against the table, and unknown tags or versions, sizes that do
//! not match, unreferenced sections and odd padding are warnings; the bytes are kept either way.

use super::table::{self, le, table, Reference};
use super::{canonical_pad, Kind, Section, Tag, M3};
use crate::bytes::Cursor;
use crate::error::{Error, ErrorKind, Result, Warning};
use crate::raw::Bytes;

const INDEX_ENTRY: usize = 16;

pub fn read(data: &[u8]) -> Result<(M3<'_>, Vec<Warning>)> {
    let mut warnings = Vec::new();
    let mut c = Cursor::new(data, "M3");
    let magic = c.array::<4>("magic")?;
    let kind = match &magic {
        b"43DM" => Kind::Md34,
        b"33DM" => Kind::Md33,
        _ => {
            return Err(c.error_at(
                0,
                "magic",
                format!("not an M3 file (magic {magic:02x?}, expected \"43DM\")"),
            ))
        }
    };
    let root = if kind == Kind::Md34 { "MD34" } else { "MD33" };
    let mut c = Cursor::new(data, root);
    c.seek(4, "indexOffset")?;
    let index_offset = c.u32("indexOffset")? as usize;
    let index_count = c.u32("indexCount")? as usize;
    c.seek(index_offset, "indexOffset")?;
    c.check_count(index_count, INDEX_ENTRY, "indexCount")?;
    if index_count == 0 {
        return Err(c.error_at(8, "indexCount", "the index is empty (no header entry)"));
    }

    struct Raw {
        tag: Tag,
        offset: usize,
        count: u32,
        version: u32,
    }
    // The index was checked to fit: its entries are read straight from the bytes (a cursor
    // tracking a structure path per field cost a model more than its section layouts).
    let entries = c.bytes(index_count * INDEX_ENTRY, "index")?;
    let mut index = Vec::with_capacity(index_count);
    for (i, e) in entries.chunks_exact(INDEX_ENTRY).enumerate() {
        let word = |k: usize| u32::from_le_bytes(le(e, k));
        let tag = Tag(le(e, 0));
        let offset = word(4) as usize;
        if offset > index_offset {
            return Err(c.error_at(
                index_offset + i * INDEX_ENTRY + 4,
                &format!("index[{i}].offset"),
                format!("section {tag:?} starts at {offset}, past the index at {index_offset}"),
            ));
        }
        index.push(Raw {
            tag,
            offset,
            count: word(8),
            version: word(12),
        });
    }
    let tail_start = index_offset + index_count * INDEX_ENTRY;
    if index[0].offset != 0 {
        return Err(Error::invalid(
            index_offset as u64 + 4,
            format!("{root}.index[0].offset"),
            "index entry 0 must be the header at offset 0",
        ));
    }

    // Each section runs to the next section start above it (or the index).
    let mut starts: Vec<usize> = index.iter().map(|e| e.offset).collect();
    starts.push(index_offset);
    starts.sort_unstable();
    starts.dedup();
    let in_order = index.windows(2).all(|w| w[0].offset < w[1].offset);
    if !in_order {
        warnings.push(Warning::new(
            Some(index_offset as u64),
            format!("{root}.index"),
            "sections are not stored in index order, or two share an offset: a rewrite lays them out in index order",
        ));
    }

    let t = table();
    let small = kind.small_refs();
    let mut sections = Vec::with_capacity(index_count);
    // The layouts of the (tag, version) pairs seen, by a hash of the pair: a model's thousands of
    // sections use a few dozen pairs, and searching the table for each was a tenth of the parse.
    let mut seen: [Option<(Tag, u32, Option<&table::Layout>)>; 64] = [None; 64];
    for (i, e) in index.iter().enumerate() {
        // In an index in file order the next start is the next entry's (a search a section was
        // a fifth of the parse).
        let next = match starts.get(i) {
            Some(&s) if in_order && s == e.offset => i + 1,
            _ => starts.partition_point(|&s| s <= e.offset),
        };
        let end = starts
            .get(next)
            .copied()
            .unwrap_or(index_offset)
            .max(e.offset);
        let span = &data[e.offset..end];
        // Formatted only for a warning: a model has thousands of sections.
        let path = || format!("{root}.index[{i}]");
        let name = || e.tag.name();
        let mut layout = None;
        let key = u32::from_le_bytes(e.tag.0) ^ e.version.rotate_left(16);
        let at = (key.wrapping_mul(0x9e37_79b9) >> 26) as usize;
        let found = match seen[at] {
            Some((tag, version, l)) if tag == e.tag && version == e.version => l,
            _ => {
                let l = t.layout(e.tag, e.version, small);
                seen[at] = Some((e.tag, e.version, l));
                l
            }
        };
        match found {
            None if !t.knows_tag(e.tag) => warnings.push(Warning::new(
                Some(e.offset as u64),
                path(),
                format!(
                    "unknown tag {} v{} ({} entries, {} bytes): kept as raw bytes",
                    name(),
                    e.version,
                    e.count,
                    span.len()
                ),
            )),
            None => warnings.push(Warning::new(
                Some(e.offset as u64),
                path(),
                format!(
                    "unknown version {} v{} (known: {:?}): {} entries kept as raw bytes",
                    name(),
                    e.version,
                    t.versions(e.tag),
                    e.count
                ),
            )),
            Some(l) => {
                let need = (e.count as u64) * l.size as u64;
                let extra = (span.len() as u64).checked_sub(need);
                let fits = match extra {
                    Some(x) if x < 16 => true,
                    // Longer padding passes only when it is clearly padding.
                    Some(_) => {
                        let pad = &span[need as usize..];
                        pad.iter().all(|&b| b == pad[0])
                    }
                    None => false,
                };
                if fits {
                    layout = Some(l);
                } else {
                    let per = if e.count > 0 {
                        span.len() as u64 / e.count as u64
                    } else {
                        0
                    };
                    // Real files have other sizes for some tag versions; the bytes are kept.
                    warnings.push(Warning::note(
                        Some(e.offset as u64),
                        path(),
                        format!(
                            "size mismatch: {} v{} entries are {} bytes in the table but the section holds {} bytes for {} entries (about {per} each): kept as raw bytes",
                            name(),
                            e.version,
                            l.size,
                            span.len(),
                            e.count
                        ),
                    ));
                }
            }
        }
        let (body, pad) = match layout {
            Some(l) => span.split_at(e.count as usize * l.size),
            None => (span, &span[span.len()..]),
        };
        let canonical =
            pad.len() == canonical_pad(e.offset + body.len()) && pad.iter().all(|&b| b == 0xAA);
        sections.push(Section {
            tag: e.tag,
            version: e.version,
            count: e.count,
            data: Bytes::borrowed(body),
            pad: (!canonical).then(|| Bytes::borrowed(pad)),
            layout,
            offset: e.offset as u64,
        });
    }

    let header = &sections[0];
    let header_tag = if kind == Kind::Md34 { "MD34" } else { "MD33" };
    if header.tag != Tag::from_name(header_tag) || header.layout.is_none() || header.count != 1 {
        return Err(Error::new(
            ErrorKind::Invalid,
            Some(index_offset as u64),
            format!("{root}.index[0]"),
            format!(
                "index entry 0 is {:?} v{} with {} entries, expected one {header_tag} v11",
                header.tag, header.version, header.count
            ),
        ));
    }

    let m3 = M3 {
        kind,
        sections,
        tail: Bytes::borrowed(&data[tail_start.min(data.len())..]),
    };
    if !m3.tail.is_empty() {
        warnings.push(Warning::new(
            Some(tail_start as u64),
            root,
            format!("{} bytes after the index: kept", m3.tail.len()),
        ));
    }
    unreferenced(&m3, &mut warnings);
    Ok((m3, warnings))
}

/// Warns about sections no reference reaches (they still round-trip).
fn unreferenced(m3: &M3<'_>, warnings: &mut Vec<Warning>) {
    let mut seen = vec![false; m3.sections.len()];
    seen[0] = true;
    let small = m3.small_refs();
    for s in &m3.sections {
        // Straight from each entry's bytes at the layout's reference offsets: walking every
        // entry field by field was a twentieth of an M3 batch.
        let Some(l) = s.layout.filter(|l| !l.refs.is_empty() && l.size > 0) else {
            continue;
        };
        for e in s.data.chunks_exact(l.size) {
            for &at in &l.refs {
                let r = Reference::read(&e[at..], small);
                if !r.is_null() {
                    if let Some(s) = seen.get_mut(r.index as usize) {
                        *s = true;
                    }
                }
            }
        }
    }
    // Sections inside an opaque or unknown structure may hold references we cannot see.
    let blind = m3
        .sections
        .iter()
        .any(|s| s.layout.is_none_or(|l| l.opaque));
    let missing: Vec<String> = seen
        .iter()
        .enumerate()
        .filter(|(_, s)| !**s)
        .map(|(i, _)| format!("{i} ({:?})", m3.sections[i].tag))
        .collect();
    if !missing.is_empty() {
        let more = if blind {
            " (some may be reached from structures hangar keeps opaque)"
        } else {
            ""
        };
        warnings.push(Warning::new(
            None,
            format!("{}.index", if m3.small_refs() { "MD33" } else { "MD34" }),
            format!(
                "{} sections no reference reaches{more}: {}",
                missing.len(),
                missing.join(", ")
            ),
        ));
    }
}
