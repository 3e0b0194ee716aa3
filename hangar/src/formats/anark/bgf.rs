//! .bgf game faces: header, memory counts, then strings, elements, contracts, animations, logic,
//! params and slides, each section led by its size.

use super::{
    endianness, keep_tail, section, write_section, Attr, AttrName, Bytes, Name, Tails, Text, F32,
};
use crate::bytes::{Cursor, Writer};
use crate::error::{Error, Result};
use crate::Warning;
use serde::{Deserialize, Serialize};

pub const MAGIC: &[u8; 8] = b"AnarkBGF";
/// Header bytes after the `headerSize` field the spec lists.
const HEADER_SIZE: u32 = 0x1A;
const MEMORY_SIZE: u32 = 0x64;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bgf {
    pub big_endian: bool,
    pub header: Header,
    pub memory: Memory,
    pub strings: Vec<Text>,
    pub elements: Vec<Element>,
    pub contracts: Vec<Contract>,
    pub animations: Vec<Animation>,
    /// The logic section, never seen in X Rebirth: kept as bytes.
    pub logic: Bytes,
    pub params: Vec<Param>,
    pub slides: Vec<Slide>,
    #[serde(default, skip_serializing_if = "Tails::is_empty")]
    pub tails: Tails,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// Byte 1, 4 in every file the spec saw.
    pub byte1: u8,
    pub version: u32,
    pub ignored: u32,
    pub width: i16,
    pub height: i16,
    /// 0 no scaling, 1 fit to width, 2 fit to width and height.
    pub fit_mode: u8,
    pub scene_items: u32,
    pub ignored_end: u8,
}

impl Default for Header {
    fn default() -> Self {
        Header {
            byte1: 4,
            version: 3,
            ignored: 0,
            width: 1920,
            height: 1080,
            fit_mode: 2,
            scene_items: 0,
            ignored_end: 0,
        }
    }
}

/// The counts the game allocates from; `check` compares them with what the sections hold.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Memory {
    pub counts: [u32; 19],
    pub ignored: [u32; 6],
}

/// Indices into `Memory::counts`, named as in the spec.
pub mod count {
    pub const SMALL_ELEMENTS: usize = 0;
    pub const LARGE_ELEMENTS: usize = 1;
    pub const ATTRIBUTES: usize = 2;
    pub const CONTRACTS: usize = 3;
    pub const EVENT_NAMES: usize = 4;
    pub const STRINGS: usize = 6;
    pub const ANIMATIONS: usize = 8;
    pub const KEYFRAMES: usize = 9;
    pub const LOGICS: usize = 10;
    pub const PARAMS: usize = 13;
    pub const SLIDES: usize = 14;
    pub const SLIDE_ELEMENTS: usize = 15;
    pub const SLIDE_ATTRIBUTES: usize = 16;
    pub const SLIDE_ANIM_REFS: usize = 17;
    pub const PADDINGS: usize = 18;
}

pub const FLAG_ACTIVE: u8 = 1;
pub const FLAG_LARGE: u8 = 4;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Element {
    pub name: Name,
    /// -1 for root elements.
    pub parent: i32,
    /// 0: none; n: node `AK<n>` of the .dae.
    pub scene_item: i32,
    #[serde(rename = "type")]
    pub kind: u8,
    /// 1 initially active, 4 large (owns slides, can be animated).
    pub flags: u8,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub large: Option<Large>,
    pub attributes: Vec<Attr>,
}

/// The two fields only large elements have.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Large {
    pub byte: u8,
    pub period: i32,
}

impl Default for Large {
    fn default() -> Self {
        Large { byte: 2, period: 0 }
    }
}

pub const ELEMENT_TYPES: [&str; 8] = [
    "geometry", "camera", "light", "text", "material", "texture", "dummy", "contract",
];

/// The spec's name of an element type (1..8).
pub fn element_type_name(t: u8) -> Option<&'static str> {
    ELEMENT_TYPES.get(usize::from(t).checked_sub(1)?).copied()
}

