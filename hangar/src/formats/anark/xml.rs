//! The readable XML form of a .bgf that circulates among modders (`<presentation><elements>...`),
//! both ways. Elements nest under their parents; slides, events and animations sit in the element
//! that owns them. Fields the published form leaves out are written as extra XML attributes only when
//! they differ from what a reader would assume (`flags`, `period`, `s1`, `s2`, `logic`, `high`).

use super::bgf::{
    element_type_from_name, element_type_name, AnimRef, Animation, Bgf, Contract, Element, Header,
    Keyframe, Large, Memory, Param, Setting, Slide, FLAG_ACTIVE, FLAG_LARGE,
};
use super::{hash, type_from_name, type_name, Attr, AttrName, Bytes, Name, Tails, Text, F32};
use super::{TYPE_FLOAT, TYPE_INT, TYPE_STRING};
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::fmt::Write as _;

/// Deepest element nesting read or written.
const MAX_DEPTH: usize = 512;

fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\n' => o.push_str("&#10;"),
            '\r' => o.push_str("&#13;"),
            '\t' => o.push_str("&#9;"),
            c => o.push(c),
        }
    }
    o
}

fn default_flags(large: bool) -> u8 {
    FLAG_ACTIVE | if large { FLAG_LARGE } else { 0 }
}

struct Out<'a> {
    f: &'a Bgf,
    s: String,
}

