//! Reading an archive: the header, the two tables, the `(listfile)`, then files on demand. Every
//! offset and size read from the archive is checked against its length before anything is read or
//! allocated; a file's bytes never grow past the size its block claims, and a call never inflates
//! more than the archive's `max_inflate` (see the module's notes: no ratio bounds a size).

use super::*;
use crate::error::Warning;
use crate::formats::catalog::{glob_matches, Extracted};
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Room made at first for a stream's output, per byte stored (zlib's ceiling, about 1032:1);
/// a stream that gives more (bzip2's runs of zeros) is given more room as it goes, up to its
/// declared size. Not a bound: a guess that spares growing the buffer for most files.
const FIRST_ROOM: usize = 1032;

/// A file of the archive the `(listfile)` names (or one of the archive's own files).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Entry {
    /// As the listfile spells it (`Assets\Models\x.m3`).
    pub path: String,
    pub size: u32,
    pub compressed_size: u32,
    pub flags: u32,
    /// Where its bytes start in the file.
    pub offset: u64,
    /// Its block in the block table.
    pub block: u32,
}

/// An archive's tables and the files they name.
#[derive(Debug, Clone, Default)]
pub struct Archive {
    pub header: Header,
    /// The archive's length in bytes.
    pub len: u64,
    pub blocks: Vec<Block>,
    hashes: Vec<HashEntry>,
    /// The named files, sorted by path as the game compares them, each once.
    pub entries: Vec<Entry>,
    /// Game path (lower case, `/`) → index in `entries`.
    by_path: HashMap<String, usize>,
    /// Files in the block table that no name leads to.
    pub unnamed: usize,
    pub warnings: Vec<Warning>,
    /// The most bytes one call inflates ([`super::max_inflate`] when opened): a file declaring
    /// more is refused before anything is allocated for it.
    pub max_inflate: u64,
}

