//! Writing an archive: MPQ format 1 (the 32-byte header every MPQ reader knows: Storm in the game
//! and the editor, StormLib, mpyq), laid out as
//!
//! ```text
//! header (32 bytes) | files, sorted by name, then (listfile) [, (attributes)] | hash table | block table
//! ```
//!
//! Each file is cut into sectors of `512 << 5` bytes (as StarCraft II's own archives) behind a
//! sector offset table, each sector zlib-compressed (`0x02` then the stream). A file where some
//! sector other than the last does not shrink is stored whole as one unit, uncompressed (mpyq takes
//! a full-size sector for a compressed one). An empty file is a one-sector table with no sector (a
//! reader given no bytes returns nothing rather than an empty file). The hash table has a power of
//! two slots, at least twice the files, unused slots filled with `0xFF`; both tables encrypted with
//! their keys. Same files, same bytes.
//!
//! The `(listfile)` names the files packed, with `\` separators and CRLF line ends, as the editor
//! writes it. An `(attributes)`, when asked for, is the editor's: version 100, flags 5 (CRC32 and
//! MD5), one CRC32 then one MD5 a block in block order; the `(listfile)`'s MD5, an empty file's
//! values and both values of the `(attributes)` itself are zero (every archive of the corpus has
//! them so). The `(listfile)`, `(attributes)` and `(signature)` of a folder extracted from an
//! archive describe that archive, not the one packed: [`pack_with`] makes the first two anew and
//! leaves the signature out.

use super::*;
use rayon::prelude::*;
use std::io::Write;
use std::path::Path;

/// The sector shift written: 16 KiB sectors, as the editor writes them.
const SECTOR_SHIFT: u16 = 5;

/// The `(attributes)` version and flags the editor writes: CRC32 (1) and MD5 (4).
const ATTRIBUTES_VERSION: u32 = 100;
const ATTRIBUTES_FLAGS: u32 = 1 | 4;
pub const ATTRIBUTES: &str = "(attributes)";

/// What [`pack`] wrote.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Packed {
    /// Files stored (the `(listfile)` and `(attributes)` not counted).
    pub files: usize,
    /// Their bytes, and the archive's.
    pub bytes: u64,
    pub archive_bytes: u64,
    /// The archive's own files found at the top of the folder (an extracted `(listfile)`,
    /// `(attributes)`, `(signature)`) that were made anew or left out instead of packed.
    pub replaced: Vec<String>,
    /// True when the `(listfile)` packed is the folder's own (`keep_listfile`).
    pub kept_listfile: bool,
    /// True when an `(attributes)` was written (the folder held one).
    pub attributes: bool,
}

/// How [`pack_with`] treats the folder.
#[derive(Debug, Clone, Copy, Default)]
pub struct PackOptions {
    /// Pack the folder's own `(listfile)` as the archive's, as it is (names it lacks are then not
    /// listed), instead of one naming the folder's files as they are now.
    pub keep_listfile: bool,
}

/// The archive's own files [`build_with`] writes after the others.
#[derive(Debug, Clone, Copy, Default)]
pub struct Own<'a> {
    /// The `(listfile)` to store as it is; `None`: one naming the files given.
    pub listfile: Option<&'a [u8]>,
    /// Write an `(attributes)` (CRC32 and MD5 of every file).
    pub attributes: bool,
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
/// `/` vs `\` only) are refused, and so is a file named as one of the archive's own
/// (`(listfile)`, `(attributes)`, `(signature)`): the writer makes those.
pub fn build(files: &[(String, &[u8])]) -> Result<Vec<u8>> {
    build_with(files, Own::default())
}

/// CRC32 (zlib's) and MD5 of `data`, as `(attributes)` holds them.
fn crc_md5(data: &[u8]) -> (u32, [u8; 16]) {
    use md5::{Digest, Md5};
    let mut crc = flate2::Crc::new();
    crc.update(data);
    (crc.sum(), Md5::digest(data).into())
}

