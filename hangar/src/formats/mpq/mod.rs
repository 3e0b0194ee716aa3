//! MPQ archives, as StarCraft II keeps maps and mods (`.SC2Map`, `.SC2Mod`, `.SC2Components`):
//! a header, an encrypted hash table (a file's name hashed three ways finds its slot), an
//! encrypted block table (where each file lies, its sizes and flags), and the files, each stored
//! whole or in sectors of `512 << sector_shift` bytes, every sector compressed on its own (zlib,
//! bzip2, either after Blizzard's sparse coding of zero runs) or stored as it is. A `(listfile)`
//! names the files with `\` separators.
//!
//! A file's size is what its block declares; no ratio to its stored bytes bounds it (a 512 KiB
//! terrain layer of zeros is stored in 54 bytes of bzip2, FORMAT-NOTES "MPQ compression ratios").
//! What bounds it is the archive's own structure (a sectored file's offset table, each sector at
//! most a sector) and one limit on what a call may inflate, [`max_inflate`]: a read of one file,
//! a whole extraction or verification together (files stored as they are do not count). A file
//! past it is refused before anything is allocated or written for it.
//!
//! Reading goes through [`ReadAt`] (a mapped file, a browser's `File` read in slices): opening
//! reads the header and the two tables, and a file's bytes are read when asked for. Format 4
//! archives also carry HET/BET tables; every StarCraft II archive keeps the classic tables beside
//! them (the game's older readers need them), so this reader reads those only.

use crate::error::{Error, ErrorKind, Result};
use std::borrow::Cow;

mod diff;
pub(crate) mod document;
mod read;
mod write;

pub use diff::diff;
pub use read::{extract, verify, Archive, Entry, Opened};
pub use write::{build, build_with, pack, pack_with, Own, PackOptions, Packed, ATTRIBUTES};

/// Opens the archive at `path`: its header and tables are read, its files when asked for. An
/// empty file is called what it is (an empty `x.SC2Map` is a failed download or save, not a
/// damaged archive).
pub fn open(path: &std::path::Path) -> Result<Opened> {
    if std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() == 0) {
        return Err(Error::new(
            ErrorKind::Truncated,
            Some(0),
            "MPQ",
            "the file is empty (0 bytes): not an MPQ archive",
        )
        .in_file(path));
    }
    read::open(path)
}

/// The most bytes one call inflates by default (2 GiB): a read of one file, or the compressed files
/// of one extraction or verification together. StarCraft II maps and mods hold far less.
pub const DEFAULT_MAX_INFLATE: u64 = 2 << 30;

static MAX_INFLATE: std::sync::atomic::AtomicU64 =
    std::sync::atomic::AtomicU64::new(DEFAULT_MAX_INFLATE);

/// The inflate limit of the archives opened from now on (`hangar --max-inflate`); each
/// [`Archive`] keeps its own in `max_inflate`, which a caller may also set.
pub fn set_max_inflate(bytes: u64) {
    MAX_INFLATE.store(bytes, std::sync::atomic::Ordering::Relaxed);
}

/// The inflate limit archives are opened with ([`DEFAULT_MAX_INFLATE`] unless set).
pub fn max_inflate() -> u64 {
    MAX_INFLATE.load(std::sync::atomic::Ordering::Relaxed)
}

/// `MPQ\x1a`: the archive header.
pub const MAGIC: [u8; 4] = *b"MPQ\x1a";
/// `MPQ\x1b`: a user-data header in front of the archive (replays); its header lies further on.
pub const USER_DATA_MAGIC: [u8; 4] = *b"MPQ\x1b";

/// Block flags.
pub const FILE_IMPLODE: u32 = 0x0000_0100;
pub const FILE_COMPRESS: u32 = 0x0000_0200;
pub const FILE_ENCRYPTED: u32 = 0x0001_0000;
pub const FILE_FIX_KEY: u32 = 0x0002_0000;
pub const FILE_PATCH_FILE: u32 = 0x0010_0000;
pub const FILE_SINGLE_UNIT: u32 = 0x0100_0000;
pub const FILE_DELETE_MARKER: u32 = 0x0200_0000;
pub const FILE_SECTOR_CRC: u32 = 0x0400_0000;
pub const FILE_EXISTS: u32 = 0x8000_0000;

