//! Writing the M3 container: sections in index order, each followed by its kept padding (or
//! Blizzard's 0xAA padding to 16 bytes), then the index; the header's index offset and count are
//! recomputed.

use super::{canonical_pad, M3};
use crate::error::{Error, Result};

pub fn write(m3: &M3<'_>) -> Result<Vec<u8>> {
    let size: usize = m3
        .sections
        .iter()
        .map(|s| s.data.len() + s.pad.as_ref().map_or(15, |p| p.len()))
        .sum::<usize>()
        + m3.sections.len() * 16
        + m3.tail.len();
    let mut out = Vec::with_capacity(size);
    let mut offsets = Vec::with_capacity(m3.sections.len());
    for (i, s) in m3.sections.iter().enumerate() {
        if let Some(l) = s.layout {
            if s.data.len() != s.count as usize * l.size {
                return Err(Error::refused(
                    format!("M3.index[{i}]"),
                    format!(
                        "{:?} declares {} entries but holds {} bytes of {}-byte entries",
                        s.tag,
                        s.count,
                        s.data.len(),
                        l.size
                    ),
                ));
            }
        }
        offsets.push(out.len());
        out.extend_from_slice(&s.data);
        match &s.pad {
            Some(p) => out.extend_from_slice(p),
            None => out.resize(out.len() + canonical_pad(out.len()), 0xAA),
        }
    }
    let index_offset = out.len();
    let too_big = || Error::refused("M3", "an M3 file holds at most 4 GiB");
    for (s, &o) in m3.sections.iter().zip(&offsets) {
        out.extend_from_slice(&s.tag.0);
        out.extend_from_slice(&u32::try_from(o).map_err(|_| too_big())?.to_le_bytes());
        out.extend_from_slice(&s.count.to_le_bytes());
        out.extend_from_slice(&s.version.to_le_bytes());
    }
    out.extend_from_slice(&m3.tail);
    if out.len() < 12 {
        return Err(Error::refused(
            "M3.index[0]",
            "the header section is missing",
        ));
    }
    let index_offset = u32::try_from(index_offset).map_err(|_| too_big())?;
    out[4..8].copy_from_slice(&index_offset.to_le_bytes());
    out[8..12].copy_from_slice(&(m3.sections.len() as u32).to_le_bytes());
    Ok(out)
}
