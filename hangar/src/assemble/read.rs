//! Component XML -> scene: a node per part placed by its connection's `<offset>` under the part its
//! connection names as `parent` (X mirrored as for XMF); lod0 as the part's mesh, other LODs and
//! collision as marked children; connections without parts as markers; lights; one animation a
//! .ani state. Every file is read through a game view.

use crate::error::{Error, Result, Warning};
use crate::formats::{ani, xmf};
use crate::model::{Light, LightKind, Node, Role, Scene};
use crate::vfs::GameView;
use base64::Engine;
use glam::{Quat, Vec3};
use rayon::prelude::*;
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Key of the root node's extras that carries what the way back needs.
pub(super) const ROOT_KEY: &str = "x4component";
/// Key of every other node's extras that says what the node is in the component.
pub(super) const NODE_KEY: &str = "x4";
/// Parent chains longer than this are cut (real components nest a few levels).
const MAX_DEPTH: usize = 256;

fn invalid_xml(xml: &Path, doc_pos: usize, path: &str, message: impl Into<String>) -> Error {
    Error::invalid(doc_pos as u64, path, message).in_file(xml)
}

/// The entry of `dir` whose name equals `name` in any case (the game ignores case).
pub(crate) fn find_in(dir: &Path, name: &str) -> Option<PathBuf> {
    let lower = name.to_lowercase();
    let entries = std::fs::read_dir(dir).ok()?;
    let mut found: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().to_lowercase() == lower)
        .map(|e| e.path())
        .collect();
    found.sort();
    found.into_iter().next()
}

/// The component XML beside a `<name>_data/` folder (`<name>.xml`, any case), when there is one.
pub fn xml_beside(dir: &Path) -> Option<PathBuf> {
    let name = dir.file_name()?.to_string_lossy().to_lowercase();
    let stem = name.strip_suffix("_data")?;
    let parent = dir.parent().filter(|p| !p.as_os_str().is_empty());
    find_in(parent.unwrap_or(Path::new(".")), &format!("{stem}.xml")).filter(|p| p.is_file())
}

/// An `<offset>`: position and quaternion in the game's frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Offset {
    pos: [f32; 3],
    quat: [f32; 4],
}

impl Default for Offset {
    fn default() -> Self {
        Offset {
            pos: [0.0; 3],
            quat: [0.0, 0.0, 0.0, 1.0],
        }
    }
}

impl Offset {
    pub(crate) fn of(e: roxmltree::Node<'_, '_>, warnings: &mut Vec<Warning>, at: &str) -> Offset {
        let mut o = Offset::default();
        let Some(off) = e.children().find(|c| c.has_tag_name("offset")) else {
            return o;
        };
        let num = |n: roxmltree::Node<'_, '_>, k: &str, d: f32, w: &mut Vec<Warning>| -> f32 {
            match n.attribute(k).map(|v| v.trim().parse::<f32>()) {
                Some(Ok(v)) if v.is_finite() => v,
                None => d,
                Some(_) => {
                    w.push(Warning::new(
                        Some(n.range().start as u64),
                        at,
                        format!("{k}={:?} is not a number: {d} used", n.attribute(k)),
                    ));
                    d
                }
            }
        };
        if let Some(p) = off.children().find(|c| c.has_tag_name("position")) {
            o.pos = [
                num(p, "x", 0.0, warnings),
                num(p, "y", 0.0, warnings),
                num(p, "z", 0.0, warnings),
            ];
        }
        if let Some(q) = off.children().find(|c| c.has_tag_name("quaternion")) {
            o.quat = [
                num(q, "qx", 0.0, warnings),
                num(q, "qy", 0.0, warnings),
                num(q, "qz", 0.0, warnings),
                num(q, "qw", 1.0, warnings),
            ];
        }
        o
    }

    /// Into glTF's frame: X mirrored.
    pub(crate) fn to_gltf(self) -> (Vec3, Quat) {
        let [x, y, z] = self.pos;
        let [qx, qy, qz, qw] = self.quat;
        let q = Quat::from_xyzw(qx, -qy, -qz, qw);
        let q = if q.length_squared() > 1e-12 {
            q.normalize()
        } else {
            Quat::IDENTITY
        };
        (Vec3::new(-x, y, z), q)
    }

    pub(crate) fn from_gltf(t: Vec3, q: Quat) -> Offset {
        Offset {
            pos: [-t.x, t.y, t.z],
            quat: [q.x, -q.y, -q.z, q.w],
        }
    }

