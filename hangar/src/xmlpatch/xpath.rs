//! The XPath a diff patch's `sel` is written in, as far as patches use it: paths of `/` and `//`
//! steps over element names, `*`, `@attr`, `text()`, `.` and `..`, with predicates of
//! comparisons, `and`, `or`, `not()`, positions, `last()`, `contains()`, `starts-with()` and
//! `count()`. What is past that is `Unsupported`: the caller does not judge such a `sel`.
//! It reads a [`Doc`], the tree patches change, so an applier and a checker select alike.

use super::tree::{Doc, Id, Kind, DOCUMENT};

/// A `sel` the evaluator does not read.
#[derive(Debug, PartialEq, Eq)]
pub struct Unsupported;

type R<T> = Result<T, Unsupported>;

/// Deepest nesting of predicates and parentheses read.
const MAX_NESTING: usize = 32;

/// What a step selects: an element (or the document node), a text node or a comment, or an
/// element's attribute (by its place among the element's attributes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Item {
    Node(Id),
    Attr(Id, usize),
}

impl Item {
    fn string(&self, doc: &Doc) -> String {
        match *self {
            Item::Attr(n, i) => doc
                .element(n)
                .and_then(|e| e.attrs.get(i))
                .map(|a| a.1.clone())
                .unwrap_or_default(),
            Item::Node(n) => doc
                .descendants(n)
                .into_iter()
                .filter_map(|d| match doc.node(d).map(|x| &x.kind) {
                    Some(Kind::Text(t)) => Some(t.as_str()),
                    _ => None,
                })
                .collect(),
        }
    }
}

enum Val {
    Items(Vec<Item>),
    Str(String),
    Num(f64),
    Bool(bool),
}

impl Val {
    fn truth(&self) -> bool {
        match self {
            Val::Items(v) => !v.is_empty(),
            Val::Str(s) => !s.is_empty(),
            Val::Num(n) => *n != 0.0 && !n.is_nan(),
            Val::Bool(b) => *b,
        }
    }

    fn strings(&self, doc: &Doc) -> Vec<String> {
        match self {
            Val::Items(v) => v.iter().map(|i| i.string(doc)).collect(),
            Val::Str(s) => vec![s.clone()],
            Val::Num(n) => vec![num_text(*n)],
            Val::Bool(b) => vec![b.to_string()],
        }
    }

    fn string(&self, doc: &Doc) -> String {
        self.strings(doc).into_iter().next().unwrap_or_default()
    }
}

fn num_text(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        n.to_string()
    }
}

/// How many items `sel` selects in `doc`.
pub fn count(doc: &Doc, sel: &str) -> R<usize> {
    select(doc, sel).map(|v| v.len())
}

/// What `sel` selects in `doc`, in document order of the steps.
pub fn select(doc: &Doc, sel: &str) -> R<Vec<Item>> {
    let mut p = Parser {
        s: sel.as_bytes(),
        at: 0,
        depth: 0,
    };
    let path = p.path()?;
    p.ws();
    if p.at != p.s.len() {
        return Err(Unsupported);
    }
    let start = [Item::Node(DOCUMENT)];
    eval_path(&path, &start, doc)
}

#[derive(Debug)]
enum Test {
    Name(String),
    AnyElement,
    Attr(String),
    AnyAttr,
    Text,
    AnyNode,
    SelfNode,
    Parent,
}

#[derive(Debug)]
struct Step {
    descendants: bool,
    test: Test,
    preds: Vec<Expr>,
}

#[derive(Debug)]
struct Path {
    absolute: bool,
    steps: Vec<Step>,
}

