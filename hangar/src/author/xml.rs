//! The XML files of a new ship extension: content.xml, the index and ware `<diff>` patches, the
//! text page, the macro cloned from the template's, and the component.

use super::scene::{Connection, Part};
use crate::assemble::part::PartMeshes;
use crate::check::xml;
use crate::error::{Error, Result};
use crate::formats::x4xml::escaped;

/// `v` as X4 text: XML-escaped, parentheses (which the game reads as comments) escaped too.
fn game_text(v: &str) -> String {
    escaped(v).replace('(', "\\(").replace(')', "\\)")
}

pub(crate) fn content(
    folder: &str,
    name: &str,
    description: &str,
    dependency: Option<&str>,
) -> String {
    let mut s = format!(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<content id=\"{}\" name=\"{}\" description=\"{}\" author=\"hangar new ship\" version=\"100\" save=\"0\">\n",
        escaped(folder),
        escaped(name),
        escaped(description)
    );
    if let Some(d) = dependency {
        s.push_str(&format!("\t<dependency id=\"{}\"/>\n", escaped(d)));
    }
    s.push_str("</content>\n");
    s
}

/// An index patch adding `entries` (name, value without `.xml`, `\` separators).
pub(crate) fn index(entries: &[(String, String)]) -> String {
    let mut s = String::from(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<diff>\n\t<add sel=\"/index\">\n",
    );
    for (n, v) in entries {
        s.push_str(&format!(
            "\t\t<entry name=\"{}\" value=\"{}\"/>\n",
            escaped(n),
            escaped(v)
        ));
    }
    s.push_str("\t</add>\n</diff>\n");
    s
}

/// The text page `page`: 1 the ship's name, 2 its description.
pub(crate) fn texts(page: u64, name: &str, description: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<diff>\n\t<add sel=\"/language\">\n\t\t<page id=\"{page}\" title=\"{}\" descr=\"The ship {} (hangar new ship)\" voice=\"no\">\n\t\t\t<t id=\"1\">{}</t>\n\t\t\t<t id=\"2\">{}</t>\n\t\t</page>\n\t</add>\n</diff>\n",
        escaped(name),
        escaped(name),
        game_text(name),
        game_text(description)
    )
}

/// Edits of attributes in an XML text: each `(element start, key, value)` sets the attribute
/// (replacing its value, or adding it at the end of the start tag).
fn set_attributes(
    text: &str,
    doc: &roxmltree::Document<'_>,
    edits: &[(usize, &str, String)],
) -> String {
    let mut changes: Vec<(std::ops::Range<usize>, String)> = Vec::new();
    for (at, key, value) in edits {
        let Some(e) = doc
            .descendants()
            .find(|n| n.is_element() && n.range().start == *at)
        else {
            continue;
        };
        match e.attributes().find(|a| a.name() == *key) {
            Some(a) => changes.push((a.range_value(), escaped(value))),
            None => {
                let end = e
                    .attributes()
                    .map(|a| a.range().end)
                    .max()
                    .unwrap_or(e.range().start + 1 + e.tag_name().name().len());
                changes.push((end..end, format!(" {key}=\"{}\"", escaped(value))));
            }
        }
    }
    changes.sort_by_key(|c| std::cmp::Reverse(c.0.start));
    let mut out = text.to_string();
    for (r, v) in changes {
        if out.get(r.clone()).is_some() {
            out.replace_range(r, &v);
        }
    }
    out
}

fn parsed<'a>(text: &'a str, what: &str) -> Result<roxmltree::Document<'a>> {
    xml::parse(text).map_err(|e| {
        Error::refused(
            what,
            format!("the template's {what} does not parse: {}", e.message),
        )
    })
}

/// The template macro renamed: `name`, `<component ref>` and the identification texts.
pub(crate) fn macro_file(
    template: &str,
    name: &str,
    component: &str,
    page: u64,
    described: bool,
) -> Result<String> {
    let doc = parsed(template, "macro")?;
    let mut edits = Vec::new();
    if let Some(m) = doc.descendants().find(|e| e.has_tag_name("macro")) {
        edits.push((m.range().start, "name", name.to_string()));
        if let Some(c) = m.children().find(|c| c.has_tag_name("component")) {
            edits.push((c.range().start, "ref", component.to_string()));
        }
        let ident = m
            .children()
            .filter(|c| c.has_tag_name("properties"))
            .flat_map(|p| p.children())
            .find(|c| c.has_tag_name("identification"));
        if let Some(i) = ident {
            edits.push((i.range().start, "name", format!("{{{page},1}}")));
            if described {
                edits.push((i.range().start, "description", format!("{{{page},2}}")));
            }
        }
    }
    Ok(set_attributes(template, &doc, &edits))
}

/// The template's ware renamed: `id`, name and description texts, `<component ref>`.
pub(crate) fn ware(
    template: &str,
    id: &str,
    macro_name: &str,
    page: u64,
    described: bool,
) -> Result<String> {
    let doc = parsed(template, "ware")?;
    let mut edits = Vec::new();
    let w = doc.root_element();
    edits.push((w.range().start, "id", id.to_string()));
    edits.push((w.range().start, "name", format!("{{{page},1}}")));
    if described {
        edits.push((w.range().start, "description", format!("{{{page},2}}")));
    }
    for c in w.children().filter(|c| c.has_tag_name("component")) {
        edits.push((c.range().start, "ref", macro_name.to_string()));
    }
    Ok(set_attributes(template, &doc, &edits))
}

