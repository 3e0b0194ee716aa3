//! The table of M3 structures (`structures.txt`), turned into byte layouts: one description drives
//! reading fields, the JSON dump, JSON back to bytes, and reference checks.
// Parses the structure table compiled into hangar (structures.txt), never input: a mistake in it is
// a bug found by every test that opens an M3, so it may panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::Tag;
pub use crate::raw::{float_bits, float_value};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::OnceLock;

const TEXT: &str = include_str!("structures.txt");

/// What an animation reference animates: the type of its init and null values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnimKind {
    Vec2,
    Vec3,
    Quat,
    U32,
    U16,
    I16,
    F32,
    Col,
    Flag,
    Bnds,
}

impl AnimKind {
    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "vec2" => AnimKind::Vec2,
            "vec3" => AnimKind::Vec3,
            "quat" => AnimKind::Quat,
            "u32" => AnimKind::U32,
            "u16" => AnimKind::U16,
            "i16" => AnimKind::I16,
            "f32" => AnimKind::F32,
            "col" => AnimKind::Col,
            "flag" => AnimKind::Flag,
            "bnds" => AnimKind::Bnds,
            _ => return None,
        })
    }

    /// The plain type of one value.
    pub fn value_ty(self) -> Ty {
        match self {
            AnimKind::Vec2 => Ty::Floats(2),
            AnimKind::Vec3 => Ty::Floats(3),
            AnimKind::Quat => Ty::Floats(4),
            AnimKind::U32 | AnimKind::Flag => Ty::U32,
            AnimKind::U16 => Ty::U16,
            AnimKind::I16 => Ty::I16,
            AnimKind::F32 => Ty::F32,
            AnimKind::Col => Ty::Col,
            AnimKind::Bnds => Ty::Floats(7),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    U8,
    I8,
    U16,
    I16,
    U32,
    I32,
    U64,
    F32,
    /// `n` consecutive f32 (vectors, quaternions, matrices, bounding spheres).
    Floats(usize),
    /// Four bytes, B G R A.
    Col,
    Bytes(usize),
    Ref(Tag),
    Anim(AnimKind),
    /// Another structure inlined.
    Struct(Tag),
}

/// One field at its offset in an entry.
#[derive(Debug, Clone)]
pub struct Slot {
    pub name: &'static str,
    pub ty: Ty,
    pub offset: usize,
    pub size: usize,
}

/// The byte layout of one tag at one version.
#[derive(Debug, Clone)]
pub struct Layout {
    pub tag: Tag,
    pub version: u32,
    pub size: usize,
    /// The size the table lists (MD34); `size` is computed from the fields.
    pub listed_size: usize,
    /// No field described: entries are kept as opaque bytes.
    pub opaque: bool,
    /// Some field is a reference or an animation reference (directly or in an inlined structure).
    pub links: bool,
    pub slots: Vec<Slot>,
    /// Where an entry holds references, inlined structures' included (byte offsets).
    pub refs: Vec<usize>,
}

impl Layout {
    pub fn slot(&self, name: &str) -> Option<&Slot> {
        self.slots.iter().find(|s| s.name == name)
    }

    /// A plain value section (`CHAR`, `U16_`, `VEC3`...): one field named `value`.
    pub fn is_plain(&self) -> bool {
        self.slots.len() == 1 && self.slots[0].name == "value"
    }
}

struct FieldDef {
    ty: Ty,
    name: &'static str,
    min: u32,
    max: u32,
}

struct Def {
    tag: Tag,
    versions: Vec<(u32, usize)>,
    fields: Vec<FieldDef>,
}

pub struct Table {
    defs: HashMap<Tag, Def>,
    /// Layouts sorted by [`layout_key`] (tag, version, 8-byte references): a lookup per section
    /// (thousands in a model) is a binary search over integers, not a hash of the key.
    layouts: Vec<(u128, Layout)>,
}

fn parse_ty(s: &str) -> Ty {
    if let Some(t) = s.strip_prefix("ref:") {
        return Ty::Ref(Tag::from_name(t));
    }
    if let Some(k) = s.strip_prefix("anim:") {
        return Ty::Anim(AnimKind::parse(k).unwrap_or_else(|| panic!("bad anim kind {k}")));
    }
    if let Some(t) = s.strip_prefix("struct:") {
        return Ty::Struct(Tag::from_name(t));
    }
    if let Some(n) = s.strip_prefix("bytes:") {
        return Ty::Bytes(n.parse().expect("bytes:N"));
    }
    match s {
        "u8" => Ty::U8,
        "i8" => Ty::I8,
        "u16" => Ty::U16,
        "i16" => Ty::I16,
        "u32" => Ty::U32,
        "i32" => Ty::I32,
        "u64" => Ty::U64,
        "f32" => Ty::F32,
        "vec2" => Ty::Floats(2),
        "vec3" => Ty::Floats(3),
        "vec4" | "quat" => Ty::Floats(4),
        "mat4" => Ty::Floats(16),
        "bnds" => Ty::Floats(7),
        "col" => Ty::Col,
        _ => panic!("unknown type {s} in structures.txt"),
    }
}

fn parse_condition(s: &str) -> (u32, u32) {
    let mut min = 0;
    let mut max = u32::MAX;
    let mut rest = s;
    while !rest.is_empty() {
        let (op, tail) = rest.split_at(2);
        let end = tail
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(tail.len());
        let n: u32 = tail[..end].parse().expect("version number");
        match op {
            ">=" => min = n,
            "<=" => max = n,
            _ => panic!("bad condition {s}"),
        }
        rest = &tail[end..];
    }
    (min, max)
}

impl Table {
    fn parse() -> Table {
        let mut defs: HashMap<Tag, Def> = HashMap::new();
        let mut order: Vec<Tag> = Vec::new();
        let mut current: Option<Tag> = None;
        for line in TEXT.lines() {
            let body = line.split('#').next().unwrap_or("");
            if body.trim().is_empty() {
                continue;
            }
            let words: Vec<&'static str> = body.split_whitespace().collect();
            if !line.starts_with(' ') {
                let tag = Tag::from_name(words[0]);
                let versions = words[1..]
                    .iter()
                    .map(|v| {
                        let (n, size) = v.split_once('=').expect("version=size");
                        (n.parse().unwrap(), size.parse().unwrap())
                    })
                    .collect();
                defs.insert(
                    tag,
                    Def {
                        tag,
                        versions,
                        fields: Vec::new(),
                    },
                );
                order.push(tag);
                current = Some(tag);
            } else {
                let def = defs.get_mut(&current.expect("field before tag")).unwrap();
                let (min, max) = words.get(2).map_or((0, u32::MAX), |c| parse_condition(c));
                def.fields.push(FieldDef {
                    ty: parse_ty(words[0]),
                    name: words[1],
                    min,
                    max,
                });
            }
        }
        let mut table = Table {
            defs,
            layouts: Vec::new(),
        };
        for tag in order {
            let versions = table.defs[&tag].versions.clone();
            for (v, listed) in versions {
                for small in [false, true] {
                    let l = table.build(tag, v, listed, small);
                    table.layouts.push((layout_key(tag, v, small), l));
                }
            }
        }
        // A version listed twice: the later description wins.
        table.layouts.reverse();
        table.layouts.sort_by_key(|(k, _)| *k);
        table.layouts.dedup_by_key(|(k, _)| *k);
        table
    }

    fn build(&self, tag: Tag, version: u32, listed: usize, small_refs: bool) -> Layout {
        let def = &self.defs[&tag];
        let mut slots = Vec::new();
        let mut offset = 0;
        let mut links = false;
        let mut refs = Vec::new();
        for f in def
            .fields
            .iter()
            .filter(|f| version >= f.min && version <= f.max)
        {
            match f.ty {
                Ty::Ref(_) => {
                    links = true;
                    refs.push(offset);
                }
                Ty::Anim(_) => links = true,
                _ => {}
            }
            let size = match f.ty {
                // An inlined structure is laid out once, for its size and its references both.
                Ty::Struct(t) => {
                    let (v, listed) = self.defs[&t].versions[0];
                    let inner = self.build(t, v, listed, small_refs);
                    links |= inner.links;
                    refs.extend(inner.refs.iter().map(|o| offset + o));
                    inner.size
                }
                ty => self.ty_size(ty, small_refs),
            };
            slots.push(Slot {
                name: f.name,
                ty: f.ty,
                offset,
                size,
            });
            offset += size;
        }
        let opaque = def.fields.is_empty();
        Layout {
            tag,
            version,
            size: if opaque { listed } else { offset },
            listed_size: listed,
            opaque,
            links,
            slots,
            refs,
        }
    }

    pub fn ty_size(&self, ty: Ty, small_refs: bool) -> usize {
        match ty {
            Ty::U8 | Ty::I8 => 1,
            Ty::U16 | Ty::I16 => 2,
            Ty::U32 | Ty::I32 | Ty::F32 | Ty::Col => 4,
            Ty::U64 => 8,
            Ty::Floats(n) => 4 * n,
            Ty::Bytes(n) => n,
            Ty::Ref(_) => {
                if small_refs {
                    8
                } else {
                    12
                }
            }
            Ty::Anim(k) => 8 + 2 * self.ty_size(k.value_ty(), small_refs) + 4,
            Ty::Struct(t) => {
                let def = &self.defs[&t];
                let (v, listed) = def.versions[0];
                self.build(t, v, listed, small_refs).size
            }
        }
    }

    /// The layout of `tag` at `version`, if the table describes it.
    pub fn layout(&self, tag: Tag, version: u32, small_refs: bool) -> Option<&Layout> {
        let key = layout_key(tag, version, small_refs);
        self.layouts
            .binary_search_by_key(&key, |(k, _)| *k)
            .ok()
            .map(|i| &self.layouts[i].1)
    }

    pub fn knows_tag(&self, tag: Tag) -> bool {
        self.defs.contains_key(&tag)
    }

    /// The versions the table lists for `tag`.
    pub fn versions(&self, tag: Tag) -> Vec<u32> {
        self.defs
            .get(&tag)
            .map(|d| d.versions.iter().map(|v| v.0).collect())
            .unwrap_or_default()
    }

    /// Every (tag, version) layout, for tests.
    pub fn all(&self) -> impl Iterator<Item = &Layout> {
        self.layouts
            .iter()
            .filter(|(k, _)| k & 1 == 0)
            .map(|(_, l)| l)
    }

    pub fn inline(&self, tag: Tag, small_refs: bool) -> &Layout {
        let v = self.defs[&tag].versions[0].0;
        self.layout(tag, v, small_refs)
            .unwrap_or_else(|| panic!("the table builds every version it lists ({tag:?} v{v})"))
    }

    pub fn tag_of(&self, tag: Tag) -> Tag {
        self.defs.get(&tag).map_or(tag, |d| d.tag)
    }
}

/// The sort key of a layout: tag, then version, then the reference size.
fn layout_key(tag: Tag, version: u32, small_refs: bool) -> u128 {
    (u128::from(u32::from_le_bytes(tag.0)) << 64)
        | (u128::from(version) << 1)
        | u128::from(small_refs)
}

pub fn table() -> &'static Table {
    static T: OnceLock<Table> = OnceLock::new();
    T.get_or_init(Table::parse)
}