fn le32(b: &[u8], at: usize) -> u32 {
    b.get(at..at + 4)
        .map_or(0, |w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
}

fn le16(b: &[u8], at: usize) -> u16 {
    b.get(at..at + 2)
        .map_or(0, |w| u16::from_le_bytes([w[0], w[1]]))
}

fn le64(b: &[u8], at: usize) -> u64 {
    u64::from(le32(b, at)) | (u64::from(le32(b, at + 4)) << 32)
}

impl Archive {
    /// Reads the header and tables of the archive in `src`, then its `(listfile)`.
    pub fn from_source(src: &dyn ReadAt) -> Result<Archive> {
        let len = src.size();
        let header = read_header(src)?;
        let mut a = Archive {
            header,
            len,
            max_inflate: super::max_inflate(),
            ..Archive::default()
        };
        a.hashes = a.read_hash_table(src)?;
        a.blocks = a.read_block_table(src)?;
        a.name_files(src);
        Ok(a)
    }

    /// Reads one table: `entries` records of 16 bytes at `pos`, `stored` bytes on disk
    /// (compressed when fewer), decrypted with `key`.
    fn table(
        &self,
        src: &dyn ReadAt,
        what: &'static str,
        pos: u64,
        entries: u32,
        stored: u64,
        key: u32,
    ) -> Result<Vec<u8>> {
        let full = u64::from(entries) * 16;
        let at = self.header.at.saturating_add(pos);
        let stored = if stored > 0 && stored < full {
            stored
        } else {
            full
        };
        if at.saturating_add(stored) > self.len {
            return Err(past_end(at, stored, self.len, what));
        }
        let n = usize::try_from(stored).map_err(|_| past_end(at, stored, self.len, what))?;
        let mut data = src.read_at(at, n)?.into_owned();
        decrypt(&mut data, key);
        if stored < full {
            // A table is inflated like a file: within the limit, before anything is allocated.
            if full > self.max_inflate {
                return Err(Error::new(
                    ErrorKind::Refused,
                    Some(at),
                    what,
                    format!(
                        "{entries} entries ({full} bytes, from {stored} stored) are past the {} bytes \
                         a call may inflate (--max-inflate); refused",
                        self.max_inflate
                    ),
                ));
            }
            let full = usize::try_from(full).map_err(|_| past_end(at, full, self.len, what))?;
            let mut out = Vec::new();
            let n = decompress_into(&data, full, at, &|| what.to_string(), &mut out, 0)?;
            out.truncate(n);
            data = out;
            if data.len() != full {
                return Err(Error::invalid(
                    at,
                    what,
                    format!("inflates to {} bytes, {full} expected", data.len()),
                ));
            }
        }
        Ok(data)
    }

    fn read_hash_table(&self, src: &dyn ReadAt) -> Result<Vec<HashEntry>> {
        let h = &self.header;
        let data = self.table(
            src,
            "hash table",
            h.hash_table_pos,
            h.hash_table_entries,
            h.hash_table_size,
            hash_table_key(),
        )?;
        Ok(data
            .chunks_exact(16)
            .map(|e| HashEntry {
                name_a: le32(e, 0),
                name_b: le32(e, 4),
                locale: le16(e, 8),
                platform: le16(e, 10),
                block: le32(e, 12),
            })
            .collect())
    }

    fn read_block_table(&self, src: &dyn ReadAt) -> Result<Vec<Block>> {
        let h = &self.header;
        let data = self.table(
            src,
            "block table",
            h.block_table_pos,
            h.block_table_entries,
            h.block_table_size,
            block_table_key(),
        )?;
        let n = data.len() / 16;
        let mut hi = Vec::new();
        if h.hi_block_table_pos != 0 {
            let at = h.at.saturating_add(h.hi_block_table_pos);
            let want = (n as u64) * 2;
            if at.saturating_add(want) > self.len {
                return Err(past_end(at, want, self.len, "hi-block table"));
            }
            hi = src.read_at(at, n * 2)?.into_owned();
        }
        Ok(data
            .chunks_exact(16)
            .enumerate()
            .map(|(i, e)| Block {
                offset: u64::from(le32(e, 0)) | (u64::from(le16(&hi, i * 2)) << 32),
                compressed_size: le32(e, 4),
                size: le32(e, 8),
                flags: le32(e, 12),
            })
            .collect())
    }

    /// The block the name `name` leads to through the hash table (probing from its slot, as the
    /// game does, then through the whole table, as mpyq does).
    pub fn lookup(&self, name: &[u8]) -> Option<u32> {
        let n = self.hashes.len();
        if n == 0 {
            return None;
        }
        let (a, b) = (hash(name, HashKind::NameA), hash(name, HashKind::NameB));
        let start = hash(name, HashKind::Slot) as usize % n;
        let usable = |e: &HashEntry| {
            e.name_a == a
                && e.name_b == b
                && (e.block as usize) < self.blocks.len()
                && self
                    .blocks
                    .get(e.block as usize)
                    .is_some_and(|b| b.flags & FILE_EXISTS != 0)
        };
        for i in 0..n {
            let e = self.hashes.get((start + i) % n)?;
            if e.block == HASH_FREE {
                break;
            }
            if usable(e) {
                return Some(e.block);
            }
        }
        self.hashes.iter().find(|e| usable(e)).map(|e| e.block)
    }

    fn entry(&self, path: &str, block: u32) -> Option<Entry> {
        let b = self.blocks.get(block as usize)?;
        Some(Entry {
            path: path.to_string(),
            size: b.size,
            compressed_size: b.compressed_size,
            flags: b.flags,
            offset: self.header.at.saturating_add(b.offset),
            block,
        })
    }

    /// Names the files: the listfile's names that lead to a file, and the archive's own files.
    fn name_files(&mut self, src: &dyn ReadAt) {
        let mut names: Vec<String> = Vec::new();
        if let Some(e) = self
            .lookup(LISTFILE.as_bytes())
            .and_then(|b| self.entry(LISTFILE, b))
        {
            match self.read(src, &e) {
                Ok(text) => {
                    for line in text.split(|&c| c == b'\r' || c == b'\n') {
                        let line = String::from_utf8_lossy(line).into_owned();
                        if line.is_empty() {
                            continue;
                        }
                        // Storm also ends a name at `;`: try the pieces of a line that names nothing.
                        if line.contains(';') && self.lookup(line.as_bytes()).is_none() {
                            names.extend(line.split(';').map(str::to_string));
                        } else {
                            names.push(line);
                        }
                    }
                }
                Err(err) => self.warnings.push(Warning::new(
                    err.offset,
                    "(listfile)",
                    format!(
                        "the listfile cannot be read ({}): files are unnamed",
                        err.message
                    ),
                )),
            }
        } else {
            self.warnings.push(Warning::new(
                None,
                "(listfile)",
                "no (listfile): the files have no names to list",
            ));
        }
        names.extend(SPECIAL.iter().map(|s| s.to_string()));
        let mut seen = std::collections::HashSet::new();
        let mut entries = Vec::new();
        for name in names {
            let key = name.replace('\\', "/").to_lowercase();
            if name.is_empty() || seen.contains(&key) {
                continue;
            }
            if let Some(e) = self
                .lookup(name.as_bytes())
                .and_then(|b| self.entry(&name, b))
            {
                seen.insert(key);
                entries.push(e);
            }
        }
        // Each name spelled as the game compares it once, not twice a comparison.
        entries.sort_by_cached_key(|e| e.path.replace('\\', "/").to_lowercase());
        let named: std::collections::HashSet<u32> = entries.iter().map(|e| e.block).collect();
        self.unnamed = self
            .blocks
            .iter()
            .enumerate()
            .filter(|(i, b)| b.flags & FILE_EXISTS != 0 && !named.contains(&(*i as u32)))
            .count();
        self.by_path = entries
            .iter()
            .enumerate()
            .filter_map(|(i, e)| Some((crate::gamepath::normalize(&e.path).ok()?, i)))
            .collect();
        self.entries = entries;
    }

    /// The named file at the game path `norm` (lower case, `/`), or one the listfile leaves out
    /// that the hash table finds under that name.
    pub fn find(&self, norm: &str) -> Option<Entry> {
        if let Some(e) = self.by_path.get(norm).and_then(|&i| self.entries.get(i)) {
            return Some(e.clone());
        }
        let name = norm.replace('/', "\\");
        self.lookup(name.as_bytes())
            .and_then(|b| self.entry(&name, b))
    }

    /// The game paths of the named files (the archive's own files left out), sorted.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        let mut v: Vec<&str> = self
            .by_path
            .keys()
            .map(String::as_str)
            .filter(|p| !SPECIAL.contains(p))
            .collect();
        v.sort_unstable();
        v.into_iter()
    }

    /// The bytes of `e`, decrypted and decompressed.
    pub fn read(&self, src: &dyn ReadAt, e: &Entry) -> Result<Vec<u8>> {
        let mut buf = Vec::new();
        Ok(match self.read_in(src, e, &mut buf)? {
            Got::Source(bytes, _) => bytes.to_vec(),
            Got::Buf(n) => {
                buf.truncate(n);
                buf
            }
        })
    }

    /// The bytes of `e`, decrypted and decompressed into the first bytes of `buf` (grown when it is
    /// too short, never cleared: a buffer handed from file to file is not filled with zeros again),
    /// or borrowed from `src` when they are stored there as they are.
    pub(crate) fn read_in<'a>(
        &self,
        src: &'a dyn ReadAt,
        e: &Entry,
        buf: &mut Vec<u8>,
    ) -> Result<Got<'a>> {
        read_file(self, src, e, buf).map_err(|mut err| {
            if !err.path.starts_with(&e.path) {
                err.path = if err.path.is_empty() {
                    e.path.clone()
                } else {
                    format!("{}: {}", e.path, err.path)
                };
            }
            err
        })
    }
}