impl Out<'_> {
    fn line(&mut self, depth: usize, text: &str) {
        for _ in 0..depth {
            self.s.push('\t');
        }
        self.s.push_str(text);
        self.s.push('\n');
    }

    fn attr_line(&mut self, depth: usize, a: &Attr) {
        let t = a.kind();
        let (ty, value) = match type_name(t) {
            Some("string") => (
                "string".to_string(),
                self.f
                    .string(a.value)
                    .map(|s| esc(&s.lossy()))
                    .unwrap_or_default(),
            ),
            Some(n) => (n.to_string(), a.value_text()),
            None => (t.to_string(), a.value.to_string()),
        };
        let mut l = format!(
            "<attribute name=\"{}\" type=\"{ty}\" value=\"{value}\"",
            esc(&a.name())
        );
        if t == TYPE_STRING && self.f.string(a.value).is_none() {
            let _ = write!(l, " string_index=\"{}\"", a.value);
        }
        if a.key >> 30 != 0 {
            let _ = write!(l, " high=\"{}\"", a.key >> 30);
        }
        l.push_str(" />");
        self.line(depth, &l);
    }

    fn attrs(&mut self, depth: usize, list: &[Attr]) {
        if list.is_empty() {
            return;
        }
        self.line(depth, "<attributes>");
        for a in list {
            self.attr_line(depth + 1, a);
        }
        self.line(depth, "</attributes>");
    }

    fn element_name(&self, i: i32) -> Option<String> {
        let e = usize::try_from(i)
            .ok()
            .and_then(|i| self.f.elements.get(i))?;
        (e.name.0 != 0).then(|| hash::show(e.name.0))
    }

    fn element(&mut self, depth: usize, i: usize, children: &[Vec<usize>], orphan: bool) {
        let f = self.f;
        let Some(e) = f.elements.get(i) else { return };
        let large = e.flags & FLAG_LARGE != 0;
        let mut head = format!("<element index=\"{i}\"");
        if e.scene_item != 0 {
            let _ = write!(head, " id=\"AK{}\"", e.scene_item);
        }
        if e.name.0 != 0 {
            let _ = write!(head, " name=\"{}\"", esc(&hash::show(e.name.0)));
        }
        let ty = element_type_name(e.kind).map_or_else(|| e.kind.to_string(), str::to_string);
        let _ = write!(head, " type=\"{ty}\" large=\"{}\"", u8::from(large));
        if e.flags != default_flags(large) {
            let _ = write!(head, " flags=\"{}\"", e.flags);
        }
        if let Some(l) = e.large.filter(|l| *l != Large::default()) {
            let _ = write!(head, " period=\"{}\" large_byte=\"{}\"", l.period, l.byte);
        }
        if orphan {
            let _ = write!(head, " parent=\"{}\"", e.parent);
        }
        let idx = i as i32;
        let anims: Vec<(usize, &Animation)> = f
            .animations
            .iter()
            .enumerate()
            .filter(|(_, a)| a.element == idx)
            .collect();
        let events: Vec<i32> = f
            .contracts
            .iter()
            .filter(|c| c.element == idx)
            .flat_map(|c| c.events.iter().copied())
            .collect();
        let has_contract = f.contracts.iter().any(|c| c.element == idx);
        let slides: Vec<&Slide> = f.slides.iter().filter(|s| s.element == idx).collect();
        let kids = children.get(i).map(Vec::as_slice).unwrap_or_default();
        if e.attributes.is_empty()
            && anims.is_empty()
            && !has_contract
            && slides.is_empty()
            && kids.is_empty()
        {
            head.push_str(" />");
            self.line(depth, &head);
            return;
        }
        head.push('>');
        self.line(depth, &head);
        let d = depth + 1;
        self.attrs(d, &e.attributes);
        if !anims.is_empty() {
            self.line(d, "<animations>");
            for (ai, a) in anims {
                self.line(
                    d + 1,
                    &format!(
                        "<animation index=\"{ai}\" attribute=\"{}\" enabled=\"{}\" allow_runtime_adjustment=\"{}\">",
                        esc(&a.attribute.show()),
                        a.enabled,
                        a.sync_first_keyframe
                    ),
                );
                self.line(d + 2, "<keyframes>");
                for k in &a.keyframes {
                    let mut l = format!(
                        "<keyframe time=\"{}\" p0=\"{:.6}\" p1=\"{:.6}\" p2=\"{:.6}\"",
                        k.time, k.p0.0, k.p1.0, k.p2.0
                    );
                    if k.s1.0.to_bits() != 0 || k.s2.0.to_bits() != 0 {
                        let _ = write!(l, " s1=\"{:.6}\" s2=\"{:.6}\"", k.s1.0, k.s2.0);
                    }
                    l.push_str(" />");
                    self.line(d + 3, &l);
                }
                self.line(d + 2, "</keyframes>");
                self.line(d + 1, "</animation>");
            }
            self.line(d, "</animations>");
        }
        if has_contract {
            if events.is_empty() {
                self.line(d, "<events />");
            } else {
                self.line(d, "<events>");
                for ev in events {
                    let name = usize::try_from(ev)
                        .ok()
                        .and_then(|i| f.strings.get(i))
                        .map(|t| esc(&t.lossy()));
                    match name {
                        Some(n) => self.line(d + 1, &format!("<event name=\"{n}\" />")),
                        None => self.line(d + 1, &format!("<event string_index=\"{ev}\" />")),
                    }
                }
                self.line(d, "</events>");
            }
        }
        if !slides.is_empty() {
            self.line(d, "<slides>");
            for s in slides {
                self.slide(d + 1, s);
            }
            self.line(d, "</slides>");
        }
        if !kids.is_empty() && depth < MAX_DEPTH {
            self.line(d, "<elements>");
            for &k in kids {
                self.element(d + 1, k, children, false);
            }
            self.line(d, "</elements>");
        }
        self.line(depth, "</element>");
    }

    fn slide(&mut self, depth: usize, s: &Slide) {
        let mut head = format!(
            "<slide name=\"{}\" flags=\"{}\" starttime=\"{}\" endtime=\"{}\"",
            esc(&s.name.lossy()),
            s.flags,
            s.begin,
            s.end
        );
        if !s.name_rest.is_empty() {
            let hex: String = s.name_rest.0.iter().map(|b| format!("{b:02x}")).collect();
            let _ = write!(head, " name_rest=\"{hex}\"");
        }
        head.push('>');
        self.line(depth, &head);
        let d = depth + 1;
        if s.settings.is_empty() {
            self.line(d, "<affected_elements />");
        } else {
            self.line(d, "<affected_elements>");
            for st in &s.settings {
                let mut l = format!("<element_settings index=\"{}\"", st.element);
                if let Some(n) = self.element_name(st.element) {
                    let _ = write!(l, " name=\"{}\"", esc(&n));
                }
                let _ = write!(l, " activate=\"{}\"", st.activate);
                if st.values.is_empty() && st.refs.is_empty() {
                    l.push_str(" />");
                    self.line(d + 1, &l);
                    continue;
                }
                l.push('>');
                self.line(d + 1, &l);
                self.attrs(d + 2, &st.values);
                if !st.refs.is_empty() {
                    self.line(d + 2, "<animations>");
                    for r in &st.refs {
                        let mut l =
                            format!("<animation index=\"{}\" activate=\"{}\"", r.index, r.enable);
                        if r.logic != 0 {
                            let _ = write!(l, " logic=\"{}\"", r.logic);
                        }
                        l.push_str(" />");
                        self.line(d + 3, &l);
                    }
                    self.line(d + 2, "</animations>");
                }
                self.line(d + 1, "</element_settings>");
            }
            self.line(d, "</affected_elements>");
        }
        self.line(depth, "</slide>");
    }
}