#[derive(Debug)]
enum Expr {
    Or(Box<Expr>, Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Cmp(Box<Expr>, String, Box<Expr>),
    Str(String),
    Num(f64),
    Path(Path),
    Call(String, Vec<Expr>),
}

struct Parser<'s> {
    s: &'s [u8],
    at: usize,
    depth: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.s.get(self.at).is_some_and(|c| c.is_ascii_whitespace()) {
            self.at += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.at).copied()
    }

    fn eat(&mut self, t: &str) -> bool {
        self.ws();
        if self.s.get(self.at..self.at + t.len()) == Some(t.as_bytes()) {
            self.at += t.len();
            true
        } else {
            false
        }
    }

    fn name(&mut self) -> Option<String> {
        self.ws();
        let start = self.at;
        while self.peek().is_some_and(|c| {
            c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.' | b':') || c >= 0x80
        }) {
            self.at += 1;
        }
        let n = std::str::from_utf8(self.s.get(start..self.at)?).ok()?;
        (!n.is_empty() && n != ".")
            .then(|| n.to_string())
            .or_else(|| {
                self.at = start;
                None
            })
    }

    fn path(&mut self) -> R<Path> {
        self.ws();
        let mut steps = Vec::new();
        let absolute = self.peek() == Some(b'/');
        let mut descendants = false;
        if absolute {
            descendants = self.eat("//") || {
                self.eat("/");
                false
            };
            self.ws();
            if self.peek().is_none() || self.peek() == Some(b']') {
                return Ok(Path { absolute, steps });
            }
        }
        loop {
            steps.push(self.step(descendants)?);
            if self.eat("//") {
                descendants = true;
            } else if self.eat("/") {
                descendants = false;
            } else {
                return Ok(Path { absolute, steps });
            }
        }
    }

    fn step(&mut self, descendants: bool) -> R<Step> {
        self.ws();
        let test = if self.eat("..") {
            Test::Parent
        } else if self.eat(".") {
            Test::SelfNode
        } else if self.eat("@*") {
            Test::AnyAttr
        } else if self.eat("@") {
            Test::Attr(self.name().ok_or(Unsupported)?)
        } else if self.eat("*") {
            Test::AnyElement
        } else if self.eat("text()") {
            Test::Text
        } else if self.eat("node()") {
            Test::AnyNode
        } else {
            let n = self.name().ok_or(Unsupported)?;
            if n.contains("::") || self.peek() == Some(b'(') {
                return Err(Unsupported);
            }
            Test::Name(n)
        };
        let mut preds = Vec::new();
        while self.eat("[") {
            self.depth += 1;
            if self.depth > MAX_NESTING {
                return Err(Unsupported);
            }
            preds.push(self.or()?);
            self.depth -= 1;
            if !self.eat("]") {
                return Err(Unsupported);
            }
        }
        Ok(Step {
            descendants,
            test,
            preds,
        })
    }

    fn or(&mut self) -> R<Expr> {
        let mut e = self.and()?;
        while self.keyword("or") {
            e = Expr::Or(Box::new(e), Box::new(self.and()?));
        }
        Ok(e)
    }

    fn and(&mut self) -> R<Expr> {
        let mut e = self.cmp()?;
        while self.keyword("and") {
            e = Expr::And(Box::new(e), Box::new(self.cmp()?));
        }
        Ok(e)
    }

    /// `word` as a keyword (followed by a space or a bracket), consumed when there.
    fn keyword(&mut self, word: &str) -> bool {
        self.ws();
        let end = self.at + word.len();
        let follows = self
            .s
            .get(end)
            .is_some_and(|c| c.is_ascii_whitespace() || *c == b'(');
        if self.s.get(self.at..end) == Some(word.as_bytes()) && follows {
            self.at = end;
            true
        } else {
            false
        }
    }

    fn cmp(&mut self) -> R<Expr> {
        let a = self.value()?;
        for op in ["!=", "<=", ">=", "=", "<", ">"] {
            if self.eat(op) {
                return Ok(Expr::Cmp(
                    Box::new(a),
                    op.to_string(),
                    Box::new(self.value()?),
                ));
            }
        }
        Ok(a)
    }

    fn value(&mut self) -> R<Expr> {
        self.ws();
        match self.peek() {
            Some(q @ (b'\'' | b'"')) => {
                let start = self.at + 1;
                let len = self
                    .s
                    .get(start..)
                    .ok_or(Unsupported)?
                    .iter()
                    .position(|&c| c == q)
                    .ok_or(Unsupported)?;
                self.at = start + len + 1;
                let t = std::str::from_utf8(self.s.get(start..start + len).ok_or(Unsupported)?)
                    .map_err(|_| Unsupported)?;
                Ok(Expr::Str(t.to_string()))
            }
            Some(c) if c.is_ascii_digit() || c == b'-' => {
                let start = self.at;
                self.at += 1;
                while self.peek().is_some_and(|c| c.is_ascii_digit() || c == b'.') {
                    self.at += 1;
                }
                let t = std::str::from_utf8(self.s.get(start..self.at).ok_or(Unsupported)?)
                    .map_err(|_| Unsupported)?;
                t.parse().map(Expr::Num).map_err(|_| Unsupported)
            }
            Some(b'(') => {
                self.at += 1;
                self.depth += 1;
                if self.depth > MAX_NESTING {
                    return Err(Unsupported);
                }
                let e = self.or()?;
                self.depth -= 1;
                if !self.eat(")") {
                    return Err(Unsupported);
                }
                Ok(e)
            }
            _ => {
                for f in [
                    "not",
                    "contains",
                    "starts-with",
                    "last",
                    "position",
                    "count",
                    "normalize-space",
                    "string",
                ] {
                    let save = self.at;
                    if self.eat(f) && self.eat("(") {
                        let mut args = Vec::new();
                        self.depth += 1;
                        if self.depth > MAX_NESTING {
                            return Err(Unsupported);
                        }
                        if !self.eat(")") {
                            loop {
                                args.push(self.or()?);
                                if self.eat(")") {
                                    break;
                                }
                                if !self.eat(",") {
                                    return Err(Unsupported);
                                }
                            }
                        }
                        self.depth -= 1;
                        return Ok(Expr::Call(f.to_string(), args));
                    }
                    self.at = save;
                }
                Ok(Expr::Path(self.path()?))
            }
        }
    }
}

