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

/// The game paths of a material's textures, by the glTF slot they go to.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Textures {
    pub diffuse: Option<String>,
    pub normal: Option<String>,
    pub glow: Option<String>,
    /// Every other bitmap (specular, smoothness, metal, ...), by property name.
    pub other: Vec<(String, String)>,
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

    /// The texture game paths of the material an XMF names `collection.material`.
    pub fn textures(&self, name: &str) -> Option<Textures> {
        let m = self.find(name)?;
        let mut t = Textures::default();
        for p in &m.properties {
            if !p.ty.eq_ignore_ascii_case("bitmap") || p.value.is_empty() {
                continue;
            }
            let v = Some(p.value.clone());
            match p.name.to_ascii_lowercase().as_str() {
                "diffuse_map" if t.diffuse.is_none() => t.diffuse = v,
                "normal_map" if t.normal.is_none() => t.normal = v,
                "color_glow_map" | "emissive_map" | "glow_map" if t.glow.is_none() => t.glow = v,
                _ => t.other.push((p.name.clone(), p.value.clone())),
            }
        }
        Some(t)
    }

    /// Gives each material of `scene` named in the library its textures (diffuse to base colour,
    /// normal, glow to emissive), and all its bitmaps in `extras.x4.textures`. Returns how many
    /// materials the library resolved.
    pub fn apply_to_scene(&self, scene: &mut Scene) -> usize {
        let mut n = 0;
        for m in &mut scene.materials {
            let Some(t) = self.textures(&m.name) else {
                continue;
            };
            n += 1;
            let mut all = Map::new();
            for (k, v) in [
                ("diffuse_map", &t.diffuse),
                ("normal_map", &t.normal),
                ("color_glow_map", &t.glow),
            ] {
                if let Some(v) = v {
                    all.insert(k.into(), json!(v));
                }
            }
            for (k, v) in &t.other {
                all.insert(k.clone(), json!(v));
            }
            let norm = |p: &Option<String>| p.as_ref().map(|p| p.replace('\\', "/"));
            m.textures.base_color = norm(&t.diffuse);
            m.textures.normal = norm(&t.normal);
            m.textures.emissive = norm(&t.glow);
            let x4 = m
                .extras
                .entry("x4")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(o) = x4 {
                o.insert("textures".into(), Value::Object(all));
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

    #[test]
    fn a_library_maps_layers_to_slots() {
        let mut lib = Library::default();
        assert!(lib.apply(GAME).unwrap().is_empty());
        let t = lib.textures("Ships.HULL").unwrap();
        assert_eq!(t.diffuse.as_deref(), Some(r"assets\textures\hull_diff"));
        assert_eq!(t.normal.as_deref(), Some(r"assets\textures\hull_norm"));
        assert_eq!(t.glow, None);
        assert_eq!(
            t.other,
            vec![("specular_map".into(), r"assets\textures\hull_spec".into())]
        );
        assert!(lib.textures("ships.nothing").is_none());
        assert!(lib.textures("nodot").is_none());
    }

    #[test]
    fn a_diff_adds_removes_and_replaces_materials() {
        let mut lib = Library::default();
        lib.apply(GAME).unwrap();
        let w = lib.apply(PATCH).unwrap();
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].message.contains("//somewhere/else"));
        assert_eq!(
            lib.textures("mod.paint").unwrap().glow.as_deref(),
            Some(r"extensions\mymod\assets\glow")
        );
        assert_eq!(
            lib.textures("ships.deck").unwrap().diffuse.as_deref(),
            Some("deck")
        );
        assert!(lib.find("ships.glass").is_none());
        let hull = lib.textures("ships.hull").unwrap();
        assert_eq!(hull.diffuse.as_deref(), Some("new_hull"));
        assert_eq!(hull.normal, None);
    }

    #[test]
    fn bad_xml_is_an_error() {
        let e = Library::default().apply("<materiallibrary>").unwrap_err();
        assert_eq!(e.kind, ErrorKind::Invalid);
        let e = Library::default().apply("<other/>").unwrap_err();
        assert!(e.message.contains("<other>"));
    }
}