fn read_header(src: &dyn ReadAt) -> Result<Header> {
    let len = src.size();
    let head = src.read_at(0, 16.min(len as usize))?;
    let at = if head.starts_with(&MAGIC) {
        0
    } else if head.starts_with(&USER_DATA_MAGIC) {
        u64::from(le32(&head, 8))
    } else {
        return Err(Error::invalid(
            0,
            "MPQ",
            "not an MPQ archive (no `MPQ\\x1a` magic)",
        ));
    };
    if at.saturating_add(32) > len {
        return Err(past_end(at, 32, len, "MPQ header"));
    }
    let base = src.read_at(at, 32)?;
    if !base.starts_with(&MAGIC) {
        return Err(Error::invalid(
            at,
            "MPQ header",
            "the user-data header points to no `MPQ\\x1a` header",
        ));
    }
    let mut h = Header {
        at,
        header_size: le32(&base, 4),
        format_version: le16(&base, 12),
        sector_shift: le16(&base, 14),
        hash_table_pos: u64::from(le32(&base, 16)),
        block_table_pos: u64::from(le32(&base, 20)),
        hash_table_entries: le32(&base, 24),
        block_table_entries: le32(&base, 28),
        ..Header::default()
    };
    if h.sector_size().is_none() {
        return Err(Error::invalid(
            at + 14,
            "MPQ header.sector_shift",
            format!("sectors of 512 << {} bytes", h.sector_shift),
        ));
    }
    let want = match h.format_version {
        0 => 0,
        1 => 0x2C,
        2 => 0x44,
        _ => 0xD0,
    };
    if want > 0 {
        if at.saturating_add(want) > len {
            return Err(past_end(at, want, len, "MPQ header"));
        }
        let ext = src.read_at(at, want as usize)?;
        h.hi_block_table_pos = le64(&ext, 0x20);
        h.hash_table_pos |= u64::from(le16(&ext, 0x28)) << 32;
        h.block_table_pos |= u64::from(le16(&ext, 0x2A)) << 32;
        if want >= 0x44 {
            h.bet_table_pos = le64(&ext, 0x34);
            h.het_table_pos = le64(&ext, 0x3C);
        }
        if want >= 0xD0 {
            h.hash_table_size = le64(&ext, 0x44);
            h.block_table_size = le64(&ext, 0x4C);
        }
    }
    Ok(h)
}

