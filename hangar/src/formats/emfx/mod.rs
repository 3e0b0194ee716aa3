//! Emotion FX 1.x files as X Rebirth / X4 use them: XAC actors, XSM skeletal motions, XPM morph
//! motions. An 8-byte header (magic, version 1.0, endianness, multiply order) and then chunks
//! `{id, length, version, data}`.
//!
//! Declared chunk lengths are wrong in real files (FORMAT-NOTES.md), so every chunk is read by its
//! layout ([`chunks`]) and the next chunk starts where the structure ends; a declared length that
//! disagrees is kept (a rewrite stores it again) and reported. A chunk without a known layout, or
//! whose layout fails, is kept as the raw bytes of its declared length.
//!
//! - [`super::schema`]: the layout interpreter (bytes <-> JSON).
//! - [`chunks`]: the layouts.
//! - [`scene`]: actors to the neutral scene, motions to animations.

pub mod build;
pub mod check;
pub mod chunks;
pub mod document;
pub(crate) mod edit;
pub mod motion;
pub mod scene;

use super::schema;

use crate::bytes::{Cursor, Writer};
use crate::error::{Error, ErrorKind, Result, Warning};
use crate::raw::{base64_of, Bytes};
use serde_json::{json, Map, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Xac,
    Xsm,
    Xpm,
}

impl Kind {
    pub fn magic(self) -> &'static [u8; 4] {
        match self {
            Kind::Xac => b"XAC ",
            Kind::Xsm => b"XSM ",
            Kind::Xpm => b"XPM ",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::Xac => "XAC",
            Kind::Xsm => "XSM",
            Kind::Xpm => "XPM",
        }
    }

    fn from_magic(m: &[u8]) -> Option<Kind> {
        [Kind::Xac, Kind::Xsm, Kind::Xpm]
            .into_iter()
            .find(|k| m == k.magic())
    }

    fn from_name(s: &str) -> Option<Kind> {
        [Kind::Xac, Kind::Xsm, Kind::Xpm]
            .into_iter()
            .find(|k| k.name().eq_ignore_ascii_case(s))
    }
}

#[derive(Debug, Clone)]
pub enum Body {
    /// Read by the chunk's layout.
    Fields(Value),
    /// Kept as stored: no layout, or the layout did not fit.
    Raw(Bytes<'static>),
}

#[derive(Debug, Clone)]
pub struct Chunk {
    pub id: u32,
    pub version: u32,
    /// The declared length, when it differs from the length of the structure.
    pub declared: Option<u32>,
    /// Offset in the file read (informational).
    pub offset: u64,
    /// Length of the structure (data only, without the 12-byte chunk header).
    pub length: u64,
    pub body: Body,
}

impl Chunk {
    pub fn name(&self, kind: Kind) -> &'static str {
        chunks::layout(kind, self.id, self.version).map_or("unknown", |l| l.0)
    }

    pub fn fields(&self) -> Option<&Value> {
        match &self.body {
            Body::Fields(v) => Some(v),
            Body::Raw(_) => None,
        }
    }
}

#[derive(Debug, Clone)]
pub struct File {
    pub kind: Kind,
    /// Bytes 4..8: major and minor version, big-endian flag, multiply order (or pad).
    pub header: [u8; 4],
    pub chunks: Vec<Chunk>,
    /// Bytes after the last chunk too short to be one (kept).
    pub tail: Bytes<'static>,
}

impl File {
    pub fn big_endian(&self) -> bool {
        self.header[2] != 0
    }

    /// The chunks with layout `name` (e.g. "mesh"), with their fields.
    pub fn fields_of<'s>(&'s self, name: &'s str) -> impl Iterator<Item = &'s Value> + 's {
        self.chunks
            .iter()
            .filter(move |c| c.name(self.kind) == name)
            .filter_map(Chunk::fields)
    }
}

const CHUNK_HEADER: usize = 12;

pub fn read(data: &[u8]) -> Result<(File, Vec<Warning>)> {
    let mut warnings = Vec::new();
    let f = read_inner(data, &mut warnings, nested_reader)?;
    Ok((f, warnings))
}

/// A mesh LOD holds a whole actor; that actor's own LOD chunks are refused (kept raw by the chunk
/// reader), so nesting is one level deep: no recursion a file can drive, no quadratic re-reading.
fn nested_reader(data: &[u8], warnings: &mut Vec<Warning>) -> Result<Value> {
    let f = read_inner(data, warnings, nested_too_deep)?;
    Ok(to_json(&f))
}

fn nested_too_deep(_: &[u8], _: &mut Vec<Warning>) -> Result<Value> {
    Err(Error::refused(
        "",
        "a mesh LOD inside a mesh LOD: nesting is limited to one level",
    ))
}

fn nested_writer(v: &Value, _big: bool) -> Result<Vec<u8>> {
    write(&from_json(v)?)
}

