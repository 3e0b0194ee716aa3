//! An X4 / X Rebirth extension walked: content.xml, the indexes and the files their entries
//! name, macros to components and to the macros their connections hold, components' parts to
//! their geometry and `.ani`, the materials the meshes name to the material library, the
//! library's textures, wares to macros, and text references to the text files.

use super::out::{validate_files, Out};
use super::world::{self, Found, Names, World};
use super::{xml, ModCheck};
use crate::formats::x4xml::material_library::Library;
use crate::validate::Finding;
use roxmltree::{Document, Node};
use std::collections::{HashMap, HashSet};

/// An XML file of the mod, parsed.
struct Parsed<'t> {
    label: String,
    norm: String,
    subst: bool,
    doc: Document<'t>,
}

impl Parsed<'_> {
    fn line(&self, n: Node<'_, '_>) -> Option<u32> {
        Some(xml::line(&self.doc, n))
    }

    fn root(&self) -> &str {
        self.doc.root_element().tag_name().name()
    }
}

pub(super) fn walk(w: &World) -> ModCheck {
    let files = w.files.files();
    let mut out = Out::default();
    validate_files(&w.files, &files, &mut out);

    let mut texts: Vec<(usize, String)> = Vec::new();
    for (i, f) in files.iter().enumerate() {
        if !f.norm.ends_with(".xml") {
            continue;
        }
        match w.files.read(f).map(|b| b.map(|b| xml::text(&b))) {
            Some(Ok(Ok(t))) => texts.push((i, t)),
            Some(Ok(Err(e))) => out.push(Finding::error("", e.message), &f.label, e.line),
            Some(Err(e)) => out.push(Finding::error("", e.to_string()), &f.label, None),
            None => {}
        }
    }
    let mut parsed: Vec<Parsed<'_>> = Vec::new();
    for (i, t) in &texts {
        let Some(f) = files.get(*i) else { continue };
        match xml::parse(t) {
            Ok(doc) => parsed.push(Parsed {
                label: f.label.clone(),
                norm: f.norm.clone(),
                subst: f.subst,
                doc,
            }),
            Err(e) => out.push(Finding::error("", e.message), &f.label, e.line),
        }
    }

    content(w, &files, &parsed, &mut out);
    let mut names = Names::default();
    for p in parsed.iter().filter(|p| !p.subst) {
        match p.norm.as_str() {
            "index/components.xml" => names.add(false, p.doc.input_text()),
            "index/macros.xml" => names.add(true, p.doc.input_text()),
            _ => {}
        }
    }
    let walk = Walk {
        w,
        names: &names,
        shapes: Shapes::read(&parsed),
    };
    let mut used: Vec<Used> = Vec::new();
    for p in &parsed {
        if !p.subst && p.norm.starts_with("index/") {
            walk.index(p, &mut out);
        }
        match p.root() {
            "macros" => walk.macros(p, &mut out),
            "components" => walk.components(p, &mut out, &mut used),
            "diff" => {
                walk.diff_refs(p, &mut out);
                if !p.subst {
                    walk.patches(p, &mut out);
                }
            }
            _ => {}
        }
        if p.norm == "libraries/wares.xml" {
            walk.wares(p, &mut out);
        }
        if p.norm == "libraries/material_library.xml" {
            walk.textures(p, &mut out);
        }
    }
    walk.cycles(&parsed, &mut out);
    walk.materials(&parsed, &used, &mut out);
    walk.text_refs(&parsed, &mut out);
    out.summarize_unchecked();
    ModCheck {
        kind: String::new(),
        name: w.files.folder.clone(),
        files: files.into_iter().map(|f| f.label).collect(),
        findings: out.findings,
        links: out.links,
    }
}