/// Writes the readable XML form of a .bgf.
pub fn to_xml(f: &Bgf) -> String {
    let n = f.elements.len();
    let mut children = vec![Vec::new(); n];
    let mut roots = Vec::new();
    for (i, e) in f.elements.iter().enumerate() {
        match usize::try_from(e.parent).ok().filter(|p| *p < n && *p != i) {
            Some(p) => children.get_mut(p).map_or((), |c| c.push(i)),
            None => roots.push(i),
        }
    }
    // Elements not reachable from a root (cyclic parents) are written at the top with their parent.
    let mut seen = vec![false; n];
    let mut stack: Vec<(usize, usize)> = roots.iter().map(|r| (*r, 0)).collect();
    while let Some((i, d)) = stack.pop() {
        if let Some(s) = seen.get_mut(i) {
            *s = true;
        }
        if d < MAX_DEPTH {
            for &k in children.get(i).map(Vec::as_slice).unwrap_or_default() {
                stack.push((k, d + 1));
            }
        }
    }
    let h = &f.header;
    let mut o = Out {
        f,
        s: String::new(),
    };
    o.line(0, "<?xml version=\"1.0\"?>");
    let mut root = format!(
        "<presentation width=\"{}\" height=\"{}\" fitmode=\"{}\"",
        h.width, h.height, h.fit_mode
    );
    if f.big_endian {
        root.push_str(" big_endian=\"1\"");
    }
    root.push('>');
    o.line(0, &root);
    o.line(1, "<elements>");
    for &r in &roots {
        let orphan = f.elements.get(r).is_some_and(|e| e.parent != -1);
        o.element(2, r, &children, orphan);
    }
    for (i, s) in seen.iter().enumerate() {
        if !s {
            // Cut the cycle: written without its children, which follow as orphans themselves.
            o.element(2, i, &[], true);
        }
    }
    o.line(1, "</elements>");
    if !f.params.is_empty() {
        o.line(1, "<params>");
        for p in &f.params {
            let l = format!(
                "<param type=\"{}\" value=\"{}\" />",
                esc(&hash::show(p.kind.0)),
                p.value
            );
            o.line(2, &l);
        }
        o.line(1, "</params>");
    }
    o.line(0, "</presentation>");
    o.s
}

fn xerr(node: roxmltree::Node, msg: impl Into<String>) -> Error {
    let pos = node.document().text_pos_at(node.range().start);
    Error::invalid(
        node.range().start as u64,
        format!("presentation line {} <{}>", pos.row, node.tag_name().name()),
        msg,
    )
}

fn num<T: std::str::FromStr>(node: roxmltree::Node, name: &str) -> Result<T> {
    let v = node
        .attribute(name)
        .ok_or_else(|| xerr(node, format!("attribute `{name}` is missing")))?;
    v.trim().parse().map_err(|_| {
        xerr(
            node,
            format!("`{name}` = {v:?} is not a number of the right range"),
        )
    })
}

