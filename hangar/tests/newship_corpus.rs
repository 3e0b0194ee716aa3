//! `hangar::new_ship` on real ships (what `../shared/acceptance/newship` does): each ship of the
//! corpus's dropships mod read as a scene, stripped to what a modder who built it would have
//! (parts as meshes named after the part, connections with an offset as empties carrying their XML
//! attributes; no LODs, collision meshes, lights or hangar extras), and built again with its own
//! macro as the template under a new id. The new extension must give back every connection and
//! part, lod0's triangles, collision meshes, LODs, the macro, ware, index, texts and content.xml,
//! and `hangar::check_mod` must find no error with the template mod beside it.

mod common;
use hangar::model::{Node, Scene};
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

const MOD: &str = "xirsoi__dropships__dropships";

/// A connection as compared: tags (words), parent, position (game axes), with parts or not.
#[derive(Debug, Clone, PartialEq)]
struct Conn {
    tags: Vec<String>,
    parent: String,
    pos: [f32; 3],
}

/// Connections of a component by key: `part:<name>` for part connections, `con:<name>` else.
fn connections(xml: &str) -> HashMap<String, (Conn, bool)> {
    let doc = roxmltree::Document::parse(xml).unwrap();
    let mut out = HashMap::new();
    for c in doc.descendants().filter(|c| c.has_tag_name("connection")) {
        let off = c.children().find(|x| x.has_tag_name("offset"));
        let p = off.and_then(|o| o.children().find(|x| x.has_tag_name("position")));
        let num = |k: &str| {
            p.and_then(|p| p.attribute(k))
                .map_or(0.0, |v| v.trim().parse::<f32>().unwrap())
        };
        let mut tags: Vec<String> = c
            .attribute("tags")
            .unwrap_or("")
            .split_whitespace()
            .map(str::to_lowercase)
            .filter(|t| t != "part")
            .collect();
        tags.sort();
        let conn = Conn {
            tags,
            parent: c.attribute("parent").unwrap_or("").to_lowercase(),
            pos: [num("x"), num("y"), num("z")],
        };
        let parts: Vec<&str> = c
            .descendants()
            .filter(|x| x.has_tag_name("part"))
            .filter_map(|x| x.attribute("name"))
            .collect();
        if parts.is_empty() {
            let name = c.attribute("name").unwrap_or("").to_lowercase();
            out.insert(format!("con:{name}"), (conn.clone(), off.is_some()));
        }
        for p in parts {
            out.insert(format!("part:{}", p.to_lowercase()), (conn.clone(), true));
        }
    }
    out
}

fn x4(n: &Node) -> Option<&serde_json::Map<String, Value>> {
    n.extras.get("x4").and_then(Value::as_object)
}

/// The scene a modder would have built: parts and placed connections with their attributes.
fn stripped(scene: &Scene, xml: &str) -> Scene {
    let doc = roxmltree::Document::parse(xml).unwrap();
    let attrs_of = |name: &str| -> serde_json::Map<String, Value> {
        doc.descendants()
            .find(|c| c.has_tag_name("connection") && c.attribute("name") == Some(name))
            .map(|c| {
                c.attributes()
                    .filter(|a| a.name() != "name" && a.name() != "parent")
                    .map(|a| (a.name().to_string(), Value::from(a.value())))
                    .collect()
            })
            .unwrap_or_default()
    };
    let placed = |name: &str| {
        doc.descendants().any(|c| {
            c.has_tag_name("connection")
                && c.attribute("name") == Some(name)
                && c.children().any(|x| x.has_tag_name("offset"))
        })
    };
    let mut out = Scene {
        meshes: scene.meshes.clone(),
        materials: scene.materials.clone(),
        ..Default::default()
    };
    let mut new_of: HashMap<usize, usize> = HashMap::new();
    for (i, n) in scene.nodes.iter().enumerate() {
        let Some(m) = x4(n) else { continue };
        let conn = m.get("connection").and_then(Value::as_str).unwrap_or("");
        let (name, mesh) = if let Some(part) = m.get("part").and_then(Value::as_str) {
            let lod0 = scene.nodes.iter().find(|c| {
                c.parent == Some(i)
                    && c.mesh.is_some()
                    && x4(c).and_then(|x| x.get("lod")) == Some(&Value::from(0))
            });
            (part.to_string(), lod0.and_then(|c| c.mesh))
        } else if !conn.is_empty() && m.contains_key("attributes") && placed(conn) {
            (conn.to_string(), None)
        } else {
            continue;
        };
        let mut node = Node::new(name);
        node.translation = n.translation;
        node.rotation = n.rotation;
        node.mesh = mesh;
        node.extras = attrs_of(conn);
        node.parent = n.parent.and_then(|p| new_of.get(&p).copied());
        new_of.insert(i, out.nodes.len());
        out.nodes.push(node);
    }
    out
}

