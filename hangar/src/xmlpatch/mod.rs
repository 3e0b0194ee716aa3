//! X4 `<diff>` patches: the game's way for an extension to change a file of the game or of
//! another extension (`<add>`, `<replace>`, `<remove>`, each with an XPath `sel`). One model of
//! the operations ([`Op`]) serves the diff writer ([`diff`]), the applier ([`apply`]), the mod
//! check's `sel` test and the conflict finder.

mod apply;
mod diff;
pub mod tree;
pub mod xpath;

pub use apply::{apply, apply_one, select_one, Failure};
pub use diff::{diff, sel_of};
pub use tree::{Doc, Id};

use crate::error::{Error, ErrorKind, Result};
use tree::Kind;

/// Where `<add>` puts its elements, relative to the one node its `sel` selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pos {
    /// Last children of it (the default).
    Append,
    /// First children of it.
    Prepend,
    /// Siblings just before it.
    Before,
    /// Siblings just after it.
    After,
}

impl Pos {
    fn name(self) -> Option<&'static str> {
        match self {
            Pos::Append => None,
            Pos::Prepend => Some("prepend"),
            Pos::Before => Some("before"),
            Pos::After => Some("after"),
        }
    }
}

/// One operation of a patch. The elements an operation carries are nodes of the patch's own
/// document ([`Patch::store`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// `<add sel pos>elements</add>`, or with `type="@name"` an attribute `name` set to `value`.
    Add {
        sel: String,
        pos: Pos,
        attr: Option<String>,
        value: String,
        nodes: Vec<Id>,
    },
    /// `<replace sel>`: an attribute's or a text's new `value` (`sel` ends in `/@name` or
    /// `text()`), or the one element that takes the selected element's place.
    Replace {
        sel: String,
        value: String,
        nodes: Vec<Id>,
    },
    /// `<remove sel>`: an element, an attribute or a text.
    Remove { sel: String },
}

impl Op {
    pub fn sel(&self) -> &str {
        match self {
            Op::Add { sel, .. } | Op::Replace { sel, .. } | Op::Remove { sel } => sel,
        }
    }

    pub fn tag(&self) -> &'static str {
        match self {
            Op::Add { .. } => "add",
            Op::Replace { .. } => "replace",
            Op::Remove { .. } => "remove",
        }
    }
}

/// A `<diff>` patch: its operations in order, and the document holding the elements they carry.
#[derive(Debug, Clone)]
pub struct Patch {
    pub store: Doc,
    pub ops: Vec<Op>,
    /// Operations marked `silent` (the game logs nothing when they fail), by index.
    pub silent: Vec<bool>,
    /// Namespaces declared on `<diff>`.
    pub ns: Vec<(String, String)>,
}

impl Patch {
    pub fn new() -> Patch {
        Patch {
            store: Doc {
                nodes: vec![tree::Node {
                    kind: Kind::Document,
                    parent: None,
                    children: Vec::new(),
                }],
            },
            ops: Vec::new(),
            silent: Vec::new(),
            ns: Vec::new(),
        }
    }

    /// The patch a document holds; an error when its root is not `<diff>`.
    pub fn from_doc(doc: Doc) -> Result<Patch> {
        let root = doc.root().ok_or_else(|| bad("the patch has no element"))?;
        let e = doc
            .element(root)
            .ok_or_else(|| bad("the patch has no element"))?;
        if e.name != "diff" {
            return Err(bad(format!("the patch's root is <{}>, not <diff>", e.name)));
        }
        let ns = e.ns.clone();
        let mut ops = Vec::new();
        let mut silent = Vec::new();
        for (i, id) in doc.elements(root).enumerate() {
            let Some(e) = doc.element(id) else { continue };
            let sel = e
                .attr("sel")
                .ok_or_else(|| bad(format!("operation {} <{}> has no sel", i + 1, e.name)))?
                .to_string();
            let nodes: Vec<Id> = doc.elements(id).collect();
            let value = doc.own_text(id);
            let op = match e.name.as_str() {
                "add" => Op::Add {
                    sel,
                    pos: match e.attr("pos") {
                        None | Some("append") => Pos::Append,
                        Some("prepend") => Pos::Prepend,
                        Some("before") => Pos::Before,
                        Some("after") => Pos::After,
                        Some(p) => {
                            return Err(bad(format!(
                            "operation {} <add> has pos=\"{p}\" (append, prepend, before or after)",
                            i + 1
                        )))
                        }
                    },
                    attr: e
                        .attr("type")
                        .and_then(|t| t.strip_prefix('@'))
                        .map(str::to_string),
                    value,
                    nodes,
                },
                "replace" => Op::Replace { sel, value, nodes },
                "remove" => Op::Remove { sel },
                other => {
                    return Err(bad(format!(
                        "operation {} is <{other}> (add, replace or remove)",
                        i + 1
                    )))
                }
            };
            silent.push(e.attr("silent").is_some_and(|v| v != "false" && v != "0"));
            ops.push(op);
        }
        Ok(Patch {
            store: doc,
            ops,
            silent,
            ns,
        })
    }