/// Where a file's bytes are: in the source as they are stored, or the first `n` bytes of the buffer.
pub(crate) enum Got<'a> {
    /// The bytes, and their offset in the source.
    Source(&'a [u8], u64),
    Buf(usize),
}

/// Makes `buf` at least `len` bytes long (new bytes zero); bounded by the caller, from the archive.
fn grow(buf: &mut Vec<u8>, len: usize) {
    if buf.len() < len {
        buf.resize(len, 0);
    }
}

/// Copies `bytes` into `buf` at `pos`.
fn put(buf: &mut Vec<u8>, pos: usize, bytes: &[u8]) {
    grow(buf, pos + bytes.len());
    if let Some(dst) = buf.get_mut(pos..pos + bytes.len()) {
        dst.copy_from_slice(bytes);
    }
}

/// `data` (a compression byte, then the stream) decompressed into `buf` at `pos`, at most
/// `expected` bytes: how many. `what` names the piece in an error. The byte is a mask of the
/// compressions applied, undone in Storm's order (bzip2 or zlib first, sparse last).
fn decompress_into(
    data: &[u8],
    expected: usize,
    at: u64,
    what: &dyn Fn() -> String,
    buf: &mut Vec<u8>,
    pos: usize,
) -> Result<usize> {
    let (&kind, body) = data
        .split_first()
        .ok_or_else(|| Error::invalid(at, what(), "an empty compressed sector"))?;
    if kind == 0x00 {
        // Stored as it is: the compression byte is the data (as mpyq reads it).
        put(buf, pos, data);
        return Ok(data.len());
    }
    let done = match kind {
        ZLIB | BZIP2 => unpack(kind, body, expected, buf, pos),
        SPARSE => unsparse(body, expected, buf, pos),
        k if k == SPARSE | ZLIB || k == SPARSE | BZIP2 => {
            // Sparse coding adds a 4-byte size and a byte each 128 at worst.
            let coded = expected.saturating_add(expected / 128).saturating_add(8);
            let mut mid = Vec::new();
            unpack(k & !SPARSE, body, coded, &mut mid, 0)
                .and_then(|n| unsparse(mid.get(..n).unwrap_or_default(), expected, buf, pos))
        }
        k => Err(format!(
            "compression 0x{k:02x} ({}) is not read by hangar (zlib 0x02, bzip2 0x10, sparse \
             0x20 and sparse with either are)",
            match k {
                0x08 => "PKWARE implode",
                0x12 => "LZMA",
                0x01 | 0x40 | 0x80 | 0x41 | 0x81 | 0x48 | 0x88 => "Huffman/ADPCM audio",
                _ => "unknown",
            }
        )),
    };
    let n = done.map_err(|m| Error::invalid(at, what(), m))?;
    if n > expected {
        return Err(Error::invalid(
            at,
            what(),
            format!("unpacks to more than the {expected} bytes it holds"),
        ));
    }
    Ok(n)
}

/// The compression bits of a sector's first byte.
const ZLIB: u8 = 0x02;
const BZIP2: u8 = 0x10;
const SPARSE: u8 = 0x20;