/// Each part's `<lods>` (index -> material refs as a sorted list) and `<size>` (max, center), by
/// name; None for the size of a part its connection animates (real files bound the whole sweep).
#[allow(clippy::type_complexity)]
fn part_elements(xml: &str) -> HashMap<String, (Vec<(u32, Vec<String>)>, Option<[f32; 6]>)> {
    let doc = roxmltree::Document::parse(xml).unwrap();
    let num = |e: roxmltree::Node<'_, '_>, a: &str| e.attribute(a).unwrap().parse::<f32>().unwrap();
    doc.descendants()
        .filter(|e| e.has_tag_name("part") && e.attribute("ref").is_none())
        .map(|p| {
            let lods = p
                .descendants()
                .filter(|e| e.has_tag_name("lod"))
                .map(|l| {
                    let mut refs: Vec<String> = l
                        .descendants()
                        .filter(|m| m.has_tag_name("material"))
                        .map(|m| m.attribute("ref").unwrap().to_string())
                        .collect();
                    refs.sort();
                    (l.attribute("index").unwrap().parse().unwrap(), refs)
                })
                .collect();
            let animated = p
                .ancestors()
                .find(|a| a.has_tag_name("connection"))
                .is_some_and(|c| c.children().any(|e| e.has_tag_name("animations")));
            let size = p
                .children()
                .find(|e| e.has_tag_name("size"))
                .filter(|_| !animated)
                .map(|s| {
                    let max = s.children().find(|e| e.has_tag_name("max")).unwrap();
                    let c = s.children().find(|e| e.has_tag_name("center")).unwrap();
                    [
                        num(max, "x"),
                        num(max, "y"),
                        num(max, "z"),
                        num(c, "x"),
                        num(c, "y"),
                        num(c, "z"),
                    ]
                });
            (p.attribute("name").unwrap().to_lowercase(), (lods, size))
        })
        .collect()
}

fn triangles(path: &Path) -> usize {
    let (s, _) = hangar::open(path).unwrap().to_scene().unwrap();
    s.meshes.iter().map(|m| m.triangle_count()).sum()
}

