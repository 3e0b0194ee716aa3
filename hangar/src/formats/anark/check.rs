//! `validate` for Anark files: indices in range, parents without cycles, memory counts equal to what
//! the sections hold. Findings are warnings naming the structure path.

use super::bgf::{count, Bgf, FLAG_LARGE};
use super::bgp::Bgp;
use super::bsg::Bsg;
use super::{hash, Anark, TYPE_STRING};
use crate::Warning;

fn find(out: &mut Vec<Warning>, path: String, msg: String) {
    out.push(Warning::new(None, path, msg));
}

fn in_range(i: i32, n: usize) -> bool {
    usize::try_from(i).is_ok_and(|i| i < n)
}

/// Parents must be -1 or an index, and following them must end at a root.
fn check_parents(out: &mut Vec<Warning>, what: &str, parents: &[i32]) {
    let n = parents.len();
    for (i, &p) in parents.iter().enumerate() {
        if p != -1 && !in_range(p, n) {
            find(
                out,
                format!("{what}[{i}].parent"),
                format!("parent {p} is neither -1 nor one of the {n} items"),
            );
            continue;
        }
        let mut cur = p;
        let mut steps = 0usize;
        while cur != -1 && steps <= n {
            cur = usize::try_from(cur)
                .ok()
                .and_then(|c| parents.get(c))
                .copied()
                .unwrap_or(-1);
            steps += 1;
        }
        if steps > n {
            find(
                out,
                format!("{what}[{i}].parent"),
                "following the parents never reaches a root (cycle)".into(),
            );
        }
    }
}

pub fn check(a: &Anark) -> Vec<Warning> {
    match a {
        Anark::Bgf(f) => check_bgf(f),
        Anark::Bgp(f) => check_bgp(f),
        Anark::Bsg(f) => check_bsg(f),
    }
}

pub fn check_bgf(f: &Bgf) -> Vec<Warning> {
    let mut out = Vec::new();
    let ne = f.elements.len();
    let ns = f.strings.len();
    let parents: Vec<i32> = f.elements.iter().map(|e| e.parent).collect();
    check_parents(&mut out, "BGF.elements", &parents);
    let attr_check = |out: &mut Vec<Warning>, path: String, attrs: &[super::Attr]| {
        for (k, a) in attrs.iter().enumerate() {
            let t = a.kind();
            if super::type_name(t).is_none() {
                find(
                    out,
                    format!("{path}[{k}]"),
                    format!("{}: unknown value type {t} in bits 27..29", a.name()),
                );
            }
            if t == TYPE_STRING && a.value as usize >= ns {
                find(
                    out,
                    format!("{path}[{k}]"),
                    format!("{}: string index {} but {ns} strings", a.name(), a.value),
                );
            }
        }
    };
    for (i, e) in f.elements.iter().enumerate() {
        if super::bgf::element_type_name(e.kind).is_none() {
            find(
                &mut out,
                format!("BGF.elements[{i}].type"),
                format!("unknown element type {}", e.kind),
            );
        }
        attr_check(
            &mut out,
            format!("BGF.elements[{i}].attributes"),
            &e.attributes,
        );
    }
    for (i, c) in f.contracts.iter().enumerate() {
        if !in_range(c.element, ne) {
            find(
                &mut out,
                format!("BGF.contracts[{i}].element"),
                format!("element {} of {ne}", c.element),
            );
        }
        for (k, ev) in c.events.iter().enumerate() {
            if !in_range(*ev, ns) {
                find(
                    &mut out,
                    format!("BGF.contracts[{i}].events[{k}]"),
                    format!("string index {ev} of {ns}"),
                );
            }
        }
    }
    for (i, a) in f.animations.iter().enumerate() {
        match usize::try_from(a.element)
            .ok()
            .and_then(|e| f.elements.get(e))
        {
            None => find(
                &mut out,
                format!("BGF.animations[{i}].element"),
                format!("element {} of {ne}", a.element),
            ),
            Some(e) if e.flags & FLAG_LARGE == 0 && e.parent == -1 => {}
            Some(_) => {}
        }
        if a.keyframes
            .windows(2)
            .any(|w| matches!(w, [x, y] if y.time < x.time))
        {
            find(
                &mut out,
                format!("BGF.animations[{i}].keyframes"),
                "keyframe times go backwards".into(),
            );
        }
    }
    for (i, p) in f.params.iter().enumerate() {
        if hash::name_of(p.kind.0).is_none() {
            find(
                &mut out,
                format!("BGF.params[{i}].type"),
                format!("unknown param type 0x{:08X}", p.kind.0),
            );
        }
    }
    let na = f.animations.len();
    for (i, s) in f.slides.iter().enumerate() {
        let owner = usize::try_from(s.element)
            .ok()
            .and_then(|e| f.elements.get(e));
        match owner {
            None => find(
                &mut out,
                format!("BGF.slides[{i}].element"),
                format!("element {} of {ne}", s.element),
            ),
            Some(e) if e.flags & FLAG_LARGE == 0 => find(
                &mut out,
                format!("BGF.slides[{i}].element"),
                format!("element {} owns a slide but is not large", s.element),
            ),
            Some(_) => {}
        }
        if s.end < s.begin {
            find(
                &mut out,
                format!("BGF.slides[{i}]"),
                format!("end time {} before begin {}", s.end, s.begin),
            );
        }
        for (k, st) in s.settings.iter().enumerate() {
            let path = format!("BGF.slides[{i}].settings[{k}]");
            if !in_range(st.element, ne) {
                find(
                    &mut out,
                    format!("{path}.element"),
                    format!("element {} of {ne}", st.element),
                );
            }
            attr_check(&mut out, format!("{path}.values"), &st.values);
            for (r, x) in st.refs.iter().enumerate() {
                if x.logic == 0 && !in_range(i32::from(x.index), na) {
                    find(
                        &mut out,
                        format!("{path}.refs[{r}]"),
                        format!("animation {} of {na}", x.index),
                    );
                }
            }
        }
    }
    let want = f.computed_counts();
    for (i, (have, want)) in f.memory.counts.iter().zip(want.iter()).enumerate() {
        // Logic counts are not computed; the padding count (18) rests on our reading of the spec: unchecked.
        if have != want && i != count::LOGICS && i != count::PADDINGS {
            find(
                &mut out,
                format!("BGF.memory.counts[{i}]"),
                format!("memory count {i} is {have} but the sections hold {want}"),
            );
        }
    }
    for name in f.tails.keys() {
        find(
            &mut out,
            format!("BGF.{name}"),
            "bytes beyond the section's items (its declared size is larger)".into(),
        );
    }
    out
}

