//! A small interpreter for sequential binary layouts (Emotion FX chunks, .ani files): a structure is
//! described once as a list of fields ([`F`]); the same description reads the bytes into JSON and
//! writes JSON back to the same bytes.
//!
//! Counts of lists come from an earlier field (looked up in the enclosing structures too), a product
//! of two fields, or the bytes left before the chunk's declared end. Every count is checked against
//! the bytes that remain before anything is allocated.

use crate::bytes::{Cursor, Writer};
use crate::error::{Error, ErrorKind, Result};
use crate::raw::{float_bits, float_value};
use serde_json::{Map, Value};

/// How many items a list holds.
#[derive(Debug, Clone, Copy)]
pub enum Count {
    Field(&'static str),
    /// The product of two fields (vertices x attribute size).
    Mul(&'static str, &'static str),
    /// As many items of `n` bytes as fit before the chunk's declared end.
    Rest(usize),
}

/// One field of a chunk layout.
#[derive(Debug, Clone, Copy)]
pub enum F {
    U8(&'static str),
    U16(&'static str),
    I16(&'static str),
    U32(&'static str),
    I32(&'static str),
    F32(&'static str),
    /// `n` f32 (vectors, quaternions, matrices).
    Floats(&'static str, usize),
    /// A quaternion of four i16 (value / 32767).
    Quat16(&'static str),
    /// Opaque bytes (padding, flags kept as stored).
    Bytes(&'static str, usize),
    /// i32 length, then that many bytes of text.
    Str(&'static str),
    /// Text in a NUL-padded field of `n` bytes.
    Fixed(&'static str, usize),
    /// A list of structures.
    List(&'static str, Count, &'static [F]),
    /// Raw bytes, `count` items of `unit` bytes (vertex attribute data): base64 in JSON.
    Blob(&'static str, Count, usize),
    /// A list of u32 (indices): a JSON array of numbers.
    Words(&'static str, Count),
    /// A whole nested XAC file of `count` bytes (mesh LODs).
    Nested(&'static str, Count),
}

impl F {
    pub fn name(&self) -> &'static str {
        match *self {
            F::U8(n)
            | F::U16(n)
            | F::I16(n)
            | F::U32(n)
            | F::I32(n)
            | F::F32(n)
            | F::Floats(n, _)
            | F::Quat16(n)
            | F::Bytes(n, _)
            | F::Str(n)
            | F::Fixed(n, _)
            | F::List(n, _, _)
            | F::Blob(n, _, _)
            | F::Words(n, _)
            | F::Nested(n, _) => n,
        }
    }
}

/// Reads nested files for [`F::Nested`]; the container module provides it.
pub type NestedReader = fn(&[u8], &mut Vec<crate::Warning>) -> Result<Value>;
pub type NestedWriter = fn(&Value, bool) -> Result<Vec<u8>>;

pub struct Reader<'c, 'a> {
    pub c: &'c mut Cursor<'a>,
    /// Where the chunk's declared length ends (clamped to the data).
    pub end: usize,
    pub nested: NestedReader,
    pub warnings: &'c mut Vec<crate::Warning>,
}

fn lookup(scope: &[&Map<String, Value>], name: &str) -> Option<i64> {
    scope.iter().rev().find_map(|m| m.get(name)?.as_i64())
}

impl Reader<'_, '_> {
    fn count(
        &self,
        count: Count,
        unit: usize,
        scope: &[&Map<String, Value>],
        field: &'static str,
    ) -> Result<usize> {
        let n = match count {
            Count::Field(f) => lookup(scope, f),
            Count::Mul(a, b) => lookup(scope, a)
                .zip(lookup(scope, b))
                .map(|(a, b)| a.saturating_mul(b)),
            Count::Rest(u) => Some((self.end.saturating_sub(self.c.pos()) / u) as i64),
        };
        let n = n.ok_or_else(|| self.c.error(field, "count field missing"))?;
        if n < 0 {
            return Err(self.c.error(field, format!("negative count {n}")));
        }
        let n = usize::try_from(n).map_err(|_| self.c.error(field, "count too large"))?;
        self.c.check_count(n, unit.max(1), field)?;
        Ok(n)
    }

    pub fn read(
        &mut self,
        fields: &'static [F],
        scope: &[&Map<String, Value>],
    ) -> Result<Map<String, Value>> {
        let mut m = Map::new();
        for f in fields {
            let name = f.name();
            let v = match *f {
                F::U8(_) => self.c.u8(name)?.into(),
                F::U16(_) => self.c.u16(name)?.into(),
                F::I16(_) => (self.c.u16(name)? as i16).into(),
                F::U32(_) => self.c.u32(name)?.into(),
                F::I32(_) => self.c.i32(name)?.into(),
                F::F32(_) => float_value(self.c.u32(name)?),
                F::Floats(_, n) => {
                    self.c.check_count(n, 4, name)?;
                    Value::Array(
                        (0..n)
                            .map(|_| self.c.u32(name).map(float_value))
                            .collect::<Result<_>>()?,
                    )
                }
                F::Quat16(_) => Value::Array(
                    (0..4)
                        .map(|_| self.c.u16(name).map(|v| (v as i16).into()))
                        .collect::<Result<_>>()?,
                ),
                F::Bytes(_, n) => crate::raw::Bytes::borrowed(self.c.bytes(n, name)?)
                    .to_base64()
                    .into(),
                F::Str(_) => {
                    let len = self.c.i32(name)?;
                    if len < 0 {
                        return Err(self.c.error(name, format!("negative string length {len}")));
                    }
                    let b = self.c.bytes(len as usize, name)?;
                    text_value(b)
                }
                F::Fixed(_, n) => {
                    let b = self.c.bytes(n, name)?;
                    let end = b.iter().position(|&x| x == 0).unwrap_or(n);
                    match std::str::from_utf8(&b[..end]) {
                        Ok(t) if b[end..].iter().all(|&x| x == 0) => t.into(),
                        // Bytes after the NUL (leftovers of the exporter's buffer) are kept.
                        _ => serde_json::json!({
                            "text": match std::str::from_utf8(&b[..end]) {
                                Ok(t) => t.to_string(),
                                Err(_) => decode_8bit(&b[..end]),
                            },
                            "bytes": crate::raw::Bytes::borrowed(b).to_base64(),
                        }),
                    }
                }
                F::List(_, count, item) => {
                    // Counts are looked up in the enclosing structures and this one so far.
                    let sc = [scope, &[&m]].concat();
                    let n = self.count(count, 1, &sc, name)?;
                    let mut items = Vec::with_capacity(n.min(1 << 16));
                    for i in 0..n {
                        let v = {
                            self.c.within_item(name, i, |c| {
                                let mut r = Reader {
                                    c,
                                    end: self.end,
                                    nested: self.nested,
                                    warnings: self.warnings,
                                };
                                r.read(item, &sc)
                            })?
                        };
                        items.push(Value::Object(v));
                    }
                    Value::Array(items)
                }
                F::Blob(_, count, unit) => {
                    let n = self.count(count, unit, &[scope, &[&m]].concat(), name)?;
                    crate::raw::Bytes::borrowed(self.c.bytes(n * unit, name)?)
                        .to_base64()
                        .into()
                }
                F::Words(_, count) => {
                    let n = self.count(count, 4, &[scope, &[&m]].concat(), name)?;
                    Value::Array(
                        (0..n)
                            .map(|_| self.c.u32(name).map(Value::from))
                            .collect::<Result<_>>()?,
                    )
                }
                F::Nested(_, count) => {
                    let n = self.count(count, 1, &[scope, &[&m]].concat(), name)?;
                    let at = self.c.pos();
                    let b = self.c.bytes(n, name)?;
                    // The nested file's places, as places in this file.
                    let c = &*self.c;
                    let place = |offset: &mut Option<u64>, path: &mut String| {
                        *offset = offset.map(|o| o + at as u64);
                        *path = c.path_to(&format!("{name}.{path}"));
                    };
                    let mut inner = Vec::new();
                    let v = (self.nested)(b, &mut inner).map_err(|mut e| {
                        place(&mut e.offset, &mut e.path);
                        e
                    })?;
                    self.warnings.extend(inner.into_iter().map(|mut w| {
                        place(&mut w.offset, &mut w.path);
                        w
                    }));
                    v
                }
            };
            m.insert(name.to_string(), v);
        }
        Ok(m)
    }
}

/// Text as a JSON string when it is UTF-8, else `{"text": as Windows-1252, "bytes": base64}`: the
/// exporters of the time wrote names in the system's 8-bit code page ("S\xe4bel"); the bytes are
/// what is written back.
fn text_value(b: &[u8]) -> Value {
    match std::str::from_utf8(b) {
        Ok(s) => s.into(),
        Err(_) => serde_json::json!({
            "text": decode_8bit(b),
            "bytes": crate::raw::Bytes::borrowed(b).to_base64(),
        }),
    }
}

/// Text in the 8-bit code page Windows tools wrote (Windows-1252, a superset of Latin-1).
fn decode_8bit(b: &[u8]) -> String {
    encoding_rs::WINDOWS_1252
        .decode_without_bom_handling(b)
        .0
        .into_owned()
}

pub type WriteError = (String, String);

fn bad(field: &str, msg: impl Into<String>) -> WriteError {
    (field.to_string(), msg.into())
}

use crate::raw::base64_of as b64;

pub struct Writer2<'w> {
    pub w: &'w mut Writer,
    pub nested: NestedWriter,
}

impl Writer2<'_> {
    /// Writes `v` by `fields`. A count field that a later list of the same structure counts by is
    /// written as that list's length, so adding or removing items needs no bookkeeping.
    pub fn write(&mut self, fields: &'static [F], v: &Value) -> Result<(), WriteError> {
        let obj = v.as_object().ok_or_else(|| bad("", "expected an object"))?;
        let (nested, big) = (self.nested, self.w.big_endian);
        for f in fields {
            let name = f.name();
            let x = obj.get(name).ok_or_else(|| bad(name, "missing"))?;
            let int = |lo: i64, hi: i64| -> Result<i64, WriteError> {
                let counted = fields.iter().find_map(|g| match *g {
                    F::List(n, Count::Field(c), _) | F::Words(n, Count::Field(c)) if c == name => {
                        obj.get(n).and_then(Value::as_array).map(|a| a.len() as i64)
                    }
                    F::Blob(n, Count::Field(c), unit) if c == name => {
                        obj.get(n).and_then(b64).map(|b| (b.len() / unit) as i64)
                    }
                    F::Nested(n, Count::Field(c)) if c == name => obj
                        .get(n)
                        .and_then(|v| nested(v, big).ok())
                        .map(|b| b.len() as i64),
                    _ => None,
                });
                let n = counted
                    .or_else(|| x.as_i64())
                    .ok_or_else(|| bad(name, format!("expected an integer, got {x}")))?;
                if n < lo || n > hi {
                    return Err(bad(name, format!("{n} is outside {lo}..={hi}")));
                }
                Ok(n)
            };
            match *f {
                F::U8(_) => self.w.u8(int(0, 255)? as u8),
                F::U16(_) => self.w.u16(int(0, u16::MAX as i64)? as u16),
                F::I16(_) => self
                    .w
                    .u16(int(i16::MIN as i64, i16::MAX as i64)? as i16 as u16),
                F::U32(_) => self.w.u32(int(0, u32::MAX as i64)? as u32),
                F::I32(_) => self
                    .w
                    .u32(int(i32::MIN as i64, i32::MAX as i64)? as i32 as u32),
                F::F32(_) => self
                    .w
                    .u32(float_bits(x).ok_or_else(|| bad(name, "expected a number"))?),
                F::Floats(_, n) => {
                    let a = x
                        .as_array()
                        .filter(|a| a.len() == n)
                        .ok_or_else(|| bad(name, format!("expected {n} numbers")))?;
                    for e in a {
                        self.w
                            .u32(float_bits(e).ok_or_else(|| bad(name, "expected numbers"))?);
                    }
                }
                F::Quat16(_) => {
                    let a = x
                        .as_array()
                        .filter(|a| a.len() == 4)
                        .ok_or_else(|| bad(name, "expected 4 integers"))?;
                    for e in a {
                        let n = e
                            .as_i64()
                            .filter(|n| *n >= i16::MIN as i64 && *n <= i16::MAX as i64);
                        self.w
                            .u16(n.ok_or_else(|| bad(name, "expected i16 values"))? as i16 as u16);
                    }
                }
                F::Bytes(_, n) => {
                    let b = b64(x)
                        .filter(|b| b.len() == n)
                        .ok_or_else(|| bad(name, format!("expected {n} bytes in base64")))?;
                    self.w.bytes(&b);
                }
                F::Str(_) => {
                    let b = match x {
                        Value::String(s) => s.as_bytes().to_vec(),
                        _ => x
                            .get("bytes")
                            .and_then(b64)
                            .ok_or_else(|| bad(name, "expected text"))?,
                    };
                    self.w.u32(b.len() as u32);
                    self.w.bytes(&b);
                }
                F::Fixed(_, n) => {
                    let b = match x {
                        Value::String(s) => {
                            let mut b = s.as_bytes().to_vec();
                            if b.len() > n {
                                return Err(bad(
                                    name,
                                    format!("{} bytes of text do not fit in {n}", b.len()),
                                ));
                            }
                            b.resize(n, 0);
                            b
                        }
                        _ => x
                            .get("bytes")
                            .and_then(b64)
                            .filter(|b| b.len() == n)
                            .ok_or_else(|| bad(name, format!("expected text or {n} bytes")))?,
                    };
                    self.w.bytes(&b);
                }
                F::List(_, _, item) => {
                    let a = x.as_array().ok_or_else(|| bad(name, "expected a list"))?;
                    for (i, e) in a.iter().enumerate() {
                        self.write(item, e)
                            .map_err(|(p, m)| (format!("{name}[{i}]{}", dot(&p)), m))?;
                    }
                }
                F::Blob(_, _, unit) => {
                    let b = b64(x).ok_or_else(|| bad(name, "expected base64 bytes"))?;
                    if b.len() % unit != 0 {
                        return Err(bad(
                            name,
                            format!(
                                "{} bytes is not a whole number of {unit}-byte items",
                                b.len()
                            ),
                        ));
                    }
                    self.w.bytes(&b);
                }
                F::Words(_, _) => {
                    let a = x
                        .as_array()
                        .ok_or_else(|| bad(name, "expected a list of numbers"))?;
                    for e in a {
                        let n = e
                            .as_u64()
                            .filter(|n| *n <= u32::MAX as u64)
                            .ok_or_else(|| bad(name, "expected u32 values"))?;
                        self.w.u32(n as u32);
                    }
                }
                F::Nested(_, _) => {
                    let b = (self.nested)(x, self.w.big_endian)
                        .map_err(|e| bad(name, e.to_string()))?;
                    self.w.bytes(&b);
                }
            }
        }
        Ok(())
    }
}

fn dot(p: &str) -> String {
    if p.is_empty() {
        String::new()
    } else {
        format!(".{p}")
    }
}

/// An error for a JSON field that does not fit the layout.
pub fn json_error(path: String, message: String) -> Error {
    Error::new(ErrorKind::Invalid, None, path, message)
}

/// Reading the JSON these layouts produce: missing or mistyped fields read as zero or empty.
pub mod value {
    use crate::raw::{base64_of, float_bits};
    use serde_json::Value;

    pub fn int(v: &Value) -> i64 {
        v.as_i64().unwrap_or(0)
    }

    /// An f32 as stored (NaN and infinity included).
    pub fn f32(v: &Value) -> f32 {
        float_bits(v).map_or(0.0, f32::from_bits)
    }

    /// `N` floats, with NaN and infinity read as 0.
    pub fn floats<const N: usize>(v: &Value) -> [f32; N] {
        let mut a = [0.0; N];
        for (k, x) in a.iter_mut().enumerate() {
            let f = f32(&v[k]);
            *x = if f.is_finite() { f } else { 0.0 };
        }
        a
    }

    /// Text: a plain string, or the text part of `{"text", "bytes"}` (a fixed field with more in it).
    pub fn text(v: &Value) -> Option<&str> {
        v.as_str().or_else(|| v["text"].as_str())
    }

    /// Raw bytes stored as base64.
    pub fn bytes(v: &Value) -> Vec<u8> {
        base64_of(v).unwrap_or_default()
    }
}
