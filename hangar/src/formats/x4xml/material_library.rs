//! X4's `libraries/material_library.xml`: collections of materials, each with the texture paths of
//! its layers (`diffuse_map`, `normal_map`, ...). An XMF names its materials `collection.material`.
//! A mod's library is often a `<diff>` patch of the game's: it is applied onto whatever came before.

use crate::error::{Error, ErrorKind, Result, Warning};
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

fn xml_error(e: roxmltree::Error) -> Error {
    Error::new(
        ErrorKind::Invalid,
        None,
        "material_library",
        format!("not well-formed XML: {e}"),
    )
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
        let text = text.trim_start_matches('\u{feff}');
        let doc = roxmltree::Document::parse(text).map_err(xml_error)?;
        let root = doc.root_element();
        if root
            .descendants()
            .any(|n| n.ancestors().count() > MAX_DEPTH)
        {
            return Err(Error::invalid(0, "material_library", "nested too deep"));
        }
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

#[cfg(test)]
mod tests {
    use super::*;

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
