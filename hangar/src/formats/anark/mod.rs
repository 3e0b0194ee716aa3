//! Anark UI files of X Rebirth: .bgp game plans, .bgf game faces, .bsg scene graphs.
//!
//! The structures keep every field the spec lists (also the ones it calls ignored) and any bytes a
//! section holds beyond its items (`tails`), so reading then writing gives the same bytes. Names are
//! stored as hashes (`hash.rs`); the JSON and XML forms show them as names where the table knows them.

pub mod bgf;
pub mod bgp;
pub mod bsg;
pub mod check;
pub mod document;
pub mod dot;
pub mod hash;
pub mod scene;
pub mod xml;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeMap;

pub use bgf::Bgf;
pub use bgp::Bgp;
pub use bsg::Bsg;

/// Bytes a section holds beyond its items, by section name; written back after the items.
pub type Tails = BTreeMap<String, Bytes>;

/// Raw bytes, shown as hex in JSON.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Bytes(pub Vec<u8>);

impl Bytes {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Serialize for Bytes {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let hex: String = self.0.iter().map(|b| format!("{b:02x}")).collect();
        s.serialize_str(&hex)
    }
}

impl<'de> Deserialize<'de> for Bytes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        let b = s.as_bytes();
        if b.len() % 2 != 0 {
            return Err(D::Error::custom("hex bytes need an even number of digits"));
        }
        b.chunks(2)
            .map(|p| {
                std::str::from_utf8(p)
                    .ok()
                    .and_then(|t| u8::from_str_radix(t, 16).ok())
                    .ok_or_else(|| D::Error::custom(format!("bad hex byte in {s:?}")))
            })
            .collect::<Result<Vec<u8>, _>>()
            .map(Bytes)
    }
}

/// A string as stored: shown as text when it is UTF-8, else as a list of byte values.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Text(pub Vec<u8>);

impl Text {
    pub fn new(s: &str) -> Self {
        Text(s.as_bytes().to_vec())
    }
    pub fn lossy(&self) -> String {
        String::from_utf8_lossy(&self.0).into_owned()
    }
}

impl Serialize for Text {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match std::str::from_utf8(&self.0) {
            Ok(t) => s.serialize_str(t),
            Err(_) => self.0.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum T {
            S(String),
            B(Vec<u8>),
        }
        Ok(match T::deserialize(d)? {
            T::S(s) => Text(s.into_bytes()),
            T::B(b) => Text(b),
        })
    }
}

/// A float that survives JSON even when it is not finite (then written as `"bits:0x........"`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct F32(pub f32);

impl Serialize for F32 {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.0.is_finite() {
            s.serialize_f32(self.0)
        } else {
            s.serialize_str(&format!("bits:0x{:08x}", self.0.to_bits()))
        }
    }
}

impl<'de> Deserialize<'de> for F32 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        f32_from_json(&v).map(F32).map_err(D::Error::custom)
    }
}

fn f32_from_json(v: &serde_json::Value) -> Result<f32, String> {
    if let Some(f) = v.as_f64() {
        return Ok(f as f32);
    }
    v.as_str()
        .and_then(|s| s.strip_prefix("bits:0x"))
        .and_then(|h| u32::from_str_radix(h, 16).ok())
        .map(f32::from_bits)
        .ok_or_else(|| format!("expected a number, got {v}"))
}

/// A full 32-bit name hash (element names, param types), shown as the name when known.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Name(pub u32);

impl Serialize for Name {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&hash::show(self.0))
    }
}

impl<'de> Deserialize<'de> for Name {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Name(hash::parse(&String::deserialize(d)?)))
    }
}

/// An attribute-name hash as animations store it (bits 0..26); other bits set are kept in hex.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AttrName(pub u32);

impl AttrName {
    pub fn show(self) -> String {
        if self.0 & !hash::NAME_BITS == 0 {
            hash::show_attr(self.0)
        } else {
            format!("0x{:08X}", self.0)
        }
    }
    pub fn parse(s: &str) -> Self {
        if s.starts_with("0x") || s.starts_with("0X") {
            AttrName(hash::parse(s))
        } else {
            AttrName(hash::hash(s) & hash::NAME_BITS)
        }
    }
}

impl Serialize for AttrName {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.show())
    }
}

impl<'de> Deserialize<'de> for AttrName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(AttrName::parse(&String::deserialize(d)?))
    }
}

/// The value types of bits 27..29 of an attribute key.
pub const TYPE_INT: u32 = 1;
pub const TYPE_FLOAT: u32 = 3;
pub const TYPE_BOOL: u32 = 4;
pub const TYPE_STRING: u32 = 5;

/// The name of an attribute value type, `None` for the numbers the spec does not name.
pub fn type_name(t: u32) -> Option<&'static str> {
    match t {
        TYPE_INT => Some("int"),
        TYPE_FLOAT => Some("float"),
        TYPE_BOOL => Some("bool"),
        TYPE_STRING => Some("string"),
        _ => None,
    }
}