    /// The same place within what a float's text keeps.
    pub(super) fn same_place(&self, other: &Offset) -> bool {
        let close = |a: f32, b: f32| (a - b).abs() <= 1e-5 * a.abs().max(b.abs()).max(1.0);
        let (ta, qa) = self.to_gltf();
        let (tb, qb) = other.to_gltf();
        ta.to_array()
            .iter()
            .zip(tb.to_array())
            .all(|(a, b)| close(*a, b))
            && (qa.dot(qb).abs() - 1.0).abs() <= 1e-6
    }

    /// The position, in the game's frame.
    pub(crate) fn position(&self) -> [f32; 3] {
        self.pos
    }

    pub(crate) fn xml(&self, indent: &str) -> String {
        let [x, y, z] = self.pos;
        let [qx, qy, qz, qw] = self.quat;
        let mut s = format!("<offset>\n{indent}\t<position x=\"{x}\" y=\"{y}\" z=\"{z}\"/>");
        if [qx, qy, qz, qw] != [0.0, 0.0, 0.0, 1.0] {
            s.push_str(&format!(
                "\n{indent}\t<quaternion qx=\"{qx}\" qy=\"{qy}\" qz=\"{qz}\" qw=\"{qw}\"/>"
            ));
        }
        s.push_str(&format!("\n{indent}</offset>"));
        s
    }
}

fn attributes(e: roxmltree::Node<'_, '_>) -> Map<String, Value> {
    e.attributes()
        .map(|a| (a.name().to_string(), json!(a.value())))
        .collect()
}

/// One `<connection>` as read.
struct Connection<'a, 'i> {
    node: roxmltree::Node<'a, 'i>,
    name: String,
    parent: Option<String>,
    offset: Offset,
    /// `(name, ref, element)` of each `<part>`.
    parts: Vec<(String, Option<String>, roxmltree::Node<'a, 'i>)>,
}

/// How a file of the data folder is used by its part.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Piece {
    Lod(u32),
    Collision,
}

/// `name-lod0` -> (name, Lod(0)); `name-collision` / `name-collision1` -> (name, Collision); the
/// suffix in any case, the name as written.
pub(crate) fn split_piece_as_written(stem: &str) -> Option<(&str, Piece)> {
    let lower = stem.to_ascii_lowercase();
    if let Some(i) = lower.rfind("-lod") {
        let n = lower.get(i + 4..)?.parse().ok()?;
        return Some((stem.get(..i)?, Piece::Lod(n)));
    }
    let i = lower.rfind("-collision")?;
    lower
        .get(i + 10..)?
        .chars()
        .all(|c| c.is_ascii_digit())
        .then(|| stem.get(..i).map(|s| (s, Piece::Collision)))
        .flatten()
}

/// [`split_piece_as_written`] with the name in lower case, as parts are matched.
fn split_piece(stem: &str) -> Option<(String, Piece)> {
    split_piece_as_written(stem).map(|(name, piece)| (name.to_lowercase(), piece))
}

/// Reads `xml` (a file, or `GAME::path` inside a game view) with its data folder and .ani into one
/// scene. A loose XML is read inside the mod around it (or its own folder), so its parts resolve
/// the same way as in the game's catalogs.
pub fn to_scene(xml: &Path) -> Result<(Scene, Vec<Warning>)> {
    if let Some((game, inside)) = xml.to_str().and_then(crate::vfs::split_spec) {
        let view = GameView::open(&game)?;
        return to_scene_in(&view, inside, xml);
    }
    if let Some((view, inside)) = GameView::around(xml) {
        return to_scene_in(&view, &inside, xml);
    }
    let here = xml.parent().filter(|p| !p.as_os_str().is_empty());
    // An absolute root: the parts' source paths kept in the glTF stay valid from another folder.
    let here =
        std::path::absolute(here.unwrap_or(Path::new("."))).map_err(|e| Error::io(xml, e))?;
    let view = GameView::folder(&here).map_err(|e| e.in_file(xml))?;
    let name = xml
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    to_scene_in(&view, &name, xml)
}

/// The XMF files directly in the game folder `dir`.
fn xmfs_in(view: &GameView, dir: &str) -> Vec<String> {
    let prefix = format!("{dir}/");
    view.files(dir)
        .unwrap_or_default()
        .into_iter()
        .filter(|f| {
            f.strip_prefix(&prefix)
                .is_some_and(|rest| !rest.contains('/') && rest.ends_with(".xmf"))
        })
        .collect()
}

/// The game's index of components (`index/components.xml`: `<entry name="..." value="path"/>`,
/// the path without `.xml`), to find a component another one reuses parts of.
struct ComponentIndex {
    entries: HashMap<String, String>,
}