fn eval_path(path: &Path, ctx: &[Item], doc: &Doc) -> R<Vec<Item>> {
    let mut items: Vec<Item> = if path.absolute {
        vec![Item::Node(DOCUMENT)]
    } else {
        ctx.to_vec()
    };
    for step in &path.steps {
        let mut next: Vec<Item> = Vec::new();
        for it in &items {
            let Item::Node(n) = *it else { continue };
            let bases: Vec<Id> = if step.descendants {
                doc.descendants(n)
                    .into_iter()
                    .filter(|&d| d == DOCUMENT || doc.is_element(d))
                    .collect()
            } else {
                vec![n]
            };
            let mut found: Vec<Item> = Vec::new();
            for b in bases {
                let kids = doc.children(b).iter().copied();
                match &step.test {
                    Test::Name(name) => found.extend(
                        kids.filter(|&c| doc.element(c).is_some_and(|e| &e.name == name))
                            .map(Item::Node),
                    ),
                    Test::AnyElement => found.extend(doc.elements(b).map(Item::Node)),
                    Test::Text => found.extend(
                        kids.filter(|&c| {
                            matches!(doc.node(c).map(|x| &x.kind), Some(Kind::Text(_)))
                        })
                        .map(Item::Node),
                    ),
                    Test::AnyNode => found.extend(kids.map(Item::Node)),
                    Test::Attr(name) => {
                        if let Some(i) = doc
                            .element(b)
                            .and_then(|e| e.attrs.iter().position(|a| &a.0 == name))
                        {
                            found.push(Item::Attr(b, i));
                        }
                    }
                    Test::AnyAttr => found.extend(
                        (0..doc.element(b).map_or(0, |e| e.attrs.len())).map(|i| Item::Attr(b, i)),
                    ),
                    Test::SelfNode => found.push(Item::Node(b)),
                    Test::Parent => found.extend(doc.parent(b).map(Item::Node)),
                }
            }
            for pred in &step.preds {
                let size = found.len();
                let mut kept = Vec::new();
                for (i, f) in found.into_iter().enumerate() {
                    let v = eval(pred, f, i + 1, size, doc)?;
                    let keep = match v {
                        Val::Num(n) => n == (i + 1) as f64,
                        other => other.truth(),
                    };
                    if keep {
                        kept.push(f);
                    }
                }
                found = kept;
            }
            next.extend(found);
        }
        // The same node reached twice (`//a//b`) counts once.
        let mut seen = std::collections::HashSet::new();
        next.retain(|it| seen.insert(*it));
        items = next;
    }
    Ok(items)
}