/// A ware for a ship whose template has none: a price from nothing, made at shipyards.
pub(crate) fn plain_ware(id: &str, macro_name: &str, page: u64) -> String {
    format!(
        "<ware id=\"{}\" name=\"{{{page},1}}\" description=\"{{{page},2}}\" group=\"ships\" transport=\"ship\" volume=\"1\" tags=\"ship\">\n\t\t\t<price min=\"100000\" average=\"120000\" max=\"140000\"/>\n\t\t\t<component ref=\"{}\" amount=\"1\"/>\n\t\t</ware>",
        escaped(id),
        escaped(macro_name)
    )
}

pub(crate) fn wares(ware: &str) -> String {
    format!("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<diff>\n\t<add sel=\"/wares\">\n\t\t{ware}\n\t</add>\n</diff>\n")
}

/// The template component's connections the scene does not place: those without parts and
/// without an offset (`space`, `position`, `container`...), as written.
pub(crate) fn unplaced_connections(component: &str, placed: &[&str]) -> Result<Vec<String>> {
    let doc = parsed(component, "component")?;
    Ok(doc
        .descendants()
        .filter(|c| {
            c.has_tag_name("connection")
                && c.parent().is_some_and(|p| p.has_tag_name("connections"))
                && !c
                    .children()
                    .any(|x| x.has_tag_name("parts") || x.has_tag_name("offset"))
                && !placed.iter().any(|n| {
                    c.attribute("name")
                        .is_some_and(|a| a.eq_ignore_ascii_case(n))
                })
        })
        .filter_map(|c| component.get(c.range()).map(str::to_string))
        .collect())
}

fn attributes_xml(attributes: &[(String, String)], parent: Option<&str>) -> String {
    let mut s = String::new();
    for (k, v) in attributes {
        s.push_str(&format!(" {k}=\"{}\"", escaped(v)));
    }
    if let Some(p) = parent {
        s.push_str(&format!(" parent=\"{}\"", escaped(p)));
    }
    s
}

/// The component: its data folder named, the template's unplaced connections, then one connection
/// a part and one a hardpoint.
pub(crate) fn component(
    id: &str,
    class: &str,
    geometry: &str,
    kept: &[String],
    parts: &[(String, &Part, &PartMeshes)],
    connections: &[Connection],
) -> String {
    let mut s = format!(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<components>\n\t<component name=\"{}\" class=\"{}\">\n\t\t<source geometry=\"{}\"/>\n\t\t<connections>\n",
        escaped(id),
        escaped(class),
        escaped(geometry)
    );
    for k in kept {
        s.push_str(&format!("\t\t\t{}\n", k.trim()));
    }
    for (conn, p, meshes) in parts {
        s.push_str(&format!(
            "\t\t\t<connection name=\"{}\"{}>\n\t\t\t\t{}\n\t\t\t\t<parts>\n\t\t\t\t\t{}\n\t\t\t\t</parts>\n\t\t\t</connection>\n",
            escaped(conn),
            attributes_xml(&p.attributes, p.parent.as_deref()),
            p.offset.xml("\t\t\t\t"),
            meshes.xml("\t\t\t\t\t", &p.name)
        ));
    }
    for c in connections {
        s.push_str(&format!(
            "\t\t\t<connection name=\"{}\"{}>\n\t\t\t\t{}\n\t\t\t</connection>\n",
            escaped(&c.name),
            attributes_xml(&c.attributes, c.parent.as_deref()),
            c.offset.xml("\t\t\t\t"),
        ));
    }
    s.push_str("\t\t</connections>\n\t</component>\n</components>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_macro_is_renamed_and_keeps_the_rest() {
        let t = "<macros>\n<macro name=\"old_macro\" class=\"ship_m\">\n<component ref=\"old\"/>\n<properties><identification name=\"{1,2}\" basename=\"{3,4}\"/><hull max=\"5\"/></properties>\n</macro>\n</macros>";
        let m = macro_file(t, "new_macro", "new", 900, false).unwrap();
        assert_eq!(m, "<macros>\n<macro name=\"new_macro\" class=\"ship_m\">\n<component ref=\"new\"/>\n<properties><identification name=\"{900,1}\" basename=\"{3,4}\"/><hull max=\"5\"/></properties>\n</macro>\n</macros>");
        let w = ware(
            "<ware id=\"a\" name=\"{1,1}\"><component ref=\"old_macro\"/></ware>",
            "b",
            "new_macro",
            900,
            true,
        )
        .unwrap();
        assert_eq!(w, "<ware id=\"b\" name=\"{900,1}\" description=\"{900,2}\"><component ref=\"new_macro\"/></ware>");
    }

    #[test]
    fn texts_escape_what_the_game_reads_as_comments() {
        let t = texts(9, "Ship (Mk2) & co", "");
        assert!(t.contains("<t id=\"1\">Ship \\(Mk2\\) &amp; co</t>"), "{t}");
    }
}