    /// The patch as XML text, one operation a line.
    pub fn to_xml(&self) -> String {
        let mut s = String::from("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<diff");
        for (p, uri) in &self.ns {
            let name = if p.is_empty() {
                "xmlns".to_string()
            } else {
                format!("xmlns:{p}")
            };
            tree::push_attr(&mut s, &name, uri);
        }
        s.push_str(">\n");
        for op in &self.ops {
            s.push_str("  <");
            s.push_str(op.tag());
            tree::push_attr(&mut s, "sel", op.sel());
            let (value, nodes) = match op {
                Op::Add {
                    pos,
                    attr,
                    value,
                    nodes,
                    ..
                } => {
                    if let Some(a) = attr {
                        tree::push_attr(&mut s, "type", &format!("@{a}"));
                    } else if let Some(p) = pos.name() {
                        tree::push_attr(&mut s, "pos", p);
                    }
                    (value.as_str(), nodes.as_slice())
                }
                Op::Replace { value, nodes, .. } => (value.as_str(), nodes.as_slice()),
                Op::Remove { .. } => ("", &[][..]),
            };
            if !nodes.is_empty() {
                s.push('>');
                for &n in nodes {
                    s.push_str("\n    ");
                    self.store.write(n, &mut s);
                }
                s.push_str("\n  </");
                s.push_str(op.tag());
                s.push_str(">\n");
            } else if value.is_empty() {
                s.push_str("/>\n");
            } else {
                s.push('>');
                s.push_str(&tree::text_escaped(value));
                s.push_str("</");
                s.push_str(op.tag());
                s.push_str(">\n");
            }
        }
        s.push_str("</diff>\n");
        s
    }
}

impl Default for Patch {
    fn default() -> Self {
        Patch::new()
    }
}

fn bad(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::Invalid, None, "diff", message)
}

/// An XML file's bytes read into a [`Doc`] (with the mod check's limits on size and depth): UTF-8,
/// UTF-16 with its byte-order mark, or a declared Latin-1 / Windows-1252; an internal DTD read.
pub fn read(bytes: &[u8]) -> Result<Doc> {
    let refused = |line: Option<u32>, message: String| {
        let at = line.map(|l| format!("line {l}: ")).unwrap_or_default();
        Error::new(ErrorKind::Invalid, None, "", format!("{at}{message}"))
    };
    let text = decode(bytes).map_err(|r| refused(r.line, r.message))?;
    let doc = crate::xml::parse(&text).map_err(|r| refused(r.line, r.message))?;
    Ok(Doc::from_roxml(&doc))
}

