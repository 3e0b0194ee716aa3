//! The patch that turns one document into another. The base is copied, and every operation is
//! applied to the copy as soon as it is written: each `sel` is made against the document as the
//! game will see it at that operation, and selects one node by construction (checked again by
//! the applier's own XPath). A `sel` starts at the nearest element whose `@id` or `@name` is
//! unique in the whole document (`//macro[@name='x']/properties/hull/@max`), else at the root;
//! each step below names a child by `@id`, `@name` or another attribute unique among its
//! same-named siblings, else by position (`[2]`).

use super::apply::{apply_one, select_one};
use super::tree::{Doc, Id, Kind};
use super::xpath::Item;
use super::{Op, Patch, Pos};
use crate::error::{Error, ErrorKind, Result};

/// Children lists longer than this (after their common ends are set aside) are matched by key
/// alone rather than by a longest common subsequence.
const MAX_LCS_CELLS: usize = 4_000_000;

/// The patch that turns `base` into `edited`.
pub fn diff(base: &Doc, edited: &Doc) -> Result<Patch> {
    let (Some(wr), Some(er)) = (base.root(), edited.root()) else {
        return Err(refused("a document without a root element"));
    };
    let (wn, en) = (name(base, wr), name(edited, er));
    if wn != en {
        return Err(refused(format!(
            "the root elements differ (<{wn}> and <{en}>): a patch cannot replace the root"
        )));
    }
    let mut d = Differ {
        w: base.clone(),
        e: edited,
        patch: Patch::new(),
    };
    for doc in [base, edited] {
        if let Some(r) = doc.root().and_then(|r| doc.element(r)) {
            for ns in &r.ns {
                if !d.patch.ns.contains(ns) {
                    d.patch.ns.push(ns.clone());
                }
            }
        }
    }
    d.pair(wr, er)?;
    Ok(d.patch)
}

fn refused(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::Refused, None, "diff", message)
}

fn name(doc: &Doc, id: Id) -> &str {
    doc.element(id).map_or("", |e| e.name.as_str())
}

struct Differ<'e> {
    /// The base as the operations written so far have changed it.
    w: Doc,
    e: &'e Doc,
    patch: Patch,
}

impl Differ<'_> {
    /// Writes `op` and applies it to the working copy.
    fn emit(&mut self, op: Op) -> Result<()> {
        apply_one(&mut self.w, &self.patch.store, &op).map_err(|why| {
            Error::new(
                ErrorKind::Invalid,
                None,
                "diff",
                format!(
                    "internal: operation <{} sel=\"{}\"> {why}",
                    op.tag(),
                    op.sel()
                ),
            )
        })?;
        self.patch.ops.push(op);
        self.patch.silent.push(false);
        Ok(())
    }

    /// Copies the edited document's node `id` into the patch; its id there.
    fn carry(&mut self, id: Id) -> Id {
        self.patch.store.import(self.e, id)
    }

    /// Makes the working element `w` what the edited element `e` is (same name).
    fn pair(&mut self, w: Id, e: Id) -> Result<()> {
        let (Some(we), Some(ee)) = (self.w.element(w).cloned(), self.e.element(e)) else {
            return Ok(());
        };
        // Text: compared without the blanks around it.
        let (wt, et) = (self.w.own_text(w), self.e.own_text(e));
        if wt.trim() != et.trim() {
            let texts: Vec<Id> = self
                .w
                .children(w)
                .iter()
                .copied()
                .filter(|&c| matches!(self.w.node(c).map(|n| &n.kind), Some(Kind::Text(_))))
                .collect();
            let lone_text = texts.len() == 1 && self.w.elements(w).next().is_none();
            if lone_text && !et.trim().is_empty() {
                let sel = format!("{}/text()", sel_of(&self.w, w));
                self.emit(Op::Replace {
                    sel,
                    value: et,
                    nodes: Vec::new(),
                })?;
            } else {
                // Text beside elements: the element is replaced whole.
                let sel = sel_of(&self.w, w);
                let node = self.carry(e);
                return self.emit(Op::Replace {
                    sel,
                    value: String::new(),
                    nodes: vec![node],
                });
            }
        }
        // Attributes: removed, changed, added.
        for (k, _) in &we.attrs {
            if ee.attr(k).is_none() {
                let sel = format!("{}/@{k}", sel_of(&self.w, w));
                self.emit(Op::Remove { sel })?;
            }
        }
        for (k, v) in &ee.attrs {
            match we.attr(k) {
                Some(old) if old == v => {}
                Some(_) => {
                    let sel = format!("{}/@{k}", sel_of(&self.w, w));
                    self.emit(Op::Replace {
                        sel,
                        value: v.clone(),
                        nodes: Vec::new(),
                    })?;
                }
                None => {
                    let sel = sel_of(&self.w, w);
                    self.emit(Op::Add {
                        sel,
                        pos: Pos::Append,
                        attr: Some(k.clone()),
                        value: v.clone(),
                        nodes: Vec::new(),
                    })?;
                }
            }
        }
        // Children.
        let wk: Vec<Id> = self.w.elements(w).collect();
        let ek: Vec<Id> = self.e.elements(e).collect();
        let pairs = align(&self.w, &wk, self.e, &ek);
        let kept: std::collections::HashSet<Id> = pairs.iter().map(|p| p.0).collect();
        for &c in &wk {
            if !kept.contains(&c) {
                let sel = sel_of(&self.w, c);
                self.emit(Op::Remove { sel })?;
            }
        }
        let mut prev: Option<Id> = None;
        let mut next_pair = pairs.iter().peekable();
        let mut run: Vec<Id> = Vec::new();
        for &c in &ek {
            match next_pair.peek() {
                Some(&&(wc, ec)) if ec == c => {
                    next_pair.next();
                    self.add_run(w, &mut prev, &mut run)?;
                    self.pair(wc, ec)?;
                    // A replaced element's place is found again by its position.
                    prev = Some(self.placed_at(w, prev, wc));
                }
                _ => run.push(c),
            }
        }
        self.add_run(w, &mut prev, &mut run)
    }

    /// The working element that now follows `prev` (or opens `parent`): `wc` itself unless it
    /// was replaced.
    fn placed_at(&self, parent: Id, prev: Option<Id>, wc: Id) -> Id {
        if self.w.parent(wc) == Some(parent) {
            return wc;
        }
        let kids: Vec<Id> = self.w.elements(parent).collect();
        let i = prev
            .and_then(|p| kids.iter().position(|&k| k == p))
            .map_or(0, |i| i + 1);
        kids.get(i).copied().unwrap_or(wc)
    }

    /// Adds the edited elements `run` after `prev` (or first in `parent`), in one operation.
    fn add_run(&mut self, parent: Id, prev: &mut Option<Id>, run: &mut Vec<Id>) -> Result<()> {
        if run.is_empty() {
            return Ok(());
        }
        let nodes: Vec<Id> = run.drain(..).map(|c| self.carry(c)).collect();
        let count = nodes.len();
        let (sel, pos) = match *prev {
            Some(p) => (sel_of(&self.w, p), Pos::After),
            None if self.w.elements(parent).next().is_none() => {
                (sel_of(&self.w, parent), Pos::Append)
            }
            None => (sel_of(&self.w, parent), Pos::Prepend),
        };
        self.emit(Op::Add {
            sel,
            pos,
            attr: None,
            value: String::new(),
            nodes,
        })?;
        // The last element added is the new `prev`.
        let kids: Vec<Id> = self.w.elements(parent).collect();
        let start = prev
            .and_then(|p| kids.iter().position(|&k| k == p))
            .map_or(0, |i| i + 1);
        *prev = kids.get(start + count - 1).copied();
        Ok(())
    }
}

