//! What several X4 extensions both define: a component, macro or ware two of them declare (in
//! `index/components.xml`, `index/macros.xml`, `libraries/wares.xml`, whole or as `<diff>`
//! additions), a file two of them both provide that the game does not merge (an XML file that
//! is not a `<diff>` patch, `content.xml`, `index/` or `t/`), a `t` page id two of them fill with
//! different texts, and with the game, a node of a game file that two patches both change. The
//! extension loaded last wins, silently: this is where a player learns which. An XML file that
//! does not read is named too (kind `unreadable`): what it defines cannot be compared, so a
//! conflict it holds would otherwise be missed without a word.

use super::xml;
use crate::error::Result;
use crate::vfs::{GameView, SharedSource};
use crate::xmlpatch::{self, Doc, Id, Op, Patch};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One thing two or more extensions both define.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Conflict {
    /// `component`, `macro`, `ware`, `file`, `text` or `patch`; `unreadable` for an XML file
    /// that does not read (its definitions are not compared; `message` says why).
    pub kind: String,
    /// The id (lower case), or the file's path in the game's layout (lower case, `/`); for a
    /// text `{page,id}` of a language file, for a patch the game file and the node.
    pub name: String,
    /// The extensions' folders, in load order.
    pub mods: Vec<String>,
    /// Where each one defines it (`folder/path`), in the same order.
    pub files: Vec<String>,
    pub message: String,
}

/// An extension read for its definitions.
struct Ext {
    folder: String,
    id: String,
    deps: Vec<String>,
    view: GameView,
    /// `kind:name` -> the file that defines it.
    defs: BTreeMap<(String, String), String>,
    /// (language file, page, id) -> (text, file).
    texts: BTreeMap<(String, String, String), (String, String)>,
    /// Game paths of its `<diff>` patches -> the file.
    patches: BTreeMap<String, String>,
    /// XML files that did not read: (the file, why).
    unreadable: Vec<(String, String)>,
}

/// The conflicts among the extensions in `dirs` (with `game`, also between their patches of
/// the game's files). With no `dirs`, every extension installed in `game`.
pub fn find(dirs: &[PathBuf], game: Option<&Path>) -> Result<Vec<Conflict>> {
    let mut dirs = dirs.to_vec();
    if dirs.is_empty() {
        if let Some(g) = game {
            dirs = installed(g);
        }
    }
    let mut exts = Vec::new();
    for d in &dirs {
        exts.push(read_ext(d)?);
    }
    let game = game.map(GameView::open).transpose()?;
    Ok(among(load_order(exts), game.as_ref()))
}

/// The conflicts among extension folders given as their files (the page's dropped folders):
/// each path begins with its folder's name, and each folder with a `content.xml` at its root is
/// an extension, read as [`find`] reads one from disk (its loose files). Also the extensions'
/// folders, in load order.
pub fn find_in_files(files: Vec<(String, SharedSource)>) -> Result<(Vec<String>, Vec<Conflict>)> {
    let mut by_folder: BTreeMap<String, Vec<(String, SharedSource)>> = BTreeMap::new();
    for (path, source) in files {
        let path = path.replace('\\', "/");
        if let Some((folder, inside)) = path.split_once('/') {
            by_folder
                .entry(folder.to_string())
                .or_default()
                .push((inside.to_string(), source));
        }
    }
    let mut exts = Vec::new();
    for (folder, files) in by_folder {
        if !files
            .iter()
            .any(|(p, _)| p.eq_ignore_ascii_case("content.xml"))
        {
            continue;
        }
        let entries: Vec<(String, String)> = files
            .iter()
            .filter_map(|(p, _)| crate::vfs::normalize(p).ok().map(|n| (n, p.clone())))
            .collect();
        let view = GameView::loose(&folder, files);
        exts.push(read_view(folder, view, entries));
    }
    let exts = load_order(exts);
    let folders = exts.iter().map(|e| e.folder.clone()).collect();
    Ok((folders, among(exts, None)))
}