fn eval(e: &Expr, at: Item, pos: usize, size: usize, doc: &Doc) -> R<Val> {
    Ok(match e {
        Expr::Str(s) => Val::Str(s.clone()),
        Expr::Num(n) => Val::Num(*n),
        Expr::Path(p) => Val::Items(eval_path(p, &[at], doc)?),
        Expr::Or(a, b) => {
            Val::Bool(eval(a, at, pos, size, doc)?.truth() || eval(b, at, pos, size, doc)?.truth())
        }
        Expr::And(a, b) => {
            Val::Bool(eval(a, at, pos, size, doc)?.truth() && eval(b, at, pos, size, doc)?.truth())
        }
        Expr::Cmp(a, op, b) => {
            let (x, y) = (eval(a, at, pos, size, doc)?, eval(b, at, pos, size, doc)?);
            let numeric = matches!(x, Val::Num(_))
                || matches!(y, Val::Num(_))
                || !matches!(op.as_str(), "=" | "!=");
            let (xs, ys) = (x.strings(doc), y.strings(doc));
            let any = xs.iter().any(|p| {
                ys.iter().any(|q| {
                    if numeric {
                        let (Ok(p), Ok(q)) = (p.trim().parse::<f64>(), q.trim().parse::<f64>())
                        else {
                            return false;
                        };
                        match op.as_str() {
                            "=" => p == q,
                            "!=" => p != q,
                            "<" => p < q,
                            ">" => p > q,
                            "<=" => p <= q,
                            _ => p >= q,
                        }
                    } else if op == "=" {
                        p == q
                    } else {
                        p != q
                    }
                })
            });
            Val::Bool(any)
        }
        Expr::Call(f, args) => {
            let arg = |i: usize| -> R<Val> {
                match args.get(i) {
                    Some(a) => eval(a, at, pos, size, doc),
                    None => Ok(Val::Items(vec![at])),
                }
            };
            match f.as_str() {
                "not" => Val::Bool(!arg(0)?.truth()),
                "last" => Val::Num(size as f64),
                "position" => Val::Num(pos as f64),
                "count" => match arg(0)? {
                    Val::Items(v) => Val::Num(v.len() as f64),
                    _ => return Err(Unsupported),
                },
                "contains" => Val::Bool(arg(0)?.string(doc).contains(&arg(1)?.string(doc))),
                "starts-with" => Val::Bool(arg(0)?.string(doc).starts_with(&arg(1)?.string(doc))),
                "normalize-space" => Val::Str(
                    arg(0)?
                        .string(doc)
                        .split_whitespace()
                        .collect::<Vec<_>>()
                        .join(" "),
                ),
                "string" => Val::Str(arg(0)?.string(doc)),
                _ => return Err(Unsupported),
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const WARES: &str = r#"<wares><ware id="a" tags="x"><production method="default"><primary><ware ware="e"/></primary></production></ware>
<ware id="b"><production method="omicron"/><production method="default"/></ware><n>5</n></wares>"#;

    fn n(sel: &str) -> R<usize> {
        let doc = crate::xml::parse(WARES).unwrap();
        count(&Doc::from_roxml(&doc), sel)
    }

    #[test]
    fn patch_selectors_select_what_they_name() {
        assert_eq!(n("/wares"), Ok(1));
        assert_eq!(
            n("//ware[@id=\"a\"]/production[@method=\"default\"]/primary"),
            Ok(1)
        );
        assert_eq!(n("/*/ware[@id='a']/@tags"), Ok(1));
        assert_eq!(n("/*/ware[@id='b']/@tags"), Ok(0));
        assert_eq!(n("//ware"), Ok(3));
        assert_eq!(n("/wares/ware[@id='b']/production[2]"), Ok(1));
        assert_eq!(n("/wares/ware[last()]"), Ok(1));
        assert_eq!(n("/wares/ware[@id='a' and @tags='x']"), Ok(1));
        assert_eq!(n("/wares/ware[@id='q' or not(@tags)]"), Ok(1));
        assert_eq!(n("/wares/ware[production/@method='omicron']"), Ok(1));
        assert_eq!(n("/wares/ware[contains(@tags, 'x')]"), Ok(1));
        assert_eq!(n("/wares/n[text()='5']"), Ok(1));
        assert_eq!(n("/wares/n[. > 4]"), Ok(1));
        assert_eq!(n("/wares/ware[count(production) = 2]"), Ok(1));
        assert_eq!(n("/wares/nothing"), Ok(0));
    }

    #[test]
    fn what_is_past_the_subset_is_unsupported() {
        assert_eq!(n("/wares/ware[@id='a'"), Err(Unsupported));
        assert_eq!(n("//ancestor::ware"), Err(Unsupported));
        assert_eq!(
            n("/wares/ware[translate(@id,'a','b')='b']"),
            Err(Unsupported)
        );
        let deep = format!("/wares/ware{}{}", "[(".repeat(100), ")]".repeat(100));
        assert_eq!(n(&deep), Err(Unsupported));
    }
}