/// The text of an XML file as its bytes and declaration say.
fn decode(bytes: &[u8]) -> std::result::Result<String, crate::xml::Refused> {
    let utf16 = |le: bool, b: &[u8]| {
        let units: Vec<u16> = b
            .chunks_exact(2)
            .map(|c| match c {
                [x, y] if le => u16::from_le_bytes([*x, *y]),
                [x, y] => u16::from_be_bytes([*x, *y]),
                _ => 0,
            })
            .collect();
        String::from_utf16_lossy(&units)
    };
    if bytes.len() > crate::xml::MAX_BYTES {
        return crate::xml::text(bytes);
    }
    if let Some(b) = bytes.strip_prefix(b"\xff\xfe") {
        return Ok(strip_declaration_encoding(utf16(true, b)));
    }
    if let Some(b) = bytes.strip_prefix(b"\xfe\xff") {
        return Ok(strip_declaration_encoding(utf16(false, b)));
    }
    let head = String::from_utf8_lossy(bytes.get(..bytes.len().min(200)).unwrap_or_default())
        .to_ascii_lowercase();
    let declared = head
        .split("?>")
        .next()
        .filter(|d| d.trim_start().starts_with("<?xml"))
        .is_some_and(|d| {
            ["iso-8859-1", "latin1", "latin-1", "windows-1252", "cp1252"]
                .iter()
                .any(|e| d.contains(e))
        });
    if declared && std::str::from_utf8(bytes).is_err() {
        return Ok(bytes.iter().map(|&b| char::from(b)).collect());
    }
    crate::xml::text(bytes)
}

/// A UTF-16 file's text: its declaration's `encoding` no longer says what the text is in.
fn strip_declaration_encoding(t: String) -> String {
    match t.strip_prefix("<?xml").and_then(|r| r.split_once("?>")) {
        Some((_, rest)) => format!("<?xml version=\"1.0\"?>{rest}"),
        None => t,
    }
}

/// `hangar diff`: the patch that turns the XML `base` into `edited`, as XML text.
pub fn diff_xml(base: &[u8], edited: &[u8]) -> Result<String> {
    diff_xml_counted(base, edited).map(|d| d.xml)
}

/// What `hangar diff` made: the patch's XML text and the number of operations (`<add>`,
/// `<replace>`, `<remove>`) it holds.
#[derive(Debug)]
pub struct Diffed {
    pub xml: String,
    pub ops: usize,
}

/// [`diff_xml`], with the count of the operations written (counted from the patch, not from its
/// text: an `<add>` of elements spans several lines).
pub fn diff_xml_counted(base: &[u8], edited: &[u8]) -> Result<Diffed> {
    let b = read(base).map_err(|e| in_what(e, "base"))?;
    let e = read(edited).map_err(|e| in_what(e, "edited"))?;
    let patch = diff(&b, &e)?;
    Ok(Diffed {
        xml: patch.to_xml(),
        ops: patch.ops.len(),
    })
}

/// What `hangar patch` made: the patched document's XML text, and the operations that failed.
#[derive(Debug)]
pub struct Patched {
    pub xml: String,
    pub ops: usize,
    pub failures: Vec<Failure>,
}

/// `hangar patch`: the XML `base` with the `<diff>` patch `patch` applied as the game applies
/// it (a failing operation is skipped and reported, the others applied).
pub fn patch_xml(base: &[u8], patch: &[u8]) -> Result<Patched> {
    let mut doc = read(base).map_err(|e| in_what(e, "base"))?;
    let p = Patch::from_doc(read(patch).map_err(|e| in_what(e, "patch"))?)?;
    let failures = apply(&mut doc, &p);
    Ok(Patched {
        xml: doc.to_xml(),
        ops: p.ops.len(),
        failures,
    })
}

fn in_what(mut e: Error, what: &str) -> Error {
    e.message = format!("the {what} file: {}", e.message);
    e
}

/// Writes an XML output whole or not at all; a device (`/dev/stdout`, `/dev/null`) is written
/// straight, never replaced.
pub fn write_xml(path: &std::path::Path, text: &str) -> Result<()> {
    let device = std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir());
    if device {
        return std::fs::write(path, text).map_err(|e| Error::io(path, e));
    }
    crate::io::write_output(path, text.as_bytes())
}