// ---------------------------------------------------------------------------------------------
// Values: an entry's bytes as JSON and back.

/// The `N` bytes of `b` at `at`, as an array for `from_le_bytes`.
pub(super) fn le<const N: usize>(b: &[u8], at: usize) -> [u8; N] {
    let mut a = [0; N];
    a.copy_from_slice(&b[at..at + N]);
    a
}

/// A reference as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Reference {
    pub entries: u32,
    pub index: u32,
    pub flags: u32,
    /// Where the reference is stored in the file (for error messages; 0 when not known).
    pub at: u64,
}

impl Reference {
    pub fn read(b: &[u8], small: bool) -> Reference {
        Reference {
            entries: u32::from_le_bytes(le(b, 0)),
            index: u32::from_le_bytes(le(b, 4)),
            flags: if small {
                0
            } else {
                u32::from_le_bytes(le(b, 8))
            },
            at: 0,
        }
    }

    pub fn is_null(&self) -> bool {
        self.entries == 0
    }
}

/// Decodes and encodes entries; `counts[i]` is the entry count of section `i`, which lets a
/// reference leave out `entries` when it equals the count of the section it points at.
pub struct Codec<'c> {
    pub small_refs: bool,
    pub counts: &'c [u32],
}

pub type CodecError = (String, String);