impl ComponentIndex {
    fn read(view: &GameView) -> ComponentIndex {
        let mut entries = HashMap::new();
        if let Ok(bytes) = view.read("index/components.xml") {
            let text = String::from_utf8_lossy(&bytes);
            if let Ok(doc) = crate::xml::parse(&text) {
                for e in doc.descendants().filter(|e| e.has_tag_name("entry")) {
                    if let (Some(n), Some(v)) = (e.attribute("name"), e.attribute("value")) {
                        entries.insert(n.to_lowercase(), v.to_string());
                    }
                }
            }
        }
        ComponentIndex { entries }
    }

    /// The XMFs of `component.part`: (game path, file stem, piece), or why there are none.
    fn part_files(
        &self,
        view: &GameView,
        reference: &str,
    ) -> std::result::Result<Vec<(String, String, Piece)>, String> {
        let (component, part) = reference
            .split_once('.')
            .ok_or("not of the form component.part")?;
        if self.entries.is_empty() {
            return Err("the game's index/components.xml is not in view (name the game with --game or GAME::)".into());
        }
        let value = self
            .entries
            .get(&component.to_lowercase())
            .ok_or_else(|| format!("{component} is not in index/components.xml"))?;
        let xml_path = crate::vfs::reference_paths(&format!("{value}.xml"))
            .into_iter()
            .find(|p| view.exists(p))
            .ok_or_else(|| format!("{value}.xml is not in the game view"))?;
        let bytes = view.read(&xml_path).map_err(|e| e.to_string())?;
        let text = String::from_utf8_lossy(&bytes);
        let doc = crate::xml::parse(&text).map_err(|e| format!("{xml_path}: {e}"))?;
        let geometry = doc
            .descendants()
            .find(|e| e.has_tag_name("source"))
            .and_then(|e| e.attribute("geometry"))
            .ok_or_else(|| format!("{xml_path} has no <source geometry>"))?;
        let here = xml_path.rsplit_once('/').map_or("", |(d, _)| d);
        let last = geometry
            .rsplit(['\\', '/'])
            .find(|s| !s.is_empty())
            .unwrap_or("");
        let dirs = crate::vfs::reference_paths(geometry)
            .into_iter()
            .chain(crate::vfs::normalize(&format!("{here}/{last}")).ok());
        let part = part.to_lowercase();
        for dir in dirs {
            let files: Vec<(String, String, Piece)> = xmfs_in(view, &dir)
                .into_iter()
                .filter_map(|f| {
                    let stem = f.rsplit('/').next()?.strip_suffix(".xmf")?.to_string();
                    let (p, piece) = split_piece(&stem)?;
                    (p == part).then_some((f, stem, piece))
                })
                .collect();
            if !files.is_empty() {
                return Ok(files);
            }
        }
        Err(format!(
            "no {part}-lodN.xmf in the data folder of {xml_path}"
        ))
    }
}

/// A file inside a view, named for messages as the user would name it (`GAME::path`).
fn label_of(view: &GameView, game_path: &str) -> PathBuf {
    PathBuf::from(format!("{}::{game_path}", view.label))
}

/// Where a component's parts lie: its data folder as the XML names it.
struct DataFolder {
    /// The folder's name as written (the last part of `<source geometry>`, else `STEM_data`).
    name: String,
    /// `<source geometry>` as written.
    geometry: Option<String>,
    /// The folder found in the view (beside the XML, else where `<source geometry>` says), none
    /// when neither holds an XMF or its `.ani`.
    dir: Option<String>,
    /// Its XMFs (game paths).
    xmfs: Vec<String>,
}

/// The data folder of the component `comp` whose XML is at the normalized game path `xml_game`.
fn data_folder(view: &GameView, xml_game: &str, comp: roxmltree::Node<'_, '_>) -> DataFolder {
    let here = xml_game.rsplit_once('/').map_or("", |(dir, _)| dir);
    // The data folder: the last part of <source geometry>, in any case, beside the XML.
    let geometry = comp
        .children()
        .find(|c| c.has_tag_name("source"))
        .and_then(|s| s.attribute("geometry"))
        .map(str::to_string);
    let stem = xml_game
        .rsplit('/')
        .next()
        .and_then(|n| n.strip_suffix(".xml"))
        .unwrap_or("component")
        .to_string();
    let data_name = geometry
        .as_deref()
        .and_then(|g| g.rsplit(['\\', '/']).find(|s| !s.is_empty()))
        .map(str::to_string)
        .unwrap_or_else(|| format!("{stem}_data"));
    // Beside the XML, as mods and the game lay it out; else where <source geometry> says.
    let beside = crate::vfs::normalize(&format!("{here}/{data_name}")).ok();
    let declared = geometry
        .as_deref()
        .map(crate::vfs::reference_paths)
        .unwrap_or_default();
    // The folder and its XMFs, listed once.
    let (dir, xmfs) = beside
        .into_iter()
        .chain(declared)
        .map(|d| {
            let files = xmfs_in(view, &d);
            (d, files)
        })
        .find(|(d, files)| !files.is_empty() || view.exists(&format!("{d}.ani")))
        .map_or((None, Vec::new()), |(d, files)| (Some(d), files));
    DataFolder {
        name: data_name,
        geometry,
        dir,
        xmfs,
    }
}