pub fn element_type_from_name(s: &str) -> Option<u8> {
    ELEMENT_TYPES
        .iter()
        .position(|n| *n == s)
        .and_then(|i| u8::try_from(i + 1).ok())
        .or_else(|| s.parse().ok())
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Contract {
    pub element: i32,
    /// Indices into the strings.
    pub events: Vec<i32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Animation {
    pub element: i32,
    pub attribute: AttrName,
    pub enabled: u8,
    pub sync_first_keyframe: u8,
    pub keyframes: Vec<Keyframe>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Keyframe {
    pub time: i32,
    pub p0: F32,
    /// Always 0 in the spec's files; kept.
    pub s1: F32,
    pub p1: F32,
    pub s2: F32,
    pub p2: F32,
}

/// A param: a type hash and a value whose meaning the type gives.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Param {
    #[serde(rename = "type")]
    pub kind: Name,
    pub value: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Slide {
    /// The name up to its first zero (16 bytes in the file).
    pub name: Text,
    /// The bytes after the zero when they are not all zero.
    #[serde(default, skip_serializing_if = "Bytes::is_empty")]
    pub name_rest: Bytes,
    pub element: i32,
    pub flags: u8,
    pub begin: i32,
    pub end: i32,
    pub settings: Vec<Setting>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Setting {
    pub element: i32,
    pub activate: u8,
    pub values: Vec<Attr>,
    pub refs: Vec<AnimRef>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AnimRef {
    #[serde(default, skip_serializing_if = "is_zero_u8")]
    pub logic: u8,
    pub enable: u8,
    pub index: i16,
}

fn is_zero_u8(v: &u8) -> bool {
    *v == 0
}

fn count(c: &Cursor, v: u32, item_min: usize, field: &'static str) -> Result<usize> {
    let n = v as usize;
    c.check_count(n, item_min, field)?;
    Ok(n)
}

fn attrs(c: &mut Cursor) -> Result<Vec<Attr>> {
    let n = c.u32("numAttributes")?;
    let n = count(c, n, 8, "numAttributes")?;
    let mut v = Vec::with_capacity(n);
    for i in 0..n {
        v.push(c.within_item("attributes", i, |c| {
            Ok(Attr {
                key: c.u32("typeAndName")?,
                value: c.u32("value")?,
            })
        })?);
    }
    Ok(v)
}

/// Reads a .bgf; oddities (unknown types, extra bytes) become warnings, broken structure an error.
pub fn read(data: &[u8]) -> Result<(Bgf, Vec<Warning>)> {
    let mut c = Cursor::new(data, "BGF");
    let mut warnings = Vec::new();
    let mut tails = Tails::new();
    let big_endian = endianness(&mut c)?;
    c.set_big_endian(big_endian);
    let byte1 = c.u8("ignored")?;
    let header_end = super::header_end(&mut c, HEADER_SIZE, data.len())?;
    if c.array::<8>("magic")? != *MAGIC {
        return Err(c.error_at(6, "magic", "magic is not AnarkBGF"));
    }
    let header = Header {
        byte1,
        version: c.u32("version")?,
        ignored: c.u32("ignored")?,
        width: c.u16("width")? as i16,
        height: c.u16("height")? as i16,
        fit_mode: c.u8("fitMode")?,
        scene_items: c.u32("numSceneItems")?,
        ignored_end: c.u8("ignored")?,
    };
    if header.version != 3 {
        warnings.push(c.warning(
            14,
            "version",
            format!("version {} (spec: 3)", header.version),
        ));
    }
    keep_tail(&mut tails, "header", &c, header_end);
    c.seek(header_end, "header")?;

    let (mut s, end) = section(&mut c, "memory")?;
    let mut memory = Memory::default();
    s.within("memory", |s| {
        for v in memory.counts.iter_mut() {
            *v = s.u32("counts")?;
        }
        for v in memory.ignored.iter_mut() {
            *v = s.u32("ignored")?;
        }
        Ok(())
    })?;
    keep_tail(&mut tails, "memory", &s, end);

    let (mut s, end) = section(&mut c, "strings")?;
    let n = count(&s, memory.counts[count::STRINGS], 4, "numStrings")?;
    let mut strings = Vec::with_capacity(n);
    for i in 0..n {
        strings.push(s.within_item("strings", i, |s| {
            let len = s.u32("size")? as usize;
            Ok(Text(s.bytes(len, "data")?.to_vec()))
        })?);
    }
    keep_tail(&mut tails, "strings", &s, end);

    let (mut s, end) = section(&mut c, "elements")?;
    let total = memory.counts[count::SMALL_ELEMENTS]
        .checked_add(memory.counts[count::LARGE_ELEMENTS])
        .ok_or_else(|| Error::invalid(36, "BGF.memory.counts", "element counts overflow"))?;
    let n = count(&s, total, 18, "numElements")?;
    let mut elements = Vec::with_capacity(n);
    for i in 0..n {
        elements.push(s.within_item("elements", i, |s| {
            let name = Name(s.u32("nameHash")?);
            let parent = s.i32("parentIdx")?;
            let scene_item = s.i32("sceneItemId")?;
            let kind = s.u8("type")?;
            let flags = s.u8("flags")?;
            let large = if flags & FLAG_LARGE != 0 {
                Some(Large {
                    byte: s.u8("ignored")?,
                    period: s.i32("animationTimePeriod")?,
                })
            } else {
                None
            };
            Ok(Element {
                name,
                parent,
                scene_item,
                kind,
                flags,
                large,
                attributes: attrs(s)?,
            })
        })?);
    }
    keep_tail(&mut tails, "elements", &s, end);

    let (mut s, end) = section(&mut c, "contracts")?;
    let n = count(&s, memory.counts[count::CONTRACTS], 8, "numContracts")?;
    let mut contracts = Vec::with_capacity(n);
    for i in 0..n {
        contracts.push(s.within_item("contracts", i, |s| {
            let element = s.i32("elementIdx")?;
            let m = s.u32("numEvents")?;
            let m = count(s, m, 4, "numEvents")?;
            let mut events = Vec::with_capacity(m);
            for _ in 0..m {
                events.push(s.i32("eventNameStringIndices")?);
            }
            Ok(Contract { element, events })
        })?);
    }
    keep_tail(&mut tails, "contracts", &s, end);

    let (mut s, end) = section(&mut c, "animations")?;
    let n = count(&s, memory.counts[count::ANIMATIONS], 12, "numAnimations")?;
    let mut animations = Vec::with_capacity(n);
    for i in 0..n {
        animations.push(s.within_item("animations", i, |s| {
            let element = s.i32("elementIdx")?;
            let attribute = AttrName(s.u32("attrNameHash")?);
            let enabled = s.u8("bEnabled")?;
            let sync_first_keyframe = s.u8("bCanSyncFirstKeyframe")?;
            let m = usize::from(s.u16("numKeyframes")?);
            s.check_count(m, 24, "numKeyframes")?;
            let mut keyframes = Vec::with_capacity(m);
            for k in 0..m {
                keyframes.push(s.within_item("keyframes", k, |s| {
                    Ok(Keyframe {
                        time: s.i32("timeOffset")?,
                        p0: F32(s.f32("bezierP0")?),
                        s1: F32(s.f32("spline1")?),
                        p1: F32(s.f32("bezierP1")?),
                        s2: F32(s.f32("spline2")?),
                        p2: F32(s.f32("bezierP2")?),
                    })
                })?);
            }
            Ok(Animation {
                element,
                attribute,
                enabled,
                sync_first_keyframe,
                keyframes,
            })
        })?);
    }
    keep_tail(&mut tails, "animations", &s, end);

    let (s, end) = section(&mut c, "logic")?;
    let logic = Bytes(s.data().get(s.pos()..end).unwrap_or_default().to_vec());
    if !logic.is_empty() {
        warnings.push(s.warning(
            s.pos(),
            "logic",
            "logic section is not empty: kept as bytes",
        ));
    }

    let (mut s, end) = section(&mut c, "params")?;
    let n = count(&s, memory.counts[count::PARAMS], 8, "numParams")?;
    let mut params = Vec::with_capacity(n);
    for i in 0..n {
        params.push(s.within_item("params", i, |s| {
            Ok(Param {
                kind: Name(s.u32("typeHash")?),
                value: s.u32("value")?,
            })
        })?);
    }
    keep_tail(&mut tails, "params", &s, end);

    let (mut s, end) = section(&mut c, "slides")?;
    let n = count(&s, memory.counts[count::SLIDES], 37, "numSlides")?;
    let mut slides = Vec::with_capacity(n);
    for i in 0..n {
        slides.push(s.within_item("slides", i, read_slide)?);
    }
    keep_tail(&mut tails, "slides", &s, end);

    let rest = data.get(c.pos()..).unwrap_or_default();
    if !rest.is_empty() {
        warnings.push(c.warning(
            c.pos(),
            "",
            format!("{} bytes after the slides section: kept", rest.len()),
        ));
        tails.insert("file".into(), Bytes(rest.to_vec()));
    }
    for (name, t) in &tails {
        if name != "file" {
            warnings.push(Warning::new(
                None,
                format!("BGF.{name}"),
                format!("{} bytes after the section's items: kept", t.0.len()),
            ));
        }
    }
    Ok((
        Bgf {
            big_endian,
            header,
            memory,
            strings,
            elements,
            contracts,
            animations,
            logic,
            params,
            slides,
            tails,
        },
        warnings,
    ))
}

fn read_slide(s: &mut Cursor) -> Result<Slide> {
    let raw = s.array::<16>("szName")?;
    let cut = raw.iter().position(|b| *b == 0).unwrap_or(raw.len());
    let (name, rest) = raw.split_at(cut);
    let name_rest = if rest.iter().all(|b| *b == 0) {
        Bytes::default()
    } else {
        Bytes(rest.to_vec())
    };
    let element = s.i32("elementIdx")?;
    let flags = s.u8("flags")?;
    let begin = s.i32("beginTimeMs")?;
    let end = s.i32("endTimeMs")?;
    let m = s.u32("numElemSettings")?;
    let m = count(s, m, 13, "numElemSettings")?;
    let mut settings = Vec::with_capacity(m);
    for k in 0..m {
        settings.push(s.within_item("settings", k, |s| {
            let element = s.i32("elementIdx")?;
            let activate = s.u8("bActivate")?;
            let values = attrs(s)?;
            let r = s.u32("numAnimOrLogicRefs")?;
            let r = count(s, r, 4, "numAnimOrLogicRefs")?;
            let mut refs = Vec::with_capacity(r);
            for _ in 0..r {
                refs.push(AnimRef {
                    logic: s.u8("bIsLogic")?,
                    enable: s.u8("bEnable")?,
                    index: s.u16("animOrLogicIdx")? as i16,
                });
            }
            Ok(Setting {
                element,
                activate,
                values,
                refs,
            })
        })?);
    }
    Ok(Slide {
        name: Text(name.to_vec()),
        name_rest,
        element,
        flags,
        begin,
        end,
        settings,
    })
}

fn len32(n: usize, path: &str) -> Result<u32> {
    u32::try_from(n)
        .map_err(|_| Error::refused(path, format!("{n} items do not fit a 32-bit count")))
}

fn write_attrs(w: &mut Writer, a: &[Attr], path: &str) -> Result<()> {
    w.u32(len32(a.len(), path)?);
    for x in a {
        w.u32(x.key);
        w.u32(x.value);
    }
    Ok(())
}

/// Writes a .bgf: the counts are written as `memory` holds them (`check` reports when they are wrong;
/// `sync_counts` recomputes them).
pub fn write(f: &Bgf) -> Result<Vec<u8>> {
    let be = f.big_endian;
    let mut w = Writer::new(be);
    w.u8(u8::from(be));
    w.u8(f.header.byte1);
    let head_tail = f.tails.get("header").map(|t| t.0.len()).unwrap_or(0);
    w.u32(HEADER_SIZE + len32(head_tail, "BGF.header")?);
    w.bytes(MAGIC);
    let h = &f.header;
    w.u32(h.version);
    w.u32(h.ignored);
    w.u16(h.width as u16);
    w.u16(h.height as u16);
    w.u8(h.fit_mode);
    w.u32(h.scene_items);
    w.u8(h.ignored_end);
    if let Some(t) = f.tails.get("header") {
        w.bytes(&t.0);
    }

    let mut s = Writer::new(be);
    for v in f.memory.counts.iter().chain(&f.memory.ignored) {
        s.u32(*v);
    }
    debug_assert_eq!(s.len() as u32, MEMORY_SIZE);
    write_section(&mut w, &s.buf, &f.tails, "memory");

    let mut s = Writer::new(be);
    for t in &f.strings {
        s.u32(len32(t.0.len(), "BGF.strings")?);
        s.bytes(&t.0);
    }
    write_section(&mut w, &s.buf, &f.tails, "strings");

    let mut s = Writer::new(be);
    for (i, e) in f.elements.iter().enumerate() {
        s.u32(e.name.0);
        s.i32(e.parent);
        s.i32(e.scene_item);
        s.u8(e.kind);
        s.u8(e.flags);
        if e.flags & FLAG_LARGE != 0 {
            let l = e.large.unwrap_or_default();
            s.u8(l.byte);
            s.i32(l.period);
        } else if e.large.is_some() {
            return Err(Error::refused(
                format!("BGF.elements[{i}]"),
                "element has large-element fields but flags lack bit 4",
            ));
        }
        write_attrs(&mut s, &e.attributes, "BGF.elements.attributes")?;
    }
    write_section(&mut w, &s.buf, &f.tails, "elements");

    let mut s = Writer::new(be);
    for c in &f.contracts {
        s.i32(c.element);
        s.u32(len32(c.events.len(), "BGF.contracts.events")?);
        for e in &c.events {
            s.i32(*e);
        }
    }
    write_section(&mut w, &s.buf, &f.tails, "contracts");

    let mut s = Writer::new(be);
    for (i, a) in f.animations.iter().enumerate() {
        s.i32(a.element);
        s.u32(a.attribute.0);
        s.u8(a.enabled);
        s.u8(a.sync_first_keyframe);
        let n = u16::try_from(a.keyframes.len()).map_err(|_| {
            Error::refused(
                format!("BGF.animations[{i}]"),
                "more than 65535 keyframes do not fit numKeyframes",
            )
        })?;
        s.u16(n);
        for k in &a.keyframes {
            s.i32(k.time);
            for v in [k.p0, k.s1, k.p1, k.s2, k.p2] {
                s.f32(v.0);
            }
        }
    }
    write_section(&mut w, &s.buf, &f.tails, "animations");

    write_section(&mut w, &f.logic.0, &f.tails, "logic");

    let mut s = Writer::new(be);
    for p in &f.params {
        s.u32(p.kind.0);
        s.u32(p.value);
    }
    write_section(&mut w, &s.buf, &f.tails, "params");

    let mut s = Writer::new(be);
    for (i, sl) in f.slides.iter().enumerate() {
        let mut name = sl.name.0.clone();
        if !sl.name_rest.is_empty() {
            name.extend_from_slice(&sl.name_rest.0);
        }
        if name.len() > 16 {
            return Err(Error::refused(
                format!("BGF.slides[{i}].name"),
                format!("slide name {:?} is longer than 16 bytes", sl.name.lossy()),
            ));
        }
        name.resize(16, 0);
        s.bytes(&name);
        s.i32(sl.element);
        s.u8(sl.flags);
        s.i32(sl.begin);
        s.i32(sl.end);
        s.u32(len32(sl.settings.len(), "BGF.slides.settings")?);
        for st in &sl.settings {
            s.i32(st.element);
            s.u8(st.activate);
            write_attrs(&mut s, &st.values, "BGF.slides.settings.values")?;
            s.u32(len32(st.refs.len(), "BGF.slides.settings.refs")?);
            for r in &st.refs {
                s.u8(r.logic);
                s.u8(r.enable);
                s.u16(r.index as u16);
            }
        }
    }
    write_section(&mut w, &s.buf, &f.tails, "slides");
    if let Some(t) = f.tails.get("file") {
        w.bytes(&t.0);
    }
    Ok(w.buf)
}

impl Bgf {
    /// The memory counts as the sections hold them (what a writer from scratch must store).
    pub fn computed_counts(&self) -> [u32; 19] {
        let mut c = self.memory.counts;
        let n = |v: usize| v as u32;
        let large = self
            .elements
            .iter()
            .filter(|e| e.flags & FLAG_LARGE != 0)
            .count();
        c[count::SMALL_ELEMENTS] = n(self.elements.len() - large);
        c[count::LARGE_ELEMENTS] = n(large);
        c[count::ATTRIBUTES] = n(self.elements.iter().map(|e| e.attributes.len()).sum());
        c[count::CONTRACTS] = n(self.contracts.len());
        c[count::EVENT_NAMES] = n(self.contracts.iter().map(|k| k.events.len()).sum());
        c[count::STRINGS] = n(self.strings.len());
        c[count::ANIMATIONS] = n(self.animations.len());
        c[count::KEYFRAMES] = n(self.animations.iter().map(|a| a.keyframes.len()).sum());
        c[count::PARAMS] = n(self.params.len());
        c[count::SLIDES] = n(self.slides.len());
        let settings = || self.slides.iter().flat_map(|s| &s.settings);
        c[count::SLIDE_ELEMENTS] = n(settings().count());
        c[count::SLIDE_ATTRIBUTES] = n(settings().map(|s| s.values.len()).sum());
        c[count::SLIDE_ANIM_REFS] = n(settings().map(|s| s.refs.len()).sum());
        c[count::PADDINGS] = n(self.paddings());
        c
    }

    /// Elements with an odd number of animations, the last element not counted (spec, count 18).
    pub fn paddings(&self) -> usize {
        let mut per = vec![0usize; self.elements.len()];
        for a in &self.animations {
            if let Some(v) = usize::try_from(a.element).ok().and_then(|i| per.get_mut(i)) {
                *v += 1;
            }
        }
        per.split_last()
            .map_or(0, |(_, rest)| rest.iter().filter(|n| *n % 2 == 1).count())
    }

    /// Sets the memory counts to what the sections hold.
    pub fn sync_counts(&mut self) {
        self.memory.counts = self.computed_counts();
    }

    pub fn string(&self, i: u32) -> Option<&Text> {
        self.strings.get(i as usize)
    }
}

/// The dump: the structure, plus the text of each string value next to its index.
pub fn to_json(f: &Bgf) -> serde_json::Value {
    let mut v = serde_json::to_value(f).unwrap_or_default();
    let text = |i: &serde_json::Value| {
        i.as_u64()
            .and_then(|i| f.strings.get(i as usize))
            .map(|t| serde_json::json!(t.lossy()))
    };
    fn walk(
        v: &mut serde_json::Value,
        text: &dyn Fn(&serde_json::Value) -> Option<serde_json::Value>,
    ) {
        match v {
            serde_json::Value::Object(o) => {
                let is_string = o.get("type").and_then(|t| t.as_str()) == Some("string")
                    && o.contains_key("name");
                if is_string {
                    if let Some(t) = o.get("value").and_then(text) {
                        o.insert("text".into(), t);
                    }
                }
                for (_, c) in o.iter_mut() {
                    walk(c, text);
                }
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(|c| walk(c, text)),
            _ => {}
        }
    }
    walk(&mut v, &text);
    v
}
