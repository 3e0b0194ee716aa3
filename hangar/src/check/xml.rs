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

/// `text` parsed, after its nesting is checked (the parser recurses once a level: a file
/// nested thousands deep would overflow the stack).
pub fn parse(text: &str) -> Result<Document<'_>, Refused> {
    if let Some(line) = too_deep(text) {
        return Err(Refused {
            line: Some(line),
            message: format!("elements nested deeper than {MAX_DEPTH} levels: refused"),
        });
    }
    let options = ParsingOptions {
        allow_dtd: false,
        nodes_limit: MAX_NODES,
    };
    Document::parse_with_options(text, options).map_err(|e| Refused {
        line: Some(e.pos().row),
        message: format!("not well-formed XML: {e}"),
    })
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
        assert!(parse("<!DOCTYPE x [<!ENTITY a \"b\">]><x>&a;</x>").is_err());
    }
}