/// content.xml: there, well-formed (the parse reported that), an id, a version, dependencies.
fn content(w: &World, files: &[super::files::ModFile], parsed: &[Parsed<'_>], out: &mut Out) {
    let Some(f) = files.iter().find(|f| !f.subst && f.norm == "content.xml") else {
        out.push(
            Finding::error(
                "",
                "no content.xml: the game does not load a folder without one as an extension",
            ),
            "content.xml",
            None,
        );
        return;
    };
    let Some(p) = parsed.iter().find(|p| p.label == f.label) else {
        return;
    };
    let root = p.doc.root_element();
    let file = &p.label;
    if !root.has_tag_name("content") {
        let msg = format!(
            "the root element is <{}>, not <content>",
            root.tag_name().name()
        );
        out.push(Finding::error("content", msg), file, p.line(root));
        return;
    }
    if root.attribute("id").is_none_or(|i| i.trim().is_empty()) {
        // The game loads it under its folder's name; other extensions' dependencies and save
        // games name an extension by its id, so a folder renamed on install breaks both.
        let msg = format!(
            "no id: the folder name ({}) stands in for it; other extensions' <dependency id> \
             and save games name an extension by its id, so give it one that stays when the \
             folder is renamed",
            w.files.folder
        );
        out.push(Finding::warning("content", msg), file, p.line(root));
    }
    match root.attribute("version") {
        None => out.push(
            Finding::warning("content", "no version: the game shows and compares none"),
            file,
            p.line(root),
        ),
        Some(v) if v.trim().parse::<u64>().is_err() => out.push(
            Finding::warning(
                "content",
                format!("version {v:?} is not a whole number, as the game compares versions"),
            ),
            file,
            p.line(root),
        ),
        Some(_) => {}
    }
    let game_exts = w.game_extensions();
    for d in root.children().filter(|c| c.has_tag_name("dependency")) {
        let line = p.line(d);
        let Some(id) = d.attribute("id") else {
            // A dependency on a game version only (`<dependency version="600"/>`).
            continue;
        };
        let low = id.to_lowercase();
        // The game finds a dependency by the other extension's content id (the folder name
        // only for one without an id).
        let by_id = |x: &world::Dependency| {
            x.id.as_ref()
                .map_or(x.folder == low, |i| i.to_lowercase() == low)
        };
        let by_folder_only = w.deps.iter().find(|x| !by_id(x) && x.folder == low);
        let found = if w.deps.iter().any(by_id) {
            Found::Mod(world_place(&low))
        } else if let Some(x) = by_folder_only {
            Found::Refused(format!(
                "{id:?} is the folder name of the extension beside this mod whose content id is \
                 {:?}; the game finds a dependency by content id and would not find this one: \
                 write <dependency id=\"{}\">",
                x.id.as_deref().unwrap_or_default(),
                x.id.as_deref().unwrap_or_default()
            ))
        } else if w.game.is_some() && game_exts.contains(&low) {
            Found::Game(world_place(&low))
        } else if w.game.is_some() {
            Found::Missing
        } else {
            Found::Unchecked("not beside this mod (no --game given)".into())
        };
        let optional = d
            .attribute("optional")
            .is_some_and(|o| o.eq_ignore_ascii_case("true") || o == "1");
        out.follow(file, line, id, &found, "dependency", !optional);
    }
}

/// A place standing for an extension found by its name.
fn world_place(name: &str) -> world::Place {
    world::Place::named(&format!("extensions/{name}"))
}

/// A material a mesh or a part names, and where.
struct Used {
    name: String,
    file: String,
    line: Option<u32>,
}

struct Walk<'a> {
    w: &'a World,
    names: &'a Names,
    shapes: Shapes,
}

/// What the mod's own macros and components define, lower case: each macro's component, each
/// component's connections (to check the connections a macro's placement names).
#[derive(Default)]
struct Shapes {
    component_of: HashMap<String, String>,
    connections: HashMap<String, HashSet<String>>,
}

