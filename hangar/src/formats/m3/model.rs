//! Typed access to an M3 file: follow references with their tag checked, and read the plain value
//! sections (names, faces, bone lookups, key frames) the neutral scene is built from.

use super::table::{le, Entry, Reference};
use super::{Section, Tag, M3};
use crate::error::{Error, ErrorKind, Result};

/// A structure path for error messages, built only when an error needs it: a `&str`, or a closure
/// that formats one (hot loops pass closures so the happy path formats nothing).
pub trait Place: Copy {
    fn place(self) -> String;
}

impl Place for &str {
    fn place(self) -> String {
        self.to_string()
    }
}

impl Place for &String {
    fn place(self) -> String {
        self.clone()
    }
}

impl<F: Fn() -> String + Copy> Place for F {
    fn place(self) -> String {
        self()
    }
}

#[derive(Clone, Copy)]
pub struct Model<'m, 'a> {
    pub m3: &'m M3<'a>,
}

impl<'m, 'a> Model<'m, 'a> {
    pub fn new(m3: &'m M3<'a>) -> Self {
        Model { m3 }
    }

    fn small(&self) -> bool {
        self.m3.small_refs()
    }

    /// The MODL entry the header points at.
    pub fn modl(&self) -> Result<Entry<'m>> {
        let header = &self.m3.sections[0];
        let h = header.entries(self.small())[0];
        let r = h.reference("model").unwrap_or_default();
        self.entries(r, "MODL", "MD34.model")?
            .into_iter()
            .next()
            .ok_or_else(|| Error::invalid(12, "MD34.model", "the header does not point at a MODL"))
    }

    /// The section `r` points at, checked: index in range, tag as expected, entries within the count.
    pub fn section(
        &self,
        r: Reference,
        want: &str,
        path: impl Place,
    ) -> Result<Option<&'m Section<'a>>> {
        if r.is_null() {
            return Ok(None);
        }
        let s = self.m3.sections.get(r.index as usize).ok_or_else(|| {
            Error::invalid(
                r.at,
                path.place(),
                format!(
                    "reference to section {} of {}",
                    r.index,
                    self.m3.sections.len()
                ),
            )
        })?;
        if s.tag != Tag::from_name(want) {
            return Err(Error::invalid(
                r.at,
                path.place(),
                format!(
                    "reference to section {} is {:?}, expected {want}",
                    r.index, s.tag
                ),
            ));
        }
        if r.entries > s.count {
            return Err(Error::invalid(
                r.at,
                path.place(),
                format!(
                    "reference wants {} entries of {want} but section {} has {}",
                    r.entries, r.index, s.count
                ),
            ));
        }
        Ok(Some(s))
    }

    /// The entries `r` points at; a section hangar keeps raw is an error naming why.
    pub fn entries(&self, r: Reference, want: &str, path: impl Place) -> Result<Vec<Entry<'m>>> {
        let Some(s) = self.section(r, want, path)? else {
            return Ok(Vec::new());
        };
        if s.layout.is_none() {
            return Err(raw_section(s, want, path));
        }
        let mut v = s.entries(self.small());
        v.truncate(r.entries as usize);
        Ok(v)
    }

    /// Entry `k` of the entries `r` points at.
    pub fn entry(&self, r: Reference, k: usize, want: &str, path: impl Place) -> Result<Entry<'m>> {
        let s = self.section(r, want, path)?;
        s.filter(|_| k < r.entries as usize)
            .and_then(|s| s.entry(k, self.small()))
            .ok_or_else(|| {
                Error::invalid(
                    r.at,
                    format!("{}[{k}]", path.place()),
                    format!("entry {k} of {} {want} (or kept as raw bytes)", r.entries),
                )
            })
    }

    /// The bytes of a plain value section (`U16_`, `I32_`, `VEC3`...).
    pub fn values(&self, r: Reference, want: &str, path: impl Place) -> Result<&'m [u8]> {
        let Some(s) = self.section(r, want, path)? else {
            return Ok(&[]);
        };
        let size = s.entry_size().ok_or_else(|| raw_section(s, want, path))?;
        Ok(&s.data[..r.entries as usize * size])
    }

    pub fn text(&self, r: Reference, path: impl Place) -> Result<String> {
        let b = self.values(r, "CHAR", path)?;
        let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
        Ok(String::from_utf8_lossy(&b[..end]).into_owned())
    }

    /// A plain value section decoded value by value.
    fn decode<T, const N: usize>(
        &self,
        r: Reference,
        want: &str,
        path: impl Place,
        f: fn([u8; N]) -> T,
    ) -> Result<Vec<T>> {
        // Mapped from an exact-size iterator: one allocation (filter_map grew the vector step by
        // step, a few percent of an M3 batch).
        Ok(self
            .values(r, want, path)?
            .chunks_exact(N)
            .map(|c| f(le(c, 0)))
            .collect())
    }

    pub fn u16s(&self, r: Reference, path: impl Place) -> Result<Vec<u16>> {
        self.decode(r, "U16_", path, u16::from_le_bytes)
    }

    pub fn u32s(&self, r: Reference, path: impl Place) -> Result<Vec<u32>> {
        self.decode(r, "U32_", path, u32::from_le_bytes)
    }

    /// `entry.name` as a reference to a `U32_` section, read.
    pub fn field_u32s(&self, e: &Entry<'m>, name: &str, path: impl Place) -> Result<Vec<u32>> {
        self.u32s(e.reference(name).unwrap_or_default(), || {
            format!("{}.{name}", path.place())
        })
    }

    /// `entry.name` as a reference to `want`, followed.
    pub fn follow(
        &self,
        e: &Entry<'m>,
        name: &str,
        want: &str,
        path: impl Place,
    ) -> Result<Vec<Entry<'m>>> {
        self.entries(e.reference(name).unwrap_or_default(), want, || {
            format!("{}.{name}", path.place())
        })
    }

    /// `entry.name` as a reference to text.
    pub fn name_of(&self, e: &Entry<'m>, name: &str, path: impl Place) -> String {
        self.text(e.reference(name).unwrap_or_default(), || {
            format!("{}.{name}", path.place())
        })
        .unwrap_or_default()
    }
}

fn raw_section(s: &Section<'_>, want: &str, path: impl Place) -> Error {
    Error::new(
        ErrorKind::Unsupported,
        Some(s.offset),
        path.place(),
        format!(
            "{want} v{} is kept as raw bytes (see the warnings), so it cannot be interpreted",
            s.version
        ),
    )
}