fn read_inner(
    data: &[u8],
    warnings: &mut Vec<Warning>,
    nested: schema::NestedReader,
) -> Result<File> {
    let mut c = Cursor::new(data, "EMFX");
    let magic = c.array::<4>("magic")?;
    let kind = Kind::from_magic(&magic).ok_or_else(|| {
        c.error_at(
            0,
            "magic",
            format!("not an Emotion FX file (magic {magic:02x?})"),
        )
    })?;
    let mut c = Cursor::new(data, kind.name());
    c.seek(4, "version")?;
    let header = c.array::<4>("version")?;
    if header[0] != 1 {
        warnings.push(c.warning(
            4,
            "version",
            format!("version {}.{}: read as 1.0", header[0], header[1]),
        ));
    }
    c.set_big_endian(header[2] != 0);
    let mut chunks = Vec::new();
    while c.remaining() >= CHUNK_HEADER {
        let i = chunks.len();
        let chunk = c.within_item("chunks", i, |c| read_chunk(c, kind, warnings, nested))?;
        chunks.push(chunk);
    }
    let tail = Bytes::owned(c.bytes(c.remaining(), "tail")?.to_vec());
    if !tail.is_empty() {
        warnings.push(c.warning(
            c.pos() - tail.len(),
            "",
            format!("{} bytes after the last chunk: kept", tail.len()),
        ));
    }
    Ok(File {
        kind,
        header,
        chunks,
        tail,
    })
}

fn read_chunk(
    c: &mut Cursor<'_>,
    kind: Kind,
    warnings: &mut Vec<Warning>,
    nested: schema::NestedReader,
) -> Result<Chunk> {
    let offset = c.pos();
    let id = c.u32("id")?;
    let declared = c.u32("length")?;
    let version = c.u32("version")?;
    let start = c.pos();
    let declared_end = start.saturating_add(declared as usize).min(c.data().len());
    let place = |c: &Cursor<'_>| c.path_to("");
    let raw = |c: &mut Cursor<'_>, why: String, warnings: &mut Vec<Warning>| -> Result<Chunk> {
        c.seek(start, "data")?;
        let b = c.bytes(declared as usize, "data")?;
        warnings.push(Warning::new(Some(offset as u64), place(c), why));
        Ok(Chunk {
            id,
            version,
            declared: None,
            offset: offset as u64,
            length: declared as u64,
            body: Body::Raw(Bytes::owned(b.to_vec())),
        })
    };
    let Some((name, fields)) = chunks::layout(kind, id, version) else {
        return raw(
            c,
            format!("unknown chunk 0x{id:x} v{version} ({declared} bytes): kept as raw bytes"),
            warnings,
        );
    };
    let mut nested_warnings = Vec::new();
    let parsed = {
        let mut r = schema::Reader {
            c,
            end: declared_end,
            nested,
            warnings: &mut nested_warnings,
        };
        r.read(fields, &[])
    };
    warnings.extend(nested_warnings);
    match parsed {
        Ok(m) => {
            let length = (c.pos() - start) as u64;
            if length != declared as u64 {
                // Exporters write wrong lengths for whole chunk kinds (FORMAT-NOTES); the
                // structure reads to its end, so this is a note, not a problem.
                warnings.push(Warning::note(
                    Some(offset as u64),
                    place(c),
                    format!("{name} chunk 0x{id:x} v{version}: declared length {declared}, structure {length}: read by the structure"),
                ));
            }
            Ok(Chunk {
                id,
                version,
                declared: (length != declared as u64).then_some(declared),
                offset: offset as u64,
                length,
                body: Body::Fields(Value::Object(m)),
            })
        }
        // The structure did not fit: fall back on the declared length when it is inside the file.
        Err(e) if start + declared as usize <= c.data().len() => raw(
            c,
            format!("{name} chunk 0x{id:x} v{version} does not follow its layout ({e}): its declared {declared} bytes are kept raw"),
            warnings,
        ),
        Err(e) => Err(e),
    }
}

pub fn write(f: &File) -> Result<Vec<u8>> {
    let mut w = Writer::new(f.big_endian());
    w.bytes(f.kind.magic());
    w.bytes(&f.header);
    for (i, ch) in f.chunks.iter().enumerate() {
        let data = match &ch.body {
            Body::Raw(b) => b.to_vec(),
            Body::Fields(v) => {
                let (_, fields) = chunks::layout(f.kind, ch.id, ch.version).ok_or_else(|| {
                    Error::refused(
                        format!("{}.chunks[{i}]", f.kind.name()),
                        format!(
                            "chunk 0x{:x} v{} has no layout: give it as raw bytes",
                            ch.id, ch.version
                        ),
                    )
                })?;
                let mut cw = Writer::new(f.big_endian());
                schema::Writer2 {
                    w: &mut cw,
                    nested: nested_writer,
                }
                .write(fields, v)
                .map_err(|(p, m)| {
                    schema::json_error(format!("{}.chunks[{i}].{p}", f.kind.name()), m)
                })?;
                cw.buf
            }
        };
        w.u32(ch.id);
        w.u32(ch.declared.unwrap_or(data.len() as u32));
        w.u32(ch.version);
        w.bytes(&data);
    }
    w.bytes(&f.tail);
    Ok(w.buf)
}