impl Shapes {
    fn read(parsed: &[Parsed<'_>]) -> Shapes {
        let mut s = Shapes::default();
        for p in parsed {
            let root = p.doc.root_element();
            for e in root.children().filter(|e| e.is_element()) {
                let Some(name) = e.attribute("name").map(str::to_lowercase) else {
                    continue;
                };
                if p.root() == "macros" && e.has_tag_name("macro") {
                    let comp = e.children().find(|c| c.has_tag_name("component"));
                    if let Some(r) = comp.and_then(|c| c.attribute("ref")) {
                        s.component_of.insert(name, r.to_lowercase());
                    }
                } else if p.root() == "components" && e.has_tag_name("component") {
                    let conns = e
                        .children()
                        .filter(|c| c.has_tag_name("connections"))
                        .flat_map(|c| c.children().filter(|x| x.has_tag_name("connection")))
                        .filter_map(|c| c.attribute("name").map(str::to_lowercase))
                        .collect();
                    s.connections.insert(name, conns);
                }
            }
        }
        s
    }

    /// The connections of the mod's macro `name`'s component, when the mod defines both.
    fn of_macro(&self, name: &str) -> Option<(&str, &HashSet<String>)> {
        let comp = self.component_of.get(&name.to_lowercase())?;
        Some((comp.as_str(), self.connections.get(comp)?))
    }
}

impl Walk<'_> {
    /// Where the component (or macro) `name` is defined.
    fn name(&self, macros: bool, name: &str) -> Found {
        if let Some(v) = self.names.get(macros, name) {
            return Found::Mod(world::Place::named(v));
        }
        if self.w.game.is_some() || !self.w.deps.is_empty() {
            if let Some(v) = self.w.outside_names().get(macros, name) {
                return Found::Game(world::Place::named(v));
            }
        }
        if self.w.game.is_some() {
            Found::Missing
        } else {
            Found::Unchecked("a base-game name (no --game given)".into())
        }
    }

    /// Each entry of an index file names a file that is there.
    fn index(&self, p: &Parsed<'_>, out: &mut Out) {
        for e in p.doc.descendants().filter(|e| e.has_tag_name("entry")) {
            let (Some(name), Some(value)) = (e.attribute("name"), e.attribute("value")) else {
                continue;
            };
            let found = self.w.locate(value, world::index_file);
            out.follow(
                &p.label,
                p.line(e),
                value,
                &found,
                &format!("index entry {name}: file"),
                true,
            );
        }
    }

    /// Macros: their component, the macros their connections hold, text references.
    fn macros(&self, p: &Parsed<'_>, out: &mut Out) {
        for m in p
            .doc
            .root_element()
            .children()
            .filter(|c| c.has_tag_name("macro"))
        {
            let mname = m.attribute("name").unwrap_or("?");
            for c in m.children().filter(|c| c.has_tag_name("component")) {
                if let Some(r) = c.attribute("ref") {
                    let what = format!("macro {mname}: component");
                    out.follow(&p.label, p.line(c), r, &self.name(false, r), &what, true);
                }
            }
            self.connection_macros(p, m, out);
        }
    }

    /// `<connection><macro ref>` below `n`: each names a macro.
    fn connection_macros(&self, p: &Parsed<'_>, n: Node<'_, '_>, out: &mut Out) {
        // The macro whose connections these are, when `n` is one of the mod's macros.
        let parent = n
            .has_tag_name("macro")
            .then(|| n.attribute("name"))
            .flatten()
            .and_then(|m| self.shapes.of_macro(m));
        for c in n.descendants().filter(|c| {
            c.has_tag_name("macro") && c.parent().is_some_and(|x| x.has_tag_name("connection"))
        }) {
            let Some(r) = c.attribute("ref") else {
                continue;
            };
            let what = "connection: macro";
            out.follow(&p.label, p.line(c), r, &self.name(true, r), what, true);
            // `<connection ref>` names a connection of this macro's component, `<macro
            // connection>` one of the placed macro's component.
            let places = [
                (parent, c.parent().and_then(|x| x.attribute("ref")), true),
                (self.shapes.of_macro(r), c.attribute("connection"), false),
            ];
            for (shape, conn, own) in places {
                let (Some((comp, conns)), Some(conn)) = (shape, conn) else {
                    continue;
                };
                if conns.contains(&conn.to_lowercase()) {
                    continue;
                }
                if own {
                    // The macro's own component has no place for what it holds: a ship without
                    // its cockpit's seat, its cargo hold or its docks.
                    let macro_name = n.attribute("name").unwrap_or_default();
                    let msg = format!(
                        "macro {macro_name} fills connection {conn:?} with {r}, but its component {comp} has no connection {conn:?}: add it to the component"
                    );
                    out.push(Finding::error("", msg).missing(conn), &p.label, p.line(c));
                } else {
                    let msg =
                        format!("connection {conn:?} is not one of component {comp}'s connections");
                    // The game places nothing there; whether it says so is not known: a warning.
                    out.push(Finding::warning("", msg).missing(conn), &p.label, p.line(c));
                }
            }
        }
    }