/// A zlib or bzip2 stream into `buf` at `pos`: how many bytes it gave, at most `expected` + 1
/// (one more than expected: a stream that fills it unpacks past its size). The buffer grows as
/// the stream gives, so a stream that claims much and gives little costs little.
fn unpack(
    kind: u8,
    body: &[u8],
    expected: usize,
    buf: &mut Vec<u8>,
    pos: usize,
) -> std::result::Result<usize, String> {
    let room = expected.saturating_add(1);
    let mut have = room.min(body.len().saturating_mul(FIRST_ROOM).max(64 << 10));
    grow(buf, pos + have);
    if kind == ZLIB && have == room {
        if let Some(n) = inflate_fast(body, buf.get_mut(pos..pos + room).unwrap_or_default()) {
            return Ok(n);
        }
    }
    enum Stream {
        Zlib(flate2::Decompress),
        Bzip2(bzip2::Decompress),
    }
    let mut z = if kind == ZLIB {
        Stream::Zlib(flate2::Decompress::new(true))
    } else {
        Stream::Bzip2(bzip2::Decompress::new(false))
    };
    let name = if kind == ZLIB { "zlib" } else { "bzip2" };
    let (mut read, mut out) = (0usize, 0usize);
    loop {
        let input = body.get(read..).unwrap_or_default();
        let dst = buf.get_mut(pos + out..pos + have).unwrap_or_default();
        let (ended, took, gave) = match &mut z {
            Stream::Zlib(d) => {
                let (i, o) = (d.total_in(), d.total_out());
                let st = d
                    .decompress(input, dst, flate2::FlushDecompress::None)
                    .map_err(|e| format!("zlib: {e}"))?;
                let ended = st == flate2::Status::StreamEnd;
                (ended, d.total_in() - i, d.total_out() - o)
            }
            Stream::Bzip2(d) => {
                let (i, o) = (d.total_in(), d.total_out());
                let st = d
                    .decompress(input, dst)
                    .map_err(|e| format!("bzip2: {e}"))?;
                let ended = st == bzip2::Status::StreamEnd;
                (ended, d.total_in() - i, d.total_out() - o)
            }
        };
        read += took as usize;
        out += gave as usize;
        if ended {
            return Ok(out);
        }
        if out >= room {
            return Err(format!(
                "the {name} stream unpacks past the {expected} bytes declared"
            ));
        }
        if out == have {
            have = room.min(have.saturating_mul(2));
            grow(buf, pos + have);
        } else if took == 0 && gave == 0 {
            return Err(format!(
                "the {name} stream ends early ({out} of {expected} bytes)"
            ));
        }
    }
}

/// Blizzard's sparse coding undone: a big-endian 32-bit size, then runs: a byte with the high bit
/// set is followed by (low bits + 1) bytes as they are, one without it stands for (it + 3) zeros.
fn unsparse(
    body: &[u8],
    expected: usize,
    buf: &mut Vec<u8>,
    pos: usize,
) -> std::result::Result<usize, String> {
    let (size, mut rest) = match body {
        [a, b, c, d, rest @ ..] => (u32::from_be_bytes([*a, *b, *c, *d]) as usize, rest),
        _ => return Err("a sparse stream shorter than its 4-byte size".into()),
    };
    if size > expected {
        return Err(format!(
            "the sparse stream declares {size} bytes, more than the {expected} it holds"
        ));
    }
    grow(buf, pos + size);
    let mut out = 0usize;
    while let Some((&c, tail)) = rest.split_first() {
        let left = size - out;
        if c & 0x80 != 0 {
            let n = usize::from(c & 0x7F) + 1;
            let run = tail
                .get(..n)
                .ok_or("a sparse run of bytes runs past the stream's end")?;
            put(buf, pos + out, run.get(..n.min(left)).unwrap_or_default());
            out += n.min(left);
            rest = tail.get(n..).unwrap_or_default();
        } else {
            let n = (usize::from(c) + 3).min(left);
            if let Some(z) = buf.get_mut(pos + out..pos + out + n) {
                z.fill(0);
            }
            out += n;
            rest = tail;
        }
    }
    Ok(out)
}

/// A whole zlib stream into `out` with libdeflate (1.3-1.7x faster than streaming zlib, see
/// `xmf::mesh`): the bytes it gave, or `None` to leave the streaming path to decide (and word the
/// error).
#[cfg(feature = "native")]
fn inflate_fast(body: &[u8], out: &mut [u8]) -> Option<usize> {
    thread_local! {
        static INFLATE: std::cell::RefCell<libdeflater::Decompressor> =
            std::cell::RefCell::new(libdeflater::Decompressor::new());
    }
    INFLATE
        .with(|d| d.borrow_mut().zlib_decompress(body, out))
        .ok()
}

#[cfg(not(feature = "native"))]
fn inflate_fast(_: &[u8], _: &mut [u8]) -> Option<usize> {
    None
}

/// The key of a file stored encrypted: from its name without folders, adjusted by its place.
fn file_key(e: &Entry, b: &Block) -> u32 {
    let base = e.path.rsplit(['\\', '/']).next().unwrap_or(&e.path);
    let mut key = hash(base.as_bytes(), HashKind::Key);
    if b.flags & FILE_FIX_KEY != 0 {
        key = key.wrapping_add(b.offset as u32) ^ b.size;
    }
    key
}