/// The `(attributes)` of `datas` (every file's bytes in block order, the `(listfile)` last): the
/// `(listfile)`'s MD5, an empty file's values and the `(attributes)`' own are zero, as the
/// editor's.
fn attributes(datas: &[&[u8]]) -> Vec<u8> {
    // An empty file's values are zero too (not MD5's digest of nothing), as the editor's.
    let sums: Vec<(u32, [u8; 16])> = datas
        .par_iter()
        .map(|d| {
            if d.is_empty() {
                (0, [0; 16])
            } else {
                crc_md5(d)
            }
        })
        .collect();
    let n = sums.len() + 1;
    let mut out = Vec::with_capacity(8 + n * 20);
    out.extend_from_slice(&ATTRIBUTES_VERSION.to_le_bytes());
    out.extend_from_slice(&ATTRIBUTES_FLAGS.to_le_bytes());
    for (crc, _) in &sums {
        out.extend_from_slice(&crc.to_le_bytes());
    }
    out.extend_from_slice(&0u32.to_le_bytes());
    let last = sums.len().saturating_sub(1);
    for (i, (_, md5)) in sums.iter().enumerate() {
        out.extend_from_slice(if i == last { &[0; 16] } else { md5 });
    }
    out.extend_from_slice(&[0; 16]);
    out
}

/// [`build`], with the archive's own files as `own` says.
pub fn build_with(files: &[(String, &[u8])], own: Own<'_>) -> Result<Vec<u8>> {
    let mut seen = std::collections::HashMap::new();
    for (name, data) in files {
        if SPECIAL.iter().any(|s| name.eq_ignore_ascii_case(s)) {
            return Err(Error::refused(
                name.clone(),
                format!("{name} is the archive's own file: the writer makes it"),
            ));
        }
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
    all.push((LISTFILE.to_string(), own.listfile.unwrap_or(&listfile)));
    let attrs = own
        .attributes
        .then(|| attributes(&all.iter().map(|(_, d)| *d).collect::<Vec<_>>()));
    if let Some(a) = &attrs {
        all.push((ATTRIBUTES.to_string(), a));
    }
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
/// See [`pack_with`] for an extracted archive's own files.
pub fn pack(dir: &Path, out: &Path) -> Result<Packed> {
    pack_with(dir, out, PackOptions::default())
}

/// [`pack`]; the archive's own files at the top of `dir` (left there by an extraction) describe the
/// archive they came from, so they are not packed back: the `(listfile)` is made for the files
/// packed (or the folder's kept, with `keep_listfile`), an `(attributes)` is made anew when the
/// folder held one, and a `(signature)` is left out.
pub fn pack_with(dir: &Path, out: &Path, options: PackOptions) -> Result<Packed> {
    let mut found = Vec::new();
    crate::formats::catalog::walk(dir, dir, &mut found)?;
    found.retain(|(_, p)| !crate::io::same_file(p, out) && !crate::io::is_temp(p));
    found.sort_by(|a, b| a.0.cmp(&b.0));
    let (own, found): (Vec<_>, Vec<_>) = found
        .into_iter()
        .partition(|(n, _)| SPECIAL.iter().any(|s| n.eq_ignore_ascii_case(s)));
    let own_file = |name: &str| {
        own.iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, p)| p)
    };
    let kept = match (options.keep_listfile, own_file(LISTFILE)) {
        (false, _) => None,
        (true, Some(p)) => Some(crate::io::read_input(p)?),
        (true, None) => {
            return Err(Error::refused(
                "",
                "the folder holds no (listfile) to keep: leave out keep-listfile to make one",
            )
            .in_file(dir))
        }
    };
    let attributes = own_file(ATTRIBUTES).is_some();
    let mut datas = Vec::with_capacity(found.len());
    for (_, p) in &found {
        datas.push(crate::io::read_input(p)?);
    }
    let files: Vec<(String, &[u8])> = found
        .iter()
        .zip(&datas)
        .map(|((n, _), d)| (n.replace('/', "\\"), &**d))
        .collect();
    let given = Own {
        listfile: kept.as_deref(),
        attributes,
    };
    let bytes = build_with(&files, given).map_err(|e| e.in_file(out))?;
    crate::io::write_output(out, &bytes)?;
    Ok(Packed {
        files: files.len(),
        bytes: files.iter().map(|f| f.1.len() as u64).sum(),
        archive_bytes: bytes.len() as u64,
        replaced: own
            .into_iter()
            .map(|(n, _)| n)
            .filter(|n| !(kept.is_some() && n.eq_ignore_ascii_case(LISTFILE)))
            .collect(),
        kept_listfile: kept.is_some(),
        attributes,
    })
}
