//! A mod's XML read with limits: a file too large or nested too deep is refused with a message,
//! never parsed into a tree that exhausts memory or a walk that exhausts the stack.

use roxmltree::{Document, Node, ParsingOptions};

/// Largest XML file read (the game's largest library, its text, is a few tens of MB).
pub const MAX_BYTES: usize = 128 << 20;
/// Deepest element nesting read (scripts nest a few dozen levels).
pub const MAX_DEPTH: usize = 256;
/// Most nodes one file may hold.
const MAX_NODES: u32 = 8_000_000;

/// Why an XML file was not read: the message and the line (from 1) where it went wrong.
pub struct Refused {
    pub line: Option<u32>,
    pub message: String,
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

/// `text` parsed, its nesting checked.
pub fn parse(text: &str) -> Result<Document<'_>, Refused> {
    let options = ParsingOptions {
        allow_dtd: false,
        nodes_limit: MAX_NODES,
    };
    let doc = Document::parse_with_options(text, options).map_err(|e| Refused {
        line: Some(e.pos().row),
        message: format!("not well-formed XML: {e}"),
    })?;
    // Depth without recursion: each node's depth is its parent's plus one, in document order.
    let mut depth: Vec<u32> = vec![0; doc.descendants().count()];
    for n in doc.descendants().skip(1) {
        let d = n
            .parent()
            .and_then(|p| depth.get(index(p)).copied())
            .unwrap_or(0)
            + 1;
        if d as usize > MAX_DEPTH {
            return Err(Refused {
                line: Some(line(&doc, n)),
                message: format!("elements nested deeper than {MAX_DEPTH} levels: refused"),
            });
        }
        if let Some(slot) = depth.get_mut(index(n)) {
            *slot = d;
        }
    }
    Ok(doc)
}

/// A node's place in document order (roxmltree numbers them so).
fn index(n: Node<'_, '_>) -> usize {
    n.id().get_usize()
}

/// The line (from 1) where `n` starts.
pub fn line(doc: &Document<'_>, n: Node<'_, '_>) -> u32 {
    doc.text_pos_at(n.range().start).row
}

/// The root element's name, read from the head of `bytes` without parsing the file: to pick the
/// files a check reads whole.
pub fn root_name(bytes: &[u8]) -> Option<String> {
    let head = bytes.get(..bytes.len().min(8192))?;
    let head = String::from_utf8_lossy(head);
    let mut rest: &str = &head;
    loop {
        let at = rest.find('<')?;
        rest = rest.get(at + 1..)?;
        if let Some(r) = rest.strip_prefix("!--") {
            rest = r.get(r.find("-->")? + 3..)?;
        } else if rest.starts_with('?') || rest.starts_with('!') {
            rest = rest.get(rest.find('>')? + 1..)?;
        } else {
            let end = rest
                .find(|c: char| c.is_whitespace() || c == '>' || c == '/')
                .unwrap_or(rest.len());
            return Some(rest.get(..end)?.to_ascii_lowercase());
        }
    }
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
    }

    #[test]
    fn malformed_xml_gives_its_line() {
        let e = parse("<content id=\"x\">\n  <text/>\n").err().unwrap();
        assert_eq!(e.line, Some(3));
        assert!(parse("<!DOCTYPE x [<!ENTITY a \"b\">]><x>&a;</x>").is_err());
    }

    #[test]
    fn the_root_name_is_read_from_the_head() {
        let b = b"\xef\xbb\xbf<?xml version=\"1.0\"?>\n<!-- <no> -->\n<Macros>\n<macro/>";
        assert_eq!(root_name(b).as_deref(), Some("macros"));
        assert_eq!(root_name(b"<diff>").as_deref(), Some("diff"));
        assert_eq!(root_name(b"no xml"), None);
    }
}