/// A component's files as written (the XML last) with the XML made a patch against the game's
/// XML `original` (`convert --patch`, the Blender export's "write changes as a patch").
pub fn into_patch(
    files: &mut [(std::path::PathBuf, Vec<u8>)],
    original: &std::path::Path,
) -> Result<()> {
    if let Some((_, xml)) = files.last_mut() {
        // The original may be a file or `GAME::path` inside a game's catalogs.
        let base = match original.to_str().and_then(crate::vfs::split_spec) {
            Some((game, inside)) => crate::vfs::GameView::open(&game)?.read(inside)?,
            None => crate::io::read_input(original)?,
        };
        *xml = diff_xml(&base, xml)
            .map_err(|e| e.in_file(original))?
            .into_bytes();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = r#"<macros>
  <macro name="ship_a" class="ship_s">
    <properties><hull max="100"/><software><software ware="a"/><software ware="b"/></software></properties>
  </macro>
  <macro name="ship_b" class="ship_s"><properties><hull max="200"/></properties></macro>
</macros>"#;

    fn patch_of(edited: &str) -> String {
        diff_xml(BASE.as_bytes(), edited.as_bytes()).unwrap()
    }

    #[test]
    fn the_count_is_of_the_operations_written() {
        // An <add> of an element spans three lines (its closing tag among them): counted once.
        let edited = BASE.replace(r#"max="200""#, r#"max="201""#).replace(
            r#"<software ware="b"/>"#,
            r#"<software ware="b"/><software ware="c"/>"#,
        );
        let d = diff_xml_counted(BASE.as_bytes(), edited.as_bytes()).unwrap();
        assert_eq!(d.ops, 2);
        let tags = ["<add ", "<replace ", "<remove "];
        let written: usize = tags.iter().map(|t| d.xml.matches(t).count()).sum();
        assert_eq!(written, 2);
        assert_eq!(d.xml.matches("\n  <").count(), 3);
        assert_eq!(d.xml, diff_xml(BASE.as_bytes(), edited.as_bytes()).unwrap());
    }

    #[test]
    fn one_changed_attribute_is_one_readable_replace() {
        let p = patch_of(&BASE.replace(r#"max="200""#, r#"max="250""#));
        assert_eq!(
            p,
            "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<diff>\n  \
             <replace sel=\"//macro[@name='ship_b']/properties/hull/@max\">250</replace>\n</diff>\n"
        );
    }

    #[test]
    fn new_attributes_and_elements_are_adds_at_their_place() {
        let edited = BASE
            .replace(r#"<hull max="100"/>"#, r#"<hull max="100" min="1"/>"#)
            .replace(
                r#"<software ware="a"/>"#,
                r#"<software ware="z"/><software ware="a"/>"#,
            );
        let p = patch_of(&edited);
        assert!(p.contains(
            "<add sel=\"//macro[@name='ship_a']/properties/hull\" type=\"@min\">1</add>"
        ));
        assert!(
            p.contains("<add sel=\"//macro[@name='ship_a']/properties/software\" pos=\"prepend\">")
        );
        let done = patch_xml(BASE.as_bytes(), p.as_bytes()).unwrap();
        assert!(done.failures.is_empty());
        assert_eq!(done.ops, 2);
    }

    #[test]
    fn a_removed_element_without_a_name_is_named_by_an_attribute() {
        let p = patch_of(&BASE.replace(r#"<software ware="b"/>"#, ""));
        assert!(p.contains(
            "<remove sel=\"//macro[@name='ship_a']/properties/software/software[@ware='b']\"/>"
        ));
    }

    #[test]
    fn a_failing_operation_is_named_with_why() {
        let patch = r#"<diff><replace sel="//macro/@class">x</replace>
            <remove sel="//macro[@name='none']"/><add sel="/macros" pos="prepend"><macro name="c"/></add></diff>"#;
        let done = patch_xml(BASE.as_bytes(), patch.as_bytes()).unwrap();
        let why: Vec<String> = done.failures.iter().map(|f| f.to_string()).collect();
        assert_eq!(
            why,
            [
                "operation 1 <replace sel=\"//macro/@class\">: selects 2 nodes",
                "operation 2 <remove sel=\"//macro[@name='none']\">: selects nothing"
            ]
        );
        assert!(done.xml.contains("<macros><macro name=\"c\"/>"));
    }

    #[test]
    fn a_different_root_is_refused() {
        assert!(diff_xml(BASE.as_bytes(), b"<components/>").is_err());
    }
}