fn read_file<'a>(
    a: &Archive,
    src: &'a dyn ReadAt,
    e: &Entry,
    buf: &mut Vec<u8>,
) -> Result<Got<'a>> {
    let b = a.blocks.get(e.block as usize).copied().ok_or_else(|| {
        Error::invalid(
            0,
            "",
            format!("block {} is not in the block table", e.block),
        )
    })?;
    let at = e.offset;
    let bad = |m: String| Error::invalid(at, "", m);
    if b.flags & FILE_EXISTS == 0 || b.flags & FILE_DELETE_MARKER != 0 {
        return Err(bad("its block marks it deleted".into()));
    }
    if b.flags & FILE_PATCH_FILE != 0 {
        return Err(Error::new(
            ErrorKind::Unsupported,
            Some(at),
            "",
            "a patch file (applied over another archive's file) is not read by hangar",
        ));
    }
    if b.flags & FILE_IMPLODE != 0 && b.size != b.compressed_size {
        return Err(Error::new(
            ErrorKind::Unsupported,
            Some(at),
            "",
            "PKWARE-imploded files are not read by hangar",
        ));
    }
    let csize = u64::from(b.compressed_size);
    if at.saturating_add(csize) > a.len {
        return Err(past_end(at, csize, a.len, ""));
    }
    if csize == 0 {
        return Ok(Got::Source(&[], at));
    }
    let size = b.size as usize;
    let compressed = b.flags & FILE_COMPRESS != 0;
    if inflated(&b) > a.max_inflate {
        return Err(past_limit(at, &b, a.max_inflate, "a call may inflate"));
    }
    let sector = a.header.sector_size().unwrap_or(4096);
    let encrypted = b.flags & FILE_ENCRYPTED != 0;
    let key = if encrypted { file_key(e, &b) } else { 0 };
    let stored = src.read_at(at, csize as usize)?;
    if b.flags & FILE_SINGLE_UNIT != 0 {
        let mut stored = stored;
        if encrypted {
            decrypt(stored.to_mut(), key);
        }
        if compressed && b.size > b.compressed_size {
            return decompress_into(&stored, size, at, &String::new, buf, 0).map(Got::Buf);
        }
        return Ok(kept(stored, at, usize::MAX, buf));
    }
    if !compressed && !encrypted {
        // Sectors back to back with no offset table.
        return Ok(kept(stored, at, size, buf));
    }
    let sectors = size.div_ceil(sector);
    let crc = usize::from(b.flags & FILE_SECTOR_CRC != 0);
    let words = sectors + 1 + crc;
    let table_len = words * 4;
    if table_len as u64 > csize {
        if !compressed {
            // An encrypted file stored plainly: decrypted sector by sector.
            let n = size.min(stored.len());
            put(buf, 0, stored.get(..n).unwrap_or_default());
            for (i, chunk) in buf
                .get_mut(..n)
                .unwrap_or_default()
                .chunks_mut(sector)
                .enumerate()
            {
                decrypt(chunk, key.wrapping_add(i as u32));
            }
            return Ok(Got::Buf(n));
        }
        return Err(bad(format!(
            "its sector offset table ({sectors} sectors, {table_len} bytes) is longer than the {csize} bytes stored"
        )));
    }
    let mut table = stored.get(..table_len).unwrap_or_default().to_vec();
    if encrypted {
        decrypt(&mut table, key.wrapping_sub(1));
    }
    let offsets: Vec<usize> = (0..=sectors)
        .map(|i| le32(&table, i * 4) as usize)
        .collect();
    // The whole file's room at once (within what its stored bytes usually give), not a sector's
    // at a time; a sector that gives more grows it.
    grow(buf, size.min(stored.len().saturating_mul(FIRST_ROOM)));
    let mut n = 0usize;
    for i in 0..sectors {
        let (s, t) = (
            offsets.get(i).copied().unwrap_or(0),
            offsets.get(i + 1).copied().unwrap_or(0),
        );
        if t < s {
            return Err(bad(format!(
                "the sector offset table runs backwards at sector {i} ({s} then {t})"
            )));
        }
        let raw = stored.get(s..t).ok_or_else(|| {
            bad(format!(
                "sector {i} ({s}..{t}) lies outside the {csize} bytes stored"
            ))
        })?;
        let expected = sector.min(size - i * sector);
        let mut raw = Cow::Borrowed(raw);
        if encrypted {
            decrypt(raw.to_mut(), key.wrapping_add(i as u32));
        }
        if compressed && raw.len() < expected {
            let at_sector = at.saturating_add(s as u64);
            n += decompress_into(&raw, expected, at_sector, &|| format!("sector {i}"), buf, n)?;
        } else {
            put(buf, n, &raw);
            n += raw.len();
        }
        if n > size.saturating_add(sector) {
            return Err(bad(format!(
                "its sectors hold more than the {size} bytes it claims"
            )));
        }
    }
    Ok(Got::Buf(n))
}