/// The conflicts among `exts`, in load order (and, with `game`, between their patches of its
/// files).
fn among(exts: Vec<Ext>, game: Option<&GameView>) -> Vec<Conflict> {
    let mut out = Vec::new();
    for e in &exts {
        for (file, why) in &e.unreadable {
            out.push(Conflict {
                kind: "unreadable".into(),
                name: file.to_ascii_lowercase().replace('\\', "/"),
                mods: vec![e.folder.clone()],
                files: vec![format!("{}/{file}", e.folder)],
                message: format!(
                    "{}/{file} does not read ({why}): what it defines is not compared",
                    e.folder
                ),
            });
        }
    }
    // Definitions and whole files.
    let mut by_def: BTreeMap<(String, String), Vec<usize>> = BTreeMap::new();
    for (i, e) in exts.iter().enumerate() {
        for k in e.defs.keys() {
            by_def.entry(k.clone()).or_default().push(i);
        }
    }
    for ((kind, name), who) in by_def {
        if who.len() < 2 {
            continue;
        }
        let files = who
            .iter()
            .filter_map(|&i| exts.get(i))
            .map(|e| {
                let f = e.defs.get(&(kind.clone(), name.clone())).cloned();
                format!("{}/{}", e.folder, f.unwrap_or_default())
            })
            .collect();
        out.push(conflict(&exts, &kind, name, &who, files));
    }
    // Texts: the same page and id with different texts.
    let mut by_text: BTreeMap<&(String, String, String), Vec<usize>> = BTreeMap::new();
    for (i, e) in exts.iter().enumerate() {
        for k in e.texts.keys() {
            by_text.entry(k).or_default().push(i);
        }
    }
    for (k, who) in by_text {
        let texts: Vec<&(String, String)> = who
            .iter()
            .filter_map(|&i| exts.get(i).and_then(|e| e.texts.get(k)))
            .collect();
        if who.len() < 2 || texts.iter().all(|t| t.0 == texts[0].0) {
            continue;
        }
        let files = who
            .iter()
            .zip(&texts)
            .filter_map(|(&i, t)| exts.get(i).map(|e| format!("{}/{}", e.folder, t.1)))
            .collect();
        let name = format!("{} {{{},{}}}", k.0, k.1, k.2);
        out.push(conflict(&exts, "text", name, &who, files));
    }
    if let Some(view) = game {
        out.extend(patch_conflicts(&exts, view));
    }
    out
}

fn conflict(exts: &[Ext], kind: &str, name: String, who: &[usize], files: Vec<String>) -> Conflict {
    let mods: Vec<String> = who
        .iter()
        .filter_map(|&i| exts.get(i).map(|e| e.folder.clone()))
        .collect();
    let last = mods.last().cloned().unwrap_or_default();
    let what = match kind {
        "file" => "provide".to_string(),
        "text" => "fill with different texts".to_string(),
        "patch" => "both patch".to_string(),
        k => format!("define the {k}"),
    };
    let message = if kind == "patch" {
        format!(
            "{} change the same node of the game's file: {last}'s change is applied last",
            mods.join(" and ")
        )
    } else {
        format!(
            "{} {what} {name}: the game uses {last}'s (loaded last)",
            mods.join(" and ")
        )
    };
    Conflict {
        kind: kind.into(),
        name,
        mods,
        files,
        message,
    }
}