pub fn check_bgp(f: &Bgp) -> Vec<Warning> {
    let mut out = Vec::new();
    let assets: Vec<&[u8]> = f.assets.iter().map(|a| a.id.0.as_slice()).collect();
    let states: Vec<&[u8]> = f.states.iter().map(|s| s.id.0.as_slice()).collect();
    for (i, s) in f.states.iter().enumerate() {
        let acts = s
            .prelude
            .iter()
            .map(|a| ("prelude", a))
            .chain(s.postlude.iter().map(|a| ("postlude", a)))
            .chain(
                s.transitions
                    .iter()
                    .flat_map(|t| t.actions.iter().map(|a| ("transition", a))),
            );
        for (where_, a) in acts {
            if !assets.contains(&a.asset.0.as_slice()) {
                find(
                    &mut out,
                    format!("BGP.states[{i}].{where_}"),
                    format!("action on unknown asset {:?}", a.asset.lossy()),
                );
            }
        }
        for (k, t) in s.transitions.iter().enumerate() {
            if !states.contains(&t.to.0.as_slice()) {
                find(
                    &mut out,
                    format!("BGP.states[{i}].transitions[{k}]"),
                    format!("target state {:?} does not exist", t.to.lossy()),
                );
            }
        }
    }
    out
}

pub fn check_bsg(f: &Bsg) -> Vec<Warning> {
    let mut out = Vec::new();
    let parents: Vec<i32> = f.nodes.iter().map(|n| n.parent).collect();
    check_parents(&mut out, "BSG.nodes", &parents);
    for (i, a) in f.assets.iter().enumerate() {
        if !f.nodes.iter().any(|n| n.id == a.node) {
            find(
                &mut out,
                format!("BSG.assets[{i}]"),
                format!("scene node {} is not in the graph", a.node),
            );
        }
    }
    for name in f.tails.keys() {
        find(
            &mut out,
            format!("BSG.{name}"),
            "bytes beyond the section's items (its declared size is larger)".into(),
        );
    }
    out
}