impl Codec<'_> {
    pub fn decode(&self, layout: &Layout, b: &[u8]) -> Value {
        if layout.opaque {
            return Value::String(crate::raw::Bytes::borrowed(b).to_base64());
        }
        if layout.is_plain() {
            return self.value(layout.slots[0].ty, &b[..layout.slots[0].size]);
        }
        let mut m = Map::new();
        for s in &layout.slots {
            m.insert(
                s.name.to_string(),
                self.value(s.ty, &b[s.offset..s.offset + s.size]),
            );
        }
        Value::Object(m)
    }

    fn value(&self, ty: Ty, b: &[u8]) -> Value {
        match ty {
            Ty::U8 => b[0].into(),
            Ty::I8 => (b[0] as i8).into(),
            Ty::U16 => u16::from_le_bytes(le(b, 0)).into(),
            Ty::I16 => i16::from_le_bytes(le(b, 0)).into(),
            Ty::U32 => u32::from_le_bytes(le(b, 0)).into(),
            Ty::I32 => i32::from_le_bytes(le(b, 0)).into(),
            Ty::U64 => u64::from_le_bytes(le(b, 0)).into(),
            Ty::F32 => float_value(u32::from_le_bytes(le(b, 0))),
            Ty::Floats(n) => Value::Array(
                (0..n)
                    .map(|k| float_value(u32::from_le_bytes(le(b, 4 * k))))
                    .collect(),
            ),
            Ty::Col => Value::Array(b[..4].iter().map(|&x| x.into()).collect()),
            Ty::Bytes(_) => Value::String(crate::raw::Bytes::borrowed(b).to_base64()),
            Ty::Ref(_) => {
                let r = Reference::read(b, self.small_refs);
                if r.entries == 0 && r.index == 0 && r.flags == 0 {
                    return Value::Null;
                }
                let mut m = Map::new();
                m.insert("index".into(), r.index.into());
                if self.counts.get(r.index as usize) != Some(&r.entries) {
                    m.insert("entries".into(), r.entries.into());
                }
                if r.flags != 0 {
                    m.insert("flags".into(), r.flags.into());
                }
                Value::Object(m)
            }
            Ty::Anim(k) => {
                let t = table();
                let vs = t.ty_size(k.value_ty(), self.small_refs);
                let mut m = Map::new();
                m.insert("interpolation".into(), u16::from_le_bytes(le(b, 0)).into());
                let flags = u16::from_le_bytes(le(b, 2));
                if flags != 0 {
                    m.insert("flags".into(), flags.into());
                }
                m.insert("id".into(), u32::from_le_bytes(le(b, 4)).into());
                m.insert("init".into(), self.value(k.value_ty(), &b[8..8 + vs]));
                m.insert(
                    "null".into(),
                    self.value(k.value_ty(), &b[8 + vs..8 + 2 * vs]),
                );
                let unused = i32::from_le_bytes(le(b, 8 + 2 * vs));
                if unused != 0 {
                    m.insert("unused".into(), unused.into());
                }
                Value::Object(m)
            }
            Ty::Struct(tag) => self.decode(table().inline(tag, self.small_refs), b),
        }
    }

    /// Appends the bytes of one entry; errors name the field inside the entry.
    pub fn encode(&self, layout: &Layout, v: &Value, out: &mut Vec<u8>) -> Result<(), CodecError> {
        if layout.opaque {
            let b = crate::raw::base64_of(v)
                .ok_or_else(|| (String::new(), "expected base64 bytes".into()))?;
            if b.len() != layout.size {
                return Err((
                    String::new(),
                    format!("{} bytes for an entry of {}", b.len(), layout.size),
                ));
            }
            out.extend_from_slice(&b);
            return Ok(());
        }
        if layout.is_plain() {
            return self.put(layout.slots[0].ty, v, out);
        }
        let obj = v
            .as_object()
            .ok_or_else(|| (String::new(), "expected an object".to_string()))?;
        for s in &layout.slots {
            let fv = obj
                .get(s.name)
                .ok_or_else(|| (s.name.to_string(), "missing".to_string()))?;
            self.put(s.ty, fv, out)
                .map_err(|(p, m)| (join(s.name, &p), m))?;
        }
        Ok(())
    }

    fn put(&self, ty: Ty, v: &Value, out: &mut Vec<u8>) -> Result<(), CodecError> {
        let bad = |what: &str| (String::new(), format!("expected {what}, got {v}"));
        let int = |lo: i128, hi: i128| -> Result<i128, CodecError> {
            let n = v
                .as_i64()
                .map(i128::from)
                .or_else(|| v.as_u64().map(i128::from))
                .ok_or_else(|| bad("an integer"))?;
            if n < lo || n > hi {
                return Err(bad(&format!("an integer in {lo}..={hi}")));
            }
            Ok(n)
        };
        match ty {
            Ty::U8 => out.push(int(0, u8::MAX as i128)? as u8),
            Ty::I8 => out.push(int(i8::MIN as i128, i8::MAX as i128)? as i8 as u8),
            Ty::U16 => out.extend_from_slice(&(int(0, u16::MAX as i128)? as u16).to_le_bytes()),
            Ty::I16 => out.extend_from_slice(
                &(int(i16::MIN as i128, i16::MAX as i128)? as i16).to_le_bytes(),
            ),
            Ty::U32 => out.extend_from_slice(&(int(0, u32::MAX as i128)? as u32).to_le_bytes()),
            Ty::I32 => out.extend_from_slice(
                &(int(i32::MIN as i128, i32::MAX as i128)? as i32).to_le_bytes(),
            ),
            Ty::U64 => out.extend_from_slice(&(int(0, u64::MAX as i128)? as u64).to_le_bytes()),
            Ty::F32 => {
                out.extend_from_slice(&float_bits(v).ok_or_else(|| bad("a number"))?.to_le_bytes())
            }
            Ty::Floats(n) => {
                let a = v.as_array().filter(|a| a.len() == n);
                let a = a.ok_or_else(|| bad(&format!("{n} numbers")))?;
                for x in a {
                    out.extend_from_slice(
                        &float_bits(x).ok_or_else(|| bad("numbers"))?.to_le_bytes(),
                    );
                }
            }
            Ty::Col => {
                let a = v.as_array().filter(|a| a.len() == 4);
                for x in a.ok_or_else(|| bad("4 bytes [b, g, r, a]"))? {
                    let n = x
                        .as_u64()
                        .filter(|&n| n <= 255)
                        .ok_or_else(|| bad("bytes"))?;
                    out.push(n as u8);
                }
            }
            Ty::Bytes(n) => {
                let b = crate::raw::base64_of(v).filter(|b| b.len() == n);
                out.extend_from_slice(&b.ok_or_else(|| bad(&format!("{n} bytes in base64")))?);
            }
            Ty::Ref(_) => {
                let r = if v.is_null() {
                    Reference::default()
                } else {
                    let o = v.as_object().ok_or_else(|| bad("null or {\"index\": …}"))?;
                    let get = |k: &str| o.get(k).and_then(Value::as_u64).map(|n| n as u32);
                    let index = get("index").ok_or_else(|| bad("an index"))?;
                    Reference {
                        at: 0,
                        index,
                        entries: get("entries").unwrap_or_else(|| {
                            self.counts.get(index as usize).copied().unwrap_or(0)
                        }),
                        flags: get("flags").unwrap_or(0),
                    }
                };
                out.extend_from_slice(&r.entries.to_le_bytes());
                out.extend_from_slice(&r.index.to_le_bytes());
                if !self.small_refs {
                    out.extend_from_slice(&r.flags.to_le_bytes());
                }
            }
            Ty::Anim(k) => {
                let o = v.as_object().ok_or_else(|| bad("an animation reference"))?;
                let n = |key: &str, default: Option<u64>| {
                    o.get(key)
                        .and_then(Value::as_u64)
                        .or(default)
                        .ok_or_else(|| (key.to_string(), "missing".to_string()))
                };
                out.extend_from_slice(&(n("interpolation", None)? as u16).to_le_bytes());
                out.extend_from_slice(&(n("flags", Some(0))? as u16).to_le_bytes());
                out.extend_from_slice(&(n("id", None)? as u32).to_le_bytes());
                for key in ["init", "null"] {
                    let x = o
                        .get(key)
                        .ok_or_else(|| (key.to_string(), "missing".into()))?;
                    self.put(k.value_ty(), x, out)
                        .map_err(|(p, m)| (join(key, &p), m))?;
                }
                let unused = o.get("unused").and_then(Value::as_i64).unwrap_or(0) as i32;
                out.extend_from_slice(&unused.to_le_bytes());
            }
            Ty::Struct(tag) => self.encode(table().inline(tag, self.small_refs), v, out)?,
        }
        Ok(())
    }
}

