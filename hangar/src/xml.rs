//! XML read as the game reads it, the one way for the whole library (the mod check, conflicts,
//! patches, components, material and library files): with limits, so that a file too large,
//! nested too deep or whose entities expand too far is refused with a message, never parsed into a
//! tree that exhausts memory or a walk that exhausts the stack.

use roxmltree::{Document, Node, ParsingOptions};

/// Largest XML file read (the game's largest library, its text, is a few tens of MB).
pub const MAX_BYTES: usize = 128 << 20;
/// Deepest element nesting read (scripts nest a few dozen levels).
pub const MAX_DEPTH: usize = 256;
/// Most nodes one file may hold.
const MAX_NODES: u32 = 8_000_000;

/// Why an XML file was not read: the message and the line (from 1) where it went wrong.
#[derive(Debug)]
pub struct Refused {
    pub line: Option<u32>,
    pub message: String,
}

impl std::fmt::Display for Refused {
    /// `line N: message`, as errors elsewhere in the library give it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(l) => write!(f, "line {l}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

/// The text of an XML file: UTF-8 without its byte-order mark (other bytes replaced).
pub fn text(bytes: &[u8]) -> Result<String, Refused> {
    if bytes.len() > MAX_BYTES {
        return Err(Refused {
            line: None,
            message: format!(
                "{} bytes of XML, more than the {} MiB read: refused",
                bytes.len(),
                MAX_BYTES >> 20
            ),
        });
    }
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    Ok(String::from_utf8_lossy(bytes).into_owned())
}

/// `text` parsed as the game reads XML: the one parse of the library (mod check, conflicts,
/// patches, component, material and library files). A DOCTYPE is taken (X4's own libraries
/// begin `<!DOCTYPE icons SYSTEM "icons.dtd">`): its internal subset's entities are read and
/// expanded, nothing external is fetched (a reference to an external entity is an error), and
/// what the entities would expand to is bounded before parsing. Nesting is checked first (the
/// parser recurses once a level: a file nested thousands deep would overflow the stack).
pub fn parse(text: &str) -> Result<Document<'_>, Refused> {
    let dtd = doctype(text);
    let body = dtd.as_ref().map_or(0, |d| d.end);
    if let Some(line) = too_deep(text) {
        return Err(Refused {
            line: Some(line),
            message: format!("elements nested deeper than {MAX_DEPTH} levels: refused"),
        });
    }
    match &dtd {
        Some(d) => d.bounded(text.get(body..).unwrap_or_default())?,
        // A DOCTYPE this reading could not follow is one whose entities go unmeasured.
        None if doctype_at(text).is_some() && text.contains("<!ENTITY") => {
            return Err(Refused {
                line: None,
                message: "a DOCTYPE whose entities are not read: refused".into(),
            })
        }
        None => {}
    }
    let options = ParsingOptions {
        allow_dtd: true,
        nodes_limit: MAX_NODES,
    };
    let doc = Document::parse_with_options(text, options).map_err(|e| Refused {
        line: Some(e.pos().row),
        message: format!("not well-formed XML: {e}"),
    })?;
    // Elements an entity brought in nest below where it is named: the tree is measured too.
    if dtd.is_some_and(|d| d.entities.iter().any(|e| e.value.contains(['<', '&']))) {
        let deep = doc.descendants().find(|n| {
            n.is_element()
                && n.ancestors()
                    .filter(|a| a.is_element())
                    .nth(MAX_DEPTH)
                    .is_some()
        });
        if let Some(n) = deep {
            return Err(Refused {
                line: Some(line(&doc, n)),
                message: format!("elements nested deeper than {MAX_DEPTH} levels: refused"),
            });
        }
    }
    Ok(doc)
}

/// Most bytes the entities of a document may expand to, all references together.
const MAX_EXPANDED: u64 = 64 << 20;
/// Deepest chain of entities the parser follows (roxmltree refuses an 11th level).
const MAX_ENTITY_CHAIN: usize = 10;

/// One general entity of a DOCTYPE's internal subset: its name and replacement text.
struct Entity<'a> {
    name: &'a str,
    value: &'a str,
}

/// A document's DOCTYPE: where it ends and the general entities it declares.
struct Doctype<'a> {
    end: usize,
    entities: Vec<Entity<'a>>,
}