/// Whether `bytes` are a component XML: its head (the first KiB) opens `<components`. The one
/// rule: the registry detects a component by it too.
pub(crate) fn is_component(bytes: &[u8]) -> bool {
    let Some(head) = bytes.get(..bytes.len().min(1024)) else {
        return false;
    };
    let text = String::from_utf8_lossy(head);
    let text = text.trim_start_matches('\u{feff}').trim_start();
    text.starts_with('<') && text.contains("<components")
}

/// The files in `view` that reading the component at `xml_path` reads: the XML, every file of its
/// data folder and its `.ani` (not the parts it reuses from other components, nor textures). A
/// caller whose reads are slow one at a time (a browser page) fetches them together first. An
/// XML that does not parse gives itself alone.
pub fn files_read(view: &GameView, xml_path: &str) -> Vec<String> {
    let Ok(xml_game) = crate::vfs::normalize(xml_path) else {
        return Vec::new();
    };
    let mut out = vec![xml_game.clone()];
    let Ok(bytes) = view.read(&xml_game) else {
        return out;
    };
    // Parsed only when its head says component (a game's libraries are large XML files too).
    if !is_component(&bytes) {
        return out;
    }
    let text = String::from_utf8_lossy(&bytes);
    let Ok(doc) = crate::xml::parse(&text) else {
        return out;
    };
    let comp = doc
        .root_element()
        .children()
        .find(|c| c.has_tag_name("component"));
    let Some(dir) = comp.and_then(|c| data_folder(view, &xml_game, c).dir) else {
        return out;
    };
    out.extend(view.files(&dir).unwrap_or_default());
    let ani = format!("{dir}.ani");
    if view.exists(&ani) {
        out.push(ani);
    }
    out
}