fn join(a: &str, b: &str) -> String {
    if b.is_empty() {
        a.to_string()
    } else {
        format!("{a}.{b}")
    }
}

/// A view of one entry's bytes through its layout: fields by name.
#[derive(Clone, Copy)]
pub struct Entry<'a> {
    pub bytes: &'a [u8],
    pub layout: &'static Layout,
    pub small_refs: bool,
    /// Where the entry starts in the file it was read from.
    pub at: u64,
}

impl<'a> Entry<'a> {
    fn at(&self, name: &str) -> Option<(&'static Slot, &'a [u8])> {
        let s = self.layout.slot(name)?;
        Some((s, &self.bytes[s.offset..s.offset + s.size]))
    }

    /// The file offset of field `name` (of the entry when there is no such field).
    pub fn offset_of(&self, name: &str) -> u64 {
        self.at + self.layout.slot(name).map_or(0, |s| s.offset as u64)
    }

    pub fn has(&self, name: &str) -> bool {
        self.layout.slot(name).is_some()
    }

    /// Every field with its bytes, in layout order (reading each by its name again costs a
    /// search of the layout per field).
    pub fn fields(&self) -> impl Iterator<Item = (&'static Slot, &'a [u8])> + '_ {
        self.layout
            .slots
            .iter()
            .map(|s| (s, &self.bytes[s.offset..s.offset + s.size]))
    }

    /// An integer field of any width, widened.
    pub fn int(&self, name: &str) -> Option<i64> {
        let (s, b) = self.at(name)?;
        int_value(s, b)
    }

    pub fn u32(&self, name: &str) -> Option<u32> {
        self.int(name).map(|v| v as u32)
    }

    pub fn f32(&self, name: &str) -> Option<f32> {
        let (s, b) = self.at(name)?;
        f32_value(s, b)
    }

    pub fn floats<const N: usize>(&self, name: &str) -> Option<[f32; N]> {
        let (s, b) = self.at(name)?;
        (s.ty == Ty::Floats(N)).then(|| floats(b))
    }

    pub fn reference(&self, name: &str) -> Option<Reference> {
        let (s, b) = self.at(name)?;
        matches!(s.ty, Ty::Ref(_)).then(|| Reference {
            at: self.at + s.offset as u64,
            ..Reference::read(b, self.small_refs)
        })
    }

    pub fn anim(&self, name: &str) -> Option<AnimRef<'a>> {
        let (s, b) = self.at(name)?;
        self.anim_at(s, b)
    }

    fn anim_at(&self, s: &Slot, b: &'a [u8]) -> Option<AnimRef<'a>> {
        let Ty::Anim(kind) = s.ty else { return None };
        // id and flags (8 bytes), the value twice, 4 more bytes (see `Table::ty_size`).
        let vs = (s.size - 12) / 2;
        Some(AnimRef {
            kind,
            interpolation: u16::from_le_bytes(le(b, 0)),
            flags: u16::from_le_bytes(le(b, 2)),
            id: u32::from_le_bytes(le(b, 4)),
            init: &b[8..8 + vs],
        })
    }

    pub fn nested(&self, name: &str) -> Option<Entry<'a>> {
        let (s, b) = self.at(name)?;
        self.nested_at(s, b)
    }

    fn nested_at(&self, s: &Slot, b: &'a [u8]) -> Option<Entry<'a>> {
        let Ty::Struct(tag) = s.ty else { return None };
        Some(Entry {
            bytes: b,
            layout: table().inline(tag, self.small_refs),
            small_refs: self.small_refs,
            at: self.at + s.offset as u64,
        })
    }

    /// Every reference and animation reference in the entry, nested ones included, with its name.
    pub fn visit(&self, f: &mut dyn FnMut(&str, Link<'a>)) {
        for s in &self.layout.slots {
            let b = &self.bytes[s.offset..s.offset + s.size];
            match s.ty {
                Ty::Ref(tag) => f(s.name, Link::Ref(tag, Reference::read(b, self.small_refs))),
                Ty::Anim(_) => {
                    if let Some(a) = self.anim_at(s, b) {
                        f(s.name, Link::Anim(a))
                    }
                }
                Ty::Struct(_) => {
                    if let Some(n) = self.nested_at(s, b) {
                        n.visit(f)
                    }
                }
                _ => {}
            }
        }
    }
}

pub enum Link<'a> {
    Ref(Tag, Reference),
    Anim(AnimRef<'a>),
}

pub fn floats<const N: usize>(b: &[u8]) -> [f32; N] {
    let mut a = [0.0; N];
    for (k, v) in a.iter_mut().enumerate() {
        *v = f32::from_le_bytes(le(b, 4 * k));
    }
    a
}

/// An integer field's value (of any width, widened) from its bytes, as [`Entry::fields`] gives them.
pub fn int_value(s: &Slot, b: &[u8]) -> Option<i64> {
    Some(match s.ty {
        Ty::U8 => b[0] as i64,
        Ty::I8 => b[0] as i8 as i64,
        Ty::U16 => u16::from_le_bytes(le(b, 0)) as i64,
        Ty::I16 => i16::from_le_bytes(le(b, 0)) as i64,
        Ty::U32 => u32::from_le_bytes(le(b, 0)) as i64,
        Ty::I32 => i32::from_le_bytes(le(b, 0)) as i64,
        Ty::U64 => u64::from_le_bytes(le(b, 0)) as i64,
        _ => return None,
    })
}

/// An f32 field's value from its bytes.
pub fn f32_value(s: &Slot, b: &[u8]) -> Option<f32> {
    (s.ty == Ty::F32).then(|| f32::from_le_bytes(le(b, 0)))
}

/// An animation reference: the id that sequences key their data by, and the value when none does.
#[derive(Debug, Clone, Copy)]
pub struct AnimRef<'a> {
    pub kind: AnimKind,
    pub interpolation: u16,
    pub flags: u16,
    pub id: u32,
    pub init: &'a [u8],
}

impl AnimRef<'_> {
    pub fn init_floats<const N: usize>(&self) -> [f32; N] {
        floats(self.init)
    }
}