impl Doctype<'_> {
    /// Refuses a document whose entity references would expand past [`MAX_EXPANDED`] bytes
    /// (the "billion laughs": each level names the one below ten times) or nest elements past
    /// what the stack takes. The measure is an upper bound read from the declarations alone.
    fn bounded(&self, body: &str) -> Result<(), Refused> {
        let n = self.entities.len();
        let mut by_name = std::collections::HashMap::new();
        for (i, e) in self.entities.iter().enumerate() {
            by_name.entry(e.name).or_insert(i);
        }
        let find = |name: &str| by_name.get(name).copied();
        // size and depth of each entity, its references followed (a loop counts as unbounded).
        let mut size = vec![None::<(u64, usize)>; n];
        for _ in 0..=MAX_ENTITY_CHAIN {
            for i in 0..n {
                let value = self.entities[i].value;
                let mut total = (value.len() as u64, 0usize);
                let mut known = true;
                for name in references(value) {
                    match find(name).map(|j| size[j]) {
                        Some(Some((s, d))) => {
                            total.0 = total.0.saturating_add(s);
                            total.1 = total.1.max(d);
                        }
                        Some(None) => known = false,
                        None => {}
                    }
                }
                // Every '<' (or character reference) may open one element.
                let opens = value.matches(['<', '&']).count();
                size[i] = known.then_some((total.0, total.1.saturating_add(opens)));
            }
        }
        let mut expanded = 0u64;
        let mut deepest = 0usize;
        for name in references(body) {
            if let Some(j) = find(name) {
                let (s, d) = size[j].unwrap_or((u64::MAX, usize::MAX));
                expanded = expanded.saturating_add(s);
                deepest = deepest.max(d);
            }
        }
        if expanded > MAX_EXPANDED {
            return Err(Refused {
                line: None,
                message: format!(
                    "the DOCTYPE's entities expand to more than {} MiB (or refer to each other \
                     in a loop): refused",
                    MAX_EXPANDED >> 20
                ),
            });
        }
        if deepest > MAX_DEPTH {
            return Err(Refused {
                line: None,
                message: format!(
                    "the DOCTYPE's entities nest elements deeper than {MAX_DEPTH} levels: refused"
                ),
            });
        }
        Ok(())
    }
}

/// The names of the general entity references (`&name;`) in `text`, character references left out.
fn references(text: &str) -> impl Iterator<Item = &str> {
    text.split('&').skip(1).filter_map(|rest| {
        let name = rest.get(..rest.find(';')?)?;
        (!name.is_empty() && !name.starts_with('#') && !name.contains(char::is_whitespace))
            .then_some(name)
    })
}

/// The DOCTYPE of the prolog of `text`, read as roxmltree reads it; `None` without one (or
/// with one the parser will refuse anyway).
fn doctype(text: &str) -> Option<Doctype<'_>> {
    let b = text.as_bytes();
    let start = doctype_at(text)?;
    let mut i = start + 9;
    let spaces = |i: &mut usize| {
        while b.get(*i).is_some_and(u8::is_ascii_whitespace) {
            *i += 1;
        }
    };
    let token = |i: &mut usize| -> &str {
        let from = *i;
        while b
            .get(*i)
            .is_some_and(|c| !c.is_ascii_whitespace() && !b"[]>'\"".contains(c))
        {
            *i += 1;
        }
        text.get(from..*i).unwrap_or_default()
    };
    let quoted = |i: &mut usize| -> Option<&str> {
        let q = *b.get(*i).filter(|c| **c == b'"' || **c == b'\'')?;
        let from = *i + 1;
        let len = b.get(from..)?.iter().position(|&c| c == q)?;
        *i = from + len + 1;
        text.get(from..from + len)
    };
    let external = |i: &mut usize| -> Option<()> {
        let id = token(i);
        spaces(i);
        quoted(i)?;
        if id == "PUBLIC" {
            spaces(i);
            quoted(i)?;
        }
        Some(())
    };
    spaces(&mut i);
    token(&mut i);
    spaces(&mut i);
    if text.get(i..)?.starts_with("SYSTEM") || text.get(i..)?.starts_with("PUBLIC") {
        external(&mut i)?;
        spaces(&mut i);
    }
    let mut entities = Vec::new();
    match b.get(i)? {
        b'>' => {
            return Some(Doctype {
                end: i + 1,
                entities,
            })
        }
        b'[' => i += 1,
        _ => return None,
    }
    let skip_to = |i: &mut usize, what: &str| -> Option<()> {
        *i += text.get(*i..)?.find(what)? + what.len();
        Some(())
    };
    loop {
        spaces(&mut i);
        let rest = text.get(i..)?;
        if rest.starts_with("<!ENTITY") {
            i += 8;
            spaces(&mut i);
            let general = b.get(i) != Some(&b'%');
            if !general {
                i += 1;
                spaces(&mut i);
            }
            let name = token(&mut i);
            spaces(&mut i);
            if matches!(b.get(i), Some(b'"' | b'\'')) {
                let value = quoted(&mut i)?;
                if general {
                    entities.push(Entity { name, value });
                }
            } else {
                external(&mut i)?;
            }
            skip_to(&mut i, ">")?;
        } else if rest.starts_with("<!--") {
            skip_to(&mut i, "-->")?;
        } else if rest.starts_with("<?") {
            skip_to(&mut i, "?>")?;
        } else if rest.starts_with(']') {
            i += 1;
            spaces(&mut i);
            return (b.get(i) == Some(&b'>')).then_some(Doctype {
                end: i + 1,
                entities,
            });
        } else if rest.starts_with("<!") {
            skip_to(&mut i, ">")?;
        } else {
            return None;
        }
    }
}

