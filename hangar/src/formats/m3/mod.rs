//! Blizzard M3 (StarCraft II, Heroes of the Storm): MD34 and the older MD33.
//!
//! An M3 file is a list of sections (an index at the end gives each one's tag, offset, entry count
//! and version) whose entries point at each other with references `{entries, index, flags}`.
//! The raw layer keeps every section's bytes and the bytes after it (padding), so a read file
//! writes back byte for byte; `structures.txt` describes every entry's fields as data ([`table`]).
//!
//! - [`read`] / [`write`](mod@write): the container, both ways.
//! - [`dump`]: the JSON form (typed fields where the table knows the structure, base64 otherwise).
//! - [`model`]: typed access to the parts hangar interprets (geometry, materials, bones, sequences).
//! - [`scene`]: the neutral scene (meshes, skin, animations) the glTF exporter takes.
//! - [`check`]: `hangar validate`.

pub mod build;
pub mod check;
pub mod document;
pub mod dump;
pub(crate) mod edit;
pub mod model;
pub mod read;
pub mod scene;
pub mod table;
pub mod write;

use crate::raw::Bytes;

/// A section tag as its four bytes appear in the file (reversed: `LDOM` is MODL).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Tag(pub [u8; 4]);

impl Tag {
    /// `MODL` -> the stored bytes `LDOM`; a three-letter tag is a smaller number (`COL` -> `LOC\0`).
    pub fn from_name(name: &str) -> Tag {
        let mut b = [0u8; 4];
        let n = name.len().min(4);
        for (i, c) in name.bytes().take(4).enumerate() {
            b[n - 1 - i] = c;
        }
        Tag(b)
    }

    /// The readable name (`MODL`, `COL`), or `0x…` when the bytes are not plain text.
    pub fn name(&self) -> String {
        let len = self.0.iter().rposition(|&c| c != 0).map_or(0, |e| e + 1);
        let mut b = self.0;
        b[..len].reverse();
        let text = &b[..len];
        if !text.is_empty() && text.iter().all(|c| c.is_ascii_graphic() || *c == b' ') {
            String::from_utf8_lossy(text).into_owned()
        } else {
            format!("0x{:08x}", u32::from_le_bytes(self.0))
        }
    }

    /// Inverse of [`Tag::name`].
    pub fn parse(s: &str) -> Option<Tag> {
        if let Some(h) = s.strip_prefix("0x") {
            return u32::from_str_radix(h, 16)
                .ok()
                .map(|v| Tag(v.to_le_bytes()));
        }
        (!s.is_empty() && s.len() <= 4 && s.is_ascii()).then(|| Tag::from_name(s))
    }
}

impl std::fmt::Debug for Tag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

/// MD34 (12-byte references) or MD33 (8-byte references).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Md34,
    Md33,
}

impl Kind {
    pub fn small_refs(self) -> bool {
        self == Kind::Md33
    }
}

/// One index entry and its bytes.
#[derive(Debug, Clone)]
pub struct Section<'a> {
    pub tag: Tag,
    pub version: u32,
    /// Entries the index declares.
    pub count: u32,
    /// `count` entries when the table knows the layout; otherwise every byte up to the next section.
    pub data: Bytes<'a>,
    /// The bytes between this section and the next (or the index), when they are not Blizzard's
    /// padding (0xAA up to a multiple of 16).
    pub pad: Option<Bytes<'a>>,
    /// Entry layout, when the table describes this tag and version and the size fits.
    pub layout: Option<&'static table::Layout>,
    /// Where the section started in the file that was read (informational).
    pub offset: u64,
}

impl Section<'_> {
    /// Bytes of one entry, when the layout is known.
    pub fn entry_size(&self) -> Option<usize> {
        self.layout.map(|l| l.size)
    }

    /// Entry `k`, when the layout is known and the section has it.
    pub fn entry(&self, k: usize, small_refs: bool) -> Option<table::Entry<'_>> {
        let l = self.layout?;
        let bytes = self.data.get(k * l.size..(k + 1) * l.size)?;
        Some(table::Entry {
            bytes,
            layout: l,
            small_refs,
            at: self.offset + (k * l.size) as u64,
        })
    }

    pub fn entries(&self, small_refs: bool) -> Vec<table::Entry<'_>> {
        match self.layout {
            Some(l) if l.size > 0 => self
                .data
                .chunks_exact(l.size)
                .enumerate()
                .map(|(k, bytes)| table::Entry {
                    bytes,
                    layout: l,
                    small_refs,
                    at: self.offset + (k * l.size) as u64,
                })
                .collect(),
            _ => Vec::new(),
        }
    }
}

/// A whole M3 file. Section 0 is the header (`MD34` at offset 0); the index follows the last section.
#[derive(Debug, Clone)]
pub struct M3<'a> {
    pub kind: Kind,
    pub sections: Vec<Section<'a>>,
    /// Bytes after the index (none in Blizzard files).
    pub tail: Bytes<'a>,
}

impl M3<'_> {
    pub fn small_refs(&self) -> bool {
        self.kind.small_refs()
    }

    pub fn into_owned(self) -> M3<'static> {
        M3 {
            kind: self.kind,
            sections: self
                .sections
                .into_iter()
                .map(|s| Section {
                    tag: s.tag,
                    version: s.version,
                    count: s.count,
                    data: s.data.into_owned(),
                    pad: s.pad.map(Bytes::into_owned),
                    layout: s.layout,
                    offset: s.offset,
                })
                .collect(),
            tail: self.tail.into_owned(),
        }
    }
}

/// Blizzard's padding after a section that ends at `end`: 0xAA up to the next multiple of 16.
pub fn canonical_pad(end: usize) -> usize {
    end.next_multiple_of(16) - end
}
