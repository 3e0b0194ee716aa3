//! A new ship's materials: those the game has are named as they are; one it lacks becomes an entry
//! of the extension's `libraries/material_library.xml` patch, and its images the textures the
//! entry names, as `convert --textures write` writes a new material (`textures::new_maps`).

use crate::error::{Result, Warning};
use crate::formats::x4xml::material_library::Library;
use crate::model::Scene;
use crate::textures::Edit;
use std::collections::BTreeMap;
use std::path::Path;

/// What the scene's new materials add to the extension.
#[derive(Default)]
pub(crate) struct NewMaterials {
    /// Scene material index and the X4 name (`collection.material`) the XMFs give it.
    pub renamed: Vec<(usize, String)>,
    /// The library patch and the textures, by path inside the extension.
    pub files: Vec<(String, Vec<u8>)>,
    pub warnings: Vec<Warning>,
}

/// Whether the material `name` is one the game (or an extension in view) has: found in `library`
/// when the game is in view; without it, any `collection.material` name is taken as the game's.
fn known(name: &str, library: Option<&Library>) -> bool {
    name.contains('.') && library.is_none_or(|l| l.find(name).is_some())
}

/// The scene's materials a part uses that `library` lacks: each named `<id>.<name>` (a name that
/// has its collection keeps it), an entry of a new `<diff>` of the game's library with shader
/// `P1_complex_surface.fx`, and its `images` (by the glTF's material names) written as BC3, gzip'd,
/// at `assets/textures/<collection>/<material>_<map>.gz`, named `extensions\<folder>\...`.
pub(crate) fn new_materials(
    scene: &Scene,
    id: &str,
    folder: &str,
    images: &[Edit],
    library: Option<&Library>,
) -> Result<NewMaterials> {
    let mut used: Vec<usize> = scene
        .meshes
        .iter()
        .flat_map(|m| m.primitives.iter().filter_map(|p| p.material))
        .filter(|&i| i < scene.materials.len())
        .collect();
    used.sort_unstable();
    used.dedup();
    let component = format!("{id}.xml");
    // Scene name -> X4 name of each new material.
    let mut names: BTreeMap<String, String> = BTreeMap::new();
    let mut out = NewMaterials::default();
    for i in used {
        let name = scene.materials[i].name.trim();
        if known(name, library) {
            continue;
        }
        let plain = if name.is_empty() {
            format!("material{i}")
        } else {
            name.to_string()
        };
        let x4 = crate::textures::x4_material_name(Path::new(&component), &plain)
            .unwrap_or_else(|| plain.to_lowercase());
        names.insert(name.to_string(), x4.clone());
        out.renamed.push((i, x4));
    }
    if names.is_empty() {
        return Ok(out);
    }
    // A new material's images are new too, whatever game path a glTF gave them.
    let new: Vec<Edit> = images
        .iter()
        .filter(|e| names.contains_key(e.material.trim()))
        .map(|e| Edit {
            key: String::new(),
            ..e.clone()
        })
        .collect();
    let refs: Vec<&Edit> = new.iter().collect();
    let name_of = |m: &str| {
        names
            .get(m.trim())
            .cloned()
            .unwrap_or_else(|| m.to_string())
    };
    let prefix = format!("extensions\\{folder}\\");
    let (textures, mut maps) = crate::textures::new_maps(&refs, name_of, &prefix, Path::new(""))?;
    for (scene_name, x4) in &names {
        let n = maps.get(x4).map_or(0, Vec::len);
        out.warnings.push(Warning::note(
            None,
            "materials",
            format!(
                "material {scene_name:?} is not in the game's library: written as {x4:?} in libraries/material_library.xml with {n} texture map{}",
                if n == 1 { "" } else { "s" }
            ),
        ));
        maps.entry(x4.clone()).or_default();
    }
    for (file, bytes, _) in textures {
        out.files
            .push((file.to_string_lossy().replace('\\', "/"), bytes));
    }
    if let Some(text) = crate::textures::with_materials(None, maps, library)? {
        out.files
            .push(("libraries/material_library.xml".into(), text.into_bytes()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Material, Mesh, Primitive};

    fn scene(materials: &[&str]) -> Scene {
        Scene {
            meshes: vec![Mesh {
                primitives: (0..materials.len())
                    .map(|i| Primitive {
                        indices: vec![0, 1, 2],
                        material: Some(i),
                    })
                    .collect(),
                ..Default::default()
            }],
            materials: materials
                .iter()
                .map(|n| Material {
                    name: n.to_string(),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn only_materials_the_game_lacks_are_written() {
        let mut lib = Library::default();
        lib.apply(r#"<materiallibrary><collection name="p1"><material name="hull" shader="x"/></collection></materiallibrary>"#)
            .unwrap();
        let s = scene(&["p1.hull", "p1.gone", "Red Paint"]);
        let n = new_materials(&s, "ship_x", "ext", &[], Some(&lib)).unwrap();
        assert_eq!(
            n.renamed,
            [
                (1, "p1.gone".to_string()),
                (2, "ship_x.red_paint".to_string())
            ]
        );
        assert_eq!(n.files.len(), 1);
        let text = String::from_utf8(n.files[0].1.clone()).unwrap();
        // p1 is the game's collection: added into it; ship_x is new.
        assert!(
            text.contains("<add sel=\"/materiallibrary/collection[@name='p1']\">"),
            "{text}"
        );
        assert_eq!(text.matches("<material ").count(), 2, "{text}");
        // Without the game in view, a collection.material name is taken as the game's.
        let n = new_materials(&s, "ship_x", "ext", &[], None).unwrap();
        assert_eq!(n.renamed, [(2, "ship_x.red_paint".to_string())]);
        let n = new_materials(&scene(&["p1.hull"]), "ship_x", "ext", &[], None).unwrap();
        assert!(n.renamed.is_empty() && n.files.is_empty());
    }
}