    /// A diff patch's added macros and connections name what exists too.
    fn diff_refs(&self, p: &Parsed<'_>, out: &mut Out) {
        for c in p.doc.descendants().filter(|c| {
            c.has_tag_name("component") && c.parent().is_some_and(|x| x.has_tag_name("macro"))
        }) {
            if let Some(r) = c.attribute("ref") {
                let what = "macro: component";
                out.follow(&p.label, p.line(c), r, &self.name(false, r), what, true);
            }
        }
        self.connection_macros(p, p.doc.root_element(), out);
    }

    /// A diff patch: each operation's `sel` selects something in the game's file it patches.
    fn patches(&self, p: &Parsed<'_>, out: &mut Out) {
        let root = p.doc.root_element();
        let ops: Vec<Node<'_, '_>> = root
            .children()
            .filter(|c| c.is_element() && c.attribute("sel").is_some())
            .collect();
        if ops.is_empty() {
            return;
        }
        let Some(game) = &self.w.game else {
            let why = format!(
                "{} sel paths into the game's file (no --game given)",
                ops.len()
            );
            out.follow(
                &p.label,
                None,
                &p.norm,
                &Found::Unchecked(why),
                "patched file",
                true,
            );
            return;
        };
        let Some(Ok(bytes)) = game.get(&p.norm) else {
            let msg = format!("a diff patch of {}, which is not in the game", p.norm);
            out.push(
                Finding::error("", msg).missing(p.norm.clone()),
                &p.label,
                p.line(root),
            );
            return;
        };
        let text = match xml::text(&bytes) {
            Ok(t) => t,
            Err(e) => return out.push(Finding::warning("", e.message), &p.label, p.line(root)),
        };
        let doc = match xml::parse(&text) {
            Ok(d) => d,
            Err(e) => {
                let msg = format!("the game's {}: {}", p.norm, e.message);
                return out.push(Finding::warning("", msg), &p.label, p.line(root));
            }
        };
        let tree = crate::xmlpatch::Doc::from_roxml(&doc);
        let target = format!("{}::{}", game.label, p.norm);
        // An earlier operation, or an extension's patch of the same file (a DLC), may add what
        // a later one selects: such a miss is only a warning.
        let patched_elsewhere = self
            .w
            .game_extensions()
            .iter()
            .any(|e| game.exists(&format!("extensions/{e}/{}", p.norm)))
            || self.w.deps.iter().any(|d| d.files.find(&p.norm).is_some());
        let mut changed = patched_elsewhere;
        for op in ops {
            let sel = op.attribute("sel").unwrap_or_default();
            let found = match crate::xmlpatch::xpath::count(&tree, sel) {
                Ok(0) => Found::Missing,
                Ok(_) => Found::Game(world::Place::named(&target)),
                Err(_) => Found::Unchecked("an XPath past what hangar reads".into()),
            };
            let soft = changed || op.attribute("silent").is_some() || op.attribute("if").is_some();
            let what = format!(
                "patch <{}> of the game's {}: sel",
                op.tag_name().name(),
                p.norm
            );
            out.follow(&p.label, p.line(op), sel, &found, &what, !soft);
            changed |= !op.has_tag_name("remove");
        }
    }

    /// Wares: each `<component ref>` names a macro.
    fn wares(&self, p: &Parsed<'_>, out: &mut Out) {
        for c in p.doc.descendants().filter(|c| {
            c.has_tag_name("component") && c.parent().is_some_and(|x| x.has_tag_name("ware"))
        }) {
            if let Some(r) = c.attribute("ref") {
                let ware = c.parent().and_then(|x| x.attribute("id")).unwrap_or("?");
                let what = format!("ware {ware}: macro");
                out.follow(&p.label, p.line(c), r, &self.name(true, r), &what, true);
            }
        }
    }