/// The bytes reading `b` inflates: its declared size when compressed, none when stored as it is
/// (its bytes are in the archive already).
fn inflated(b: &Block) -> u64 {
    if b.flags & (FILE_COMPRESS | FILE_IMPLODE) != 0 && b.size > b.compressed_size {
        u64::from(b.size)
    } else {
        0
    }
}

/// The refusal of a file whose declared size is past the inflate `limit` (`what` says whose).
fn past_limit(at: u64, b: &Block, limit: u64, what: &str) -> Error {
    Error::new(
        ErrorKind::Refused,
        Some(at),
        "",
        format!(
            "declares {} bytes from {} stored at byte {at}: past the {limit} bytes {what} \
             (raise it with --max-inflate); refused, nothing written",
            b.size, b.compressed_size
        ),
    )
}

/// What is left of an extraction's or verification's inflate limit: each compressed file takes
/// its declared size before it is read.
struct Budget(std::sync::atomic::AtomicU64);

impl Budget {
    fn new(limit: u64) -> Budget {
        Budget(std::sync::atomic::AtomicU64::new(limit))
    }

    /// Takes `e`'s share, or the refusal naming the file when too little is left.
    fn take(&self, o: &Opened, e: &Entry) -> Result<()> {
        use std::sync::atomic::Ordering;
        let Some(b) = o.archive.blocks.get(e.block as usize) else {
            return Ok(());
        };
        let want = inflated(b);
        self.0
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                left.checked_sub(want)
            })
            .map(|_| ())
            .map_err(|_| {
                let mut err = past_limit(
                    e.offset,
                    b,
                    o.archive.max_inflate,
                    "one extraction or verification may inflate, the files read before it counted",
                );
                err.path = e.path.clone();
                err.in_file(&o.path)
            })
    }
}

/// The first `len` bytes of `stored` (all of them when fewer): borrowed from the source when it
/// lends them, else moved into `buf`.
fn kept<'a>(stored: Cow<'a, [u8]>, at: u64, len: usize, buf: &mut Vec<u8>) -> Got<'a> {
    let n = len.min(stored.len());
    match stored {
        Cow::Borrowed(s) => Got::Source(s.get(..n).unwrap_or_default(), at),
        Cow::Owned(mut v) => {
            v.truncate(n);
            *buf = v;
            Got::Buf(n)
        }
    }
}

/// An archive on disk (mapped) with its tables.
pub struct Opened {
    pub path: PathBuf,
    pub archive: Archive,
    pub bytes: crate::io::Input,
    /// The archive open, for copying the files stored as they are inside the kernel.
    pub(crate) file: Option<std::fs::File>,
}

impl Opened {
    /// The bytes of `e`, errors naming the archive and the entry.
    pub fn read(&self, e: &Entry) -> Result<Vec<u8>> {
        self.archive
            .read(&self.bytes, e)
            .map_err(|err| err.in_file(&self.path))
    }
}

/// Opens the archive at `path`: its header and tables are read, its files when asked for.
pub fn open(path: &Path) -> Result<Opened> {
    // Opened first: the file the map is made of a moment later, unless it is replaced between.
    let file = std::fs::File::open(path).ok();
    let bytes = crate::io::read_input(path)?;
    let archive = Archive::from_source(&bytes).map_err(|e| e.in_file(path))?;
    Ok(Opened {
        path: path.to_path_buf(),
        archive,
        bytes,
        file,
    })
}

/// Buffers handed from one file to the next, for one extraction or verification: a file is
/// inflated into memory that is already there (and already zeroed), not into fresh pages.
#[derive(Default)]
struct Buffers(std::sync::Mutex<Vec<Vec<u8>>>);

impl Buffers {
    fn with<R>(&self, f: impl FnOnce(&mut Vec<u8>) -> R) -> R {
        let mut buf = (self.0.lock().ok())
            .and_then(|mut v| v.pop())
            .unwrap_or_default();
        let r = f(&mut buf);
        if let Ok(mut v) = self.0.lock() {
            v.push(buf);
        }
        r
    }
}