/// [`to_scene`] for the component at game path `xml` in `view`; `label` names it in messages.
pub fn to_scene_in(view: &GameView, xml_path: &str, label: &Path) -> Result<(Scene, Vec<Warning>)> {
    let xml = label;
    let bytes = view.read(xml_path).map_err(|e| e.in_file(xml))?;
    let text = std::str::from_utf8(&bytes).map_err(|e| {
        invalid_xml(
            xml,
            e.valid_up_to(),
            "components",
            "the XML is not UTF-8 text",
        )
    })?;
    let doc =
        crate::xml::parse(text).map_err(|e| invalid_xml(xml, 0, "components", e.to_string()))?;
    let mut warnings = Vec::new();
    let root_el = doc.root_element();
    if !root_el.has_tag_name("components") {
        return Err(invalid_xml(
            xml,
            root_el.range().start,
            root_el.tag_name().name(),
            "the root element is not <components>: not a component XML",
        ));
    }
    let comp = root_el
        .children()
        .find(|c| c.has_tag_name("component"))
        .ok_or_else(|| invalid_xml(xml, root_el.range().start, "components", "no <component>"))?;
    let comp_name = comp.attribute("name").unwrap_or("component").to_string();
    let xml_game = crate::vfs::normalize(xml_path).map_err(|e| e.in_file(xml))?;
    let DataFolder {
        name: data_name,
        geometry,
        dir: data_dir,
        xmfs: data_files,
    } = data_folder(view, &xml_game, comp);
    if data_dir.is_none() && geometry.is_some() {
        warnings.push(Warning::new(
            None,
            "component.source",
            format!("data folder {data_name:?} not found beside the XML: parts have no meshes"),
        ));
    }

    let mut scene = Scene {
        name: comp_name.clone(),
        ..Default::default()
    };
    let mut root = Node::new(&comp_name);
    root.extras.insert(
        ROOT_KEY.into(),
        json!({
            "name": comp_name,
            "xml": text,
            "data": data_name,
        }),
    );
    scene.nodes.push(root);

    let connections: Vec<Connection<'_, '_>> = comp
        .children()
        .filter(|c| c.has_tag_name("connections"))
        .flat_map(|c| c.children().filter(|c| c.has_tag_name("connection")))
        .map(|c| Connection {
            node: c,
            name: c.attribute("name").unwrap_or("").to_string(),
            parent: c.attribute("parent").map(str::to_string),
            offset: Offset::of(c, &mut warnings, "connection.offset"),
            parts: c
                .children()
                .filter(|p| p.has_tag_name("parts"))
                .flat_map(|p| p.children().filter(|p| p.has_tag_name("part")))
                .map(|p| {
                    (
                        p.attribute("name").unwrap_or("").to_string(),
                        p.attribute("ref").map(str::to_string),
                        p,
                    )
                })
                .collect(),
        })
        .collect();

    // Parts first, so a part's name finds its node before a marker of the same name.
    let mut part_nodes: HashMap<String, usize> = HashMap::new();
    // `<part wreck="name_wreck">`: the wreck's name (lower case) and the part node it replaces.
    let mut wrecks: Vec<(String, usize)> = Vec::new();
    let mut parent_of: Vec<(usize, Option<String>)> = Vec::new();
    let mut used: HashMap<String, u32> = HashMap::new();
    let mut part_lights: Vec<(usize, roxmltree::Node<'_, '_>)> = Vec::new();
    // Parts that reuse another component's part: (node, `component.part`, where, byte offset).
    let mut refs: Vec<(usize, String, String, usize)> = Vec::new();
    for (ci, c) in connections.iter().enumerate() {
        for (pi, (name, reference, element)) in c.parts.iter().enumerate() {
            let seen = used.entry(name.clone()).or_insert(0);
            *seen += 1;
            let node_name = if *seen > 1 {
                warnings.push(Warning::new(
                    Some(c.node.range().start as u64),
                    format!("connections[{ci}].parts[{pi}]"),
                    format!("part name {name:?} is used {seen} times: the glTF node is named {name}#{seen}"),
                ));
                format!("{name}#{seen}")
            } else {
                name.clone()
            };
            let mut n = Node::new(&node_name);
            (n.translation, n.rotation) = c.offset.to_gltf();
            n.extras.insert(
                NODE_KEY.into(),
                json!({ "part": name, "connection": c.name, "index": pi, "ref": reference }),
            );
            scene.nodes.push(n);
            let i = scene.nodes.len() - 1;
            if let Some(r) = reference {
                refs.push((
                    i,
                    r.clone(),
                    format!("connections[{ci}].parts[{pi}]"),
                    c.node.range().start,
                ));
            }
            part_nodes.entry(name.clone()).or_insert(i);
            if let Some(w) = element.attribute("wreck").filter(|w| !w.is_empty()) {
                wrecks.push((w.to_lowercase(), i));
            }
            parent_of.push((i, c.parent.clone()));
            part_lights.push((i, *element));
        }
    }
    // Connections without parts: hardpoint markers with every attribute.
    for c in connections.iter().filter(|c| c.parts.is_empty()) {
        let mut n = Node::new(&c.name);
        (n.translation, n.rotation) = c.offset.to_gltf();
        n.extras.insert(
            NODE_KEY.into(),
            json!({ "connection": c.name, "attributes": attributes(c.node) }),
        );
        scene.nodes.push(n);
        parent_of.push((scene.nodes.len() - 1, c.parent.clone()));
    }
    for (i, parent) in parent_of {
        let p = match parent.as_deref() {
            None | Some("") => 0,
            Some(p) => part_nodes.get(p).copied().unwrap_or_else(|| {
                warnings.push(Warning::new(
                    None,
                    "connection.parent",
                    format!("parent part {p:?} does not exist: the node hangs from the component"),
                ));
                0
            }),
        };
        if let Some(n) = scene.nodes.get_mut(i) {
            n.parent = Some(p);
        }
    }
    let n = scene.nodes.len();
    for cut in scene.cut_parent_loops(1..n, Some(0)) {
        warnings.push(Warning::new(
            None,
            "connection.parent",
            format!(
                "the parents of {:?} loop: it hangs from the component",
                scene.nodes.get(cut).map(|n| n.name.as_str()).unwrap_or("")
            ),
        ));
    }
    cap_depth(&mut scene, &mut warnings);

    // Lights in the component's layers, and in parts (spots on a ramp move with it).
    for layer in comp
        .children()
        .filter(|c| c.has_tag_name("layers"))
        .flat_map(|l| l.children().filter(|c| c.has_tag_name("layer")))
    {
        add_lights(&mut scene, layer, 0, &mut warnings);
    }
    for (node, element) in part_lights {
        add_lights(&mut scene, element, node, &mut warnings);
    }

    // Meshes of the data folder, decoded in parallel.
    // (node, piece, game path, file stem, reused from another component).
    let mut jobs: Vec<(usize, Piece, String, String, bool)> = Vec::new();
    let lower_parts: HashMap<String, usize> = part_nodes
        .iter()
        .map(|(k, v)| (k.to_lowercase(), *v))
        .collect();
    for f in data_files {
        let stem = f
            .rsplit('/')
            .next()
            .and_then(|n| n.strip_suffix(".xmf"))
            .unwrap_or_default()
            .to_string();
        if let Some((part, piece)) = split_piece(&stem) {
            if let Some(&node) = lower_parts.get(&part) {
                jobs.push((node, piece, f, stem, false));
            } else if let Some(&(_, of)) = wrecks.iter().find(|(w, _)| *w == part) {
                // The part as it is shown once destroyed: a hidden child of the part, like a LOD.
                let node = wreck_node(&mut scene, of, &stem, &part);
                jobs.push((node, piece, f, stem, false));
            }
        }
    }
    carry_unshown(view, data_dir.as_deref(), &jobs, &mut scene);
    if !refs.is_empty() {
        let index = ComponentIndex::read(view);
        for (node, reference, at, offset) in &refs {
            match index.part_files(view, reference) {
                Ok(files) => jobs.extend(files.into_iter().map(|(f, stem, piece)| (*node, piece, f, stem, true))),
                Err(why) => warnings.push(Warning {
                    // Without the game the other component cannot be there: expected, a note.
                    note: index.entries.is_empty(),
                    ..Warning::new(
                        Some(*offset as u64),
                        at.clone(),
                        format!("part reuses {reference:?} from another component: {why}; kept as a reference, no mesh"),
                    )
                }),
            }
        }
    }
    let loaded: Vec<Result<(Scene, Vec<Warning>)>> = jobs
        .par_iter()
        .map(|(_, piece, game_path, stem, _)| {
            let path = &label_of(view, game_path);
            let bytes = view.read(game_path).map_err(|e| e.in_file(path))?;
            let (mut sub, mut w) = part_mesh(&bytes, stem, *piece).map_err(|e| e.in_file(path))?;
            if *piece == Piece::Collision {
                sub.meshes.iter_mut().for_each(weld_collision);
            }
            // The part's warnings say which file of the data folder they are about.
            let file = game_path.rsplit('/').next().unwrap_or_default();
            for x in &mut w {
                x.path = format!("{file}: {}", x.path);
            }
            Ok((sub, w))
        })
        .collect();
    for ((node, piece, path, _, reused), r) in jobs.iter().zip(loaded) {
        let (sub, w) = r?;
        warnings.extend(w);
        let file = path.rsplit('/').next().unwrap_or_default().to_string();
        // Where the file came from: a mesh that still draws what this file draws is written back
        // as this very file (see `write::original_xmf`).
        let source = label_of(view, path).to_string_lossy().into_owned();
        for i in scene.append(sub, Some(*node)) {
            if let Some(n) = scene.nodes.get_mut(i) {
                let mut mark = match piece {
                    Piece::Lod(l) => json!({ "lod": l, "file": file }),
                    Piece::Collision => json!({ "collision": true, "file": file }),
                };
                if *reused {
                    // Another component's file: shown, never written into this component's data.
                    mark["reused"] = json!(source);
                } else if n.mesh.is_some() {
                    mark["source"] = json!({ "path": source });
                }
                n.extras.insert(NODE_KEY.into(), mark);
            }
        }
    }

    // The .ani beside the data folder: one animation a state, bound to parts by name.
    let ani_game = data_dir
        .as_deref()
        .map(|d| format!("{d}.ani"))
        .filter(|a| view.exists(a));
    if let Some(ani_game) = ani_game {
        let ani_path = label_of(view, &ani_game);
        let bytes = view.read(&ani_game).map_err(|e| e.in_file(&ani_path))?;
        let (a, w) = ani::read(&bytes).map_err(|e| e.in_file(&ani_path))?;
        warnings.extend(w);
        let (anims, w) = ani::animations(&a, &mut |p| lower_parts.get(&p.to_lowercase()).copied());
        warnings.extend(w);
        scene.animations.extend(anims);
        // Written back under the name it has on disk (`ARG_DROPSHIP_DATA.ANI`), else the XML's.
        let file = view
            .spelled(&ani_game)
            .and_then(|p| p.rsplit('/').next().map(str::to_string))
            .unwrap_or(format!("{data_name}.ani"));
        if let Some(root) = scene.nodes.first_mut() {
            if let Some(Value::Object(m)) = root.extras.get_mut(ROOT_KEY) {
                m.insert(
                    "ani".into(),
                    json!({
                        "file": file,
                        "bytes": base64::engine::general_purpose::STANDARD.encode(&*bytes),
                    }),
                );
            }
        }
    }
    Ok((scene, warnings))
}

