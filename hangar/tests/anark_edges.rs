//! Anark files built here straight from the spec (with this file's own writer, not the library's),
//! read back field by field, rewritten byte-exact; and broken files that must fail cleanly.

mod common;

use hangar::formats::anark::{self, bgf, bgp, bsg, check, hash, xml, Anark};

/// A tiny spec writer: little- or big-endian ints and floats.
struct W {
    b: Vec<u8>,
    be: bool,
}

impl W {
    fn new(be: bool) -> Self {
        W { b: Vec::new(), be }
    }
    fn u8(&mut self, v: u8) -> &mut Self {
        self.b.push(v);
        self
    }
    fn i16(&mut self, v: i16) -> &mut Self {
        let x = if self.be {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        };
        self.b.extend_from_slice(&x);
        self
    }
    fn i32(&mut self, v: i32) -> &mut Self {
        let x = if self.be {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        };
        self.b.extend_from_slice(&x);
        self
    }
    fn f32(&mut self, v: f32) -> &mut Self {
        self.i32(v.to_bits() as i32)
    }
    fn raw(&mut self, v: &[u8]) -> &mut Self {
        self.b.extend_from_slice(v);
        self
    }
    /// A section: its size, then the body.
    fn section(&mut self, body: &W) -> &mut Self {
        self.i32(body.b.len() as i32);
        self.raw(&body.b)
    }
}

fn key(name: &str, t: i32) -> i32 {
    ((hash::hash(name) & 0x07FF_FFFF) | ((t as u32) << 27)) as i32
}

/// Two elements (a large dummy root and a small text child), one contract, one animation with two
/// keyframes, one param, one slide with one setting.
fn spec_bgf(be: bool) -> Vec<u8> {
    let mut f = W::new(be);
    f.u8(u8::from(be))
        .u8(4)
        .i32(0x1A)
        .raw(b"AnarkBGF")
        .i32(3)
        .i32(0);
    f.i16(1280).i16(720).u8(1).i32(2).u8(0);
    let mut m = W::new(be);
    // Count 18: element 0 has one animation (odd) and is not the last element.
    let counts = [1, 1, 3, 1, 2, 0, 3, 0, 1, 2, 0, 0, 0, 1, 1, 1, 1, 1, 1];
    for c in counts {
        m.i32(c);
    }
    for _ in 0..6 {
        m.i32(0);
    }
    f.section(&m);
    let mut s = W::new(be);
    for t in ["Hello", "onSelect", "onBack"] {
        s.i32(t.len() as i32).raw(t.as_bytes());
    }
    f.section(&s);
    let mut e = W::new(be);
    e.i32(hash::hash("Scene") as i32)
        .i32(-1)
        .i32(1)
        .u8(7)
        .u8(5)
        .u8(2)
        .i32(0);
    e.i32(1).i32(key("endtime", 1)).i32(10000);
    e.i32(hash::hash("label") as i32).i32(0).i32(2).u8(4).u8(1);
    e.i32(2)
        .i32(key("opacity", 3))
        .f32(0.75)
        .i32(key("textstring", 5))
        .i32(0);
    f.section(&e);
    let mut c = W::new(be);
    c.i32(1).i32(2).i32(1).i32(2);
    f.section(&c);
    let mut a = W::new(be);
    a.i32(0).i32(key("position.x", 0)).u8(1).u8(0).i16(2);
    a.i32(0).f32(1.0).f32(0.0).f32(2.0).f32(0.0).f32(3.0);
    a.i32(500).f32(-1.5).f32(0.0).f32(0.0).f32(0.0).f32(4.0);
    f.section(&a);
    f.section(&W::new(be));
    let mut p = W::new(be);
    p.i32(hash::hash("float") as i32).f32(2.5);
    f.section(&p);
    let mut sl = W::new(be);
    let mut name = b"Slide1".to_vec();
    name.resize(16, 0);
    sl.raw(&name).i32(0).u8(13).i32(0).i32(2000).i32(1);
    sl.i32(1).u8(1).i32(1).i32(key("opacity", 3)).f32(0.25);
    sl.i32(1).u8(0).u8(1).i16(0);
    f.section(&sl);
    f.b
}

