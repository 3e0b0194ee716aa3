//! The game's texts in one language as the game shows them: `t/0001.xml` and `t/0001-lNNN.xml`
//! of the game and of each extension in load order, plain files merged page by page and
//! `<diff>` patches applied (by [`crate::xmlpatch`]); a `{page,id}` reference resolved
//! through them, references inside texts followed, `(comments)` dropped, `\(` `\)` unescaped.

use crate::xmlpatch::{self, tree::Kind, Doc, Patch};
use std::collections::HashMap;

/// How deep references inside texts are followed (the game's own texts nest two or three).
const MAX_DEPTH: usize = 5;
/// Most references followed for one name, and its longest text: a text of many references to
/// texts of many references would otherwise grow with the power of the depth.
const MAX_STEPS: usize = 256;
const MAX_LEN: usize = 4096;

/// One language's texts by `(page, id)`, and the file (path in the view) and extension each came
/// from last.
#[derive(Default)]
pub struct Texts {
    pub by_key: HashMap<(u64, u64), Text>,
}

/// A text as written, where it was last written.
#[derive(Clone)]
pub struct Text {
    pub raw: String,
    pub file: String,
    pub extension: Option<String>,
}

/// The language files stacked so far: one `<language>` document, and when asked for, each
/// text's origin (the stack's texts compared before and after each file).
pub struct Stack {
    doc: Doc,
    origin: Option<HashMap<(u64, u64), Origin>>,
}

/// The file (path in the view) and extension a text was last written by.
type Origin = (String, Option<String>);

impl Stack {
    pub fn new(track_origin: bool) -> Stack {
        Stack {
            doc: super::empty_doc("language"),
            origin: track_origin.then(HashMap::new),
        }
    }

    /// Adds one language file (its bytes, its path in the view, the extension it belongs to):
    /// a `<diff>` applied as the game applies it, a plain `<language>` merged page by page.
    /// A file that does not read is left out.
    pub fn add(&mut self, bytes: &[u8], file: &str, extension: Option<&str>) {
        let Ok(doc) = xmlpatch::read(bytes) else {
            return;
        };
        let Some(root) = doc.root() else { return };
        let is_diff = doc.element(root).is_some_and(|e| e.name == "diff");
        // The first file needs no comparison: all it holds is its own.
        let before = match &self.origin {
            Some(o) if !o.is_empty() => self.keys(),
            _ => HashMap::new(),
        };
        if is_diff {
            if let Ok(patch) = Patch::from_doc(doc) {
                super::apply_tolerant(&mut self.doc, &patch, "page");
            }
        } else {
            self.merge(&doc, root);
        }
        // What this file wrote or changed is its own.
        if self.origin.is_some() {
            let after = self.keys();
            if let Some(origin) = &mut self.origin {
                for (key, text) in after {
                    if before.get(&key) != Some(&text) {
                        origin.insert(key, (file.to_string(), extension.map(str::to_string)));
                    }
                }
            }
        }
    }

    /// A plain language file's pages merged into the stack: new pages appended, the `<t>`s of a
    /// page already there appended to it (a later one wins).
    fn merge(&mut self, from: &Doc, root: crate::xmlpatch::Id) {
        let Some(lang) = self.doc.root() else { return };
        let mut pages: HashMap<String, crate::xmlpatch::Id> = HashMap::new();
        for p in self.doc.elements(lang) {
            if let Some(id) = self.doc.element(p).and_then(|e| e.attr("id")) {
                pages.insert(id.trim().to_string(), p);
            }
        }
        for page in from.elements(root) {
            let Some(e) = from.element(page) else {
                continue;
            };
            if e.name != "page" {
                continue;
            }
            let pid = e.attr("id").unwrap_or("").trim().to_string();
            match pages.get(&pid) {
                Some(&have) => {
                    for t in from.elements(page) {
                        let id = self.doc.import(from, t);
                        let n = self.doc.children(have).len();
                        self.doc.insert(have, n, id);
                    }
                }
                None => {
                    let id = self.doc.import(from, page);
                    let n = self.doc.children(lang).len();
                    self.doc.insert(lang, n, id);
                    pages.insert(pid, id);
                }
            }
        }
    }

