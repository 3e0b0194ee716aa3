//! Writing an archive: MPQ format 1 (the 32-byte header every MPQ reader knows: Storm in the game
//! and the editor, StormLib, mpyq), laid out as
//!
//! ```text
//! header (32 bytes) | files, sorted by name, then (listfile) | hash table | block table
//! ```
//!
//! Each file is cut into sectors of `512 << 5` bytes (as StarCraft II's own archives) behind a
//! sector offset table, each sector zlib-compressed (`0x02` then the stream). A file where some
//! sector other than the last does not shrink is stored whole as one unit, uncompressed (mpyq takes
//! a full-size sector for a compressed one). An empty file is a one-sector table with no sector (a
//! reader given no bytes returns nothing rather than an empty file). The hash table has a power of
//! two slots, at least twice the files, unused slots filled with `0xFF`; both tables encrypted with
//! their keys. Same files, same bytes.

use super::*;
use rayon::prelude::*;
use std::io::Write;
use std::path::Path;

/// The sector shift written: 16 KiB sectors, as the editor writes them.
const SECTOR_SHIFT: u16 = 5;

/// What [`pack`] wrote.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Packed {
    /// Files stored (the `(listfile)` not counted).
    pub files: usize,
    /// Their bytes, and the archive's.
    pub bytes: u64,
    pub archive_bytes: u64,
}

/// One file as stored: its flags, size and stored bytes.
struct Stored {
    flags: u32,
    size: u32,
    data: Vec<u8>,
}

fn zlib(data: &[u8]) -> Vec<u8> {
    use flate2::{write::ZlibEncoder, Compression};
    let mut z = ZlibEncoder::new(
        Vec::with_capacity(data.len() / 2 + 16),
        Compression::default(),
    );
    let mut out = vec![0x02];
    // Writing to a Vec cannot fail.
    let _ = z.write_all(data);
    out.extend(z.finish().unwrap_or_default());
    out
}

fn store(data: &[u8]) -> Stored {
    let sector = 512usize << SECTOR_SHIFT;
    let size = data.len() as u32;
    let chunks: Vec<&[u8]> = data.chunks(sector).collect();
    let packed: Vec<Vec<u8>> = chunks.iter().map(|c| zlib(c)).collect();
    let last = chunks.len().saturating_sub(1);
    let shrinks = packed
        .iter()
        .zip(&chunks)
        .enumerate()
        .all(|(i, (p, c))| i == last || p.len() < c.len());
    if !shrinks {
        return Stored {
            flags: FILE_EXISTS | FILE_SINGLE_UNIT,
            size,
            data: data.to_vec(),
        };
    }
    let table_len = 4 * (chunks.len() + 1).max(2);
    let mut table = Vec::with_capacity(table_len);
    let mut body = Vec::new();
    let mut offset = table_len as u32;
    table.extend_from_slice(&offset.to_le_bytes());
    for (p, c) in packed.iter().zip(&chunks) {
        let piece: &[u8] = if p.len() < c.len() { p } else { c };
        body.extend_from_slice(piece);
        offset += piece.len() as u32;
        table.extend_from_slice(&offset.to_le_bytes());
    }
    if chunks.is_empty() {
        table.extend_from_slice(&offset.to_le_bytes());
    }
    table.extend(body);
    Stored {
        flags: FILE_EXISTS | FILE_COMPRESS,
        size,
        data: table,
    }
}

