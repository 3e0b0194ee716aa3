//! Scene -> component: the original XML text travels in the root node's `extras` and comes back
//! unchanged except for the `<offset>` of parts that moved; every part's meshes are written as
//! game-ready XMFs; the .ani comes back as it was read.

use crate::error::{Error, ErrorKind, Result, Warning};
use crate::formats::{ani, x4xml::escaped, xmf};
use crate::model::{Node, Property, Role, Scene};
use crate::vfs::GameView;
use base64::Engine;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::part::PartMeshes;
use super::read::{
    part_mesh, split_piece_as_written, valid_part_name, x4, Offset, Piece, ROOT_KEY,
};

/// Files produced by [`from_scene`], to be written together.
#[derive(Debug, Default)]
pub struct Written {
    pub files: Vec<(PathBuf, Vec<u8>)>,
    pub warnings: Vec<Warning>,
}

/// Writes the scene back as `out` (the component XML), its data folder beside it and the .ani.
/// Nothing is written here: the caller writes every returned file, each atomically. An untouched
/// part is its source file's bytes, read from disk, a game (`GAME::path`) or one of `views`
/// (by its label: the files a browser page opened).
pub fn from_scene(scene: &Scene, out: &Path, views: &[GameView]) -> Result<Written> {
    let mut w = Written::default();
    let root = scene
        .nodes
        .iter()
        .position(|n| n.extras.get(ROOT_KEY).is_some_and(Value::is_object));
    let here = out.parent().unwrap_or(Path::new("")).to_path_buf();
    let stem = out
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "component".into());

    // Part nodes: marked by hangar, or (a new or foreign glTF) any node whose own children carry meshes.
    let mut parts: Vec<usize> = (0..scene.nodes.len())
        .filter(|&i| {
            scene
                .nodes
                .get(i)
                .is_some_and(|n| x4(n).is_some_and(|m| m.contains_key("part")))
        })
        .collect();

    let (xml_text, data_name) = match root.and_then(|r| scene.nodes.get(r)) {
        Some(r) => {
            let info = r.extras.get(ROOT_KEY).and_then(Value::as_object);
            let xml = info
                .and_then(|m| m.get("xml"))
                .and_then(Value::as_str)
                .unwrap_or("");
            let data = info
                .and_then(|m| m.get("data"))
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or(format!("{stem}_data"));
            let added = added_parts(scene, root, &parts);
            let text = patch_offsets(scene, xml, &parts, &added, &mut w.warnings)?;
            parts.extend(added);
            (text, data)
        }
        None => {
            refuse_stripped(scene).map_err(|e| e.in_file(out))?;
            new_component(scene, &stem, &mut w)?
        }
    };
    let parts: Vec<usize> = if root.is_some() {
        parts
    } else {
        new_parts(scene)
    };
    // Wrecks hold meshes as parts do (`name_wreck-lod0.xmf`) but have no connection.
    let wrecks = (0..scene.nodes.len()).filter(|&i| {
        scene
            .nodes
            .get(i)
            .is_some_and(|n| x4(n).is_some_and(|m| m.contains_key("wreck")))
    });
    let holders: Vec<usize> = parts.iter().copied().chain(wrecks).collect();
    if parts.is_empty() {
        return Err(Error::refused(
            "nodes",
            "no node looks like a part (a node made by hangar from a component, or one holding a mesh)",
        )
        .in_file(out));
    }
    if !valid_part_name(&data_name) || data_name.starts_with('.') {
        return Err(Error::refused(
            "extras.x4component.data",
            format!("{data_name:?} is not a folder name beside the XML"),
        )
        .in_file(out));
    }
    let data_dir = here.join(&data_name);

    // Every part's meshes: its child nodes marked as lod or collision; an unmarked mesh is lod0.
    let mut views: HashMap<String, Option<GameView>> = views
        .iter()
        .map(|v| (v.label_of(""), Some(v.clone())))
        .collect();
    for &p in &holders {
        let Some(pn) = scene.nodes.get(p) else {
            continue;
        };
        let part = part_name(pn).to_string();
        if !valid_part_name(&part) {
            return Err(Error::refused(
                format!("nodes[{p}]"),
                format!(
                    "node {:?}: {part:?} is not a valid part name (letters, digits, _ - . only)",
                    pn.name
                ),
            )
            .in_file(out));
        }
        let mut meshes: Vec<(usize, usize)> = Vec::new();
        if let Some(m) = pn.mesh {
            meshes.push((p, m));
        }
        for (ci, c) in scene.nodes.iter().enumerate() {
            if c.parent == Some(p) && !holders.contains(&ci) {
                if let Some(m) = c.mesh {
                    meshes.push((ci, m));
                }
            }
        }
        let mut names_used: Vec<String> = Vec::new();
        for (ni, mi) in meshes {
            let (Some(node), Some(mesh)) = (scene.nodes.get(ni), scene.meshes.get(mi)) else {
                continue;
            };
            let mark = x4(node);
            // A part reused from another component stays a reference in the XML.
            if mark.is_some_and(|m| m.contains_key("reused")) {
                continue;
            }
            // The component's own record decides (a part may be named `anim_ladder_collision`);
            // the role when there is none.
            let collision = match mark.map(|m| (m.get("collision"), m.get("lod"))) {
                Some((Some(_), _)) => true,
                Some((None, Some(_))) => false,
                _ => node.role == Role::Collision,
            };
            let lod = mark
                .and_then(|m| m.get("lod"))
                .and_then(Value::as_u64)
                .unwrap_or(0);
            let file = if collision {
                format!("{part}-collision.xmf")
            } else {
                format!("{part}-lod{lod}.xmf")
            };
            let file = mark
                .and_then(|m| m.get("file"))
                .and_then(Value::as_str)
                .filter(|f| {
                    // The name it was read under: the same, or a part's second collision mesh
                    // (`-collision1.xmf`).
                    f.eq_ignore_ascii_case(&file)
                        || (collision
                            && f.strip_suffix(".xmf")
                                .and_then(split_piece_as_written)
                                .is_some_and(|(p, piece)| {
                                    piece == Piece::Collision && p.eq_ignore_ascii_case(&part)
                                }))
                })
                .map(str::to_string)
                .unwrap_or(file);
            if names_used.contains(&file.to_lowercase()) {
                w.warnings.push(Warning::new(
                    None,
                    format!("nodes[{ni}]"),
                    format!("node {:?}: a second mesh for {file}: left out", node.name),
                ));
                continue;
            }
            names_used.push(file.to_lowercase());
            let target = if collision {
                xmf::write::Target::Collision
            } else {
                xmf::write::Target::Visual
            };
            if let Some(original) = original_xmf(mark, mesh, &scene.materials, &mut views) {
                w.files.push((data_dir.join(file), original));
                continue;
            }
            let (x, ww) = xmf::mesh::from_mesh(mesh, &scene.materials, target).map_err(|e| {
                Error::new(
                    e.kind,
                    e.offset,
                    format!("nodes[{ni}].{}", e.path),
                    format!("node {:?}: {}", node.name, e.message),
                )
                .in_file(out)
            })?;
            w.warnings.extend(ww);
            let bytes = xmf::write::write(&x).map_err(|e| e.in_file(out))?;
            w.files.push((data_dir.join(file), bytes));
        }
    }

    carried_files(root.and_then(|r| scene.nodes.get(r)), &data_dir, &mut w)
        .map_err(|e| e.in_file(out))?;

    // The .ani: one state a glTF animation; when every state still has the keys hangar read, the
    // file as it was read.
    let stored = root
        .and_then(|r| scene.nodes.get(r))
        .and_then(|r| r.extras.get(ROOT_KEY))
        .and_then(|m| m.get("ani"));
    let stored_bytes = stored
        .map(|a| stored_file(a, "extras.x4component.ani".into()).map_err(|e| e.in_file(out)))
        .transpose()?;
    let ani_name = stored
        .and_then(|a| a.get("file"))
        .and_then(Value::as_str)
        .filter(|f| valid_part_name(f))
        .map(str::to_string)
        .unwrap_or(format!("{data_name}.ani"));
    if !scene.animations.is_empty() {
        let mut part_of = |node: usize| {
            let mut n = Some(node);
            for _ in 0..scene.nodes.len() {
                let i = n?;
                if parts.contains(&i) {
                    return scene.nodes.get(i).map(|p| part_name(p).to_string());
                }
                n = scene.nodes.get(i).and_then(|x| x.parent);
            }
            None
        };
        let animations = with_stored_keys(&scene.animations, stored_bytes.as_deref());
        let (built, ww) =
            ani::from_animations(&animations, &mut part_of).map_err(|e| e.in_file(out))?;
        w.warnings.extend(ww);
        let bytes = match stored_bytes {
            Some(b) if built.unchanged => b,
            _ => ani::write(&built.ani).map_err(|e| e.in_file(out))?,
        };
        w.files.push((here.join(ani_name), bytes));
    } else if let Some(b) = stored_bytes {
        w.warnings.push(Warning::new(
            None,
            "animations",
            "the glTF has no animations: the .ani read with the component is written back as it was",
        ));
        w.files.push((here.join(ani_name), b));
    }
    w.files.push((out.to_path_buf(), xml_text.into_bytes()));
    Ok(w)
}