    /// Components: parts' geometry (each declared LOD; the collision mesh unless the
    /// connection says `nocollision`), parts reused from other components, the `.ani` states'
    /// parts, and the materials the meshes name.
    fn components(&self, p: &Parsed<'_>, out: &mut Out, used: &mut Vec<Used>) {
        let file = &p.label;
        for comp in p
            .doc
            .root_element()
            .children()
            .filter(|c| c.has_tag_name("component"))
        {
            let geometry = comp
                .children()
                .find(|c| c.has_tag_name("source"))
                .and_then(|s| s.attribute("geometry"));
            let mut parts: HashSet<String> = HashSet::new();
            let connections = comp
                .children()
                .filter(|c| c.has_tag_name("connections"))
                .flat_map(|c| c.children().filter(|x| x.has_tag_name("connection")));
            for conn in connections {
                let collides = !conn
                    .attribute("tags")
                    .unwrap_or_default()
                    .split_whitespace()
                    .any(|t| t.eq_ignore_ascii_case("nocollision"));
                let all = conn
                    .children()
                    .filter(|c| c.has_tag_name("parts"))
                    .flat_map(|c| c.children().filter(|x| x.has_tag_name("part")));
                for part in all {
                    let Some(name) = part.attribute("name") else {
                        continue;
                    };
                    parts.insert(name.to_lowercase());
                    let line = p.line(part);
                    if let Some(r) = part.attribute("ref") {
                        let comp_name = r.split_once('.').map_or(r, |x| x.0);
                        let found = self.name(false, comp_name);
                        let what = format!("part {name}: reused from component");
                        out.follow(file, line, comp_name, &found, &what, true);
                        continue;
                    }
                    let lods: Vec<Node<'_, '_>> = part
                        .children()
                        .filter(|c| c.has_tag_name("lods"))
                        .flat_map(|c| c.children().filter(|x| x.has_tag_name("lod")))
                        .collect();
                    for lod in &lods {
                        for m in lod.descendants().filter(|m| m.has_tag_name("material")) {
                            if let Some(r) = m.attribute("ref") {
                                used.push(Used {
                                    name: r.to_string(),
                                    file: file.clone(),
                                    line: p.line(m),
                                });
                            }
                        }
                    }
                    let Some(geometry) = geometry else { continue };
                    for lod in &lods {
                        let Some(i) = lod
                            .attribute("index")
                            .and_then(|i| i.trim().parse::<u32>().ok())
                        else {
                            continue;
                        };
                        let written = format!("{geometry}\\{name}-lod{i}.xmf");
                        let found = self.w.locate(&written, world::as_written);
                        let what = format!("part {name}: mesh {name}-lod{i}.xmf");
                        out.follow(file, line, &written, &found, &what, true);
                        if let Found::Mod(place) | Found::Game(place) = &found {
                            mesh_materials(self.w, place, used);
                        }
                    }
                    if collides && !lods.is_empty() {
                        let written = format!("{geometry}\\{name}-collision.xmf");
                        let found = self.w.locate(&written, world::as_written);
                        let what = format!("part {name}: collision mesh {name}-collision.xmf");
                        out.follow(file, line, &written, &found, &what, false);
                    }
                }
            }
            if let Some(geometry) = geometry {
                self.ani(p, comp, geometry, &parts, out);
            }
        }
    }

    /// The component's `.ani` (beside its data folder): each state's part is one of its parts.
    fn ani(
        &self,
        p: &Parsed<'_>,
        comp: Node<'_, '_>,
        geometry: &str,
        parts: &HashSet<String>,
        out: &mut Out,
    ) {
        let written = format!("{geometry}.ani");
        let (Found::Mod(place) | Found::Game(place)) = self.w.locate(&written, world::as_written)
        else {
            return;
        };
        let Some(bytes) = self.w.read(&place) else {
            return;
        };
        let Ok((ani, _)) = crate::formats::ani::read(&bytes) else {
            return;
        };
        for (state, animated) in crate::formats::ani::states(&ani) {
            for part in animated {
                if !parts.contains(&part.to_lowercase()) {
                    let msg = format!(
                        "{}: state {state:?} animates part {part:?}, which the component does not have",
                        place.label
                    );
                    out.push(
                        Finding::warning("", msg).missing(part),
                        &p.label,
                        p.line(comp),
                    );
                }
            }
        }
    }

    /// The mod's material library: each texture a material names is there.
    fn textures(&self, p: &Parsed<'_>, out: &mut Out) {
        for prop in p.doc.descendants().filter(|n| n.has_tag_name("property")) {
            let bitmap = prop
                .attribute("type")
                .is_some_and(|t| t.eq_ignore_ascii_case("bitmap"));
            let Some(value) = prop
                .attribute("value")
                .filter(|v| bitmap && !v.trim().is_empty())
            else {
                continue;
            };
            let material = prop
                .ancestors()
                .find(|a| a.has_tag_name("material"))
                .and_then(|m| m.attribute("name"))
                .unwrap_or("?");
            let what = format!("material {material}: texture");
            let found = self.w.locate(value, world::texture);
            out.follow(&p.label, p.line(prop), value, &found, &what, true);
        }
    }