    /// Every text of the stack by key (a later `<t>` of the same key wins).
    fn keys(&self) -> HashMap<(u64, u64), String> {
        let mut out = HashMap::new();
        let Some(lang) = self.doc.root() else {
            return out;
        };
        for page in self.doc.elements(lang) {
            let Some(p) = self.doc.element(page) else {
                continue;
            };
            if p.name != "page" {
                continue;
            }
            let Some(pid) = p.attr("id").and_then(|i| i.trim().parse::<u64>().ok()) else {
                continue;
            };
            for t in self.doc.elements(page) {
                let Some(e) = self.doc.element(t) else {
                    continue;
                };
                if e.name != "t" {
                    continue;
                }
                if let Some(id) = e.attr("id").and_then(|i| i.trim().parse::<u64>().ok()) {
                    out.insert((pid, id), text_of(&self.doc, t));
                }
            }
        }
        out
    }

    /// The texts the stack ends with.
    pub fn finish(self) -> Texts {
        let mut by_key = HashMap::new();
        for (key, raw) in self.keys() {
            let (file, extension) = self
                .origin
                .as_ref()
                .and_then(|o| o.get(&key).cloned())
                .unwrap_or_default();
            by_key.insert(
                key,
                Text {
                    raw,
                    file,
                    extension,
                },
            );
        }
        Texts { by_key }
    }
}

/// The text content of a `<t>` (its text nodes, nested ones included).
fn text_of(doc: &Doc, t: crate::xmlpatch::Id) -> String {
    doc.descendants(t)
        .into_iter()
        .filter_map(|n| match doc.node(n).map(|n| &n.kind) {
            Some(Kind::Text(s)) => Some(s.as_str()),
            _ => None,
        })
        .collect()
}

/// `{page,id}` as written in an attribute (spaces allowed around the numbers).
pub fn reference(s: &str) -> Option<(u64, u64)> {
    let inner = s.trim().strip_prefix('{')?.strip_suffix('}')?;
    let (p, i) = inner.split_once(',')?;
    Some((p.trim().parse().ok()?, i.trim().parse().ok()?))
}

impl Texts {
    /// What the game shows for the attribute value `value`: a `{page,id}` reference resolved,
    /// else the value itself; `None` when the reference names no text or the result is empty.
    pub fn shown(&self, value: &str) -> Option<String> {
        match reference(value) {
            Some(key) => self.resolve(key, 0, &mut 0),
            None => {
                let s = clean(value);
                (!s.is_empty()).then_some(s)
            }
        }
    }

    /// The text `key` with the references inside it followed (to [`MAX_DEPTH`]), comments
    /// dropped and escapes undone.
    fn resolve(&self, key: (u64, u64), depth: usize, steps: &mut usize) -> Option<String> {
        *steps += 1;
        if depth > MAX_DEPTH || *steps > MAX_STEPS {
            return None;
        }
        let raw = &self.by_key.get(&key)?.raw;
        let mut s = String::with_capacity(raw.len());
        let mut rest = raw.as_str();
        while let Some(at) = rest.find('{') {
            let (before, from) = rest.split_at(at);
            s.push_str(before);
            // A reference is short: its `}` is looked for near its `{` only (a text of many
            // `{` and no `}` is not searched to its end for each).
            let close = from.bytes().take(48).position(|b| b == b'}');
            let inner = close.and_then(|end| {
                let r = from.get(..=end)?;
                let k = reference(r)?;
                Some((end, k))
            });
            match inner {
                Some((end, k)) if s.len() < MAX_LEN => {
                    match self.resolve(k, depth + 1, steps) {
                        Some(t) => s.push_str(&t),
                        None => s.push_str(from.get(..=end).unwrap_or("")),
                    }
                    rest = from.get(end + 1..).unwrap_or("");
                }
                _ => {
                    s.push('{');
                    rest = from.get(1..).unwrap_or("");
                }
            }
        }
        s.push_str(rest);
        if s.len() > MAX_LEN {
            let mut cut = MAX_LEN;
            while !s.is_char_boundary(cut) {
                cut -= 1;
            }
            s.truncate(cut);
        }
        let s = clean(&s);
        (!s.is_empty()).then_some(s)
    }
}

/// A text as shown: `(comments)` dropped (an unescaped `(` to the next unescaped `)`, with no
/// unescaped `(` between), `\(` and `\)` unescaped, runs of white space made one space.
pub fn clean(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut kept = String::with_capacity(s.len());
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        if c == '\\' {
            if let Some(&n) = chars.get(i + 1) {
                kept.push(c);
                kept.push(n);
                i += 2;
                continue;
            }
        }
        if c == '(' {
            if let Some(end) = comment_end(&chars, i + 1) {
                i = end + 1;
                continue;
            }
        }
        kept.push(c);
        i += 1;
    }
    let unescaped = kept.replace("\\(", "(").replace("\\)", ")");
    unescaped.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Where the comment opened before `from` closes: the next unescaped `)`, unless an unescaped