/// The dump of `f` with hangar's dump header, serialized from the file itself: a large actor's
/// fields are not copied into a second JSON tree first (the dump was the peak of memory). Keys in
/// the order a JSON object of them sorts, so the text is the one [`to_json`] gives.
pub fn dump_text(f: &File, format: &str, version: u32) -> serde_json::Result<String> {
    #[derive(serde::Serialize)]
    struct ChunkDump<'a> {
        #[serde(rename = "declaredLength", skip_serializing_if = "Option::is_none")]
        declared: Option<u32>,
        #[serde(skip_serializing_if = "Option::is_none")]
        fields: Option<&'a Value>,
        id: String,
        name: &'static str,
        #[serde(skip_serializing_if = "Option::is_none")]
        raw: Option<String>,
        version: u32,
    }
    #[derive(serde::Serialize)]
    struct Dump<'a> {
        chunks: Vec<ChunkDump<'a>>,
        format: &'a str,
        hangar_dump: u32,
        header: &'a [u8; 4],
        kind: &'static str,
        #[serde(skip_serializing_if = "Option::is_none")]
        tail: Option<String>,
    }
    let chunks = f
        .chunks
        .iter()
        .map(|c| ChunkDump {
            declared: c.declared,
            fields: match &c.body {
                Body::Fields(v) => Some(v),
                Body::Raw(_) => None,
            },
            id: format!("0x{:x}", c.id),
            name: c.name(f.kind),
            raw: match &c.body {
                Body::Raw(b) => Some(b.to_base64()),
                Body::Fields(_) => None,
            },
            version: c.version,
        })
        .collect();
    serde_json::to_string_pretty(&Dump {
        chunks,
        format,
        hangar_dump: version,
        header: &f.header,
        kind: f.kind.name(),
        tail: (!f.tail.is_empty()).then(|| f.tail.to_base64()),
    })
}

pub fn to_json(f: &File) -> Value {
    let chunks: Vec<Value> = f
        .chunks
        .iter()
        .map(|c| {
            let mut o = Map::new();
            o.insert("id".into(), format!("0x{:x}", c.id).into());
            o.insert("version".into(), c.version.into());
            o.insert("name".into(), c.name(f.kind).into());
            if let Some(d) = c.declared {
                o.insert("declaredLength".into(), d.into());
            }
            match &c.body {
                Body::Fields(v) => o.insert("fields".into(), v.clone()),
                Body::Raw(b) => o.insert("raw".into(), b.to_base64().into()),
            };
            Value::Object(o)
        })
        .collect();
    let mut v = json!({
        "kind": f.kind.name(),
        "header": f.header.to_vec(),
        "chunks": chunks,
    });
    if !f.tail.is_empty() {
        v["tail"] = f.tail.to_base64().into();
    }
    v
}

pub fn from_json(v: &Value) -> Result<File> {
    let err = |p: &str, m: &str| Error::new(ErrorKind::Invalid, None, p, m);
    let kind = v
        .get("kind")
        .and_then(Value::as_str)
        .and_then(Kind::from_name)
        .ok_or_else(|| err("kind", "expected \"XAC\", \"XSM\" or \"XPM\""))?;
    let h = v
        .get("header")
        .and_then(Value::as_array)
        .filter(|a| a.len() == 4)
        .ok_or_else(|| err("header", "expected four bytes"))?;
    let mut header = [0u8; 4];
    for (k, b) in h.iter().enumerate() {
        header[k] = b
            .as_u64()
            .filter(|&n| n < 256)
            .ok_or_else(|| err("header", "expected bytes"))? as u8;
    }
    let list = v
        .get("chunks")
        .and_then(Value::as_array)
        .ok_or_else(|| err("chunks", "expected a list"))?;
    let mut chunks = Vec::with_capacity(list.len());
    for (i, c) in list.iter().enumerate() {
        let p = format!("chunks[{i}]");
        let id = c
            .get("id")
            .and_then(Value::as_str)
            .and_then(|s| u32::from_str_radix(s.trim_start_matches("0x"), 16).ok())
            .ok_or_else(|| err(&p, "expected an id such as \"0x3\""))?;
        let version = c
            .get("version")
            .and_then(Value::as_u64)
            .ok_or_else(|| err(&p, "expected a version"))? as u32;
        let declared = c
            .get("declaredLength")
            .and_then(Value::as_u64)
            .map(|n| n as u32);
        let body = if let Some(r) = c.get("raw") {
            let b = base64_of(r).ok_or_else(|| err(&p, "raw: expected base64"))?;
            Body::Raw(Bytes::owned(b))
        } else {
            Body::Fields(
                c.get("fields")
                    .cloned()
                    .ok_or_else(|| err(&p, "expected fields or raw"))?,
            )
        };
        chunks.push(Chunk {
            id,
            version,
            declared,
            offset: 0,
            length: 0,
            body,
        });
    }
    let tail = match v.get("tail").filter(|t| t.is_string()) {
        Some(t) => Bytes::owned(base64_of(t).ok_or_else(|| err("tail", "expected base64"))?),
        None => Bytes::default(),
    };
    Ok(File {
        kind,
        header,
        chunks,
        tail,
    })
}