/// Where the prolog's DOCTYPE starts, walked as the parser walks it (declarations, comments and
/// spaces before it); `None` when the document has none.
fn doctype_at(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    let mut i = 0;
    loop {
        while b.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        let rest = text.get(i..)?;
        if rest.starts_with("<!DOCTYPE") {
            return Some(i);
        } else if rest.starts_with("<?") {
            i += rest.find("?>")? + 2;
        } else if rest.starts_with("<!--") {
            i += rest.find("-->")? + 3;
        } else if rest.starts_with('\u{feff}') {
            i += 3;
        } else {
            return None;
        }
    }
}

/// The line of the first element nested deeper than [`MAX_DEPTH`], read from the bytes alone
/// (comments, CDATA, declarations and quoted attribute values skipped).
pub fn too_deep(text: &str) -> Option<u32> {
    let b = text.as_bytes();
    let find = |from: usize, what: &[u8]| -> usize {
        b.get(from..)
            .and_then(|rest| rest.windows(what.len()).position(|w| w == what))
            .map_or(b.len(), |i| from + i + what.len())
    };
    let mut depth = 0usize;
    let mut i = 0;
    while let Some(at) = b.get(i..).and_then(|r| r.iter().position(|&c| c == b'<')) {
        let start = i + at;
        let rest = b.get(start + 1..).unwrap_or_default();
        i = if rest.starts_with(b"!--") {
            find(start, b"-->")
        } else if rest.starts_with(b"![CDATA[") {
            find(start, b"]]>")
        } else if rest.starts_with(b"?") {
            find(start, b"?>")
        } else if rest.starts_with(b"!") {
            find(start, b">")
        } else if rest.starts_with(b"/") {
            depth = depth.saturating_sub(1);
            find(start, b">")
        } else {
            // An element's start tag: its end is the first '>' outside quotes.
            let mut quote = None;
            let mut j = start + 1;
            while let Some(&c) = b.get(j) {
                match (quote, c) {
                    (None, b'"' | b'\'') => quote = Some(c),
                    (Some(q), c) if c == q => quote = None,
                    (None, b'>') => break,
                    _ => {}
                }
                j += 1;
            }
            if b.get(j.wrapping_sub(1)) != Some(&b'/') {
                depth += 1;
                if depth > MAX_DEPTH {
                    let lines = b
                        .get(..start)
                        .unwrap_or_default()
                        .iter()
                        .filter(|&&c| c == b'\n')
                        .count();
                    return Some(u32::try_from(lines + 1).unwrap_or(u32::MAX));
                }
            }
            j + 1
        };
    }
    None
}

