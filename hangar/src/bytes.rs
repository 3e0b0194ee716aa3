//! The one bounds-checked reader every parser uses, and the little-endian/big-endian writer beside it.
//!
//! The cursor keeps the structure path it is in, so an error deep inside a file reads
//! `at byte 1234, XMF.buffers[1].itemSize: ...` without each parser building strings.

use crate::error::{Error, ErrorKind, Result};

#[derive(Debug, Clone)]
enum Segment {
    Field(&'static str),
    Index(&'static str, usize),
}

/// A position in a borrowed byte slice, with the endianness of the file and the structure path.
#[derive(Debug, Clone)]
pub struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
    big_endian: bool,
    path: Vec<Segment>,
}

impl<'a> Cursor<'a> {
    pub fn new(data: &'a [u8], root: &'static str) -> Self {
        Cursor {
            data,
            pos: 0,
            big_endian: false,
            path: vec![Segment::Field(root)],
        }
    }

    pub fn set_big_endian(&mut self, big: bool) {
        self.big_endian = big;
    }

    pub fn big_endian(&self) -> bool {
        self.big_endian
    }

    pub fn pos(&self) -> usize {
        self.pos
    }

    pub fn data(&self) -> &'a [u8] {
        self.data
    }

    pub fn remaining(&self) -> usize {
        self.data.len().saturating_sub(self.pos)
    }

    /// Moves to an absolute offset; an offset past the end is an error naming `field`.
    pub fn seek(&mut self, offset: usize, field: &'static str) -> Result<()> {
        if offset > self.data.len() {
            return Err(self.error_at(
                offset,
                field,
                format!(
                    "offset {offset} is past the end of the data ({} bytes)",
                    self.data.len()
                ),
            ));
        }
        self.pos = offset;
        Ok(())
    }

    /// Runs `f` with `name` pushed on the structure path.
    pub fn within<T>(
        &mut self,
        name: &'static str,
        f: impl FnOnce(&mut Self) -> Result<T>,
    ) -> Result<T> {
        self.path.push(Segment::Field(name));
        let r = f(self);
        self.path.pop();
        r
    }

    /// Runs `f` with `name[index]` pushed on the structure path.
    pub fn within_item<T>(
        &mut self,
        name: &'static str,
        index: usize,
        f: impl FnOnce(&mut Self) -> Result<T>,
    ) -> Result<T> {
        self.path.push(Segment::Index(name, index));
        let r = f(self);
        self.path.pop();
        r
    }

    /// The current structure path with `field` appended.
    pub fn path_to(&self, field: &str) -> String {
        let mut s = String::new();
        for seg in &self.path {
            if !s.is_empty() {
                s.push('.');
            }
            match seg {
                Segment::Field(n) => s.push_str(n),
                Segment::Index(n, i) => {
                    s.push_str(n);
                    s.push('[');
                    s.push_str(&i.to_string());
                    s.push(']');
                }
            }
        }
        if !field.is_empty() {
            s.push('.');
            s.push_str(field);
        }
        s
    }

    pub fn error_at(&self, offset: usize, field: &str, message: impl Into<String>) -> Error {
        Error::invalid(offset as u64, self.path_to(field), message)
    }

    pub fn error(&self, field: &str, message: impl Into<String>) -> Error {
        self.error_at(self.pos, field, message)
    }

    pub fn warning(
        &self,
        offset: usize,
        field: &str,
        message: impl Into<String>,
    ) -> crate::Warning {
        crate::Warning::new(Some(offset as u64), self.path_to(field), message)
    }

    /// Borrows the next `len` bytes.
    pub fn bytes(&mut self, len: usize, field: &'static str) -> Result<&'a [u8]> {
        if len > self.remaining() {
            let mut e = self.error(
                field,
                format!(
                    "needs {len} bytes but only {} remain (file is {} bytes)",
                    self.remaining(),
                    self.data.len()
                ),
            );
            e.kind = ErrorKind::Truncated;
            return Err(e);
        }
        let s = &self.data[self.pos..self.pos + len];
        self.pos += len;
        Ok(s)
    }

    pub fn array<const N: usize>(&mut self, field: &'static str) -> Result<[u8; N]> {
        let b = self.bytes(N, field)?;
        let mut a = [0u8; N];
        a.copy_from_slice(b);
        Ok(a)
    }

    pub fn u8(&mut self, field: &'static str) -> Result<u8> {
        Ok(self.array::<1>(field)?[0])
    }

    pub fn u16(&mut self, field: &'static str) -> Result<u16> {
        let a = self.array(field)?;
        Ok(if self.big_endian {
            u16::from_be_bytes(a)
        } else {
            u16::from_le_bytes(a)
        })
    }

    pub fn u32(&mut self, field: &'static str) -> Result<u32> {
        let a = self.array(field)?;
        Ok(if self.big_endian {
            u32::from_be_bytes(a)
        } else {
            u32::from_le_bytes(a)
        })
    }

    pub fn i32(&mut self, field: &'static str) -> Result<i32> {
        Ok(self.u32(field)? as i32)
    }

    pub fn u64(&mut self, field: &'static str) -> Result<u64> {
        let a = self.array(field)?;
        Ok(if self.big_endian {
            u64::from_be_bytes(a)
        } else {
            u64::from_le_bytes(a)
        })
    }

    pub fn f32(&mut self, field: &'static str) -> Result<f32> {
        Ok(f32::from_bits(self.u32(field)?))
    }

    /// Checks that `count` items of `item_size` bytes fit in what remains, before anything is allocated.
    pub fn check_count(&self, count: usize, item_size: usize, field: &'static str) -> Result<()> {
        match count.checked_mul(item_size) {
            Some(n) if n <= self.remaining() => Ok(()),
            _ => {
                let mut e = self.error(
                    field,
                    format!(
                        "{count} items of {item_size} bytes do not fit in the {} bytes that remain",
                        self.remaining()
                    ),
                );
                e.kind = ErrorKind::Truncated;
                Err(e)
            }
        }
    }
}

/// Appends values in one endianness to a byte vector; the writers' counterpart of [`Cursor`].
#[derive(Debug, Default)]
pub struct Writer {
    pub buf: Vec<u8>,
    pub big_endian: bool,
}

impl Writer {
    pub fn new(big_endian: bool) -> Self {
        Writer {
            buf: Vec::new(),
            big_endian,
        }
    }

    pub fn bytes(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }

    pub fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }

    pub fn u16(&mut self, v: u16) {
        self.bytes(&if self.big_endian {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        });
    }

    pub fn u32(&mut self, v: u32) {
        self.bytes(&if self.big_endian {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        });
    }

    pub fn i32(&mut self, v: i32) {
        self.u32(v as u32);
    }

    pub fn u64(&mut self, v: u64) {
        self.bytes(&if self.big_endian {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        });
    }

    pub fn f32(&mut self, v: f32) {
        self.u32(v.to_bits());
    }

    pub fn len(&self) -> usize {
        self.buf.len()
    }

    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }
}
