//! The XML files of a new ship extension: content.xml, the index and ware `<diff>` patches, the
//! text page, the macro cloned from the template's, and the component.

use super::scene::{Connection, Light, Part};
use crate::assemble::part::PartMeshes;
use crate::assemble::read::Offset;
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
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<content id=\"{}\" name=\"{}\" description=\"{}\" author=\"hangar new component\" version=\"100\" save=\"0\">\n",
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

/// The text page `page`: 1 the new content's name, 2 its description.
pub(crate) fn texts(page: u64, name: &str, description: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<diff>\n\t<add sel=\"/language\">\n\t\t<page id=\"{page}\" title=\"{}\" descr=\"{} (hangar new component)\" voice=\"no\">\n\t\t\t<t id=\"1\">{}</t>\n\t\t\t<t id=\"2\">{}</t>\n\t\t</page>\n\t</add>\n</diff>\n",
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

/// The template macro renamed: `name`, `<component ref>` and the identification texts (`name`, a
/// `shortname`, `description` when one is given; a ship's `basename`, its series, is kept).
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
            // A short name the template has would show the template's in the game's lists.
            if i.attribute("shortname").is_some() {
                edits.push((i.range().start, "shortname", format!("{{{page},1}}")));
            }
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

/// The connections the template's macro fills (`<connections><connection ref>`), as written.
pub(crate) fn macro_connections(macro_text: &str) -> Result<Vec<String>> {
    let doc = parsed(macro_text, "macro")?;
    Ok(doc
        .descendants()
        .filter(|c| {
            c.has_tag_name("connection")
                && c.parent().is_some_and(|p| p.has_tag_name("connections"))
                && c.ancestors().any(|a| a.has_tag_name("macro"))
        })
        .filter_map(|c| c.attribute("ref").map(str::to_string))
        .collect())
}

/// A connection of the template's component as the new component takes it.
pub(crate) struct TakenConnection {
    pub name: String,
    /// The element's text.
    pub xml: String,
    /// Where it stands (when it has an offset) and the part it hangs from.
    pub at: Option<(Offset, Option<String>)>,
}

/// The template component's connection element `c` for a component whose parts are `parts`: as
/// written when it hangs from one of them (or from none); else hanging from the nearest part
/// above it that the new component has, its offset carried through the template's parts between.
fn taken(
    text: &str,
    doc: &roxmltree::Document<'_>,
    c: roxmltree::Node<'_, '_>,
    parts: &[&str],
) -> TakenConnection {
    let name = c.attribute("name").unwrap_or_default().to_string();
    let has = |p: &str| parts.iter().any(|x| x.eq_ignore_ascii_case(p));
    let mut quiet = Vec::new();
    let own = c.children().any(|x| x.has_tag_name("offset"));
    let offset = Offset::of(c, &mut quiet, "connection.offset");
    let parent = c.attribute("parent").filter(|p| !p.is_empty());
    let as_written = text.get(c.range()).unwrap_or_default().to_string();
    if parent.is_none_or(has) {
        return TakenConnection {
            name,
            xml: as_written,
            at: own.then(|| (offset, parent.map(str::to_string))),
        };
    }
    // The template's part connections: part name -> (offset, parent).
    let part_conn = |part: &str| {
        doc.descendants().find(|x| {
            x.has_tag_name("connection")
                && x.children()
                    .filter(|p| p.has_tag_name("parts"))
                    .flat_map(|p| p.children())
                    .any(|p| {
                        p.has_tag_name("part")
                            && p.attribute("name")
                                .is_some_and(|n| n.eq_ignore_ascii_case(part))
                    })
        })
    };
    let (t, q) = offset.to_gltf();
    let mut m = glam::Mat4::from_rotation_translation(q, t);
    let mut up = parent.map(str::to_string);
    for _ in 0..64 {
        let Some(p) = up.clone().filter(|p| !has(p)) else {
            break;
        };
        let Some(pc) = part_conn(&p) else {
            up = None;
            break;
        };
        let (pt, pq) = Offset::of(pc, &mut quiet, "connection.offset").to_gltf();
        m = glam::Mat4::from_rotation_translation(pq, pt) * m;
        up = pc
            .attribute("parent")
            .filter(|x| !x.is_empty())
            .map(str::to_string);
    }
    let (_, q, t) = m.to_scale_rotation_translation();
    let moved = Offset::from_gltf(t, q);
    let mut s = format!("<connection name=\"{}\"", escaped(&name));
    for a in c
        .attributes()
        .filter(|a| !matches!(a.name(), "name" | "parent"))
    {
        s.push_str(&format!(" {}=\"{}\"", a.name(), escaped(a.value())));
    }
    if let Some(p) = &up {
        s.push_str(&format!(" parent=\"{}\"", escaped(p)));
    }
    s.push_str(">\n\t\t\t\t");
    s.push_str(&moved.xml("\t\t\t\t"));
    s.push('\n');
    for x in c
        .children()
        .filter(|x| x.is_element() && !x.has_tag_name("offset"))
    {
        s.push_str(&format!(
            "\t\t\t\t{}\n",
            text.get(x.range()).unwrap_or_default()
        ));
    }
    s.push_str("\t\t\t</connection>");
    TakenConnection {
        name,
        xml: s,
        at: Some((moved, up)),
    }
}

/// Whether a connection's `<offset>` places it (a position or a quaternion; `space`'s `<offset/>`
/// places nothing).
fn placed_by_offset(c: &roxmltree::Node<'_, '_>) -> bool {
    c.children()
        .filter(|x| x.has_tag_name("offset"))
        .flat_map(|o| o.children())
        .any(|x| x.has_tag_name("position") || x.has_tag_name("quaternion"))
}

/// The template component's connections the new component takes: those without parts and without
/// an offset (`space`, `position`, `container`...) and those `wanted` names (the ones its macro
/// fills), when the scene places neither (`placed`). `parts` are the new component's parts.
pub(crate) fn template_connections(
    component: &str,
    placed: &[&str],
    wanted: &[String],
    parts: &[&str],
) -> Result<Vec<TakenConnection>> {
    let doc = parsed(component, "component")?;
    let is = |c: &roxmltree::Node<'_, '_>, n: &str| {
        c.attribute("name")
            .is_some_and(|a| a.eq_ignore_ascii_case(n))
    };
    Ok(doc
        .descendants()
        .filter(|c| {
            c.has_tag_name("connection")
                && c.parent().is_some_and(|p| p.has_tag_name("connections"))
                && !c.children().any(|x| x.has_tag_name("parts"))
                && (!placed_by_offset(c) || wanted.iter().any(|w| is(c, w)))
                && !placed.iter().any(|n| is(c, n))
        })
        .map(|c| taken(component, &doc, c, parts))
        .collect())
}

/// The connections every component of `class` has without a place (`space` tagged by the class,
/// `position`, and `container` for what holds things), for a template whose component is not in view,
/// each with its name.
pub(crate) fn class_connections(class: &str) -> Vec<(&'static str, String)> {
    let space = match class.strip_prefix("ship_") {
        Some(_) => format!("ship {class}"),
        None => class.to_string(),
    };
    let holds = class.starts_with("ship_")
        || matches!(
            class,
            "station"
                | "habitation"
                | "production"
                | "storage"
                | "connectionmodule"
                | "dockarea"
                | "pier"
                | "defencemodule"
                | "buildmodule"
                | "welfaremodule"
                | "processingmodule"
                | "radar"
                | "dockingbay"
        );
    let mut out = Vec::new();
    if holds {
        out.push((
            "container",
            "<connection name=\"container\" tags=\"contents\" value=\"0\"/>".to_string(),
        ));
    }
    out.push((
        "position",
        "<connection name=\"position\" tags=\"position\" value=\"1\"/>".to_string(),
    ));
    out.push((
        "space",
        format!(
            "<connection name=\"space\" tags=\"{}\">\n\t\t\t\t<offset/>\n\t\t\t</connection>",
            escaped(&space)
        ),
    ));
    out
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

/// A number as the game's files write it: the shortest text that reads back the same.
fn num(v: f32) -> String {
    if v == 0.0 {
        return "0".into();
    }
    format!("{v}")
}

/// The element a light is written as: its `light` property (`omni`, `spotlight`, `arealight`,
/// `box`), else the glTF type's (point: `omni`, spot: `spot`); a sun has none.
fn light_element(l: &Light) -> Result<&'static str> {
    let named = l
        .attributes
        .iter()
        .find(|(k, _)| k == "light")
        .map(|(_, v)| v.trim().to_ascii_lowercase());
    let at = format!("lights.{}", l.name);
    match (named.as_deref(), &l.light.kind) {
        (Some("omni" | "point"), _) | (None, crate::model::LightKind::Point) => Ok("omni"),
        (Some("spot" | "spotlight"), _) | (None, crate::model::LightKind::Spot { .. }) => Ok("spot"),
        (Some("arealight" | "area"), _) => Ok("arealight"),
        (Some("box" | "boxlight"), _) => Ok("box"),
        (Some(other), _) => Err(Error::refused(
            at,
            format!(
                "light {:?}: its `light` property {other:?} names no kind of light the game has (omni, spotlight, arealight, box)",
                l.name
            ),
        )),
        (None, crate::model::LightKind::Directional) => Err(Error::refused(
            at,
            format!(
                "light {:?} is a sun (directional), which the game has no kind for: give it a `light` property (omni, spotlight, arealight, box)",
                l.name
            ),
        )),
    }
}

/// Keys a light's element writes from the light itself, not from its properties.
const LIGHT_OWN: &[&str] = &["light", "name", "r", "g", "b", "range", "intensity", "size"];

/// One light element (`<omni name r g b range intensity ...>` with its `<offset>`), at `indent`:
/// colour as the game writes it (0-255), then the node's string properties as attributes; a
/// spot's `angle` is its full cone in degrees; a `size` property ("x y z") is a box's `<size>`.
pub(crate) fn light(l: &Light, indent: &str) -> Result<String> {
    let tag = light_element(l)?;
    let prop = |k: &str| {
        l.attributes
            .iter()
            .find(|(a, _)| a == k)
            .map(|(_, v)| v.as_str())
    };
    let [r, g, b] = l
        .light
        .color
        .map(|c| (c.clamp(0.0, 1.0) * 255.0).round() as u8);
    let mut s = format!(
        "{indent}<{tag} name=\"{}\" r=\"{r}\" g=\"{g}\" b=\"{b}\"",
        escaped(&l.name)
    );
    // The light's own range; a light without one (glTF's infinite) takes a `range` property.
    match (l.light.range, prop("range")) {
        (Some(range), _) => s.push_str(&format!(" range=\"{}\"", num(range))),
        (None, Some(range)) => s.push_str(&format!(" range=\"{}\"", escaped(range))),
        (None, None) => {}
    }
    s.push_str(&format!(" intensity=\"{}\"", num(l.light.intensity)));
    let cone = match l.light.kind {
        crate::model::LightKind::Spot { outer, .. } => Some((outer * 2.0).to_degrees()),
        _ => None,
    };
    if let Some(angle) = cone {
        // The property as written when it is the cone's angle; the cone's otherwise (edited).
        let written = prop("angle").filter(|a| {
            a.trim()
                .parse::<f32>()
                .is_ok_and(|v| (v - angle).abs() <= 1e-3 * angle.abs().max(1.0))
        });
        s.push_str(&format!(
            " angle=\"{}\"",
            written.map_or_else(|| num(angle), escaped)
        ));
    }
    for (k, v) in &l.attributes {
        if LIGHT_OWN.contains(&k.as_str()) || (cone.is_some() && k == "angle") {
            continue;
        }
        s.push_str(&format!(" {k}=\"{}\"", escaped(v)));
    }
    s.push_str(">\n");
    if let Some(size) = prop("size") {
        let v: Vec<&str> = size.split_whitespace().collect();
        if let [x, y, z] = v[..] {
            s.push_str(&format!(
                "{indent}\t<size x=\"{}\" y=\"{}\" z=\"{}\"/>\n",
                escaped(x),
                escaped(y),
                escaped(z)
            ));
        }
    }
    s.push_str(&format!(
        "{indent}\t<lightanimations/>\n{indent}\t{}\n{indent}</{tag}>\n",
        l.offset.xml(&format!("{indent}\t"))
    ));
    Ok(s)
}

/// `<lights>` holding `lights` (already written), at `indent`; empty when there are none.
pub(crate) fn lights_block(lights: &[String], indent: &str) -> String {
    if lights.is_empty() {
        return String::new();
    }
    format!("{indent}<lights>\n{}{indent}</lights>\n", lights.concat())
}

fn restrictions_xml(types: &[String], indent: &str) -> String {
    if types.is_empty() {
        return String::new();
    }
    let mut s = format!("{indent}<restrictions>\n");
    for t in types {
        s.push_str(&format!(
            "{indent}\t<restriction type=\"{}\"/>\n",
            escaped(t)
        ));
    }
    s.push_str(&format!("{indent}</restrictions>\n"));
    s
}

/// A state a part plays: its name and first and last frame (30 a second).
pub(crate) struct Played {
    pub state: String,
    pub start: u32,
    pub end: u32,
}

/// One part of the component as it is written: its connection's name, the part, its meshes, its
/// lights (written) and the states that move it.
pub(crate) struct PartEntry<'a> {
    pub connection: String,
    pub part: &'a Part,
    pub meshes: &'a PartMeshes,
    pub lights: Vec<String>,
    pub played: Vec<Played>,
}