pub fn type_from_name(s: &str) -> Option<u32> {
    match s {
        "int" => Some(TYPE_INT),
        "float" => Some(TYPE_FLOAT),
        "bool" => Some(TYPE_BOOL),
        "string" => Some(TYPE_STRING),
        _ => s.parse().ok().filter(|t| *t < 8),
    }
}

/// One attribute: `key` holds the name hash (bits 0..26), the type (27..29) and two more bits kept as read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Attr {
    pub key: u32,
    pub value: u32,
}

impl Attr {
    pub fn kind(&self) -> u32 {
        (self.key >> 27) & 7
    }
    pub fn name(&self) -> String {
        hash::show_attr(self.key)
    }
    /// The value as the XML form and JSON show it (string values as their index).
    pub fn value_text(&self) -> String {
        match self.kind() {
            TYPE_INT => (self.value as i32).to_string(),
            TYPE_FLOAT => format!("{:.6}", f32::from_bits(self.value)),
            _ => self.value.to_string(),
        }
    }
}

#[derive(Serialize, Deserialize)]
struct AttrJson {
    name: String,
    #[serde(rename = "type")]
    kind: serde_json::Value,
    value: serde_json::Value,
    #[serde(default, skip_serializing_if = "is_zero")]
    high: u32,
    /// The string a string value points at; written by dumps, ignored when read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    text: Option<String>,
}

fn is_zero(v: &u32) -> bool {
    *v == 0
}

impl Serialize for Attr {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let t = self.kind();
        let value = match t {
            TYPE_INT => serde_json::json!(self.value as i32),
            TYPE_FLOAT => serde_json::to_value(F32(f32::from_bits(self.value)))
                .map_err(serde::ser::Error::custom)?,
            _ => serde_json::json!(self.value),
        };
        AttrJson {
            name: self.name(),
            kind: type_name(t).map_or_else(|| serde_json::json!(t), |n| serde_json::json!(n)),
            value,
            high: self.key >> 30,
            text: None,
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Attr {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let j = AttrJson::deserialize(d)?;
        let t = match &j.kind {
            serde_json::Value::String(s) => type_from_name(s),
            v => v
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .filter(|n| *n < 8),
        }
        .ok_or_else(|| D::Error::custom(format!("unknown attribute type {}", j.kind)))?;
        if j.high > 3 {
            return Err(D::Error::custom("attribute `high` holds bits 30..31 only"));
        }
        let value = match t {
            TYPE_INT => j
                .value
                .as_i64()
                .and_then(|v| i32::try_from(v).ok())
                .map(|v| v as u32),
            TYPE_FLOAT => f32_from_json(&j.value).ok().map(f32::to_bits),
            _ => j.value.as_u64().and_then(|v| u32::try_from(v).ok()),
        }
        .ok_or_else(|| D::Error::custom(format!("bad value {} for {}", j.value, j.name)))?;
        let name = hash::parse(&j.name) & hash::NAME_BITS;
        Ok(Attr {
            key: name | (t << 27) | (j.high << 30),
            value,
        })
    }
}

/// Any of the three files, as `read` found it.
#[derive(Debug, Clone, PartialEq)]
pub enum Anark {
    Bgf(Bgf),
    Bgp(Bgp),
    Bsg(Bsg),
}

/// The first byte of every Anark file: 0 little-endian, 1 big-endian.
fn endianness(c: &mut crate::bytes::Cursor) -> crate::error::Result<bool> {
    let at = c.pos();
    match c.u8("endianness")? {
        0 => Ok(false),
        1 => Ok(true),
        b => Err(c.error_at(
            at,
            "endianness",
            format!("endianness byte is {b}, expected 0 (little) or 1 (big)"),
        )),
    }
}

/// Reads a header's `int headerSize` (at least `min`, the bytes the header holds) and returns where
/// the header ends, checked against the file's `len`.
fn header_end(c: &mut crate::bytes::Cursor, min: u32, len: usize) -> crate::error::Result<usize> {
    let at = c.pos();
    let size = c.u32("headerSize")?;
    if size < min {
        return Err(c.error_at(
            at,
            "headerSize",
            format!("header size {size} is below the {min} bytes the header holds"),
        ));
    }
    c.pos()
        .checked_add(size as usize)
        .filter(|e| *e <= len)
        .ok_or_else(|| c.error_at(at, "headerSize", "header runs past the end of the file"))
}

/// Reads one `int sectionSize` and returns a cursor limited to the section, positioned at its start,
/// and the section's end offset.
fn section<'a>(
    c: &mut crate::bytes::Cursor<'a>,
    name: &'static str,
) -> crate::error::Result<(crate::bytes::Cursor<'a>, usize)> {
    let at = c.pos();
    let size = c.u32("sectionSize")? as usize;
    let start = c.pos();
    let end = start
        .checked_add(size)
        .filter(|e| *e <= c.data().len())
        .ok_or_else(|| {
            let mut e = c.error_at(
                at,
                "sectionSize",
                format!(
                    "section {name} declares {size} bytes but only {} remain",
                    c.remaining()
                ),
            );
            e.kind = crate::error::ErrorKind::Truncated;
            e
        })?;
    let data = c.data().get(..end).unwrap_or_default();
    let mut s = crate::bytes::Cursor::new(data, "");
    s.set_big_endian(c.big_endian());
    s.seek(start, name)?;
    c.seek(end, name)?;
    Ok((s, end))
}