/// The node of the wreck named `wreck` (lower case) of part node `of`: made once, under the part,
/// named as the file names it (`stem` without its piece suffix).
fn wreck_node(scene: &mut Scene, of: usize, stem: &str, wreck: &str) -> usize {
    let found = scene.nodes.iter().position(|n| {
        n.parent == Some(of)
            && x4(n)
                .and_then(|m| m.get("wreck"))
                .and_then(Value::as_str)
                .is_some_and(|w| w.eq_ignore_ascii_case(wreck))
    });
    if let Some(i) = found {
        return i;
    }
    let name = split_piece_as_written(stem).map_or(wreck, |(n, _)| n);
    let mut n = Node::new(name);
    n.parent = Some(of);
    n.extras.insert(NODE_KEY.into(), json!({ "wreck": name }));
    scene.nodes.push(n);
    scene.nodes.len() - 1
}

/// The files of the data folder no part shows (wrecks, `.jcs` collision shapes, XMFs no part
/// names, anything else) ride in the component's extras (`files`: name inside the folder as it is
/// spelled on disk, and base64 bytes), so the glTF alone brings the whole folder back.
fn carry_unshown(
    view: &GameView,
    data_dir: Option<&str>,
    jobs: &[(usize, Piece, String, String, bool)],
    scene: &mut Scene,
) {
    let Some(dir) = data_dir else {
        return;
    };
    let prefix = format!("{dir}/");
    let shown: Vec<&str> = jobs.iter().map(|j| j.2.as_str()).collect();
    let mut files = Vec::new();
    for f in view.files(dir).unwrap_or_default() {
        let Some(rel) = f.strip_prefix(&prefix) else {
            continue;
        };
        if shown.iter().any(|s| s.eq_ignore_ascii_case(&f)) {
            continue;
        }
        let Ok(bytes) = view.read(&f) else {
            continue;
        };
        // Spelled as the view has it (`Part_Main-Hull.jcs`): as many trailing names as `rel` has.
        let depth = rel.split('/').count();
        let spelled = view
            .spelled(&f)
            .map(|p| {
                let names: Vec<&str> = p.split('/').collect();
                names[names.len().saturating_sub(depth)..].join("/")
            })
            .unwrap_or_else(|| rel.to_string());
        files.push(json!({
            "file": spelled,
            "bytes": base64::engine::general_purpose::STANDARD.encode(&*bytes),
        }));
    }
    if files.is_empty() {
        return;
    }
    if let Some(Value::Object(m)) = scene
        .nodes
        .first_mut()
        .and_then(|r| r.extras.get_mut(ROOT_KEY))
    {
        m.insert("files".into(), Value::Array(files));
    }
}