#[test]
fn spec_built_bgf_reads_back_in_both_endiannesses() {
    for be in [false, true] {
        let bytes = spec_bgf(be);
        assert_eq!(bytes[0], u8::from(be));
        let (f, warnings) = bgf::read(&bytes).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(f.big_endian, be);
        assert_eq!(
            (f.header.width, f.header.height, f.header.fit_mode),
            (1280, 720, 1)
        );
        assert_eq!(f.header.scene_items, 2);
        assert_eq!(f.strings.len(), 3);
        assert_eq!(f.strings[1].lossy(), "onSelect");
        assert_eq!(f.elements.len(), 2);
        let root = &f.elements[0];
        assert_eq!(hash::show(root.name.0), "Scene");
        assert_eq!(
            (root.parent, root.scene_item, root.kind, root.flags),
            (-1, 1, 7, 5)
        );
        assert_eq!(root.large, Some(bgf::Large { byte: 2, period: 0 }));
        assert_eq!(root.attributes[0].name(), "endtime");
        assert_eq!(root.attributes[0].value, 10000);
        let label = &f.elements[1];
        assert_eq!(
            hash::show(label.name.0),
            "0x".to_string() + &format!("{:08X}", hash::hash("label"))
        );
        assert_eq!(label.attributes[0].name(), "opacity");
        assert_eq!(f32::from_bits(label.attributes[0].value), 0.75);
        assert_eq!(label.attributes[1].kind(), anark::TYPE_STRING);
        assert_eq!(f.contracts[0].events, vec![1, 2]);
        let a = &f.animations[0];
        assert_eq!(a.attribute.show(), "position.x");
        assert_eq!(a.keyframes.len(), 2);
        assert_eq!(
            (
                a.keyframes[1].time,
                a.keyframes[1].p0.0,
                a.keyframes[1].p2.0
            ),
            (500, -1.5, 4.0)
        );
        assert_eq!(hash::show(f.params[0].kind.0), "float");
        assert_eq!(f32::from_bits(f.params[0].value), 2.5);
        let s = &f.slides[0];
        assert_eq!(
            (s.name.lossy().as_str(), s.flags, s.begin, s.end),
            ("Slide1", 13, 0, 2000)
        );
        assert_eq!(s.settings[0].values[0].name(), "opacity");
        assert_eq!(s.settings[0].refs[0].index, 0);
        assert!(
            check::check_bgf(&f).is_empty(),
            "{:?}",
            check::check_bgf(&f)
        );
        assert_eq!(f.computed_counts(), f.memory.counts);
        assert_eq!(bgf::write(&f).unwrap(), bytes);
        // The dump turns back into the same bytes and shows names and string values.
        let any = Anark::Bgf(f.clone());
        let json = any.to_json();
        let text = json.to_string();
        for s in [
            "\"opacity\"",
            "\"position.x\"",
            "\"Hello\"",
            "\"Slide1\"",
            "\"endtime\"",
        ] {
            assert!(text.contains(s), "dump lacks {s}");
        }
        assert_eq!(Anark::from_json(&json).unwrap().write().unwrap(), bytes);
        // And the XML form keeps everything it can show.
        let x = xml::to_xml(&f);
        assert!(x.contains("<attribute name=\"textstring\" type=\"string\" value=\"Hello\" />"));
        let back = xml::from_xml(&x).unwrap();
        assert_eq!(back.elements, f.elements);
        assert_eq!(back.animations, f.animations);
        assert_eq!(back.slides, f.slides);
        assert_eq!(back.params, f.params);
        // Through the door, `.xml` is the presentation XML (a model's `.xml` is a component).
        let opened = hangar::open(hangar::Source::bytes("ui.bgf", bytes.clone())).unwrap();
        let c = opened.write_as("ui.xml", &Default::default()).unwrap();
        assert_eq!(String::from_utf8(c.bytes).unwrap(), x);
        assert!(c.files.is_empty());
    }
}

