//! The JSON form of an M3 file, and back.
//!
//! Sections keep their index order (references name sections by index). A described section lists
//! its entries field by field; a name (`CHAR`) is plain text; vertex bytes (`U8__`) are base64; a
//! section the table does not describe keeps its count and raw bytes. A reference leaves out
//! `entries` when it equals the count of the section it points at, so editing a name or adding
//! entries needs no bookkeeping: counts, offsets, the index and padding are recomputed on writing.

use super::table::{table, Codec};
use super::{Kind, Section, Tag, M3};
use crate::error::{Error, ErrorKind, Result};
use crate::raw::Bytes;
use serde_json::{json, Map, Value};

pub fn to_json(m3: &M3<'_>) -> Value {
    let counts: Vec<u32> = m3.sections.iter().map(|s| s.count).collect();
    let codec = Codec {
        small_refs: m3.small_refs(),
        counts: &counts,
    };
    let sections: Vec<Value> = m3
        .sections
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mut o = Map::new();
            o.insert("index".into(), i.into());
            o.insert("tag".into(), s.tag.name().into());
            o.insert("version".into(), s.version.into());
            let name = s.tag.name();
            match s.layout {
                Some(_) if name == "CHAR" && clean_text(&s.data).is_some() => {
                    o.insert(
                        "text".into(),
                        clean_text(&s.data).unwrap_or_default().into(),
                    );
                }
                Some(l) if l.size == 1 => {
                    o.insert("data".into(), s.data.to_base64().into());
                }
                Some(_) => {
                    let entries: Vec<Value> = s
                        .entries(m3.small_refs())
                        .iter()
                        .map(|e| codec.decode(e.layout, e.bytes))
                        .collect();
                    o.insert("entries".into(), entries.into());
                }
                None => {
                    o.insert("count".into(), s.count.into());
                    o.insert("raw".into(), s.data.to_base64().into());
                }
            }
            if let Some(p) = &s.pad {
                o.insert("pad".into(), p.to_base64().into());
            }
            Value::Object(o)
        })
        .collect();
    let mut root = json!({
        "kind": if m3.kind == Kind::Md34 { "MD34" } else { "MD33" },
        "sections": sections,
    });
    if !m3.tail.is_empty() {
        root["tail"] = m3.tail.to_base64().into();
    }
    root
}

/// Text followed by exactly one NUL, with no other NUL: shown as a string.
fn clean_text(b: &[u8]) -> Option<&str> {
    let (last, body) = b.split_last()?;
    (*last == 0 && !body.contains(&0))
        .then(|| std::str::from_utf8(body).ok())
        .flatten()
}

fn err(path: String, message: impl Into<String>) -> Error {
    Error::new(ErrorKind::Invalid, None, path, message)
}

fn base64(v: &Value, path: &str) -> Result<Vec<u8>> {
    crate::raw::base64_of(v).ok_or_else(|| err(path.to_string(), "expected base64 text"))
}

pub fn from_json(v: &Value) -> Result<M3<'static>> {
    let kind = match v.get("kind").and_then(Value::as_str) {
        Some("MD34") => Kind::Md34,
        Some("MD33") => Kind::Md33,
        other => {
            return Err(err(
                "kind".into(),
                format!("expected \"MD34\" or \"MD33\", got {other:?}"),
            ))
        }
    };
    let list = v
        .get("sections")
        .and_then(Value::as_array)
        .ok_or_else(|| err("sections".into(), "expected a list of sections"))?;
    let t = table();
    let small = kind.small_refs();

    // First the counts, which references default to.
    let mut heads = Vec::with_capacity(list.len());
    for (i, s) in list.iter().enumerate() {
        let path = format!("sections[{i}]");
        if let Some(n) = s.get("index").and_then(Value::as_u64) {
            if n != i as u64 {
                return Err(err(
                    format!("{path}.index"),
                    format!("section {n} is at position {i}: sections may not be moved or removed, because references point at them by position"),
                ));
            }
        }
        let tag = s
            .get("tag")
            .and_then(Value::as_str)
            .and_then(Tag::parse)
            .ok_or_else(|| err(format!("{path}.tag"), "expected a tag such as \"MODL\""))?;
        let version = s
            .get("version")
            .and_then(Value::as_u64)
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| err(format!("{path}.version"), "expected a version number"))?;
        let count = if let Some(text) = s.get("text").and_then(Value::as_str) {
            text.len() + 1
        } else if let Some(d) = s.get("data") {
            base64(d, &format!("{path}.data"))?.len()
        } else if let Some(e) = s.get("entries").and_then(Value::as_array) {
            e.len()
        } else {
            s.get("count").and_then(Value::as_u64).ok_or_else(|| {
                err(
                    path.to_string(),
                    "expected entries, text, data or count and raw",
                )
            })? as usize
        };
        let count = u32::try_from(count).map_err(|_| err(path, "too many entries"))?;
        heads.push((tag, version, count));
    }
    let counts: Vec<u32> = heads.iter().map(|h| h.2).collect();
    let codec = Codec {
        small_refs: small,
        counts: &counts,
    };

    let mut sections = Vec::with_capacity(list.len());
    for (i, (s, &(tag, version, count))) in list.iter().zip(&heads).enumerate() {
        let path = format!("sections[{i}]");
        let layout = t.layout(tag, version, small);
        let data = if let Some(text) = s.get("text").and_then(Value::as_str) {
            let mut b = text.as_bytes().to_vec();
            b.push(0);
            b
        } else if let Some(d) = s.get("data") {
            base64(d, &format!("{path}.data"))?
        } else if let Some(entries) = s.get("entries").and_then(Value::as_array) {
            let l = layout.ok_or_else(|| {
                err(
                    format!("{path}.tag"),
                    format!("{tag:?} v{version} is not described: give count and raw"),
                )
            })?;
            let mut out = Vec::with_capacity(entries.len() * l.size);
            for (k, e) in entries.iter().enumerate() {
                codec.encode(l, e, &mut out).map_err(|(field, m)| {
                    let f = if field.is_empty() {
                        String::new()
                    } else {
                        format!(".{field}")
                    };
                    err(format!("{path}.entries[{k}]{f}"), m)
                })?;
            }
            out
        } else {
            base64(s.get("raw").unwrap_or(&Value::Null), &format!("{path}.raw"))?
        };
        let raw = s.get("raw").is_some();
        if let (Some(l), false) = (layout, raw) {
            if data.len() != count as usize * l.size {
                return Err(err(
                    path,
                    format!(
                        "{} bytes is not a whole number of {}-byte entries",
                        data.len(),
                        l.size
                    ),
                ));
            }
        }
        let pad = match s.get("pad") {
            Some(p) => Some(Bytes::owned(base64(p, &format!("{path}.pad"))?)),
            None => None,
        };
        sections.push(Section {
            tag,
            version,
            count,
            data: Bytes::owned(data),
            pad,
            layout: if raw { None } else { layout },
            offset: 0,
        });
    }
    if sections.is_empty() {
        return Err(err("sections".into(), "no header section"));
    }
    let tail = match v.get("tail") {
        Some(t) => Bytes::owned(base64(t, "tail")?),
        None => Bytes::default(),
    };
    Ok(M3 {
        kind,
        sections,
        tail,
    })
}