/// The extension folders of a game (`GAME/extensions/*` with a `content.xml`).
fn installed(game: &Path) -> Vec<PathBuf> {
    let Some(ext) = crate::assemble::read::find_in(game, "extensions") else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = std::fs::read_dir(ext)
        .map(|r| r.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    out.retain(|d| crate::assemble::read::find_in(d, "content.xml").is_some());
    out.sort();
    out
}

/// The extensions in the order the game loads them: an extension after those it depends on,
/// otherwise by folder name.
fn load_order(exts: Vec<Ext>) -> Vec<Ext> {
    load_order_by(exts, |e| (&e.folder, &e.id, &e.deps))
}

/// [`load_order`] for anything that knows its extension's folder, content id and dependency
/// ids (`hangar find` stacks a game view's extensions so).
pub(crate) fn load_order_by<T>(
    mut exts: Vec<T>,
    names: impl Fn(&T) -> (&String, &String, &Vec<String>),
) -> Vec<T> {
    exts.sort_by_key(|e| names(e).0.to_ascii_lowercase());
    let mut out: Vec<T> = Vec::new();
    while !exts.is_empty() {
        let ready = exts
            .iter()
            .position(|e| {
                names(e)
                    .2
                    .iter()
                    .all(|d| !exts.iter().any(|o| names(o).1.eq_ignore_ascii_case(d)))
            })
            .unwrap_or(0);
        out.push(exts.remove(ready));
    }
    out
}

/// The folder's name as given (a symbolic link keeps its own name).
fn folder_name(dir: &Path) -> String {
    dir.components()
        .next_back()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn read_ext(dir: &Path) -> Result<Ext> {
    let view = GameView::folder(dir)?;
    let entries = (view.entries("", None).unwrap_or_default().into_iter())
        .map(|f| (f.norm, f.shown))
        .collect();
    Ok(read_view(folder_name(dir), view, entries))
}

/// An extension's definitions: `entries` are its loose files (game path, path as named).
fn read_view(folder: String, view: GameView, entries: Vec<(String, String)>) -> Ext {
    let mut e = Ext {
        id: folder.clone(),
        folder,
        deps: Vec::new(),
        view,
        defs: BTreeMap::new(),
        texts: BTreeMap::new(),
        patches: BTreeMap::new(),
        unreadable: Vec::new(),
    };
    // Loose files only: a catalog's are the mod's own business until the game mounts it, and
    // its index and libraries are read the same way through it.
    for (norm, shown) in entries {
        if !norm.ends_with(".xml") {
            continue;
        }
        let bytes = match e.view.get(&norm) {
            Some(Ok(bytes)) => bytes,
            Some(Err(err)) => {
                e.unreadable.push((shown, err.to_string()));
                continue;
            }
            None => continue,
        };
        let text = match xml::text(&bytes) {
            Ok(text) => text,
            Err(r) => {
                e.unreadable.push((shown, r.to_string()));
                continue;
            }
        };
        let doc = match xml::parse(&text) {
            Ok(doc) => doc,
            Err(r) => {
                e.unreadable.push((shown, r.to_string()));
                continue;
            }
        };
        let root = doc.root_element();
        if norm == "content.xml" {
            if let Some(id) = root.attribute("id") {
                e.id = id.to_string();
            }
            e.deps = root
                .children()
                .filter(|c| c.has_tag_name("dependency"))
                .filter_map(|c| c.attribute("id").map(str::to_string))
                .collect();
            continue;
        }
        let kind = match norm.as_str() {
            "index/components.xml" => Some(("component", "entry", "name")),
            "index/macros.xml" => Some(("macro", "entry", "name")),
            "libraries/wares.xml" => Some(("ware", "ware", "id")),
            _ => None,
        };
        if let Some((kind, tag, attr)) = kind {
            for n in root.descendants().filter(|n| n.has_tag_name(tag)) {
                if let Some(v) = n.attribute(attr) {
                    e.defs
                        .entry((kind.into(), v.to_ascii_lowercase()))
                        .or_insert_with(|| shown.clone());
                }
            }
        }
        if norm.starts_with("t/") {
            for page in root.descendants().filter(|n| n.has_tag_name("page")) {
                let Some(p) = page.attribute("id") else {
                    continue;
                };
                for t in page.children().filter(|n| n.has_tag_name("t")) {
                    let Some(id) = t.attribute("id") else {
                        continue;
                    };
                    let text: String = t.descendants().filter_map(|d| d.text()).collect();
                    let name = norm.rsplit('/').next().unwrap_or_default().to_string();
                    e.texts
                        .entry((name, p.to_string(), id.to_string()))
                        .or_insert((text, shown.clone()));
                }
            }
            continue;
        }
        if root.has_tag_name("diff") {
            e.patches.insert(norm, shown);
            continue;
        }
        if !norm.starts_with("index/") {
            e.defs.insert(("file".into(), norm), shown);
        }
    }
    e
}

/// The nodes of the game's files that two extensions' patches both replace or remove (the same
/// node, or one inside the other).
fn patch_conflicts(exts: &[Ext], game: &GameView) -> Vec<Conflict> {
    let mut by_path: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, e) in exts.iter().enumerate() {
        for p in e.patches.keys() {
            by_path.entry(p).or_default().push(i);
        }
    }
    let mut out = Vec::new();
    for (path, who) in by_path {
        if who.len() < 2 {
            continue;
        }
        let Some(Ok(bytes)) = game.get(path) else {
            continue;
        };
        let base = match xmlpatch::read(&bytes) {
            Ok(base) => base,
            Err(err) => {
                out.push(Conflict {
                    kind: "unreadable".into(),
                    name: path.to_string(),
                    mods: Vec::new(),
                    files: vec![format!("game/{path}")],
                    message: format!(
                        "the game's {path} does not read ({}): the patches of it are not compared",
                        err.message
                    ),
                });
                continue;
            }
        };
        // Each extension's patch applied alone to the game's file: the nodes of that file it
        // replaces or removes.
        let mut touched: Vec<(usize, Vec<Id>)> = Vec::new();
        for &i in &who {
            let Some(e) = exts.get(i) else { continue };
            let Some(Ok(pb)) = e.view.get(path) else {
                continue;
            };
            let Ok(patch) = xmlpatch::read(&pb).and_then(Patch::from_doc) else {
                continue;
            };
            touched.push((i, changed_nodes(&base, &patch)));
        }
        let mut reported: Vec<Id> = Vec::new();
        for (a, (ia, na)) in touched.iter().enumerate() {
            for (ib, nb) in touched.iter().skip(a + 1) {
                for &x in na {
                    let Some(&y) = nb
                        .iter()
                        .find(|&&y| y == x || inside(&base, x, y) || inside(&base, y, x))
                    else {
                        continue;
                    };
                    let node = if inside(&base, y, x) { x } else { y };
                    if reported.contains(&node) {
                        continue;
                    }
                    reported.push(node);
                    let (Some(ea), Some(eb)) = (exts.get(*ia), exts.get(*ib)) else {
                        continue;
                    };
                    let name = format!("{path} {}", xmlpatch::sel_of(&base, node));
                    let files = vec![
                        format!(
                            "{}/{}",
                            ea.folder,
                            ea.patches.get(path).cloned().unwrap_or_default()
                        ),
                        format!(
                            "{}/{}",
                            eb.folder,
                            eb.patches.get(path).cloned().unwrap_or_default()
                        ),
                    ];
                    out.push(conflict(exts, "patch", name, &[*ia, *ib], files));
                }
            }
        }
    }
    out
}

/// True when `inner` lies below `outer`.
fn inside(doc: &Doc, inner: Id, outer: Id) -> bool {
    let mut at = doc.parent(inner);
    while let Some(p) = at {
        if p == outer {
            return true;
        }
        at = doc.parent(p);
    }
    false
}

/// The elements of `base` that `patch`'s replace and remove operations change (an attribute's
/// change counts as its element's), applied in order to a copy.
fn changed_nodes(base: &Doc, patch: &Patch) -> Vec<Id> {
    let mut doc = base.clone();
    let mut out = Vec::new();
    for op in &patch.ops {
        if !matches!(op, Op::Add { .. }) {
            if let Ok(item) = xmlpatch::select_one(&doc, op.sel()) {
                let id = match item {
                    xmlpatch::xpath::Item::Node(n) => n,
                    xmlpatch::xpath::Item::Attr(n, _) => n,
                };
                // Only nodes of the game's file (an earlier operation's additions are the
                // extension's own).
                if id < base.nodes.len() && base.is_element(id) {
                    out.push(id);
                } else if let Some(p) = doc.parent(id).filter(|&p| p < base.nodes.len()) {
                    out.push(p);
                }
            }
        }
        let _ = xmlpatch::apply_one(&mut doc, &patch.store, op);
    }
    out
}
