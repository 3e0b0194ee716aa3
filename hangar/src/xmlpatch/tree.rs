//! An XML document that patches can change: an arena of nodes (the document, elements, text,
//! comments) read from roxmltree and written back as text. Names are kept as written
//! (`prefix:local`), as a patch's `sel` names them.

use crate::formats::x4xml::escaped;

/// A node's place in its document's arena.
pub type Id = usize;

/// An element: its name as written, its attributes in order, the namespaces it declares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Element {
    pub name: String,
    pub attrs: Vec<(String, String)>,
    /// `(prefix, uri)` declared on this element (`""` for the default namespace).
    pub ns: Vec<(String, String)>,
}

impl Element {
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Sets `name` to `value`: in place when present, else last.
    pub fn set(&mut self, name: &str, value: &str) {
        match self.attrs.iter_mut().find(|(k, _)| k == name) {
            Some(a) => a.1 = value.to_string(),
            None => self.attrs.push((name.to_string(), value.to_string())),
        }
    }
}

#[derive(Debug, Clone)]
pub enum Kind {
    Document,
    Element(Element),
    Text(String),
    Comment(String),
}

#[derive(Debug, Clone)]
pub struct Node {
    pub kind: Kind,
    pub parent: Option<Id>,
    pub children: Vec<Id>,
}

/// A document: node 0 is the document node, its one element child the root element.
#[derive(Debug, Clone)]
pub struct Doc {
    pub nodes: Vec<Node>,
}

/// The document node's id.
pub const DOCUMENT: Id = 0;

impl Doc {
    /// The document of a parsed roxmltree tree.
    pub fn from_roxml(src: &roxmltree::Document<'_>) -> Doc {
        let mut doc = Doc {
            nodes: vec![Node {
                kind: Kind::Document,
                parent: None,
                children: Vec::new(),
            }],
        };
        for c in src.root().children() {
            doc.copy_in(c, DOCUMENT);
        }
        doc
    }

    /// Copies the roxmltree node `n` (and what it holds) as the last child of `parent`.
    fn copy_in(&mut self, n: roxmltree::Node<'_, '_>, parent: Id) {
        // An explicit stack: a document's depth is bounded by its parser, not by this walk.
        let mut todo = vec![(n, parent)];
        while let Some((n, parent)) = todo.pop() {
            let kind = if n.is_element() {
                let qualified = |ns: Option<&str>, local: &str| match ns
                    .and_then(|u| n.lookup_prefix(u))
                    .filter(|p| !p.is_empty())
                {
                    Some(p) => format!("{p}:{local}"),
                    None => local.to_string(),
                };
                let name = qualified(n.tag_name().namespace(), n.tag_name().name());
                let attrs = n
                    .attributes()
                    .map(|a| (qualified(a.namespace(), a.name()), a.value().to_string()))
                    .collect();
                let inherited: Vec<(Option<&str>, &str)> = n
                    .parent_element()
                    .map(|p| p.namespaces().map(|x| (x.name(), x.uri())).collect())
                    .unwrap_or_default();
                let ns = n
                    .namespaces()
                    .filter(|x| !inherited.contains(&(x.name(), x.uri())))
                    .filter(|x| x.name() != Some("xml"))
                    .map(|x| {
                        (
                            x.name().unwrap_or_default().to_string(),
                            x.uri().to_string(),
                        )
                    })
                    .collect();
                Kind::Element(Element { name, attrs, ns })
            } else if n.is_text() {
                Kind::Text(n.text().unwrap_or_default().to_string())
            } else if n.is_comment() {
                Kind::Comment(n.text().unwrap_or_default().to_string())
            } else {
                continue;
            };
            let id = self.push(kind, parent);
            for c in n.children().rev() {
                todo.push((c, id));
            }
        }
    }

    /// A new node, last child of `parent`.
    pub fn push(&mut self, kind: Kind, parent: Id) -> Id {
        let id = self.nodes.len();
        self.nodes.push(Node {
            kind,
            parent: Some(parent),
            children: Vec::new(),
        });
        if let Some(p) = self.nodes.get_mut(parent) {
            p.children.push(id);
        }
        id
    }

    pub fn node(&self, id: Id) -> Option<&Node> {
        self.nodes.get(id)
    }

    pub fn element(&self, id: Id) -> Option<&Element> {
        match self.nodes.get(id).map(|n| &n.kind) {
            Some(Kind::Element(e)) => Some(e),
            _ => None,
        }
    }

    pub fn element_mut(&mut self, id: Id) -> Option<&mut Element> {
        match self.nodes.get_mut(id).map(|n| &mut n.kind) {
            Some(Kind::Element(e)) => Some(e),
            _ => None,
        }
    }

    pub fn is_element(&self, id: Id) -> bool {
        self.element(id).is_some()
    }

    pub fn parent(&self, id: Id) -> Option<Id> {
        self.nodes.get(id).and_then(|n| n.parent)
    }

    pub fn children(&self, id: Id) -> &[Id] {
        self.nodes.get(id).map_or(&[], |n| n.children.as_slice())
    }

