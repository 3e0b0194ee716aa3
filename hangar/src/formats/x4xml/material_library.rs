//! X4's `libraries/material_library.xml`: collections of materials, each with the texture paths of
//! its layers (`diffuse_map`, `normal_map`, ...). An XMF names its materials `collection.material`.
//! A mod's library is often a `<diff>` patch of the game's: it is applied onto whatever came before.

use super::escaped;
use crate::error::{Error, Result, Warning};
use crate::model::Scene;
use serde_json::{json, Map, Value};

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Library {
    pub collections: Vec<Collection>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Collection {
    pub name: String,
    pub materials: Vec<Material>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Material {
    pub name: String,
    pub shader: String,
    pub properties: Vec<Property>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Property {
    pub ty: String,
    pub name: String,
    pub value: String,
}

/// Deepest element nesting read; real libraries are five deep.
const MAX_DEPTH: usize = 32;

/// `text` as XML, refused when nested deeper than any real library.
fn parsed(text: &str) -> Result<roxmltree::Document<'_>> {
    let doc = crate::xml::parse(text)
        .map_err(|r| Error::invalid(0, "material_library", r.to_string()))?;
    if doc
        .root_element()
        .descendants()
        .any(|n| n.ancestors().count() > MAX_DEPTH)
    {
        return Err(Error::invalid(0, "material_library", "nested too deep"));
    }
    Ok(doc)
}

fn attr(n: roxmltree::Node<'_, '_>, name: &str) -> String {
    n.attribute(name).unwrap_or_default().to_string()
}

fn material(n: roxmltree::Node<'_, '_>) -> Material {
    Material {
        name: attr(n, "name"),
        shader: attr(n, "shader"),
        properties: n
            .descendants()
            .filter(|p| p.has_tag_name("property"))
            .map(|p| Property {
                ty: attr(p, "type"),
                name: attr(p, "name"),
                value: attr(p, "value"),
            })
            .collect(),
    }
}

fn collection(n: roxmltree::Node<'_, '_>) -> Collection {
    Collection {
        name: attr(n, "name"),
        materials: n
            .children()
            .filter(|m| m.has_tag_name("material"))
            .map(material)
            .collect(),
    }
}

impl Collection {
    /// Adds a material, replacing one of the same name.
    fn put(&mut self, m: Material) {
        match self.materials.iter_mut().find(|x| x.name == m.name) {
            Some(x) => *x = m,
            None => self.materials.push(m),
        }
    }
}

/// `name` in `...[@name='name']` after `tag` in a diff selector.
fn selected(sel: &str, tag: &str) -> Option<String> {
    let at = sel.find(&format!("{tag}[@name="))?;
    let rest = sel.get(at + tag.len() + 7..)?;
    let quote = rest.chars().next()?;
    let rest = rest.get(1..)?;
    Some(rest.get(..rest.find(quote)?)?.to_string())
}

impl Library {
    /// Reads a whole library, or applies a `<diff>` onto `self`.
    pub fn apply(&mut self, text: &str) -> Result<Vec<Warning>> {
        let doc = parsed(text.trim_start_matches('\u{feff}'))?;
        let root = doc.root_element();
        let mut warnings = Vec::new();
        match root.tag_name().name() {
            "materiallibrary" => {
                for c in root.children().filter(|c| c.has_tag_name("collection")) {
                    self.merge(collection(c));
                }
            }
            "diff" => {
                for op in root.children().filter(|n| n.is_element()) {
                    self.patch(op, &mut warnings);
                }
            }
            other => {
                return Err(Error::invalid(
                    0,
                    "material_library",
                    format!("root element <{other}>, not <materiallibrary> or <diff>"),
                ))
            }
        }
        Ok(warnings)
    }

    /// Adds a collection, its materials overriding same-named ones.
    fn merge(&mut self, c: Collection) {
        match self.collections.iter_mut().find(|x| x.name == c.name) {
            Some(x) => {
                for m in c.materials {
                    x.put(m);
                }
            }
            None => self.collections.push(c),
        }
    }

    fn patch(&mut self, op: roxmltree::Node<'_, '_>, warnings: &mut Vec<Warning>) {
        let sel = op.attribute("sel").unwrap_or_default();
        let coll = selected(sel, "collection");
        let mat = selected(sel, "material");
        let kids = op.children().filter(|n| n.is_element());
        match (op.tag_name().name(), coll, mat) {
            ("add", None, None) if sel.contains("materiallibrary") => {
                for c in kids.filter(|c| c.has_tag_name("collection")) {
                    self.merge(collection(c));
                }
            }
            ("add", Some(c), None) => {
                let mats = kids.filter(|m| m.has_tag_name("material")).map(material);
                self.merge(Collection {
                    name: c,
                    materials: mats.collect(),
                });
            }
            ("replace", Some(c), Some(_)) => {
                let mats = kids.filter(|m| m.has_tag_name("material")).map(material);
                self.merge(Collection {
                    name: c,
                    materials: mats.collect(),
                });
            }
            ("remove", Some(c), Some(m)) => {
                if let Some(x) = self.collections.iter_mut().find(|x| x.name == c) {
                    x.materials.retain(|y| y.name != m);
                }
            }
            ("remove", Some(c), None) => self.collections.retain(|x| x.name != c),
            (kind, _, _) => warnings.push(Warning::new(
                Some(op.range().start as u64),
                "material_library.diff",
                format!("<{kind} sel=\"{sel}\"> is not applied (only collections and materials are patched)"),
            )),
        }
    }

    /// The material an XMF names `collection.material` (any case).
    pub fn find(&self, name: &str) -> Option<&Material> {
        let (c, m) = name.split_once('.')?;
        self.collections
            .iter()
            .rev()
            .find(|x| x.name.eq_ignore_ascii_case(c))?
            .materials
            .iter()
            .rev()
            .find(|x| x.name.eq_ignore_ascii_case(m))
    }

    /// Gives each material of `scene` named in the library its textures and look as
    /// `crate::material::x4` maps them, its bitmaps in `extras.x4.textures` and every property
    /// in `extras.x4.properties`. Returns how many materials the library resolved.
    pub fn apply_to_scene(&self, scene: &mut Scene) -> usize {
        let mut n = 0;
        for m in &mut scene.materials {
            let Some(lib) = self.find(&m.name) else {
                continue;
            };
            n += 1;
            let props: Vec<(&str, &str, &str)> = lib
                .properties
                .iter()
                .map(|p| (p.ty.as_str(), p.name.as_str(), p.value.as_str()))
                .collect();
            let (textures, look, all) = crate::material::x4(&props);
            let bitmaps: Map<String, Value> = lib
                .properties
                .iter()
                .filter(|p| p.ty.eq_ignore_ascii_case("bitmap") && !p.value.is_empty())
                .map(|p| (p.name.clone(), json!(p.value)))
                .collect();
            m.textures = textures;
            m.look = look;
            let x4 = m
                .extras
                .entry("x4")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(o) = x4 {
                o.insert("textures".into(), Value::Object(bitmaps));
                o.insert("properties".into(), Value::Object(all));
                if !lib.shader.is_empty() {
                    o.insert("shader".into(), json!(lib.shader));
                }
            }
        }
        n
    }
}

/// `m` as the library writes a material, its first line at `at` and each level `unit` deeper.
fn material_xml(m: &Material, at: &str, unit: &str) -> String {
    let mut s = format!(
        "<material name=\"{}\" shader=\"{}\" blendmode=\"NONE\" preview=\"none\">\n{at}{unit}<properties>\n",
        escaped(&m.name),
        escaped(&m.shader)
    );
    for p in &m.properties {
        s += &format!(
            "{at}{unit}{unit}<property type=\"{}\" name=\"{}\" value=\"{}\"/>\n",
            escaped(&p.ty),
            escaped(&p.name),
            escaped(&p.value)
        );
    }
    s + &format!("{at}{unit}</properties>\n{at}</material>")
}

/// The whitespace that starts the line `pos` lies on.
fn indent_at(text: &str, pos: usize) -> &str {
    let start = text
        .get(..pos)
        .and_then(|s| s.rfind('\n'))
        .map_or(0, |i| i + 1);
    let line = text.get(start..).unwrap_or("");
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

/// A mod's library `text` with the material `m` of `collection` in it, all else kept byte for
/// byte: a material of that name there already is replaced (an export again), a collection the
/// text has gets it added, else a new one is made (`in_game`: the game's library has that
/// collection, which a `<diff>` then adds to instead). `None` (the mod has no library) gives a
/// new `<diff>` patch, as a mod's library patches the game's.
pub fn with_material(
    text: Option<&str>,
    collection: &str,
    m: &Material,
    in_game: bool,
) -> Result<String> {
    let c = escaped(collection);
    let Some(text) = text else {
        let u = "  ";
        let (open, close, at) = if in_game {
            (
                format!("{u}<add sel=\"/materiallibrary/collection[@name='{c}']\">\n"),
                format!("{u}</add>\n"),
                format!("{u}{u}"),
            )
        } else {
            (
                format!("{u}<add sel=\"/materiallibrary\">\n{u}{u}<collection name=\"{c}\">\n"),
                format!("{u}{u}</collection>\n{u}</add>\n"),
                format!("{u}{u}{u}"),
            )
        };
        return Ok(format!(
            "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<diff>\n{open}{at}{}\n{close}</diff>\n",
            material_xml(m, &at, u)
        ));
    };
    // A byte-order mark stays in front; the ranges below are of the text after it.
    let bom = if text.starts_with('\u{feff}') {
        "\u{feff}"
    } else {
        ""
    };
    let text = &text[bom.len()..];
    let doc = parsed(text)?;
    let root = doc.root_element();
    let unit = if text.contains("\n\t") { "\t" } else { "  " };
    // Lines end as the file's do (Windows editors write CRLF).
    let crlf = |s: String| {
        if text.contains("\r\n") {
            s.replace('\n', "\r\n")
        } else {
            s
        }
    };
    let named = |n: &roxmltree::Node<'_, '_>, tag: &str, name: &str| {
        n.has_tag_name(tag) && n.attribute("name") == Some(name)
    };
    let ours = root
        .descendants()
        .find(|n| named(n, "collection", collection));
    // The same material again: replaced where it stands.
    if let Some(old) = ours.and_then(|c| c.children().find(|x| named(x, "material", &m.name))) {
        let r = old.range();
        let at = indent_at(text, r.start);
        return Ok(format!(
            "{bom}{}{}{}",
            &text[..r.start],
            crlf(material_xml(m, at, unit)),
            &text[r.end..]
        ));
    }
    // Into an element that already holds the collection's materials, before its closing tag.
    let holder = ours.or_else(|| {
        root.children().find(|op| {
            op.has_tag_name("add")
                && selected(op.attribute("sel").unwrap_or(""), "collection").as_deref()
                    == Some(collection)
        })
    });
    let before_close = |n: roxmltree::Node<'_, '_>| -> Option<usize> {
        let end = n.range().end;
        let close = format!("</{}", n.tag_name().name());
        let at = text.get(..end)?.rfind(&close)?;
        // A self-closing element has no closing tag of its own.
        (at > n.range().start && !text[n.range().start..end].trim_end().ends_with("/>"))
            .then_some(at)
    };
    let insert = |at: usize, block: String| -> String {
        let line = text[..at].rfind('\n').map_or(0, |i| i + 1);
        // Inserted as whole lines before the closing tag's line when it stands alone on it.
        let pos = if text[line..at].trim().is_empty() {
            line
        } else {
            at
        };
        format!("{bom}{}{}{}", &text[..pos], crlf(block), &text[pos..])
    };
    if let Some(at) = holder.and_then(before_close) {
        let ind = format!(
            "{}{unit}",
            indent_at(text, holder.map_or(0, |h| h.range().start))
        );
        return Ok(insert(
            at,
            format!("{ind}{}\n", material_xml(m, &ind, unit)),
        ));
    }
    let Some(at) = before_close(root) else {
        return Err(Error::invalid(
            0,
            "material_library",
            "the root element has no closing tag to add a material before",
        ));
    };
    let base = indent_at(text, root.range().start);
    let l1 = format!("{base}{unit}");
    let l2 = format!("{l1}{unit}");
    let l3 = format!("{l2}{unit}");
    let block = match (root.tag_name().name(), in_game) {
        ("diff", true) => format!(
            "{l1}<add sel=\"/materiallibrary/collection[@name='{c}']\">\n{l2}{}\n{l1}</add>\n",
            material_xml(m, &l2, unit)
        ),
        ("diff", false) => format!(
            "{l1}<add sel=\"/materiallibrary\">\n{l2}<collection name=\"{c}\">\n{l3}{}\n{l2}</collection>\n{l1}</add>\n",
            material_xml(m, &l3, unit)
        ),
        _ => format!(
            "{l1}<collection name=\"{c}\">\n{l2}{}\n{l1}</collection>\n",
            material_xml(m, &l2, unit)
        ),
    };
    Ok(insert(at, block))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    fn new_material() -> Material {
        Material {
            name: "red".into(),
            shader: "P1_complex_surface.fx".into(),
            properties: vec![Property {
                ty: "BitMap".into(),
                name: "diffuse_map".into(),
                value: r"extensions\mymod\assets\textures\ship\red_diff".into(),
            }],
        }
    }

    /// The library a text makes applied onto the game's (`GAME`), and its `ship.red`.
    fn red_in(text: &str) -> Option<Material> {
        let mut lib = Library::default();
        lib.apply(GAME).unwrap();
        lib.apply(text).unwrap();
        lib.find("ship.red").cloned()
    }

    /// A new material goes into a mod's library as the game reads it, in each kind of file a mod
    /// has, the rest of the file kept; written again, it is replaced, not doubled.
    #[test]
    fn a_new_material_is_added_to_the_mods_library_keeping_the_rest() {
        let red = new_material();
        // No library yet: a new <diff> that makes the collection.
        let made = with_material(None, "ship", &red, false).unwrap();
        assert!(made.starts_with("<?xml") && made.contains("<add sel=\"/materiallibrary\">"));
        assert_eq!(red_in(&made).as_ref(), Some(&red));
        // The mod's patch (tab-indented, a byte-order mark) with another collection: a new <add>
        // before </diff>, every byte of the patch before it kept.
        let patch = "\u{feff}<diff>\n\t<add sel=\"/materiallibrary\">\n\t\t<collection name=\"other\"/>\n\t</add>\n</diff>\n";
        let added = with_material(Some(patch), "ship", &red, false).unwrap();
        let cut = patch.rfind("</diff>").unwrap();
        assert!(
            added.starts_with(&patch[..cut]) && added.ends_with("</diff>\n"),
            "{added}"
        );
        assert!(added.contains("\n\t\t\t<material name=\"red\""), "{added}");
        assert_eq!(red_in(&added).as_ref(), Some(&red));
        // Again, with another texture: replaced where it stands.
        let mut blue = red.clone();
        blue.properties[0].value = r"assets\blue".into();
        let again = with_material(Some(&added), "ship", &blue, false).unwrap();
        assert_eq!(
            again.matches("<material name=\"red\"").count(),
            1,
            "{again}"
        );
        assert!(again.starts_with("\u{feff}<diff>"), "{again}");
        assert_eq!(red_in(&again).as_ref(), Some(&blue));
        // A patch that adds to the game's collection `ships` already: the material goes in there.
        let into_ships = with_material(Some(PATCH), "ships", &red, true).unwrap();
        assert_eq!(
            into_ships.matches("<add ").count(),
            PATCH.matches("<add ").count()
        );
        let mut lib = Library::default();
        lib.apply(GAME).unwrap();
        lib.apply(&into_ships).unwrap();
        assert_eq!(lib.find("ships.red"), Some(&red));
        // A CRLF file stays CRLF.
        let windows =
            with_material(Some(&PATCH.replace('\n', "\r\n")), "ship", &red, false).unwrap();
        assert_eq!(
            windows.matches('\n').count(),
            windows.matches("\r\n").count()
        );
        assert_eq!(red_in(&windows).as_ref(), Some(&red));
        // A whole library (the root is a game): a new collection before </materiallibrary>.
        let whole = with_material(Some(GAME), "ship", &red, false).unwrap();
        let mut lib = Library::default();
        lib.apply(&whole).unwrap();
        assert_eq!(lib.find("ship.red"), Some(&red));
        assert_eq!(lib.find("ships.hull").map(|m| m.properties.len()), Some(4));
    }

    const GAME: &str = r#"<materiallibrary>
  <collection name="ships">
    <material name="hull" shader="P1_complex_surface.fx">
      <properties>
        <property type="BitMap" name="diffuse_map" value="assets\textures\hull_diff"/>
        <property type="BitMap" name="normal_map" value="assets\textures\hull_norm"/>
        <property type="BitMap" name="specular_map" value="assets\textures\hull_spec"/>
        <property type="Float" name="normalStr" value="1.0"/>
      </properties>
    </material>
    <material name="glass"><properties/></material>
  </collection>
</materiallibrary>"#;

    const PATCH: &str = r#"<diff>
  <add sel="/materiallibrary">
    <collection name="mod"><material name="paint"><properties>
      <property type="BitMap" name="diffuse_map" value="extensions\mymod\assets\paint"/>
      <property type="BitMap" name="color_glow_map" value="extensions\mymod\assets\glow"/>
    </properties></material></collection>
  </add>
  <add sel="//collection[@name='ships']">
    <material name="deck"><properties><property type="BitMap" name="diffuse_map" value="deck"/></properties></material>
  </add>
  <remove sel="/materiallibrary/collection[@name='ships']/material[@name='glass']"/>
  <replace sel="//collection[@name='ships']/material[@name='hull']">
    <material name="hull"><properties><property type="BitMap" name="diffuse_map" value="new_hull"/></properties></material>
  </replace>
  <add sel="//somewhere/else"><x/></add>
</diff>"#;

    /// A bitmap property's value of the material an XMF names `name`.
    fn map(lib: &Library, name: &str, property: &str) -> Option<String> {
        let m = lib.find(name)?;
        let p = m.properties.iter().find(|p| p.name == property)?;
        Some(p.value.clone())
    }

    #[test]
    fn a_library_maps_layers_to_slots() {
        let mut lib = Library::default();
        assert!(lib.apply(GAME).unwrap().is_empty());
        let mut scene = Scene::default();
        for name in ["Ships.HULL", "ships.nothing", "nodot"] {
            scene.materials.push(crate::model::Material {
                name: name.into(),
                ..Default::default()
            });
        }
        assert_eq!(lib.apply_to_scene(&mut scene), 1);
        let hull = &scene.materials[0];
        let t = &hull.textures;
        assert_eq!(t.base_color.as_deref(), Some("assets/textures/hull_diff"));
        assert_eq!(t.normal.as_deref(), Some("assets/textures/hull_norm"));
        assert_eq!(t.emissive, None);
        assert_eq!(
            hull.extras["x4"]["textures"]["specular_map"],
            json!(r"assets\textures\hull_spec")
        );
        assert_eq!(hull.extras["x4"]["properties"]["normalStr"], json!("1.0"));
        assert_eq!(
            hull.look.metallic, 0.0,
            "no metal map, no Metallness: not metal"
        );
        assert_eq!(scene.materials[1].textures, Default::default());
    }

    #[test]
    fn a_diff_adds_removes_and_replaces_materials() {
        let mut lib = Library::default();
        lib.apply(GAME).unwrap();
        let w = lib.apply(PATCH).unwrap();
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].message.contains("//somewhere/else"));
        assert_eq!(
            map(&lib, "mod.paint", "color_glow_map").as_deref(),
            Some(r"extensions\mymod\assets\glow")
        );
        assert_eq!(
            map(&lib, "ships.deck", "diffuse_map").as_deref(),
            Some("deck")
        );
        assert!(lib.find("ships.glass").is_none());
        assert_eq!(
            map(&lib, "ships.hull", "diffuse_map").as_deref(),
            Some("new_hull")
        );
        assert_eq!(map(&lib, "ships.hull", "normal_map"), None);
    }

    #[test]
    fn bad_xml_is_an_error() {
        let e = Library::default().apply("<materiallibrary>").unwrap_err();
        assert_eq!(e.kind, ErrorKind::Invalid);
        let e = Library::default().apply("<other/>").unwrap_err();
        assert!(e.message.contains("<other>"));
    }
}