fn opt_num<T: std::str::FromStr>(node: roxmltree::Node, name: &str) -> Result<Option<T>> {
    match node.attribute(name) {
        None => Ok(None),
        Some(_) => num(node, name).map(Some),
    }
}

fn kids<'a, 'i>(
    n: roxmltree::Node<'a, 'i>,
    tag: &'a str,
) -> impl Iterator<Item = roxmltree::Node<'a, 'i>> {
    n.children()
        .filter(move |c| c.is_element() && c.tag_name().name() == tag)
}

fn grandkids<'a, 'i>(
    n: roxmltree::Node<'a, 'i>,
    outer: &'a str,
    inner: &'a str,
) -> impl Iterator<Item = roxmltree::Node<'a, 'i>> {
    kids(n, outer).flat_map(move |o| kids(o, inner))
}

struct Builder {
    strings: Vec<Text>,
    interned: HashMap<String, u32>,
    elements: Vec<Option<Element>>,
    animations: Vec<Option<Animation>>,
    contracts: Vec<Contract>,
    slides: Vec<Slide>,
    /// How many <element> and <animation> tags the document has: no index may reach past them.
    limits: (usize, usize),
}

impl Builder {
    fn intern(&mut self, s: &str) -> u32 {
        if let Some(i) = self.interned.get(s) {
            return *i;
        }
        let i = self.strings.len() as u32;
        self.strings.push(Text::new(s));
        self.interned.insert(s.to_string(), i);
        i
    }

    fn attr(&mut self, a: roxmltree::Node) -> Result<Attr> {
        let name = a
            .attribute("name")
            .ok_or_else(|| xerr(a, "attribute `name` is missing"))?;
        let ty = a.attribute("type").unwrap_or("int");
        let t =
            type_from_name(ty).ok_or_else(|| xerr(a, format!("unknown attribute type {ty:?}")))?;
        let text = a.attribute("value").unwrap_or_default().trim();
        let value = match t {
            TYPE_FLOAT => text
                .parse::<f32>()
                .map(f32::to_bits)
                .map_err(|_| xerr(a, format!("float value {text:?}")))?,
            TYPE_INT => match text.parse::<i64>() {
                Ok(v) => i32::try_from(v)
                    .map(|v| v as u32)
                    .or_else(|_| u32::try_from(v))
                    .map_err(|_| xerr(a, format!("int value {text:?} out of range")))?,
                Err(_) => text
                    .parse::<f64>()
                    .map(|v| v as i32 as u32)
                    .map_err(|_| xerr(a, format!("int value {text:?}")))?,
            },
            TYPE_STRING => match opt_num::<u32>(a, "string_index")? {
                Some(i) => i,
                None => self.intern(a.attribute("value").unwrap_or_default()),
            },
            _ => match text {
                "true" => 1,
                "false" => 0,
                _ => text
                    .parse::<i64>()
                    .ok()
                    .and_then(|v| {
                        u32::try_from(v)
                            .ok()
                            .or_else(|| i32::try_from(v).ok().map(|v| v as u32))
                    })
                    .ok_or_else(|| xerr(a, format!("value {text:?}")))?,
            },
        };
        let high = opt_num::<u32>(a, "high")?.unwrap_or(0);
        if high > 3 {
            return Err(xerr(a, "`high` holds bits 30..31 only"));
        }
        Ok(Attr {
            key: (hash::parse(name) & hash::NAME_BITS) | (t << 27) | (high << 30),
            value,
        })
    }

    fn attrs(&mut self, n: roxmltree::Node) -> Result<Vec<Attr>> {
        grandkids(n, "attributes", "attribute")
            .map(|a| self.attr(a))
            .collect()
    }