/// The data folder's files no part showed, as the component's extras carry them (see
/// `read::carry_unshown`), added where the meshes did not write the same name.
fn carried_files(root: Option<&Node>, data_dir: &Path, w: &mut Written) -> Result<()> {
    let carried = root
        .and_then(|r| r.extras.get(ROOT_KEY))
        .and_then(|m| m.get("files"))
        .and_then(Value::as_array);
    for (i, f) in carried.into_iter().flatten().enumerate() {
        let at = format!("extras.x4component.files[{i}]");
        let name = f.get("file").and_then(Value::as_str).unwrap_or_default();
        // Only names inside the folder: a glTF must not write elsewhere.
        let parts: Vec<&str> = name.split('/').collect();
        if parts
            .iter()
            .any(|p| !valid_part_name(p) || p.starts_with('.'))
        {
            return Err(Error::refused(
                at,
                format!("{name:?} is not a file name inside the data folder"),
            ));
        }
        let bytes = stored_file(f, at)?;
        let path = parts.iter().fold(data_dir.to_path_buf(), |p, s| p.join(s));
        let lower = path.to_string_lossy().to_lowercase();
        if !w
            .files
            .iter()
            .any(|(p, _)| p.to_string_lossy().to_lowercase() == lower)
        {
            w.files.push((path, bytes));
        }
    }
    Ok(())
}

