//! The XPath a diff patch's `sel` is written in, as far as patches use it: paths of `/` and `//`
//! steps over element names, `*`, `@attr`, `text()`, `.` and `..`, with predicates of
//! comparisons, `and`, `or`, `not()`, positions, `last()`, `contains()`, `starts-with()` and
//! `count()`. What is past that is `Unsupported`: the caller does not judge such a `sel`.

use roxmltree::{Document, Node};

/// A `sel` the evaluator does not read.
#[derive(Debug, PartialEq, Eq)]
pub struct Unsupported;

type R<T> = Result<T, Unsupported>;

/// Deepest nesting of predicates and parentheses read.
const MAX_NESTING: usize = 32;

/// What a step selects: an element (or the document root), an attribute, a text node.
#[derive(Clone, Copy)]
enum Item<'a, 'i> {
    Node(Node<'a, 'i>),
    Attr(Node<'a, 'i>, &'a str),
}

impl<'a, 'i> Item<'a, 'i> {
    fn string(&self) -> String {
        match self {
            Item::Attr(n, name) => n.attribute(*name).unwrap_or_default().to_string(),
            Item::Node(n) if n.is_text() => n.text().unwrap_or_default().to_string(),
            Item::Node(n) => n
                .descendants()
                .filter(|d| d.is_text())
                .filter_map(|d| d.text())
                .collect(),
        }
    }
}

enum Val<'a, 'i> {
    Items(Vec<Item<'a, 'i>>),
    Str(String),
    Num(f64),
    Bool(bool),
}

impl Val<'_, '_> {
    fn truth(&self) -> bool {
        match self {
            Val::Items(v) => !v.is_empty(),
            Val::Str(s) => !s.is_empty(),
            Val::Num(n) => *n != 0.0 && !n.is_nan(),
            Val::Bool(b) => *b,
        }
    }

    fn strings(&self) -> Vec<String> {
        match self {
            Val::Items(v) => v.iter().map(Item::string).collect(),
            Val::Str(s) => vec![s.clone()],
            Val::Num(n) => vec![num_text(*n)],
            Val::Bool(b) => vec![b.to_string()],
        }
    }

    fn string(&self) -> String {
        self.strings().into_iter().next().unwrap_or_default()
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
pub fn count(doc: &Document<'_>, sel: &str) -> R<usize> {
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
    let start = [Item::Node(doc.root())];
    Ok(eval_path(&path, &start, doc)?.len())
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

fn eval_path<'a, 'i>(
    path: &Path,
    ctx: &[Item<'a, 'i>],
    doc: &'a Document<'i>,
) -> R<Vec<Item<'a, 'i>>> {
    let mut items: Vec<Item<'a, 'i>> = if path.absolute {
        vec![Item::Node(doc.root())]
    } else {
        ctx.to_vec()
    };
    for step in &path.steps {
        let mut next: Vec<Item<'a, 'i>> = Vec::new();
        for it in &items {
            let Item::Node(n) = *it else { continue };
            let bases: Vec<Node<'a, 'i>> = if step.descendants {
                n.descendants()
                    .filter(|d| d.is_element() || d.is_root())
                    .collect()
            } else {
                vec![n]
            };
            let mut found: Vec<Item<'a, 'i>> = Vec::new();
            for b in bases {
                match &step.test {
                    Test::Name(name) => found.extend(
                        b.children()
                            .filter(|c| c.is_element() && c.tag_name().name() == name)
                            .map(Item::Node),
                    ),
                    Test::AnyElement => {
                        found.extend(b.children().filter(|c| c.is_element()).map(Item::Node))
                    }
                    Test::Text => {
                        found.extend(b.children().filter(|c| c.is_text()).map(Item::Node))
                    }
                    Test::AnyNode => found.extend(b.children().map(Item::Node)),
                    Test::Attr(name) => {
                        if let Some(a) = b.attributes().find(|a| a.name() == name) {
                            found.push(Item::Attr(b, a.name()));
                        }
                    }
                    Test::AnyAttr => found.extend(b.attributes().map(|a| Item::Attr(b, a.name()))),
                    Test::SelfNode => found.push(Item::Node(b)),
                    Test::Parent => found.extend(b.parent().map(Item::Node)),
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
        next.retain(|it| {
            seen.insert(match it {
                Item::Node(n) => (n.id(), ""),
                Item::Attr(n, a) => (n.id(), *a),
            })
        });
        items = next;
    }
    Ok(items)
}

fn eval<'a, 'i>(
    e: &Expr,
    at: Item<'a, 'i>,
    pos: usize,
    size: usize,
    doc: &'a Document<'i>,
) -> R<Val<'a, 'i>> {
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
            let (xs, ys) = (x.strings(), y.strings());
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
            let arg = |i: usize| -> R<Val<'a, 'i>> {
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
                "contains" => Val::Bool(arg(0)?.string().contains(&arg(1)?.string())),
                "starts-with" => Val::Bool(arg(0)?.string().starts_with(&arg(1)?.string())),
                "normalize-space" => Val::Str(
                    arg(0)?
                        .string()
                        .split_whitespace()
                        .collect::<Vec<_>>()
                        .join(" "),
                ),
                "string" => Val::Str(arg(0)?.string()),
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
        let doc = Document::parse(WARES).unwrap();
        count(&doc, sel)
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