/// The archive holding `files` (name with `\` separators, bytes), in the order given, and a
/// `(listfile)` naming them. Two names the game takes for one (they differ in letter case or
/// `/` vs `\` only) are refused.
pub fn build(files: &[(String, &[u8])]) -> Result<Vec<u8>> {
    let mut seen = std::collections::HashMap::new();
    for (name, data) in files {
        let key = name.replace('/', "\\").to_ascii_uppercase();
        if let Some(other) = seen.insert(key, name) {
            return Err(Error::refused(
                name.clone(),
                format!("{name:?} and {other:?} are one name to the game (letter case and separators aside): rename one"),
            ));
        }
        if u32::try_from(data.len()).is_err() {
            return Err(Error::refused(
                name.clone(),
                "a file of 4 GiB or more does not fit an MPQ format 1 archive",
            ));
        }
    }
    let mut listfile = Vec::new();
    for (name, _) in files {
        listfile.extend_from_slice(name.replace('/', "\\").as_bytes());
        listfile.extend_from_slice(b"\r\n");
    }
    let mut all: Vec<(String, &[u8])> = files
        .iter()
        .map(|(n, d)| (n.replace('/', "\\"), *d))
        .collect();
    all.push((LISTFILE.to_string(), &listfile));
    let stored: Vec<Stored> = all.par_iter().map(|(_, d)| store(d)).collect();

    let slots = (all.len() * 2).next_power_of_two().max(16);
    let mut hashes = vec![0xFFu8; slots * 16];
    let mut blocks = Vec::with_capacity(all.len() * 16);
    let mut body_len: u64 = 32;
    for (i, ((name, _), s)) in all.iter().zip(&stored).enumerate() {
        let n = name.as_bytes();
        let start = hash(n, HashKind::Slot) as usize;
        let slot = (0..slots)
            .map(|k| (start + k) % slots)
            .find(|&k| hashes.get(k * 16 + 12..k * 16 + 16) == Some(&[0xFF; 4][..]))
            .unwrap_or(0);
        let mut e = Vec::with_capacity(16);
        e.extend_from_slice(&hash(n, HashKind::NameA).to_le_bytes());
        e.extend_from_slice(&hash(n, HashKind::NameB).to_le_bytes());
        e.extend_from_slice(&0u32.to_le_bytes());
        e.extend_from_slice(&(i as u32).to_le_bytes());
        if let Some(dst) = hashes.get_mut(slot * 16..slot * 16 + 16) {
            dst.copy_from_slice(&e);
        }
        let offset = u32::try_from(body_len).map_err(|_| too_big())?;
        blocks.extend_from_slice(&offset.to_le_bytes());
        blocks.extend_from_slice(&(s.data.len() as u32).to_le_bytes());
        blocks.extend_from_slice(&s.size.to_le_bytes());
        blocks.extend_from_slice(&s.flags.to_le_bytes());
        body_len += s.data.len() as u64;
    }
    let hash_pos = u32::try_from(body_len).map_err(|_| too_big())?;
    let block_pos = hash_pos
        .checked_add(hashes.len() as u32)
        .ok_or_else(too_big)?;
    let total = u64::from(block_pos) + blocks.len() as u64;
    let total32 = u32::try_from(total).map_err(|_| too_big())?;
    encrypt(&mut hashes, hash_table_key());
    encrypt(&mut blocks, block_table_key());
    let mut out = Vec::with_capacity(total as usize);
    out.extend_from_slice(&MAGIC);
    for v in [32u32, total32] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(&SECTOR_SHIFT.to_le_bytes());
    for v in [hash_pos, block_pos, slots as u32, all.len() as u32] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    for s in &stored {
        out.extend_from_slice(&s.data);
    }
    out.extend(hashes);
    out.extend(blocks);
    Ok(out)
}

fn too_big() -> Error {
    Error::refused(
        "",
        "the archive would pass 4 GiB, more than MPQ format 1 addresses",
    )
}

/// Packs every file under `dir` (links not followed) into the archive `out`, names relative to
/// `dir` with `\` separators, sorted; written whole or not at all. `out` inside `dir` is left out.
pub fn pack(dir: &Path, out: &Path) -> Result<Packed> {
    let mut found = Vec::new();
    crate::formats::catalog::walk(dir, dir, &mut found)?;
    found.retain(|(_, p)| !crate::io::same_file(p, out) && !crate::io::is_temp(p));
    found.sort_by(|a, b| a.0.cmp(&b.0));
    let mut datas = Vec::with_capacity(found.len());
    for (_, p) in &found {
        datas.push(crate::io::read_input(p)?);
    }
    let files: Vec<(String, &[u8])> = found
        .iter()
        .zip(&datas)
        .map(|((n, _), d)| (n.replace('/', "\\"), &**d))
        .collect();
    let bytes = build(&files).map_err(|e| e.in_file(out))?;
    crate::io::write_output(out, &bytes)?;
    Ok(Packed {
        files: files.len(),
        bytes: files.iter().map(|f| f.1.len() as u64).sum(),
        archive_bytes: bytes.len() as u64,
    })
}
