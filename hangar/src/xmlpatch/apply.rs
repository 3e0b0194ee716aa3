//! A patch applied as the game applies it: each operation's `sel` must select exactly one node
//! of the document as the operations before it left it; an operation that fails is skipped and
//! reported, the others still applied.

use super::tree::{Doc, Kind};
use super::xpath::{self, Item};
use super::{Op, Patch, Pos};
use serde::Serialize;

/// An operation that did not apply: its place in the patch (from 1), its `sel`, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Failure {
    pub index: usize,
    pub op: String,
    pub sel: String,
    pub why: String,
    /// The patch marks it `silent`: the game says nothing of it.
    pub silent: bool,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "operation {} <{} sel=\"{}\">: {}",
            self.index, self.op, self.sel, self.why
        )
    }
}

/// Applies every operation of `patch` to `doc` in order; the ones that failed.
pub fn apply(doc: &mut Doc, patch: &Patch) -> Vec<Failure> {
    let mut out = Vec::new();
    for (i, op) in patch.ops.iter().enumerate() {
        if let Err(why) = apply_one(doc, &patch.store, op) {
            out.push(Failure {
                index: i + 1,
                op: op.tag().to_string(),
                sel: op.sel().to_string(),
                why,
                silent: patch.silent.get(i).copied().unwrap_or(false),
            });
        }
    }
    out
}

/// The one node `sel` selects in `doc`.
pub fn select_one(doc: &Doc, sel: &str) -> Result<Item, String> {
    let found =
        xpath::select(doc, sel).map_err(|_| "an XPath past what hangar reads".to_string())?;
    match found.as_slice() {
        [one] => Ok(*one),
        [] => Err("selects nothing".into()),
        many => Err(format!("selects {} nodes", many.len())),
    }
}

/// Applies one operation whose elements are nodes of `store`.
pub fn apply_one(doc: &mut Doc, store: &Doc, op: &Op) -> Result<(), String> {
    let target = select_one(doc, op.sel())?;
    match op {
        Op::Add {
            pos,
            attr,
            value,
            nodes,
            ..
        } => {
            let Item::Node(t) = target else {
                return Err("selects an attribute, not an element".into());
            };
            if let Some(a) = attr {
                let e = doc
                    .element_mut(t)
                    .ok_or("selects a node that is not an element")?;
                e.set(a, value);
                return Ok(());
            }
            if !doc.is_element(t) {
                return Err("selects a node that is not an element".into());
            }
            let (parent, mut at) = match pos {
                Pos::Append => (t, doc.children(t).len()),
                Pos::Prepend => (t, 0),
                Pos::Before | Pos::After => {
                    let p = doc
                        .parent(t)
                        .filter(|&p| doc.is_element(p))
                        .ok_or("before or after the root element")?;
                    let i = doc.index(t).unwrap_or(0);
                    (p, if *pos == Pos::After { i + 1 } else { i })
                }
            };
            for &n in nodes {
                let id = doc.import(store, n);
                doc.insert(parent, at, id);
                at += 1;
            }
            Ok(())
        }
        Op::Replace { value, nodes, .. } => match target {
            Item::Attr(t, i) => {
                if let Some(a) = doc.element_mut(t).and_then(|e| e.attrs.get_mut(i)) {
                    a.1 = value.clone();
                }
                Ok(())
            }
            Item::Node(t) => {
                if let Some(Kind::Text(s)) = doc.nodes.get_mut(t).map(|n| &mut n.kind) {
                    *s = value.clone();
                    return Ok(());
                }
                if !doc.is_element(t) {
                    return Err("selects a node that is neither an element nor a text".into());
                }
                let [one] = nodes.as_slice() else {
                    return Err(format!(
                        "replaces an element with {} elements (one is needed)",
                        nodes.len()
                    ));
                };
                let parent = doc.parent(t).ok_or("replaces a detached node")?;
                let i = doc.index(t).unwrap_or(0);
                doc.detach(t);
                let id = doc.import(store, *one);
                doc.insert(parent, i, id);
                Ok(())
            }
        },
        Op::Remove { .. } => match target {
            Item::Attr(t, i) => {
                if let Some(e) = doc.element_mut(t) {
                    if i < e.attrs.len() {
                        e.attrs.remove(i);
                    }
                }
                Ok(())
            }
            Item::Node(t) => {
                if doc.parent(t).is_some_and(|p| !doc.is_element(p)) {
                    return Err("removes the root element".into());
                }
                doc.detach(t);
                Ok(())
            }
        },
    }
}