/// A child's key for matching: its name and its `@id` or `@name`; without those, all its
/// attributes.
fn key(doc: &Doc, id: Id) -> (&str, Option<&str>, &[(String, String)]) {
    let Some(e) = doc.element(id) else {
        return ("", None, &[]);
    };
    match e.attr("id").or_else(|| e.attr("name")) {
        Some(k) => (e.name.as_str(), Some(k), &[]),
        None => (e.name.as_str(), None, e.attrs.as_slice()),
    }
}

/// Which working children stay as which edited children, in order of both: the longest common
/// subsequence by key, then in each gap the remaining ones of the same name in order (an
/// element whose attributes changed).
fn align(w: &Doc, wk: &[Id], e: &Doc, ek: &[Id]) -> Vec<(Id, Id)> {
    let same = |a: Id, b: Id| key(w, a) == key(e, b);
    let mut head = 0;
    while head < wk.len().min(ek.len()) && same(wk[head], ek[head]) {
        head += 1;
    }
    let mut tail = 0;
    while tail < (wk.len() - head).min(ek.len() - head)
        && same(wk[wk.len() - 1 - tail], ek[ek.len() - 1 - tail])
    {
        tail += 1;
    }
    let (wm, em) = (&wk[head..wk.len() - tail], &ek[head..ek.len() - tail]);
    let mut out: Vec<(Id, Id)> = wk[..head]
        .iter()
        .copied()
        .zip(ek[..head].iter().copied())
        .collect();
    let middle = lcs(wm, em, same);
    // Gaps between the matched pairs: same names matched in order.
    let (mut wi, mut ei) = (0, 0);
    for &(a, b) in middle.iter().chain(std::iter::once(&(wm.len(), em.len()))) {
        let gw = &wm[wi..a];
        let ge = &em[ei..b];
        out.extend(
            lcs(gw, ge, |x, y| name(w, x) == name(e, y))
                .into_iter()
                .map(|(x, y)| (gw[x], ge[y])),
        );
        if let (Some(&x), Some(&y)) = (wm.get(a), em.get(b)) {
            out.push((x, y));
        }
        (wi, ei) = (a + 1, b + 1);
    }
    out.extend(
        wk[wk.len() - tail..]
            .iter()
            .copied()
            .zip(ek[ek.len() - tail..].iter().copied()),
    );
    out
}