    /// Every material a mesh or part names is in the library: the game's with the mod's patch.
    fn materials(&self, parsed: &[Parsed<'_>], used: &[Used], out: &mut Out) {
        let mut lib = Library::default();
        for t in self.w.outside_texts("libraries/material_library.xml") {
            // The library's parser recurses once a level: a hostile nesting is not handed to it.
            if xml::too_deep(&t).is_none() {
                let _ = lib.apply(&t);
            }
        }
        if let Some(p) = parsed
            .iter()
            .find(|p| !p.subst && p.norm == "libraries/material_library.xml")
        {
            if let Err(e) = lib.apply(p.doc.input_text()) {
                out.push(Finding::error("", e.message), &p.label, None);
            }
        }
        let mut seen: HashSet<(String, String)> = HashSet::new();
        for u in used {
            if !seen.insert((u.name.to_lowercase(), u.file.clone())) {
                continue;
            }
            let found = if lib.find(&u.name).is_some() {
                Found::Mod(world::Place::named("libraries/material_library.xml"))
            } else if self.w.game.is_some() {
                Found::Missing
            } else {
                Found::Unchecked("a base-game material (no --game given)".into())
            };
            out.follow(&u.file, u.line, &u.name, &found, "material", true);
        }
    }

    /// A macro that holds itself through its connections' macros would nest without end.
    fn cycles(&self, parsed: &[Parsed<'_>], out: &mut Out) {
        // Each mod macro's file, line and the macros its connections hold.
        let mut graph: HashMap<String, (String, Option<u32>, Vec<String>)> = HashMap::new();
        for p in parsed.iter().filter(|p| p.root() == "macros") {
            for m in p
                .doc
                .root_element()
                .children()
                .filter(|c| c.has_tag_name("macro"))
            {
                let Some(name) = m.attribute("name") else {
                    continue;
                };
                let held = m
                    .descendants()
                    .filter(|c| {
                        c.has_tag_name("macro")
                            && c.parent().is_some_and(|x| x.has_tag_name("connection"))
                    })
                    .filter_map(|c| c.attribute("ref").map(str::to_lowercase))
                    .collect();
                graph.insert(name.to_lowercase(), (p.label.clone(), p.line(m), held));
            }
        }
        // Depth-first without recursion: 1 = on the current path, 2 = done.
        let mut state: HashMap<&str, u8> = HashMap::new();
        let mut starts: Vec<&String> = graph.keys().collect();
        starts.sort();
        for start in starts {
            if state.contains_key(start.as_str()) {
                continue;
            }
            let mut path: Vec<(&str, usize)> = vec![(start.as_str(), 0)];
            state.insert(start, 1);
            while let Some((node, next)) = path.last().copied() {
                let kids = graph.get(node).map(|g| &g.2);
                match kids.and_then(|k| k.get(next)) {
                    Some(kid) => {
                        if let Some(top) = path.last_mut() {
                            top.1 += 1;
                        }
                        match state.get(kid.as_str()) {
                            Some(1) => {
                                let from = path.iter().position(|(n, _)| *n == kid).unwrap_or(0);
                                let ring: Vec<&str> = path
                                    .get(from..)
                                    .unwrap_or_default()
                                    .iter()
                                    .map(|(n, _)| *n)
                                    .chain([kid.as_str()])
                                    .collect();
                                if let Some((file, line, _)) = graph.get(kid.as_str()) {
                                    let msg = format!(
                                        "macro {kid} holds itself through its connections ({}): the game would nest it without end",
                                        ring.join(" -> ")
                                    );
                                    out.push(Finding::error("", msg), file, *line);
                                }
                            }
                            Some(_) => {}
                            None if graph.contains_key(kid.as_str()) => {
                                state.insert(kid, 1);
                                path.push((kid, 0));
                            }
                            None => {}
                        }
                    }
                    None => {
                        state.insert(node, 2);
                        path.pop();
                    }
                }
            }
        }
    }

    /// `{page,id}` in the mod's macros: each in the mod's text files or the game's.
    fn text_refs(&self, parsed: &[Parsed<'_>], out: &mut Out) {
        // (file, line, as written, (page, id))
        type TextRef = (String, Option<u32>, String, (u64, u64));
        let mut refs: Vec<TextRef> = Vec::new();
        for p in parsed.iter().filter(|p| p.root() == "macros") {
            for n in p.doc.descendants().filter(|n| n.is_element()) {
                for a in n.attributes() {
                    if let Some(key) = text_ref(a.value()) {
                        refs.push((p.label.clone(), p.line(n), a.value().to_string(), key));
                    }
                }
            }
        }
        if refs.is_empty() {
            return;
        }
        let mut known: HashSet<(u64, u64)> = HashSet::new();
        for p in parsed
            .iter()
            .filter(|p| !p.subst && p.norm.starts_with("t/"))
        {
            text_ids(&p.doc, &mut known);
        }
        let outside = self.w.game.is_some();
        if outside {
            for path in ["t/0001-l044.xml", "t/0001.xml"] {
                for t in self.w.outside_texts(path) {
                    if let Ok(doc) = xml::parse(&t) {
                        text_ids(&doc, &mut known);
                    }
                }
            }
        }
        for (file, line, written, key) in refs {
            let found = if known.contains(&key) {
                Found::Mod(world::Place::named(&format!("t/{{{},{}}}", key.0, key.1)))
            } else if outside {
                Found::Missing
            } else {
                Found::Unchecked("a base-game text (no --game given)".into())
            };
            out.follow(&file, line, &written, &found, "text", true);
        }
    }
}

/// The materials an XMF names, as used at `place`.
fn mesh_materials(w: &World, place: &world::Place, used: &mut Vec<Used>) {
    let Some(bytes) = w.read(place) else { return };
    let Ok((mesh, _)) = crate::formats::xmf::read::read(&bytes) else {
        return;
    };
    for m in mesh.materials {
        let name = m.name.text().trim().to_string();
        if !name.is_empty() {
            used.push(Used {
                name,
                file: place.label.clone(),
                line: None,
            });
        }
    }
}

/// `{page,id}` as text references are written.
fn text_ref(v: &str) -> Option<(u64, u64)> {
    let inner = v.trim().strip_prefix('{')?.strip_suffix('}')?;
    let (page, id) = inner.split_once(',')?;
    Some((page.trim().parse().ok()?, id.trim().parse().ok()?))
}

/// The `(page, id)` of every `<t>` in a text file (`<language><page id><t id>`, or a diff
/// adding to `/language/page[@id='N']`).
fn text_ids(doc: &Document<'_>, known: &mut HashSet<(u64, u64)>) {
    for t in doc.descendants().filter(|t| t.has_tag_name("t")) {
        let Some(id) = t.attribute("id").and_then(|i| i.trim().parse::<u64>().ok()) else {
            continue;
        };
        let page = t
            .ancestors()
            .find(|a| a.has_tag_name("page"))
            .and_then(|p| p.attribute("id"))
            .and_then(|i| i.trim().parse::<u64>().ok())
            .or_else(|| {
                let sel = t.ancestors().find_map(|a| a.attribute("sel"))?;
                let at = sel.find("page[@id=")? + 9;
                let rest = sel.get(at..)?.trim_start_matches(['\'', '"']);
                let end = rest.find(|c: char| !c.is_ascii_digit())?;
                rest.get(..end)?.parse().ok()
            });
        if let Some(page) = page {
            known.insert((page, id));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_references_are_read_as_written() {
        assert_eq!(text_ref("{20104,100301}"), Some((20104, 100301)));
        assert_eq!(text_ref(" { 1001 , 2 } "), Some((1001, 2)));
        assert_eq!(text_ref("{a,b}"), None);
        assert_eq!(text_ref("plain"), None);
        let doc = crate::xml::parse(
            r#"<diff><add sel="/language/page[@id='5']"><t id="7">x</t></add><add sel="/language"><page id="9"><t id="1"/></page></add></diff>"#,
        )
        .unwrap();
        let mut known = HashSet::new();
        text_ids(&doc, &mut known);
        assert_eq!(known, HashSet::from([(5, 7), (9, 1)]));
    }
}