/// A hash table slot never used: a search stops here.
pub const HASH_FREE: u32 = 0xFFFF_FFFF;
/// A slot whose file was deleted: a search goes on past it.
pub const HASH_DELETED: u32 = 0xFFFF_FFFE;

/// The names of the archive's own bookkeeping files.
pub const LISTFILE: &str = "(listfile)";
pub const SPECIAL: &[&str] = &["(listfile)", "(attributes)", "(signature)"];

/// The archive header, as far as a reader of the classic tables needs it (formats 1 to 4).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Header {
    /// Where the header lies in the file: every offset below counts from here.
    pub at: u64,
    pub header_size: u32,
    /// 0 to 3 (format 1 to 4).
    pub format_version: u16,
    pub sector_shift: u16,
    pub hash_table_pos: u64,
    pub block_table_pos: u64,
    /// The high 16 bits of the block offsets (format 2 on); 0 when absent.
    pub hi_block_table_pos: u64,
    pub hash_table_entries: u32,
    pub block_table_entries: u32,
    /// Format 4: the tables' stored sizes (smaller than `entries * 16` when compressed).
    pub hash_table_size: u64,
    pub block_table_size: u64,
    pub het_table_pos: u64,
    pub bet_table_pos: u64,
}

impl Header {
    /// Bytes in a sector, when the shift keeps it within reason (at most 8 MiB).
    pub fn sector_size(&self) -> Option<usize> {
        (self.sector_shift <= 14).then(|| 512usize << self.sector_shift)
    }
}

/// A hash table slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HashEntry {
    pub name_a: u32,
    pub name_b: u32,
    pub locale: u16,
    pub platform: u16,
    pub block: u32,
}

/// A block table entry: where a file lies and how it is stored.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Block {
    /// From the header (`Header::at`), with the high bits of format 2.
    pub offset: u64,
    pub compressed_size: u32,
    pub size: u32,
    pub flags: u32,
}

/// Bytes read at an offset: what the reader needs of a file (a map of it, a browser's `File`).
pub trait ReadAt: Send + Sync {
    /// The whole length.
    fn size(&self) -> u64;
    /// `len` bytes from `offset`, or an error when they run past the end.
    fn read_at(&self, offset: u64, len: usize) -> Result<Cow<'_, [u8]>>;
}

impl ReadAt for [u8] {
    fn size(&self) -> u64 {
        self.len() as u64
    }

    fn read_at(&self, offset: u64, len: usize) -> Result<Cow<'_, [u8]>> {
        usize::try_from(offset)
            .ok()
            .and_then(|o| self.get(o..o.checked_add(len)?))
            .map(Cow::Borrowed)
            .ok_or_else(|| past_end(offset, len as u64, self.len() as u64, "archive"))
    }
}

/// A borrowed slice read as it is (the registry hands formats `&[u8]`).
impl ReadAt for &[u8] {
    fn size(&self) -> u64 {
        (**self).size()
    }

    fn read_at(&self, offset: u64, len: usize) -> Result<Cow<'_, [u8]>> {
        (**self).read_at(offset, len)
    }
}

impl ReadAt for Vec<u8> {
    fn size(&self) -> u64 {
        self.as_slice().size()
    }

    fn read_at(&self, offset: u64, len: usize) -> Result<Cow<'_, [u8]>> {
        self.as_slice().read_at(offset, len)
    }
}

impl ReadAt for crate::io::Input {
    fn size(&self) -> u64 {
        (**self).size()
    }

    fn read_at(&self, offset: u64, len: usize) -> Result<Cow<'_, [u8]>> {
        (**self).read_at(offset, len)
    }
}

/// The error for `len` bytes at `offset` that run past the end of an archive of `total` bytes.
pub(crate) fn past_end(offset: u64, len: u64, total: u64, what: &str) -> Error {
    Error::new(
        ErrorKind::Truncated,
        Some(offset),
        what,
        format!("{len} bytes at byte {offset} run past the end of the archive ({total} bytes)"),
    )
}

/// True when `head` (a file's first bytes) starts an MPQ archive.
pub fn is_archive(head: &[u8]) -> bool {
    head.starts_with(&MAGIC) || head.starts_with(&USER_DATA_MAGIC)
}