    /// The element children of `id`, in order.
    pub fn elements(&self, id: Id) -> impl Iterator<Item = Id> + '_ {
        self.children(id)
            .iter()
            .copied()
            .filter(|&c| self.is_element(c))
    }

    /// The root element.
    pub fn root(&self) -> Option<Id> {
        self.elements(DOCUMENT).next()
    }

    /// `id` and every node below it, in document order.
    pub fn descendants(&self, id: Id) -> Vec<Id> {
        let mut out = Vec::new();
        let mut todo = vec![id];
        while let Some(n) = todo.pop() {
            out.push(n);
            todo.extend(self.children(n).iter().rev());
        }
        out
    }

    /// The text of `id`'s own text children joined (an element's text content, without its
    /// elements').
    pub fn own_text(&self, id: Id) -> String {
        self.children(id)
            .iter()
            .filter_map(|&c| match self.node(c).map(|n| &n.kind) {
                Some(Kind::Text(t)) => Some(t.as_str()),
                _ => None,
            })
            .collect()
    }

    /// Takes `id` out of its parent (it stays in the arena, detached).
    pub fn detach(&mut self, id: Id) {
        if let Some(p) = self.parent(id) {
            if let Some(n) = self.nodes.get_mut(p) {
                n.children.retain(|&c| c != id);
            }
        }
        if let Some(n) = self.nodes.get_mut(id) {
            n.parent = None;
        }
    }

    /// Puts the detached node `id` among `parent`'s children at `index` (clamped).
    pub fn insert(&mut self, parent: Id, index: usize, id: Id) {
        if let Some(p) = self.nodes.get_mut(parent) {
            let at = index.min(p.children.len());
            p.children.insert(at, id);
        }
        if let Some(n) = self.nodes.get_mut(id) {
            n.parent = Some(parent);
        }
    }

    /// Where `id` is among its parent's children.
    pub fn index(&self, id: Id) -> Option<usize> {
        let p = self.parent(id)?;
        self.children(p).iter().position(|&c| c == id)
    }

    /// A copy of `from`'s node `id` and its subtree, detached in this document; its id.
    pub fn import(&mut self, from: &Doc, id: Id) -> Id {
        let top = self.nodes.len();
        let mut todo = vec![(id, None::<Id>)];
        while let Some((src, parent)) = todo.pop() {
            let Some(n) = from.node(src) else { continue };
            let new = self.nodes.len();
            self.nodes.push(Node {
                kind: n.kind.clone(),
                parent,
                children: Vec::new(),
            });
            if let Some(p) = parent.and_then(|p| self.nodes.get_mut(p)) {
                p.children.push(new);
            }
            for &c in n.children.iter().rev() {
                todo.push((c, Some(new)));
            }
        }
        // Children were pushed in reverse visiting order: put each list back in document order.
        for n in self.nodes.iter_mut().skip(top) {
            n.children.sort_unstable();
        }
        top
    }

    /// The document as XML text, with an XML declaration.
    pub fn to_xml(&self) -> String {
        let mut s = String::from("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n");
        for &c in self.children(DOCUMENT) {
            if matches!(self.node(c).map(|n| &n.kind), Some(Kind::Text(_))) {
                continue;
            }
            self.write(c, &mut s);
            s.push('\n');
        }
        s
    }

    /// `id` and its subtree as XML text.
    pub fn write(&self, id: Id, s: &mut String) {
        enum Step {
            Open(Id),
            Close(Id),
        }
        let mut todo = vec![Step::Open(id)];
        while let Some(step) = todo.pop() {
            match step {
                Step::Close(id) => {
                    if let Some(e) = self.element(id) {
                        s.push_str("</");
                        s.push_str(&e.name);
                        s.push('>');
                    }
                }
                Step::Open(id) => match self.node(id).map(|n| &n.kind) {
                    Some(Kind::Element(e)) => {
                        s.push('<');
                        s.push_str(&e.name);
                        for (p, uri) in &e.ns {
                            let name = if p.is_empty() {
                                "xmlns".to_string()
                            } else {
                                format!("xmlns:{p}")
                            };
                            push_attr(s, &name, uri);
                        }
                        for (k, v) in &e.attrs {
                            push_attr(s, k, v);
                        }
                        let kids = self.children(id);
                        if kids.is_empty() {
                            s.push_str("/>");
                        } else {
                            s.push('>');
                            todo.push(Step::Close(id));
                            todo.extend(kids.iter().rev().map(|&c| Step::Open(c)));
                        }
                    }
                    Some(Kind::Text(t)) => s.push_str(&text_escaped(t)),
                    Some(Kind::Comment(t)) => {
                        s.push_str("<!--");
                        s.push_str(&t.replace("--", "- -"));
                        s.push_str("-->");
                    }
                    _ => {}
                },
            }
        }
    }
}

/// ` name="value"`, the value escaped so that it reads back the same (line breaks and tabs too).
pub fn push_attr(s: &mut String, name: &str, value: &str) {
    s.push(' ');
    s.push_str(name);
    s.push_str("=\"");
    s.push_str(
        &escaped(value)
            .replace('\n', "&#10;")
            .replace('\r', "&#13;")
            .replace('\t', "&#9;"),
    );
    s.push('"');
}

/// Text content escaped so that it reads back the same.
pub fn text_escaped(t: &str) -> String {
    escaped(t).replace('\r', "&#13;")
}