fn spec_bsg(be: bool) -> Vec<u8> {
    let mut f = W::new(be);
    f.u8(u8::from(be))
        .u8(4)
        .i16(0)
        .i32(0x18)
        .raw(b"AnarkBGF")
        .i32(2)
        .i32(2)
        .raw(&[0; 8]);
    let mut m = W::new(be);
    m.i32(3).i32(1);
    f.section(&m);
    let mut g = W::new(be);
    for (parent, id, t) in [(-1, 100, 8), (0, 107, 2), (1, 114, 4)] {
        g.i32(parent).i32(id).u8(t).raw(&[0; 3]);
        for v in [
            1.0, 2.0, 3.0, 0.5, 0.0, 0.0, 1.0, 1.0, 2.0, 0.0, 0.0, 0.0, -1.0, -1.0, -1.0, 1.0, 1.0,
            1.0,
        ] {
            g.f32(v);
        }
        g.f32(1.0).u8(0).u8(4).u8(0).i32(0).u8(1);
    }
    f.section(&g);
    let mut a = W::new(be);
    a.i32(107).u8(6);
    f.section(&a);
    f.b
}

#[test]
fn spec_built_bsg_reads_back_and_becomes_a_node_tree() {
    for be in [false, true] {
        let bytes = spec_bsg(be);
        let (f, w) = bsg::read(&bytes).unwrap();
        assert!(w.is_empty());
        assert_eq!(f.nodes.len(), 3);
        assert_eq!(f.nodes[2].parent, 1);
        assert_eq!(f.nodes[1].id, 107);
        assert_eq!(f.nodes[0].translation[2].0, 3.0);
        assert_eq!(f.nodes[0].transparent, 1);
        assert_eq!(f.assets, vec![bsg::Asset { node: 107, kind: 6 }]);
        assert_eq!(bsg::write(&f), bytes);
        assert!(check::check_bsg(&f).is_empty());
        let scene = anark::scene::to_scene(&f);
        let names: Vec<&str> = scene.nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["AK100", "AK107", "AK114"]);
        assert_eq!(scene.nodes[2].parent, Some(1));
        // Z translation negated, X euler negated (rotation 0.5 about X becomes -0.5).
        assert_eq!(scene.nodes[0].translation.to_array(), [1.0, 2.0, -3.0]);
        let (axis, angle) = scene.nodes[0].rotation.to_axis_angle();
        assert!((axis.x * angle + 0.5).abs() < 1e-5, "{axis:?} {angle}");
        assert_eq!(scene.nodes[0].scale.to_array(), [1.0, 1.0, 2.0]);
        assert_eq!(
            scene.nodes[0].extras["boundingBoxMin"],
            serde_json::json!([-1.0, -1.0, -1.0])
        );
        if !be {
            let (glb, _) = common::to_glb(&scene).unwrap();
            std::fs::write(common::gltf_out("anark").join("bsg.glb"), &glb).unwrap();
            let (doc, _) = common::load_glb(&glb);
            assert_eq!(doc.nodes().count(), 3);
        }
    }
}

fn s(w: &mut W, t: &str) {
    w.i32(t.len() as i32 + 1).raw(t.as_bytes()).u8(0);
}

fn spec_bgp(be: bool) -> Vec<u8> {
    let mut w = W::new(be);
    w.u8(u8::from(be)).i32(1);
    for t in ["bgf", "menu", "ui/menu.bgf"] {
        s(&mut w, t);
    }
    w.i32(2);
    s(&mut w, "idle");
    w.i32(1);
    s(&mut w, "preload");
    s(&mut w, "menu");
    w.i32(1);
    s(&mut w, "open");
    s(&mut w, "onOpen");
    w.i32(1);
    s(&mut w, "show");
    s(&mut w, "menu");
    w.i32(0);
    s(&mut w, "open");
    w.i32(0).i32(1);
    s(&mut w, "gone");
    s(&mut w, "onClose");
    w.i32(0).i32(0);
    w.b
}

#[test]
fn spec_built_bgp_reads_back_and_draws() {
    for be in [false, true] {
        let bytes = spec_bgp(be);
        let (f, w) = bgp::read(&bytes).unwrap();
        assert!(w.is_empty());
        assert_eq!(f.assets[0].path.lossy(), "ui/menu.bgf");
        assert_eq!(f.states.len(), 2);
        assert_eq!(f.states[0].prelude[0].action.lossy(), "preload");
        assert_eq!(f.states[0].transitions[0].event.lossy(), "onOpen");
        assert_eq!(bgp::write(&f), bytes);
        // "gone" is no state: validate names the transition.
        let found = check::check_bgp(&f);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].path, "BGP.states[1].transitions[0]");
        let dot = anark::dot::to_dot(&f);
        assert!(
            dot.contains("\"idle\" -> \"open\" [label=\"onOpen\\nshow menu\"];"),
            "{dot}"
        );
        let json = Anark::Bgp(f).to_json();
        assert_eq!(Anark::from_json(&json).unwrap().write().unwrap(), bytes);
    }
}