fn text(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn dropships_rebuilt_from_their_meshes_and_empties() {
    let Some(root) = common::corpus_root() else {
        return;
    };
    let src = root.join("x4-mods").join(MOD);
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join("newship");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(work.join("extensions")).unwrap();
    // The template mod beside the new one, under the folder its index names.
    #[cfg(unix)]
    std::os::unix::fs::symlink(&src, work.join("extensions/dropships")).unwrap();
    let units = src.join("assets/units/size_m");
    let ships = [
        ("arg_dropship", "arg_dropship_macro"),
        ("spl_dropship", "ship_spl_m_dropship_01_a_macro"),
    ];
    for (k, (comp, macro_name)) in ships.iter().enumerate() {
        let xml_path = units.join(format!("{comp}.xml"));
        let xml = text(&xml_path);
        let (scene, _) = hangar::open(&xml_path).unwrap().to_scene().unwrap();
        let authored = stripped(&scene, &xml);
        let id = format!("{comp}_hn");
        let folder = format!("newship_{k}");
        let template = units.join(format!("macros/{macro_name}.xml"));
        let mut spec = hangar::NewShip::new(template.to_string_lossy(), &id);
        spec.name = Some(format!("Test Ship {k}"));
        spec.folder = Some(folder.clone());
        let ext = hangar::new_ship(&authored, &spec, None).unwrap();
        let out = work.join("extensions").join(&folder);
        ext.write_to(&out, false).unwrap();
        // A second write into the same folder is refused without force.
        assert!(ext.write_to(&out, false).is_err());

        let new_xml = text(&out.join(format!("assets/units/size_m/{id}.xml")));
        let (was, now) = (connections(&xml), connections(&new_xml));
        let mut same = 0;
        for (key, (c, has_offset)) in &was {
            let Some((n, _)) = now.get(key) else {
                panic!("{comp}: {key} missing")
            };
            assert_eq!(n.tags, c.tags, "{comp}: {key}");
            assert_eq!(n.parent, c.parent, "{comp}: {key}");
            if *has_offset {
                for a in 0..3 {
                    assert!(
                        (n.pos[a] - c.pos[a]).abs() < 1e-3,
                        "{comp}: {key} {:?} {:?}",
                        n.pos,
                        c.pos
                    );
                }
            }
            same += 1;
        }
        assert_eq!(same, was.len());
        assert!(same > 40, "{comp}: {same} connections");

        // Geometry: lod0 as the original, collision where it has one, LODs made.
        let (od, nd) = (
            units.join(format!("{comp}_data")),
            out.join(format!("assets/units/size_m/{id}_data")),
        );
        let (mut lods, mut colls) = (0, 0);
        let (old_parts, new_parts) = (part_elements(&xml), part_elements(&new_xml));
        let (mut listed, mut sized, mut still) = (0, 0, 0);
        for key in was.keys().filter_map(|k| k.strip_prefix("part:")) {
            let Some(orig) = hangar_find(&od, &format!("{key}-lod0.xmf")) else {
                continue;
            };
            // The game finds the meshes through `<lods>`: one entry a lod file written, lod0 naming
            // materials the original lists; `<size>` as lod0's box, which real files mostly give.
            let (new_lods, new_size) = &new_parts[&key.to_lowercase()];
            let written: Vec<u32> = (0..4)
                .filter(|l| hangar_find(&nd, &format!("{key}-lod{l}.xmf")).is_some())
                .collect();
            assert_eq!(
                new_lods.iter().map(|l| l.0).collect::<Vec<_>>(),
                written,
                "{comp}: {key}"
            );
            let (old_lods, old_size) = &old_parts[&key.to_lowercase()];
            // (The original may list more than its XMF uses.)
            assert!(
                !new_lods[0].1.is_empty()
                    && new_lods[0].1.iter().all(|m| old_lods[0].1.contains(m)),
                "{comp}: {key} lod0 materials {:?}, the original lists {:?}",
                new_lods[0].1,
                old_lods[0].1
            );
            listed += 1;
            if let (Some(n), Some(o)) = (new_size, old_size) {
                sized += usize::from(n.iter().zip(o).all(|(a, b)| (a - b).abs() < 2e-3));
                still += 1;
            }
            let lod0 = hangar_find(&nd, &format!("{key}-lod0.xmf")).unwrap();
            let t0 = triangles(&orig);
            assert_eq!(triangles(&lod0), t0, "{comp}: {key} lod0");
            let solid = !was[&format!("part:{key}")]
                .0
                .tags
                .iter()
                .any(|t| t == "nocollision");
            if solid && hangar_find(&od, &format!("{key}-collision.xmf")).is_some() {
                assert!(
                    hangar_find(&nd, &format!("{key}-collision.xmf")).is_some(),
                    "{comp}: {key}"
                );
                colls += 1;
            }
            if t0 >= 200 {
                let t1 = triangles(&hangar_find(&nd, &format!("{key}-lod1.xmf")).unwrap());
                let t2 = triangles(&hangar_find(&nd, &format!("{key}-lod2.xmf")).unwrap());
                assert!(
                    t1 * 10 <= t0 * 6 && t2 * 10 <= t1 * 6,
                    "{comp}: {key} {t0} {t1} {t2}"
                );
                lods += 1;
            }
        }
        assert!(
            lods > 5 && colls > 5,
            "{comp}: {lods} parts with LODs, {colls} with collision"
        );
        assert!(
            listed >= 15 && still >= 10 && sized == still,
            "{comp}: {listed} parts listed; of {still} not animated, {sized} sized as the original"
        );
        eprintln!("{comp}: {listed} parts with <lods>; of {still} not animated, {sized} with the original's <size>");

        // Macro, ware, index, texts, content.
        let m = text(&out.join(format!("assets/units/size_m/macros/{id}_macro.xml")));
        assert!(
            m.contains(&format!("name=\"{id}_macro\"")) && m.contains(&format!("ref=\"{id}\""))
        );
        let wares = text(&out.join("libraries/wares.xml"));
        assert!(wares.starts_with("<?xml") && wares.contains("<add sel=\"/wares\">"));
        assert!(wares.contains(&format!("<component ref=\"{id}_macro\"")));
        assert!(wares.contains("<restriction licence=\"militaryship\""));
        let idx = text(&out.join("index/components.xml"));
        assert!(idx.contains(&format!(
            "value=\"extensions\\{folder}\\assets\\units\\size_m\\{id}\""
        )));
        assert!(text(&out.join("t/0001-l044.xml")).contains(&format!(">Test Ship {k}</t>")));
        let content = text(&out.join("content.xml"));
        assert!(content.contains(&format!("id=\"{folder}\"")));
        assert!(content.contains("<dependency id=\"dropships\"/>"));
        // Every material is a game's (`collection.material`): named, no library patch, no texture.
        assert!(!out.join("libraries/material_library.xml").exists());
        assert!(!out.join("assets/textures").exists());

        let (_, errors) = common::mod_errors(&out);
        assert!(errors.is_empty(), "{comp}: {errors:#?}");
    }
}

/// The file `name` in `dir` in any letter case.
fn hangar_find(dir: &Path, name: &str) -> Option<PathBuf> {
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().eq_ignore_ascii_case(name))
        })
}