/// The longest common subsequence of `a` and `b` under `same`, as index pairs; lists too long
/// for the table are matched greedily (each of `a` with the first later one of `b` it matches).
fn lcs(a: &[Id], b: &[Id], same: impl Fn(Id, Id) -> bool) -> Vec<(usize, usize)> {
    let (n, m) = (a.len(), b.len());
    if n == 0 || m == 0 {
        return Vec::new();
    }
    if n.saturating_mul(m) > MAX_LCS_CELLS {
        let mut out = Vec::new();
        let mut j = 0;
        for (i, &x) in a.iter().enumerate() {
            if let Some(k) = b[j..].iter().take(64).position(|&y| same(x, y)) {
                out.push((i, j + k));
                j += k + 1;
            }
        }
        return out;
    }
    // t[i][j]: the LCS length of a[i..] and b[j..].
    let w = m + 1;
    let mut t = vec![0u32; (n + 1) * w];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            t[i * w + j] = if same(a[i], b[j]) {
                t[(i + 1) * w + j + 1] + 1
            } else {
                t[(i + 1) * w + j].max(t[i * w + j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while i < n && j < m {
        if same(a[i], b[j]) && t[i * w + j] == t[(i + 1) * w + j + 1] + 1 {
            out.push((i, j));
            i += 1;
            j += 1;
        } else if t[(i + 1) * w + j] >= t[i * w + j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

/// `value` as an XPath string literal, when it can be written as one.
fn literal(value: &str) -> Option<String> {
    if !value.contains('\'') {
        Some(format!("'{value}'"))
    } else if !value.contains('"') {
        Some(format!("\"{value}\""))
    } else {
        None
    }
}

/// Attributes a `sel` prefers to name an element by.
const KEYS: [&str; 2] = ["id", "name"];

/// For each of `chain`'s elements, the `[@id='x']` or `[@name='x']` predicate that names it alone
/// in the whole document, if any (one walk of the document for the whole chain).
fn unique_in_doc(doc: &Doc, chain: &[Id]) -> Vec<Option<String>> {
    // (element, key, value) of each candidate, and how many elements the document has like it.
    let mut cands: Vec<(usize, &str, &str, &str, usize)> = Vec::new();
    for (i, &id) in chain.iter().enumerate() {
        let Some(e) = doc.element(id) else { continue };
        for k in KEYS {
            if let Some(v) = e.attr(k) {
                cands.push((i, e.name.as_str(), k, v, 0));
            }
        }
    }
    if !cands.is_empty() {
        for d in doc.descendants(super::tree::DOCUMENT) {
            let Some(x) = doc.element(d) else { continue };
            for c in cands.iter_mut() {
                if x.name == c.1 && x.attr(c.2) == Some(c.3) {
                    c.4 += 1;
                }
            }
        }
    }
    let mut out = vec![None; chain.len()];
    for (i, _, k, v, n) in cands {
        if n != 1 {
            continue;
        }
        if let (Some(slot @ None), Some(lit)) = (out.get_mut(i), literal(v)) {
            *slot = Some(format!("[@{k}={lit}]"));
        }
    }
    out
}

/// The step that names `id` among its parent's children: its name, with a predicate when other
/// children share the name.
fn step(doc: &Doc, id: Id) -> String {
    let Some(e) = doc.element(id) else {
        return String::new();
    };
    let siblings: Vec<Id> = doc
        .parent(id)
        .map(|p| {
            doc.elements(p)
                .filter(|&s| name(doc, s) == e.name)
                .collect()
        })
        .unwrap_or_default();
    if siblings.len() <= 1 {
        return e.name.clone();
    }
    let names = KEYS.iter().map(|k| k.to_string()).chain(
        e.attrs
            .iter()
            .map(|a| a.0.clone())
            .filter(|k| !k.contains(':')),
    );
    for k in names {
        let Some(v) = e.attr(&k) else { continue };
        let Some(lit) = literal(v) else { continue };
        let same = siblings
            .iter()
            .filter(|&&s| doc.element(s).and_then(|x| x.attr(&k)) == Some(v))
            .count();
        if same == 1 {
            return format!("{}[@{k}={lit}]", e.name);
        }
    }
    let n = siblings.iter().position(|&s| s == id).unwrap_or(0) + 1;
    format!("{}[{n}]", e.name)
}

/// A `sel` that selects the element `id` of `doc` alone.
pub fn sel_of(doc: &Doc, id: Id) -> String {
    let mut chain = Vec::new();
    let mut at = Some(id);
    while let Some(a) = at.filter(|&a| doc.is_element(a)) {
        chain.push(a);
        at = doc.parent(a);
    }
    // chain: id, its parent, ..., the root element.
    let unique = unique_in_doc(doc, &chain);
    let start = chain
        .iter()
        .zip(unique)
        .enumerate()
        .find_map(|(i, (&a, p))| p.map(|p| (i, format!("//{}{p}", name(doc, a)))));
    let (from, mut s) = match start {
        Some((i, s)) => (i, s),
        None => (chain.len(), String::new()),
    };
    for &a in chain[..from].iter().rev() {
        s.push('/');
        s.push_str(&step(doc, a));
    }
    debug_assert!(
        matches!(select_one(doc, &s), Ok(Item::Node(n)) if n == id),
        "{s}"
    );
    s
}