#[test]
fn section_sizes_that_lie_are_kept_or_refused() {
    let good = spec_bgf(false);
    // The strings section (after 32 header bytes and 4 + 100 memory bytes) declares 4 more bytes.
    let at = 32 + 104;
    let size = i32::from_le_bytes(good[at..at + 4].try_into().unwrap());
    let mut longer = good.clone();
    longer[at..at + 4].copy_from_slice(&(size + 4).to_le_bytes());
    longer.splice(at + 4 + size as usize..at + 4 + size as usize, [9, 9, 9, 9]);
    let (f, w) = bgf::read(&longer).unwrap();
    assert!(w.iter().any(|w| w.path == "BGF.strings"), "{w:?}");
    assert_eq!(bgf::write(&f).unwrap(), longer);
    assert_eq!(check::check_bgf(&f).len(), 1);
    // A section shorter than its items: an error at the section, not a read into the next one.
    let mut shorter = good.clone();
    shorter[at..at + 4].copy_from_slice(&(size - 1).to_le_bytes());
    let e = bgf::read(&shorter).unwrap_err();
    assert!(e.path.contains("strings"), "{e}");
    // A count far past the end: refused before allocating.
    let mut huge = good.clone();
    huge[36..40].copy_from_slice(&0x7fff_ffffu32.to_le_bytes());
    let e = bgf::read(&huge).unwrap_err();
    assert!(e.to_string().contains("do not fit"), "{e}");
}

#[test]
fn bad_indices_and_cycles_are_validate_findings() {
    let (mut f, _) = bgf::read(&spec_bgf(false)).unwrap();
    f.elements[0].parent = 1; // 0 -> 1 -> 0
    f.elements[1].attributes[1].value = 99; // string index out of range
    f.elements[1].attributes[0].key |= 7 << 27; // unknown type bits
    f.animations[0].element = 5;
    f.slides[0].settings[0].refs[0].index = 3;
    let found = check::check_bgf(&f);
    let paths: Vec<&str> = found.iter().map(|w| w.path.as_str()).collect();
    for p in [
        "BGF.elements[0].parent",
        "BGF.elements[1].attributes[1]",
        "BGF.elements[1].attributes[0]",
        "BGF.animations[0].element",
        "BGF.slides[0].settings[0].refs[0]",
    ] {
        assert!(paths.contains(&p), "no finding at {p}: {paths:?}");
    }
    // The XML form still holds every element of a cycle (written flat, with `parent`).
    let x = xml::to_xml(&f);
    let back = xml::from_xml(&x).unwrap();
    assert_eq!(back.elements, f.elements);
}

#[test]
fn every_truncation_and_bit_flip_fails_cleanly() {
    for bytes in [
        spec_bgf(false),
        spec_bgf(true),
        spec_bsg(false),
        spec_bgp(false),
    ] {
        for n in 0..bytes.len() {
            let _ = anark::read(&bytes[..n], true);
        }
        let mut rng = common::Rng(0x5eed);
        for _ in 0..2000 {
            let mut b = bytes.clone();
            let i = (rng.next() as usize) % b.len();
            b[i] ^= 1 << (rng.next() % 8);
            if let Ok((a, _)) = anark::read(&b, true) {
                let _ = check::check(&a);
                if let Ok(out) = a.write() {
                    // What was read writes back to the same bytes.
                    assert_eq!(out, b);
                }
                if let Anark::Bgf(f) = &a {
                    let _ = xml::to_xml(f);
                }
            }
        }
    }
}

#[test]
fn hash_matches_the_notes() {
    assert_eq!(hash::hash("_AKIsContract"), 0x473F25FB);
    assert_eq!(hash::hash("_AKIsContract") & hash::NAME_BITS, 0x073F25FB);
}