/// Every light in the `<lights>` children of `container` as a punctual light on a node under `parent`.
fn add_lights(
    scene: &mut Scene,
    container: roxmltree::Node<'_, '_>,
    parent: usize,
    warnings: &mut Vec<Warning>,
) {
    for l in container
        .children()
        .filter(|c| c.has_tag_name("lights"))
        .flat_map(|l| l.children().filter(|c| c.is_element()))
    {
        let num = |k: &str| {
            l.attribute(k)
                .and_then(|v| v.trim().parse::<f32>().ok())
                .filter(|v| v.is_finite())
        };
        let channel = |k: &str| (num(k).unwrap_or(255.0) / 255.0).clamp(0.0, 1.0);
        let tag = l.tag_name().name().to_string();
        let name = l.attribute("name").unwrap_or(&tag).to_string();
        // A spot's angle is its full cone in degrees.
        let kind = match (tag.as_str(), num("angle")) {
            ("spot", Some(a)) => LightKind::Spot {
                inner: 0.0,
                outer: (a.to_radians() / 2.0).clamp(1e-3, std::f32::consts::FRAC_PI_2),
            },
            _ => LightKind::Point,
        };
        scene.lights.push(Light {
            name: name.clone(),
            kind,
            color: [channel("r"), channel("g"), channel("b")],
            intensity: num("intensity").filter(|v| *v >= 0.0).unwrap_or(1.0),
            range: num("range").filter(|v| *v > 0.0),
        });
        let mut n = Node::new(&name);
        (n.translation, n.rotation) = Offset::of(l, warnings, "lights").to_gltf();
        n.light = Some(scene.lights.len() - 1);
        n.parent = Some(parent);
        // A box light's `<size>` travels as the attribute `size` ("x y z"), as `new component`
        // takes it back.
        let mut attrs = attributes(l);
        if let Some(size) = l.children().find(|c| c.has_tag_name("size")) {
            let xyz: Option<Vec<&str>> =
                ["x", "y", "z"].iter().map(|k| size.attribute(*k)).collect();
            if let Some(xyz) = xyz {
                attrs.insert("size".into(), Value::String(xyz.join(" ")));
            }
        }
        n.extras.insert(
            NODE_KEY.into(),
            json!({ "light": tag, "attributes": attrs }),
        );
        scene.nodes.push(n);
    }
}