/// True when the file at `path` is an MPQ archive (by its magic, whatever its name).
pub fn is_archive_file(path: &std::path::Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 4];
    path.is_file()
        && std::fs::File::open(path)
            .and_then(|mut f| f.read_exact(&mut head))
            .is_ok()
        && is_archive(&head)
}

/// True when `path` is an MPQ archive by its magic, or names one (`.SC2Map`, `.SC2Mod`...): what
/// the archive commands take, so that an empty or truncated map is told as an archive, not as
/// something else.
pub fn is_archive_path(path: &std::path::Path) -> bool {
    is_archive_file(path) || (!path.is_dir() && has_archive_name(&path.to_string_lossy()))
}

/// The file names StarCraft II archives carry (by extension, for pages that see names first).
pub fn has_archive_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    [
        ".sc2map",
        ".sc2mod",
        ".sc2components",
        ".mpq",
        ".s2ma",
        ".s2mv",
    ]
    .iter()
    .any(|e| n.ends_with(e))
}

/// Storm's encryption table: 0x500 words from one seed.
const CRYPT: [u32; 0x500] = crypt_table();

const fn crypt_table() -> [u32; 0x500] {
    let mut table = [0u32; 0x500];
    let mut seed: u32 = 0x0010_0001;
    let mut i = 0;
    while i < 0x100 {
        let mut j = 0;
        while j < 5 {
            seed = (seed * 125 + 3) % 0x2A_AAAB;
            let hi = (seed & 0xFFFF) << 16;
            seed = (seed * 125 + 3) % 0x2A_AAAB;
            table[i + j * 0x100] = hi | (seed & 0xFFFF);
            j += 1;
        }
        i += 1;
    }
    table
}

/// What a name is hashed for: its slot, its two check values, or a file's key.
#[derive(Clone, Copy)]
pub enum HashKind {
    Slot = 0,
    NameA = 1,
    NameB = 2,
    Key = 3,
}

/// Storm's hash of `name`: ASCII letters in upper case and `/` as `\`, as the game compares names.
pub fn hash(name: &[u8], kind: HashKind) -> u32 {
    let mut seed1: u32 = 0x7FED_7FED;
    let mut seed2: u32 = 0xEEEE_EEEE;
    let base = (kind as usize) << 8;
    for &c in name {
        let c = match c {
            b'/' => b'\\',
            c => c.to_ascii_uppercase(),
        };
        let v = CRYPT.get(base + c as usize).copied().unwrap_or(0);
        seed1 = v ^ seed1.wrapping_add(seed2);
        seed2 = u32::from(c)
            .wrapping_add(seed1)
            .wrapping_add(seed2)
            .wrapping_add(seed2 << 5)
            .wrapping_add(3);
    }
    seed1
}

/// Decrypts `data` (whole little-endian words; a tail shorter than a word is left as it is).
pub fn decrypt(data: &mut [u8], key: u32) {
    crypt(data, key, true);
}

/// Encrypts `data` in place (the inverse of [`decrypt`]).
pub fn encrypt(data: &mut [u8], key: u32) {
    crypt(data, key, false);
}

/// MPQ's cipher in either direction: the key stream is fed the plain word, which is the output when
/// decrypting and the input when encrypting.
fn crypt(data: &mut [u8], key: u32, decrypting: bool) {
    let (mut seed1, mut seed2) = (key, 0xEEEE_EEEEu32);
    for w in data.chunks_exact_mut(4) {
        seed2 = seed2.wrapping_add(
            CRYPT
                .get(0x400 + (seed1 & 0xFF) as usize)
                .copied()
                .unwrap_or(0),
        );
        let given = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
        let out = given ^ seed1.wrapping_add(seed2);
        w.copy_from_slice(&out.to_le_bytes());
        let plain = if decrypting { out } else { given };
        seed1 = ((!seed1) << 21).wrapping_add(0x1111_1111) | (seed1 >> 11);
        seed2 = plain
            .wrapping_add(seed2)
            .wrapping_add(seed2 << 5)
            .wrapping_add(3);
    }
}

/// The key the hash table is encrypted with.
pub fn hash_table_key() -> u32 {
    hash(b"(hash table)", HashKind::Key)
}

/// The key the block table is encrypted with.
pub fn block_table_key() -> u32 {
    hash(b"(block table)", HashKind::Key)
}

#[cfg(test)]
mod pack_tests;
#[cfg(test)]
mod tests;