    fn element(&mut self, n: roxmltree::Node, parent: i32, depth: usize) -> Result<()> {
        if depth > MAX_DEPTH {
            return Err(xerr(n, format!("elements nest deeper than {MAX_DEPTH}")));
        }
        let index: usize = num(n, "index")?;
        let parent = opt_num::<i32>(n, "parent")?.unwrap_or(parent);
        let scene_item = match n.attribute("id") {
            None => 0,
            Some(id) => id
                .strip_prefix("AK")
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| xerr(n, format!("id {id:?} is not AK<number>")))?,
        };
        let name = Name(n.attribute("name").map_or(0, hash::parse));
        let ty = n.attribute("type").unwrap_or("dummy");
        let kind = element_type_from_name(ty)
            .ok_or_else(|| xerr(n, format!("unknown element type {ty:?}")))?;
        let large = opt_num::<u8>(n, "large")?.unwrap_or(0) != 0;
        let flags = opt_num::<u8>(n, "flags")?.unwrap_or(default_flags(large));
        let large_fields = (flags & FLAG_LARGE != 0).then(|| -> Result<Large> {
            Ok(Large {
                byte: opt_num(n, "large_byte")?.unwrap_or(2),
                period: opt_num(n, "period")?.unwrap_or(0),
            })
        });
        let large_fields = large_fields.transpose()?;
        let attributes = self.attrs(n)?;
        let me = i32::try_from(index).map_err(|_| xerr(n, "index out of range"))?;
        for a in grandkids(n, "animations", "animation") {
            let ai: usize = num(a, "index")?;
            let attribute = AttrName::parse(a.attribute("attribute").unwrap_or_default());
            let keyframes = grandkids(a, "keyframes", "keyframe")
                .map(|k| {
                    let f = |name: &str| -> Result<F32> {
                        Ok(F32(opt_num::<f32>(k, name)?.unwrap_or(0.0)))
                    };
                    Ok(Keyframe {
                        time: num(k, "time")?,
                        p0: f("p0")?,
                        s1: f("s1")?,
                        p1: f("p1")?,
                        s2: f("s2")?,
                        p2: f("p2")?,
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            let anim = Animation {
                element: me,
                attribute,
                enabled: opt_num(a, "enabled")?.unwrap_or(1),
                sync_first_keyframe: opt_num(a, "allow_runtime_adjustment")?.unwrap_or(0),
                keyframes,
            };
            place(
                &mut self.animations,
                ai,
                anim,
                a,
                "animation",
                self.limits.1,
            )?;
        }
        for ev in kids(n, "events") {
            let mut events = Vec::new();
            for e in kids(ev, "event") {
                let i = match opt_num::<i32>(e, "string_index")? {
                    Some(i) => i,
                    None => self.intern(e.attribute("name").unwrap_or_default()) as i32,
                };
                events.push(i);
            }
            self.contracts.push(Contract {
                element: me,
                events,
            });
        }
        for s in grandkids(n, "slides", "slide") {
            let slide = self.slide(s, me)?;
            self.slides.push(slide);
        }
        let element = Element {
            name,
            parent,
            scene_item,
            kind,
            flags,
            large: large_fields,
            attributes,
        };
        place(
            &mut self.elements,
            index,
            element,
            n,
            "element",
            self.limits.0,
        )?;
        for c in grandkids(n, "elements", "element") {
            self.element(c, me, depth + 1)?;
        }
        Ok(())
    }

    fn slide(&mut self, s: roxmltree::Node, owner: i32) -> Result<Slide> {
        let name = s.attribute("name").unwrap_or_default();
        if name.len() > 16 {
            return Err(xerr(
                s,
                format!("slide name {name:?} is longer than the 16 bytes a .bgf holds"),
            ));
        }
        let name_rest = match s.attribute("name_rest") {
            None => Bytes::default(),
            Some(h) => serde_json::from_value::<Bytes>(serde_json::json!(h))
                .map_err(|e| xerr(s, e.to_string()))?,
        };
        let mut settings = Vec::new();
        for st in grandkids(s, "affected_elements", "element_settings") {
            let values = self.attrs(st)?;
            let refs = grandkids(st, "animations", "animation")
                .map(|r| {
                    Ok(AnimRef {
                        logic: opt_num(r, "logic")?.unwrap_or(0),
                        enable: opt_num(r, "activate")?.unwrap_or(1),
                        index: num(r, "index")?,
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            settings.push(Setting {
                element: num(st, "index")?,
                activate: opt_num(st, "activate")?.unwrap_or(1),
                values,
                refs,
            });
        }
        Ok(Slide {
            name: Text::new(name),
            name_rest,
            element: opt_num(s, "element")?.unwrap_or(owner),
            flags: opt_num(s, "flags")?.unwrap_or(0),
            begin: opt_num(s, "starttime")?.unwrap_or(0),
            end: opt_num(s, "endtime")?.unwrap_or(0),
            settings,
        })
    }
}

/// Puts an item at its `index`, refusing duplicates and indices beyond what the document can hold.
fn place<T>(
    v: &mut Vec<Option<T>>,
    index: usize,
    item: T,
    n: roxmltree::Node,
    what: &str,
    limit: usize,
) -> Result<()> {
    if index >= limit {
        return Err(xerr(
            n,
            format!("{what} index {index} is beyond the {limit} {what}s of the file"),
        ));
    }
    if v.len() <= index {
        v.resize_with(index + 1, || None);
    }
    match v.get_mut(index) {
        Some(slot @ None) => {
            *slot = Some(item);
            Ok(())
        }
        _ => Err(xerr(n, format!("{what} index {index} occurs twice"))),
    }
}

fn dense<T>(v: Vec<Option<T>>, what: &str) -> Result<Vec<T>> {
    v.into_iter()
        .enumerate()
        .map(|(i, x)| {
            x.ok_or_else(|| Error::invalid(0, "presentation", format!("no {what} has index {i}")))
        })
        .collect()
}

/// Builds a .bgf from the readable XML form; the memory counts are computed from the content.
pub fn from_xml(text: &str) -> Result<Bgf> {
    let doc =
        crate::xml::parse(text).map_err(|r| Error::invalid(0, "presentation", r.to_string()))?;
    let root = doc.root_element();
    if !root.has_tag_name("presentation") {
        return Err(xerr(root, "the root element is not <presentation>"));
    }
    let mut b = Builder {
        strings: Vec::new(),
        interned: HashMap::new(),
        elements: Vec::new(),
        animations: Vec::new(),
        contracts: Vec::new(),
        slides: Vec::new(),
        limits: (
            doc.descendants()
                .filter(|d| d.has_tag_name("element"))
                .count(),
            doc.descendants()
                .filter(|d| d.has_tag_name("animation"))
                .count(),
        ),
    };
    for e in grandkids(root, "elements", "element") {
        b.element(e, -1, 0)?;
    }
    let mut params = Vec::new();
    for p in grandkids(root, "params", "param") {
        params.push(Param {
            kind: Name(hash::parse(p.attribute("type").unwrap_or_default())),
            value: num(p, "value")?,
        });
    }
    let elements = dense(b.elements, "element")?;
    let animations = dense(b.animations, "animation")?;
    let d = Header::default();
    let header = Header {
        width: opt_num(root, "width")?.unwrap_or(d.width),
        height: opt_num(root, "height")?.unwrap_or(d.height),
        fit_mode: opt_num(root, "fitmode")?.unwrap_or(d.fit_mode),
        scene_items: elements
            .iter()
            .map(|e| e.scene_item.max(0) as u32)
            .max()
            .unwrap_or(0),
        ..d
    };
    let mut f = Bgf {
        big_endian: opt_num::<u8>(root, "big_endian")?.unwrap_or(0) != 0,
        header,
        memory: Memory::default(),
        strings: b.strings,
        elements,
        contracts: b.contracts,
        animations,
        logic: Bytes::default(),
        params,
        slides: b.slides,
        tails: Tails::new(),
    };
    f.sync_counts();
    Ok(f)
}