/// The scene of one XMF of a data folder, as its piece shows it (a collision mesh not welded yet).
pub(super) fn part_mesh(bytes: &[u8], stem: &str, piece: Piece) -> Result<(Scene, Vec<Warning>)> {
    let (file, mut w) = xmf::read::read(bytes)?;
    let role = if piece == Piece::Collision {
        Role::Collision
    } else {
        Role::Visual
    };
    let (sub, w2) = xmf::mesh::to_scene(&file, stem, role)?;
    w.extend(w2);
    Ok((sub, w))
}

/// A collision mesh as the writer will store it (positions merged, no seams), so what Blender shows
/// is what comes back: the vertex count survives glb -> XML -> glb.
fn weld_collision(mesh: &mut crate::model::Mesh) {
    let n = mesh.vertices.positions.len();
    let all: Vec<u32> = mesh
        .primitives
        .iter()
        .flat_map(|p| p.indices.iter().copied())
        .collect();
    if all.iter().any(|&i| i as usize >= n) {
        return; // the reader already reported it; leave the mesh as read
    }
    let (positions, indices) = xmf::mesh::weld(&mesh.vertices.positions, &all);
    if indices.len() < 3 {
        return;
    }
    let material = mesh.primitives.first().and_then(|p| p.material);
    mesh.vertices = crate::model::Vertices {
        positions,
        ..Default::default()
    };
    mesh.primitives = vec![crate::model::Primitive { indices, material }];
}

/// Nodes deeper than [`MAX_DEPTH`] hang from the root instead (exporters and Blender recurse).
fn cap_depth(scene: &mut Scene, warnings: &mut Vec<Warning>) {
    for i in 0..scene.nodes.len() {
        let mut depth = 0;
        let mut p = scene.nodes.get(i).and_then(|n| n.parent);
        while let Some(pi) = p {
            depth += 1;
            if depth > MAX_DEPTH {
                break;
            }
            p = scene.nodes.get(pi).and_then(|n| n.parent);
        }
        if depth > MAX_DEPTH {
            if let Some(n) = scene.nodes.get_mut(i) {
                n.parent = Some(0);
                warnings.push(Warning::new(
                    None,
                    "connection.parent",
                    format!(
                        "{:?} is nested too deep: it hangs from the component",
                        n.name
                    ),
                ));
            }
        }
    }
}

pub(super) fn x4(n: &Node) -> Option<&Map<String, Value>> {
    n.extras.get(NODE_KEY).and_then(Value::as_object)
}

/// A name the game takes as a part (and a file name in the data folder).
pub(crate) fn valid_part_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 255
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ' ' | '#'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_split_by_suffix() {
        assert_eq!(
            split_piece("Part_Main-LOD2"),
            Some(("part_main".into(), Piece::Lod(2)))
        );
        assert_eq!(
            split_piece("part_main-collision1"),
            Some(("part_main".into(), Piece::Collision))
        );
        assert_eq!(split_piece("part_main-mesh"), None);
    }

    #[test]
    fn offsets_mirror_x_and_round_trip() {
        let o = Offset {
            pos: [1.0, 2.0, 3.0],
            quat: [0.0, 0.0, 0.70710677, 0.70710677],
        };
        let (t, q) = o.to_gltf();
        assert_eq!(t, Vec3::new(-1.0, 2.0, 3.0));
        assert!((q.z + 0.70710677).abs() < 1e-6);
        assert!(Offset::from_gltf(t, q).same_place(&o));
    }
}