/// `(` comes first.
fn comment_end(chars: &[char], from: usize) -> Option<usize> {
    let mut j = from;
    while let Some(&c) = chars.get(j) {
        match c {
            '\\' => j += 2,
            '(' => return None,
            ')' => return Some(j),
            _ => j += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(pairs: &[((u64, u64), &str)]) -> Texts {
        Texts {
            by_key: pairs
                .iter()
                .map(|(k, t)| {
                    (
                        *k,
                        Text {
                            raw: t.to_string(),
                            file: String::new(),
                            extension: None,
                        },
                    )
                })
                .collect(),
        }
    }

    #[test]
    fn references_are_followed_comments_dropped_escapes_undone() {
        let t = texts(&[
            ((20101, 1), "Cerberus"),
            ((20101, 2), "{20101, 1} (a frigate)Vanguard"),
            ((20101, 3), "{20101,2} \\(Mk2\\)"),
            ((1, 1), "{1,1}"),
            ((1, 2), "{9,9} left"),
        ]);
        assert_eq!(t.shown("{20101,1}").as_deref(), Some("Cerberus"));
        assert_eq!(t.shown(" {20101,2} ").as_deref(), Some("Cerberus Vanguard"));
        assert_eq!(
            t.shown("{20101,3}").as_deref(),
            Some("Cerberus Vanguard (Mk2)")
        );
        // A reference to itself ends at the depth limit, shown as written.
        assert_eq!(t.shown("{1,1}").as_deref(), Some("{1,1}"));
        assert_eq!(t.shown("{1,2}").as_deref(), Some("{9,9} left"));
        assert_eq!(t.shown("{5,5}"), None);
        assert_eq!(t.shown("Plain  name").as_deref(), Some("Plain name"));
    }

    #[test]
    fn texts_of_many_references_stay_bounded() {
        // Each text names the next one 200 times: 200^5 expansions unbounded.
        let many: Vec<String> = (0..7)
            .map(|i| format!("{{1,{}}}", i + 1).repeat(200))
            .collect();
        let pairs: Vec<((u64, u64), &str)> = many
            .iter()
            .enumerate()
            .map(|(i, t)| ((1, i as u64), t.as_str()))
            .collect();
        let t = texts(&pairs);
        let start = std::time::Instant::now();
        let shown = t.shown("{1,0}").unwrap();
        assert!(shown.len() <= MAX_LEN, "{}", shown.len());
        assert!(start.elapsed().as_secs() < 2);
    }

    #[test]
    fn comments_nest_as_the_game_reads_them() {
        assert_eq!(clean("a (b (c) d)"), "a (b d)");
        assert_eq!(clean("x \\(y\\) (z"), "x (y) (z");
        assert_eq!(clean("(only a comment)"), "");
    }

    #[test]
    fn plain_files_merge_and_diffs_patch_in_order() {
        let mut s = Stack::new(true);
        s.add(
            br#"<language id="44"><page id="7"><t id="1">One</t><t id="2">Two</t></page></language>"#,
            "t/0001-l044.xml",
            None,
        );
        s.add(
            br#"<diff><replace sel="/language/page[@id='7']/t[@id='2']/text()">Deux</replace>
                <add sel="/language"><page id="8"><t id="1">{7,2} and {7,1}</t></page></add></diff>"#,
            "extensions/fr/t/0001-l044.xml",
            Some("fr"),
        );
        s.add(
            br#"<language><page id="7"><t id="3">Three</t></page></language>"#,
            "extensions/more/t/0001-l044.xml",
            Some("more"),
        );
        let t = s.finish();
        assert_eq!(t.shown("{8,1}").as_deref(), Some("Deux and One"));
        assert_eq!(t.shown("{7,3}").as_deref(), Some("Three"));
        let two = t.by_key.get(&(7, 2)).unwrap();
        assert_eq!(two.extension.as_deref(), Some("fr"));
        assert_eq!(two.file, "extensions/fr/t/0001-l044.xml");
        assert_eq!(t.by_key.get(&(7, 1)).unwrap().extension, None);
    }
}