/// The component: its data folder named, its own lights, the template's connections, then one
/// connection a part and one a hardpoint.
pub(crate) fn component(
    id: &str,
    class: &str,
    geometry: &str,
    lights: &[String],
    kept: &[String],
    parts: &[PartEntry<'_>],
    connections: &[Connection],
) -> String {
    let mut s = format!(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<components>\n\t<component name=\"{}\" class=\"{}\">\n\t\t<source geometry=\"{}\"/>\n",
        escaped(id),
        escaped(class),
        escaped(geometry)
    );
    if !lights.is_empty() {
        s.push_str(&format!(
            "\t\t<layers>\n\t\t\t<layer>\n{}\t\t\t</layer>\n\t\t</layers>\n",
            lights_block(lights, "\t\t\t\t")
        ));
    }
    s.push_str("\t\t<connections>\n");
    for k in kept {
        s.push_str(&format!("\t\t\t{}\n", k.trim()));
    }
    for e in parts {
        let mut inner = lights_block(&e.lights, "\t\t\t\t\t\t");
        if !inner.is_empty() {
            inner = format!("\n{}", inner.trim_end_matches('\n'));
        }
        let mut animations = String::new();
        if !e.played.is_empty() {
            animations.push_str("\t\t\t\t<animations>\n");
            for p in &e.played {
                animations.push_str(&format!(
                    "\t\t\t\t\t<animation name=\"{}\" start=\"{}\" end=\"{}\"/>\n",
                    escaped(&p.state),
                    p.start,
                    p.end
                ));
            }
            animations.push_str("\t\t\t\t</animations>\n");
        }
        s.push_str(&format!(
            "\t\t\t<connection name=\"{}\"{}>\n\t\t\t\t{}\n{}{}\t\t\t\t<parts>\n\t\t\t\t\t{}\n\t\t\t\t</parts>\n\t\t\t</connection>\n",
            escaped(&e.connection),
            attributes_xml(&e.part.attributes, e.part.parent.as_deref()),
            e.part.offset.xml("\t\t\t\t"),
            restrictions_xml(&e.part.restrictions, "\t\t\t\t"),
            animations,
            e.meshes.xml_with("\t\t\t\t\t", &e.part.name, &inner)
        ));
    }
    for c in connections {
        s.push_str(&format!(
            "\t\t\t<connection name=\"{}\"{}>\n\t\t\t\t{}\n{}\t\t\t</connection>\n",
            escaped(&c.name),
            attributes_xml(&c.attributes, c.parent.as_deref()),
            c.offset.xml("\t\t\t\t"),
            restrictions_xml(&c.restrictions, "\t\t\t\t"),
        ));
    }
    s.push_str("\t\t</connections>\n\t</component>\n</components>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_light_without_its_own_range_takes_the_range_property() {
        let lamp = |range: Option<f32>| Light {
            name: "lamp".into(),
            parent: None,
            offset: Offset::from_gltf(glam::Vec3::ZERO, glam::Quat::IDENTITY),
            light: crate::model::Light {
                name: "lamp".into(),
                kind: crate::model::LightKind::Point,
                color: [1.0, 0.5, 0.0],
                intensity: 2.0,
                range,
            },
            attributes: vec![
                ("range".into(), "4".into()),
                ("lighteffect".into(), "1".into()),
            ],
        };
        let own = light(&lamp(Some(6.5)), "").unwrap();
        assert!(own.starts_with("<omni name=\"lamp\" r=\"255\" g=\"128\" b=\"0\" range=\"6.5\" intensity=\"2\" lighteffect=\"1\">"), "{own}");
        let property = light(&lamp(None), "").unwrap();
        assert!(property.starts_with("<omni name=\"lamp\" r=\"255\" g=\"128\" b=\"0\" range=\"4\" intensity=\"2\" lighteffect=\"1\">"), "{property}");
    }

    #[test]
    fn the_macro_is_renamed_and_keeps_the_rest() {
        let t = "<macros>\n<macro name=\"old_macro\" class=\"ship_m\">\n<component ref=\"old\"/>\n<properties><identification name=\"{1,2}\" basename=\"{3,4}\"/><hull max=\"5\"/></properties>\n</macro>\n</macros>";
        let m = macro_file(t, "new_macro", "new", 900, false).unwrap();
        assert_eq!(m, "<macros>\n<macro name=\"new_macro\" class=\"ship_m\">\n<component ref=\"new\"/>\n<properties><identification name=\"{900,1}\" basename=\"{3,4}\"/><hull max=\"5\"/></properties>\n</macro>\n</macros>");
        let t = "<macros><macro name=\"w_macro\" class=\"missilelauncher\"><properties><identification name=\"{1,2}\" shortname=\"{1,3}\" makerrace=\"argon\"/></properties></macro></macros>";
        let m = macro_file(t, "new_macro", "new", 900, false).unwrap();
        assert!(
            m.contains(
                "<identification name=\"{900,1}\" shortname=\"{900,1}\" makerrace=\"argon\"/>"
            ),
            "{m}"
        );
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