impl Opened {
    /// `f` given the bytes of `e` (borrowed from the map, or inflated into `buf`) and, when they
    /// are stored there as they are, their offset in the archive; errors name the archive and the
    /// entry.
    fn with_bytes<R>(
        &self,
        e: &Entry,
        buf: &mut Vec<u8>,
        f: impl FnOnce(&[u8], Option<u64>) -> Result<R>,
    ) -> Result<R> {
        let got =
            (self.archive.read_in(&self.bytes, e, buf)).map_err(|err| err.in_file(&self.path))?;
        match got {
            Got::Source(bytes, at) => f(bytes, Some(at)),
            Got::Buf(n) => f(buf.get(..n).unwrap_or_default(), None),
        }
    }
}

/// `f` on each of `entries` in parallel, the largest first (so that no large file is left for the
/// end while the other threads wait), each given a buffer; the results in the entries' order.
fn each_entry<T: Send>(entries: &[&Entry], f: impl Fn(&Entry, &mut Vec<u8>) -> T + Sync) -> Vec<T> {
    let mut order: Vec<usize> = (0..entries.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(entries.get(i).map_or(0, |e| e.size)));
    let buffers = Buffers::default();
    let mut done: Vec<(usize, T)> = order
        .par_iter()
        .filter_map(|&i| {
            let e = entries.get(i)?;
            Some((i, buffers.with(|buf| f(e, buf))))
        })
        .collect();
    done.sort_by_key(|d| d.0);
    done.into_iter().map(|d| d.1).collect()
}

/// Writes the files of `o` that match `patterns` (all when empty) under `dir`, in parallel. An
/// entry whose name would leave `dir` (`..`, a drive, an absolute path) is refused, by name.
pub fn extract(
    o: &Opened,
    dir: &Path,
    patterns: &[String],
    progress: &(dyn Fn(u64) + Sync),
) -> Extracted {
    let chosen: Vec<&Entry> = o
        .archive
        .entries
        .iter()
        .filter(|e| patterns.is_empty() || patterns.iter().any(|p| glob_matches(p, &e.path)))
        .collect();
    let budget = Budget::new(o.archive.max_inflate);
    let results = each_entry(&chosen, |e, buf| {
        let r = (crate::formats::catalog::destination(dir, &e.path))
            .map_err(|why| {
                Error::refused(
                    e.path.clone(),
                    format!("the entry's name {why}: it would be written outside the output folder; refused"),
                )
                .in_file(&o.path)
            })
            .and_then(|dest| budget.take(o, e).map(|()| dest))
            .and_then(|dest| {
                o.with_bytes(e, buf, |bytes, at| {
                    crate::io::write_output_made(&dest, |out| {
                        match (&o.file, at) {
                            (Some(file), Some(at)) => crate::io::copy_range(file, at, bytes, out),
                            _ => crate::io::write_in_steps(out, bytes),
                        }?;
                        // To the device while the next files are made: an extraction that
                        // ends in a sync (or the kernel's writeback) waited for all of them after
                        // the last one (281 MB fsynced: 1.5 s against 0.9 s, docs/PERFORMANCE.md).
                        crate::io::write_behind(out);
                        Ok(())
                    })?;
                    Ok(bytes.len() as u64)
                })
            });
        progress(u64::from(e.size));
        r
    });
    Extracted::tally(results)
}

/// Reads every named file of `o` whole: the entries that cannot be read (and why), with the
/// number that could.
pub fn verify(o: &Opened, progress: &(dyn Fn(u64) + Sync)) -> (usize, Vec<Error>) {
    let entries: Vec<&Entry> = o.archive.entries.iter().collect();
    let budget = Budget::new(o.archive.max_inflate);
    let results: Vec<Result<()>> = each_entry(&entries, |e, buf| {
        let r = budget.take(o, e).and_then(|()| {
            o.with_bytes(e, buf, |b, _| {
                if b.len() == e.size as usize {
                    Ok(())
                } else {
                    Err(Error::invalid(
                        e.offset,
                        e.path.clone(),
                        format!("reads as {} bytes, its block says {}", b.len(), e.size),
                    )
                    .in_file(&o.path))
                }
            })
        });
        progress(u64::from(e.size));
        r
    });
    let ok = results.iter().filter(|r| r.is_ok()).count();
    (ok, results.into_iter().filter_map(|r| r.err()).collect())
}