/// The line (from 1) where `n` starts.
pub fn line(doc: &Document<'_>, n: Node<'_, '_>) -> u32 {
    doc.text_pos_at(n.range().start).row
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deep_nesting_is_refused_with_its_line() {
        let deep = format!("{}{}", "<a>\n".repeat(300), "</a>".repeat(300));
        let e = parse(&deep).err().unwrap();
        assert_eq!(e.line, Some(MAX_DEPTH as u32 + 1));
        assert!(e.message.contains("nested deeper"));
        let ok = format!("{}{}", "<a>".repeat(200), "</a>".repeat(200));
        assert!(parse(&ok).is_ok());
        // Self-closed elements, comments, CDATA and quoted '>' do not nest.
        let flat = format!(
            "<r>{}</r>",
            "<a x=\"/>\"/><!-- <b> --><![CDATA[<c>]]><d></d>".repeat(1000)
        );
        assert!(parse(&flat).is_ok());
        // Far deeper than the parser's stack would take: refused before parsing.
        assert!(parse(&"<a>".repeat(100_000)).is_err());
    }

    #[test]
    fn malformed_xml_gives_its_line() {
        // An element never closed: the line it opens on.
        let e = parse("<content id=\"x\">\n  <text/>\n").err().unwrap();
        assert_eq!(e.line, Some(1));
        let e = parse("<content>\n  <text>\n</content>").err().unwrap();
        assert_eq!(e.line, Some(3));
    }

    #[test]
    fn a_doctype_is_read_as_the_game_reads_it() {
        // X4's own libraries: an external DTD named, never fetched.
        let icons = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE icons SYSTEM \"icons.dtd\" >\n<icons>\n<icon name=\"a\" height=\"256\"/>\n</icons>\n";
        let doc = parse(icons).ok().unwrap();
        assert_eq!(doc.root_element().tag_name().name(), "icons");
        assert_eq!(
            doc.root_element()
                .children()
                .filter(|n| n.is_element())
                .count(),
            1
        );
        // An internal subset's entities are expanded.
        let doc = parse("<!DOCTYPE x [<!ENTITY a \"b&amp;c\"><!-- ' --><!ELEMENT x ANY>]><x y=\"&a;\">&a;&a;</x>").ok().unwrap();
        assert_eq!(doc.root_element().text(), Some("b&cb&c"));
        assert_eq!(doc.root_element().attribute("y"), Some("b&c"));
        // An external entity is not fetched: naming one is an error.
        assert!(parse("<!DOCTYPE x [<!ENTITY e SYSTEM \"/etc/passwd\">]><x>&e;</x>").is_err());
        // The billion laughs: refused before anything is expanded.
        let mut laughs = String::from("<!DOCTYPE x [<!ENTITY l0 \"laugh\">");
        for i in 1..10 {
            laughs += &format!("<!ENTITY l{i} \"{}\">", format!("&l{};", i - 1).repeat(10));
        }
        laughs += "]><x>&l9;</x>";
        let e = parse(&laughs).err().unwrap();
        assert!(
            e.message.contains("expand to more than 64 MiB"),
            "{}",
            e.message
        );
        // A loop of entities is refused too.
        assert!(parse("<!DOCTYPE x [<!ENTITY a \"&b;\"><!ENTITY b \"&a;\">]><x>&a;</x>").is_err());
        // Elements an entity brings in count towards the depth.
        let deep = format!(
            "<!DOCTYPE x [<!ENTITY d \"{}{}\">]><x>&d;</x>",
            "<a>".repeat(300),
            "</a>".repeat(300)
        );
        assert!(parse(&deep).err().unwrap().message.contains("deeper"));
        let ok = format!(
            "<!DOCTYPE x [<!ENTITY d \"{}{}\">]><x>&d;</x>",
            "<a>".repeat(20),
            "</a>".repeat(20)
        );
        assert_eq!(
            parse(&ok)
                .ok()
                .unwrap()
                .descendants()
                .filter(|n| n.has_tag_name("a"))
                .count(),
            20
        );
    }
}

#[cfg(test)]
mod mutations {
    use super::*;

    /// Documents with DOCTYPEs and entities, each changed at random a few thousand times (bytes
    /// of XML's markup inserted, replaced, removed): every one ends in a tree or a refusal, and a
    /// tree never holds more text than the bound lets entities expand to.
    #[test]
    fn mutated_doctypes_end_in_a_tree_or_a_refusal() {
        let seeds = [
            "<?xml version=\"1.0\"?>\n<!DOCTYPE icons SYSTEM \"icons.dtd\">\n<icons><icon name=\"a\"/></icons>",
            "<!DOCTYPE x [<!ENTITY a \"<b>&c;</b>\"><!ENTITY c \"cc\"><!ELEMENT x ANY><!-- ] > -->]><x y=\"&c;\">&a;&a;</x>",
            "<!DOCTYPE x PUBLIC \"p\" 's' [<!ENTITY % p \"x\"><?pi ?><!ENTITY e SYSTEM \"f\" NDATA g>]><x>&e;</x>",
            "<!DOCTYPE x [<!ENTITY l0 \"ha\"><!ENTITY l1 \"&l0;&l0;&l0;&l0;\"><!ENTITY l2 \"&l1;&l1;&l1;&l1;\">]><x>&l2;&l2;</x>",
        ];
        let alphabet = b"<>!&;%\"'[]/?-x ENTITYDOCTYPE";
        let mut x = 0x9E37_79B9u32;
        let mut next = |n: usize| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as usize % n.max(1)
        };
        let (mut trees, mut refused) = (0, 0);
        for seed in seeds {
            for _ in 0..3000 {
                let mut b = seed.as_bytes().to_vec();
                for _ in 0..1 + next(4) {
                    let at = next(b.len() + 1);
                    let c = alphabet[next(alphabet.len())];
                    match next(3) {
                        0 => b.insert(at, c),
                        1 if at < b.len() => b[at] = c,
                        _ if at < b.len() => {
                            b.remove(at);
                        }
                        _ => {}
                    }
                }
                let t = String::from_utf8_lossy(&b);
                match parse(&t) {
                    Ok(doc) => {
                        trees += 1;
                        let text: usize = doc
                            .descendants()
                            .filter_map(|n| n.text())
                            .map(str::len)
                            .sum();
                        assert!(text as u64 <= MAX_EXPANDED + t.len() as u64);
                    }
                    Err(_) => refused += 1,
                }
            }
        }
        // Both outcomes are reached: the mutations are not all fatal.
        assert!(
            trees > 500 && refused > 5000,
            "{trees} trees, {refused} refused"
        );
    }
}