/// The bytes of a file the component's extras carry (`{"file": ..., "bytes": base64}`).
fn stored_file(f: &Value, at: String) -> Result<Vec<u8>> {
    f.get("bytes")
        .and_then(Value::as_str)
        .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok())
        .ok_or_else(|| {
            Error::new(
                ErrorKind::Invalid,
                None,
                at,
                "the stored file is not base64",
            )
        })
}

/// The animations, each with the keys its state has in the stored .ani (`stored`) where the glTF
/// kept only the component's extras, not the animations' (Blender's exporter keeps no action
/// properties): a state a tool resampled but did not change is still known as unchanged.
fn with_stored_keys<'a>(
    animations: &'a [crate::model::Animation],
    stored: Option<&[u8]>,
) -> std::borrow::Cow<'a, [crate::model::Animation]> {
    let lost = animations.iter().any(|a| !a.extras.contains_key("ani"));
    let Some(bytes) = stored.filter(|_| lost) else {
        return std::borrow::Cow::Borrowed(animations);
    };
    let Ok((ani, _)) = ani::read(bytes) else {
        return std::borrow::Cow::Borrowed(animations);
    };
    let (read, _) = ani::animations(&ani, &mut |_| Some(0));
    let mut out = animations.to_vec();
    for a in out.iter_mut().filter(|a| !a.extras.contains_key("ani")) {
        if let Some(r) = read.iter().find(|r| r.name == a.name) {
            if let Some(v) = r.extras.get("ani") {
                a.extras.insert("ani".into(), v.clone());
            }
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The XMF a mesh node was read from, when the mesh still draws what that file draws (in any
/// vertex order, through any tool: see [`crate::model::same_shape`]): an untouched part is written
/// back byte for byte (mods diff cleanly).
fn original_xmf(
    mark: Option<&Map<String, Value>>,
    mesh: &crate::model::Mesh,
    materials: &[crate::model::Material],
    views: &mut HashMap<String, Option<GameView>>,
) -> Option<Vec<u8>> {
    let path = mark?.get("source")?.get("path")?.as_str()?;
    let (game, inside) = crate::vfs::split_spec(path)?;
    let file = inside.rsplit('/').next()?;
    let stem = file
        .strip_suffix(".xmf")
        .or_else(|| file.strip_suffix(".XMF"))?;
    let (_, piece) = split_piece_as_written(stem)?;
    let view = views
        .entry(game.display().to_string())
        .or_insert_with(|| GameView::open(&game).ok())
        .as_ref()?;
    let bytes = view.read(inside).ok()?;
    let (was, _) = part_mesh(&bytes, stem, piece).ok()?;
    let [original] = &was.meshes[..] else {
        return None;
    };
    crate::model::same_shape(mesh, materials, original, &was.materials).then(|| bytes.to_vec())
}

/// The original XML with the `<offset>` of every moved part replaced (untouched: the same text).
/// Mesh nodes added in Blender under the component or under a part: each becomes a new part.
fn added_parts(scene: &Scene, root: Option<usize>, parts: &[usize]) -> Vec<usize> {
    (0..scene.nodes.len())
        .filter(|&i| {
            scene.nodes.get(i).is_some_and(|n| {
                n.mesh.is_some()
                    && n.role != Role::Collision
                    && x4(n).is_none()
                    && n.extras.get(ROOT_KEY).is_none()
                    && n.parent
                        .is_some_and(|p| Some(p) == root || parts.contains(&p))
            })
        })
        .collect()
}

/// The name a part node stands for: the full name kept in `extras` (Blender cuts names at 63
/// characters), else the node's name.
fn part_name(n: &Node) -> &str {
    x4(n)
        .and_then(|m| m.get("part").or_else(|| m.get("wreck")))
        .and_then(Value::as_str)
        .unwrap_or(&n.name)
}

fn patch_offsets(
    scene: &Scene,
    xml: &str,
    parts: &[usize],
    added: &[usize],
    warnings: &mut Vec<Warning>,
) -> Result<String> {
    let doc = crate::xml::parse(xml).map_err(|e| {
        Error::new(
            ErrorKind::Invalid,
            None,
            "extras.x4component.xml",
            format!("the stored XML is not well-formed: {e}"),
        )
    })?;
    // Connections by name, in document order.
    let conns: Vec<roxmltree::Node<'_, '_>> = doc
        .descendants()
        .filter(|n| {
            n.has_tag_name("connection")
                && n.parent().is_some_and(|p| p.has_tag_name("connections"))
        })
        .collect();
    let mut edits: Vec<(std::ops::Range<usize>, String)> = Vec::new();
    let mut done: Vec<String> = Vec::new();
    for &p in parts {
        let Some(n) = scene.nodes.get(p) else {
            continue;
        };
        let Some(conn_name) = x4(n)
            .and_then(|m| m.get("connection"))
            .and_then(Value::as_str)
        else {
            continue;
        };
        if done.iter().any(|d| d == conn_name) {
            continue;
        }
        done.push(conn_name.to_string());
        let Some(c) = conns
            .iter()
            .find(|c| c.attribute("name") == Some(conn_name))
        else {
            continue;
        };
        let old = Offset::of(*c, &mut Vec::new(), "");
        let (t, r) = rest_pose(scene, p, &old);
        let new = Offset::from_gltf(t, r);
        if old.same_place(&new) {
            continue;
        }
        match c.children().find(|e| e.has_tag_name("offset")) {
            Some(off) => {
                let line_start = xml
                    .get(..off.range().start)
                    .and_then(|s| s.rfind('\n'))
                    .map_or(0, |i| i + 1);
                let indent: String = xml
                    .get(line_start..off.range().start)
                    .unwrap_or("")
                    .chars()
                    .take_while(|c| c.is_whitespace())
                    .collect();
                edits.push((off.range(), new.xml(&indent)));
            }
            None => warnings.push(Warning::new(
                Some(c.range().start as u64),
                "connection",
                format!("connection {conn_name:?} has no <offset> to move: kept in place"),
            )),
        }
    }
    if !added.is_empty() {
        let close = doc
            .root_element()
            .children()
            .find(|c| c.has_tag_name("component"))
            .and_then(|c| c.children().find(|e| e.has_tag_name("connections")))
            .and_then(|c| {
                let r = c.range();
                xml.get(r.clone())?
                    .rfind("</connections>")
                    .map(|i| r.start + i)
            });
        match close {
            Some(at) => {
                let mut text = String::new();
                for (k, &a) in added.iter().enumerate() {
                    let Some(n) = scene.nodes.get(a) else {
                        continue;
                    };
                    let parent = n
                        .parent
                        .filter(|p| parts.contains(p))
                        .and_then(|p| scene.nodes.get(p))
                        .map(part_name);
                    // Inserted after the indentation of the closing tag, which it then restores.
                    text.push_str(&connection_xml(
                        "\t",
                        &format!("hangar_added_{:02}", k + 1),
                        parent,
                        n,
                        scene,
                    ));
                    text.push_str("\t\t");
                }
                edits.push((at..at, text));
            }
            None => warnings.push(Warning::new(
                None,
                "connections",
                "the component has no <connections>: new mesh nodes are left out",
            )),
        }
    }
    edits.sort_by_key(|e| std::cmp::Reverse(e.0.start));
    let mut out = xml.to_string();
    for (range, text) in edits {
        if out.get(range.clone()).is_some() {
            out.replace_range(range, &text);
        }
    }
    Ok(out)
}

/// Where node `p` rests: its translation and rotation, except that a property an animation drives,
/// when the node holds it at one of the animation's keys (a tool exported the pose of the current
/// frame, not the rest), rests where the XML's `old` offset says.
fn rest_pose(scene: &Scene, p: usize, old: &Offset) -> (glam::Vec3, glam::Quat) {
    let Some(n) = scene.nodes.get(p) else {
        return (*old).to_gltf();
    };
    let (old_t, old_r) = (*old).to_gltf();
    let posed = |property: Property, now: &[f32]| {
        scene
            .animations
            .iter()
            .flat_map(|a| &a.channels)
            .filter(|c| c.node == p && c.property == property)
            .any(|c| {
                (0..c.times.len()).filter_map(|k| c.key_value(k)).any(|v| {
                    let near = |sign: f32| {
                        v.iter()
                            .zip(now)
                            .all(|(a, b)| (a - sign * b).abs() <= 1e-4 * (1.0 + a.abs()))
                    };
                    near(1.0) || (property == Property::Rotation && near(-1.0))
                })
            })
    };
    let t = if posed(Property::Translation, &n.translation.to_array()) {
        old_t
    } else {
        n.translation
    };
    let r = if posed(Property::Rotation, &n.rotation.to_array()) {
        old_r
    } else {
        n.rotation
    };
    (t, r)
}

/// A `<connection>` holding the part `n` (named by the node) at its place, under `parent`. Its
/// mesh is the part's lod0, as the writer writes a new part's.
fn connection_xml(
    indent: &str,
    name: &str,
    parent: Option<&str>,
    n: &Node,
    scene: &Scene,
) -> String {
    let parent = parent
        .map(|p| format!(" parent=\"{}\"", escaped(p)))
        .unwrap_or_default();
    let off = Offset::from_gltf(n.translation, n.rotation);
    let mut meshes = PartMeshes::default();
    if let Some(m) = n.mesh.and_then(|m| scene.meshes.get(m)) {
        meshes.add_lod(0, m, &scene.materials);
    }
    format!(
        "{indent}<connection name=\"{name}\" tags=\"part\"{parent}>\n\t\t\t\t{}\n\t\t\t\t<parts>\n\t\t\t\t\t{}\n\t\t\t\t</parts>\n\t\t\t</connection>\n",
        off.xml("\t\t\t\t"),
        meshes.xml("\t\t\t\t\t", &n.name)
    )
}

/// A glTF hangar made from a component whose extras a tool dropped (Blender's glTF exporter does
/// unless "Custom Properties" is ticked) would come back as a new generic component: refused,
/// naming the way out. Told by hangar's layout: a node `part` holding a mesh node `part-lod0`.
fn refuse_stripped(scene: &Scene) -> Result<()> {
    let made_by_hangar = scene.nodes.iter().find(|n| {
        let parent = n.parent.and_then(|p| scene.nodes.get(p));
        n.mesh.is_some()
            && split_piece_as_written(&n.name)
                .zip(parent)
                .is_some_and(|((part, _), p)| p.name.eq_ignore_ascii_case(part))
    });
    match made_by_hangar {
        Some(n) => Err(Error::refused(
            "nodes",
            format!(
                "this glTF was made by hangar from a component (node {:?} is a part's mesh) but has lost the component's data (glTF extras; Blender's exporter drops them unless Include > Custom Properties is ticked): name the component it came from with --original SRC.xml",
                n.name
            ),
        )),
        None => Ok(()),
    }
}

/// Nodes of a glTF hangar did not make from a component that become parts: each node holding a mesh.
fn new_parts(scene: &Scene) -> Vec<usize> {
    (0..scene.nodes.len())
        .filter(|&i| {
            scene
                .nodes
                .get(i)
                .is_some_and(|n| n.mesh.is_some() && n.role != Role::Collision)
        })
        .collect()
}

/// A new component XML for a glTF hangar did not make: one connection a mesh node, parented as in the glTF.
fn new_component(scene: &Scene, stem: &str, w: &mut Written) -> Result<(String, String)> {
    let parts = new_parts(scene);
    let data = format!("{stem}_data");
    let mut s = format!(
        "<?xml version=\"1.0\"?>\n<components>\n\t<component name=\"{}\" class=\"ship_s\">\n\t\t<source geometry=\"{}\"/>\n\t\t<connections>\n",
        escaped(stem),
        escaped(&data)
    );
    for (k, &p) in parts.iter().enumerate() {
        let Some(n) = scene.nodes.get(p) else {
            continue;
        };
        let parent = n
            .parent
            .and_then(|q| parts.contains(&q).then(|| scene.nodes.get(q)).flatten())
            .map(|q| q.name.as_str());
        s.push_str(&connection_xml(
            "\t\t\t",
            &format!("Connection{:02}", k + 1),
            parent,
            n,
            scene,
        ));
    }
    s.push_str("\t\t</connections>\n\t</component>\n</components>\n");
    w.warnings.push(Warning::new(
        None,
        "component",
        format!("the scene is no component (hangar keeps one in its glTF extras): a new component of {} parts (class ship_s) is written", parts.len()),
    ));
    Ok((s, data))
}