/// Keeps what a section holds after its items in `tails`.
fn keep_tail(tails: &mut Tails, name: &str, s: &crate::bytes::Cursor, end: usize) {
    let rest = s.data().get(s.pos()..end).unwrap_or_default();
    if !rest.is_empty() {
        tails.insert(name.to_string(), Bytes(rest.to_vec()));
    }
}

/// Writes `body` as a section: its size, then the bytes, then its tail.
fn write_section(w: &mut crate::bytes::Writer, body: &[u8], tails: &Tails, name: &str) {
    let tail = tails.get(name).map(|t| t.0.as_slice()).unwrap_or_default();
    w.u32((body.len() + tail.len()) as u32);
    w.bytes(body);
    w.bytes(tail);
}

/// Reads any of the three formats; a .bgp has no magic, so `bgp_hint` says when the name ends in .bgp.
pub fn read(bytes: &[u8], bgp_hint: bool) -> crate::error::Result<(Anark, Vec<crate::Warning>)> {
    if bytes.get(6..14) == Some(b"AnarkBGF") {
        return bgf::read(bytes).map(|(f, w)| (Anark::Bgf(f), w));
    }
    if bytes.get(8..16) == Some(b"AnarkBGF") {
        return bsg::read(bytes).map(|(f, w)| (Anark::Bsg(f), w));
    }
    if bgp_hint {
        return bgp::read(bytes).map(|(f, w)| (Anark::Bgp(f), w));
    }
    Err(crate::error::Error::invalid(
        0,
        "",
        "not an Anark file: no AnarkBGF magic at byte 6 (.bgf) or 8 (.bsg)",
    ))
}

impl Anark {
    pub fn write(&self) -> crate::error::Result<Vec<u8>> {
        match self {
            Anark::Bgf(f) => bgf::write(f),
            Anark::Bgp(f) => Ok(bgp::write(f)),
            Anark::Bsg(f) => Ok(bsg::write(f)),
        }
    }

    /// The JSON dump: the structure with names resolved; string values also as their text.
    pub fn to_json(&self) -> serde_json::Value {
        let (kind, mut v) = match self {
            Anark::Bgf(f) => ("bgf", bgf::to_json(f)),
            Anark::Bgp(f) => ("bgp", serde_json::to_value(f).unwrap_or_default()),
            Anark::Bsg(f) => ("bsg", serde_json::to_value(f).unwrap_or_default()),
        };
        if let Some(o) = v.as_object_mut() {
            o.insert("anark".into(), serde_json::json!(kind));
        }
        v
    }

    pub fn from_json(v: &serde_json::Value) -> crate::error::Result<Anark> {
        let bad = |e: serde_json::Error| Error::invalid(0, "anark", e.to_string());
        use crate::error::Error;
        match v.get("anark").and_then(|k| k.as_str()) {
            Some("bgf") => Ok(Anark::Bgf(serde_json::from_value(v.clone()).map_err(bad)?)),
            Some("bgp") => Ok(Anark::Bgp(serde_json::from_value(v.clone()).map_err(bad)?)),
            Some("bsg") => Ok(Anark::Bsg(serde_json::from_value(v.clone()).map_err(bad)?)),
            _ => Err(Error::invalid(
                0,
                "anark",
                "the dump names no Anark kind (\"anark\": \"bgf\", \"bgp\" or \"bsg\")",
            )),
        }
    }

    /// The summary `hangar info` prints; the keys are fixed, scripts depend on them.
    pub fn info(&self) -> serde_json::Value {
        match self {
            Anark::Bgf(f) => serde_json::json!({
                "format": "Anark BGF",
                "big_endian": f.big_endian,
                "elements": f.elements.len(),
                "attributes": f.elements.iter().map(|e| e.attributes.len()).sum::<usize>(),
                "strings": f.strings.len(),
                "contracts": f.contracts.len(),
                "animations": f.animations.len(),
                "keyframes": f.animations.iter().map(|a| a.keyframes.len()).sum::<usize>(),
                "params": f.params.len(),
                "width": f.header.width,
                "height": f.header.height,
                "slides": f.slides.len(),
            }),
            Anark::Bgp(f) => serde_json::json!({
                "format": "Anark BGP",
                "big_endian": f.big_endian,
                "assets": f.assets.len(),
                "states": f.states.len(),
                "transitions": f.states.iter().map(|s| s.transitions.len()).sum::<usize>(),
            }),
            Anark::Bsg(f) => serde_json::json!({
                "format": "Anark BSG",
                "big_endian": f.big_endian,
                "nodes": f.nodes.len(),
                "assets": f.assets.len(),
            }),
        }
    }
}
