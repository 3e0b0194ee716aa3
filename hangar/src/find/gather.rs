//! What a game view defines, gathered once: its extensions in load order, the texts of one
//! language, the macros (index entries and macro files), the components and the wares, each with
//! the name the game shows and the file and extension it comes from.

use super::texts::{Stack, Texts};
use super::{Found, Item, Kind};
use crate::check::xml;
use crate::vfs::{normalize, GameView};
use crate::xmlpatch::{self, Doc, Patch};
use rayon::prelude::*;
use std::collections::{HashMap, HashSet};

/// One layer of definitions: the game's own files or one extension's (`prefix` is
/// `extensions/NAME/`, or empty for the view's root).
struct Owner {
    view: usize,
    prefix: String,
    /// The extension's content id (else its folder name); none for the game.
    extension: Option<String>,
    folder: String,
    id: String,
    deps: Vec<String>,
}

/// The content id (trimmed; none when empty) and dependency ids of a content.xml.
fn content(view: &GameView, path: &str) -> Option<(Option<String>, Vec<String>)> {
    let bytes = view.get(&normalize(path).ok()?)?.ok()?;
    let (id, deps) = crate::formats::x4xml::content_ids(&bytes)?;
    let id = id
        .as_deref()
        .map(str::trim)
        .filter(|i| !i.is_empty())
        .map(str::to_string);
    Some((id, deps))
}

/// The owners of one view: its root (the game, or the extension the view is), then the
/// extensions below `extensions/` in the order the game loads them.
fn owners_of(view: &GameView, vi: usize) -> Vec<Owner> {
    let folder_of_label = std::path::Path::new(&view.label)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let root_ext = content(view, "content.xml").map(|(id, _)| id.unwrap_or(folder_of_label));
    let mut out = vec![Owner {
        view: vi,
        prefix: String::new(),
        extension: root_ext,
        folder: String::new(),
        id: String::new(),
        deps: Vec::new(),
    }];
    let folders: std::collections::BTreeSet<String> = view
        .files("extensions")
        .unwrap_or_default()
        .iter()
        .filter_map(|f| {
            let (e, rest) = f.strip_prefix("extensions/")?.split_once('/')?;
            (!rest.is_empty()).then(|| e.to_string())
        })
        .collect();
    let mut exts = Vec::new();
    for folder in folders {
        let prefix = format!("extensions/{folder}/");
        let (id, deps) = content(view, &format!("{prefix}content.xml")).unwrap_or_default();
        let id = id.unwrap_or_else(|| folder.clone());
        exts.push(Owner {
            view: vi,
            prefix,
            extension: Some(id.clone()),
            folder,
            id,
            deps,
        });
    }
    out.extend(crate::check::conflicts::load_order_by(exts, |o| {
        (&o.folder, &o.id, &o.deps)
    }));
    out
}

/// The bytes of `path` in `view`, when it is there and reads.
fn bytes(view: &GameView, path: &str) -> Option<crate::io::Input> {
    view.get(&normalize(path).ok()?)?.ok()
}

/// The text files of one owner for `lang`, in the order they stack: `t/NNNN.xml` (every
/// language), then `t/NNNN-lLLL.xml`, each by number (`0001` first).
fn text_files(view: &GameView, prefix: &str, lang: u32) -> Vec<String> {
    let dir = format!("{prefix}t");
    let own = format!("-l{lang:03}.xml");
    let mut neutral = Vec::new();
    let mut language = Vec::new();
    for f in view.files(&dir).unwrap_or_default() {
        let Some(name) = f.strip_prefix(&dir).and_then(|n| n.strip_prefix('/')) else {
            continue;
        };
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if name.strip_suffix(".xml").is_some_and(digits) {
            neutral.push(f);
        } else if name.strip_suffix(&own).is_some_and(digits) {
            language.push(f);
        }
    }
    neutral.sort();
    language.sort();
    neutral.extend(language);
    neutral
}

/// An index entry: its name as written, its value, the owner that declared it last.
struct IndexEntry {
    name: String,
    value: String,
    owner: usize,
}

/// The `<entry name value>` elements of an index file (plain or a `<diff>` adding to one).
fn index_entries(bytes: &[u8]) -> Vec<(String, String)> {
    let Ok(text) = xml::text(bytes) else {
        return Vec::new();
    };
    let Ok(doc) = xml::parse(&text) else {
        return Vec::new();
    };
    doc.descendants()
        .filter(|e| e.has_tag_name("entry"))
        .filter_map(|e| Some((e.attribute("name")?.into(), e.attribute("value")?.into())))
        .collect()
}

/// A macro as its file defines it.
struct MacroDef {
    id: String,
    name: Option<String>,
    basename: Option<String>,
    /// The component it builds (`<component ref>`), which the game shows by this macro's name.
    component: Option<String>,
}

/// The `<macro>` elements of a macro file's bytes.
fn macros_in(bytes: &[u8]) -> Vec<MacroDef> {
    let Ok(text) = xml::text(bytes) else {
        return Vec::new();
    };
    let Ok(doc) = xml::parse(&text) else {
        return Vec::new();
    };
    doc.descendants()
        // A macro defined (a `name`), not one referenced from a connection (a `ref`).
        .filter(|m| m.has_tag_name("macro") && m.attribute("name").is_some())
        .filter_map(|m| {
            let id = m.attribute("name")?.to_string();
            let ident = m
                .children()
                .find(|c| c.has_tag_name("properties"))
                .and_then(|p| p.children().find(|c| c.has_tag_name("identification")));
            let attr = |a: &str| ident.and_then(|i| i.attribute(a)).map(str::to_string);
            let component = m
                .children()
                .find(|c| c.has_tag_name("component"))
                .and_then(|c| c.attribute("ref"))
                .map(str::to_string);
            Some(MacroDef {
                id,
                name: attr("name"),
                basename: attr("basename"),
                component,
            })
        })
        .collect()
}

/// The macros of a macro file after the extensions' `<diff>` patches at `patches` (in load
/// order) are applied to it; a patch that does not read is left out.
fn patched_macros(view: &GameView, base: &[u8], patches: &[String]) -> Vec<MacroDef> {
    let Ok(mut doc) = xmlpatch::read(base) else {
        return macros_in(base);
    };
    for p in patches {
        let patch = bytes(view, p)
            .and_then(|b| xmlpatch::read(&b).ok())
            .and_then(|d| Patch::from_doc(d).ok());
        if let Some(patch) = patch {
            // Failing operations are skipped, as the game skips them.
            let _ = xmlpatch::apply(&mut doc, &patch);
        }
    }
    macros_in(doc.to_xml().as_bytes())
}

/// The view paths an index value may name: as written and read inside the extension (see
/// [`crate::vfs::reference_paths`]), each with the `.xml` the index leaves out.
fn value_paths(value: &str, prefix: &str) -> Vec<String> {
    let mut out = Vec::new();
    for p in crate::vfs::reference_paths(value) {
        let with = if p.ends_with(".xml") {
            p.clone()
        } else {
            format!("{p}.xml")
        };
        // A value without `extensions\NAME\` names a file of the owner's own folder first.
        if !prefix.is_empty() && !p.starts_with("extensions/") {
            out.push(format!("{prefix}{with}"));
        }
        out.push(with);
    }
    out
}

/// Folders that hold no macros (texts, scripts, libraries, maps), left out of the search for
/// loose macro files.
fn skipped(path: &str) -> bool {
    let inner = path
        .strip_prefix("extensions/")
        .and_then(|r| r.split_once('/'))
        .map_or(path, |(_, r)| r);
    [
        "t/",
        "md/",
        "aiscripts/",
        "libraries/",
        "index/",
        "maps/",
        "ui/",
        "content.xml",
    ]
    .iter()
    .any(|s| inner.starts_with(s))
}

/// True when the file at `path` holds `<macros` in its first 64 KiB.
fn starts_as_macros(view: &GameView, path: &str) -> bool {
    let Some(e) = view.locate(path) else {
        return false;
    };
    let Ok(f) = std::fs::File::open(e) else {
        return false;
    };
    let mut head = Vec::new();
    use std::io::Read;
    if f.take(64 << 10).read_to_end(&mut head).is_err() {
        return false;
    }
    head.windows(7).any(|w| w == b"<macros")
}

/// The owner a file at `path` of view `vi` belongs to: the extension whose folder holds it, else
/// the view's root.
fn owner_of_path(owners: &[Owner], vi: usize, path: &str) -> Option<usize> {
    owners
        .iter()
        .enumerate()
        .filter(|(_, o)| o.view == vi && path.starts_with(&o.prefix))
        .max_by_key(|(_, o)| o.prefix.len())
        .map(|(i, _)| i)
}

/// Everything the views define, names resolved in the language `lang`.
pub fn gather(views: &[GameView], lang: u32, with_texts: bool) -> (Vec<Item>, Vec<Item>) {
    let mut owners = Vec::new();
    for (vi, v) in views.iter().enumerate() {
        owners.extend(owners_of(v, vi));
    }
    let view_of = |o: &Owner| views.get(o.view);

    // Texts, stacked in load order: the language-neutral file, then the language's own.
    let mut stack = Stack::new(with_texts);
    for o in &owners {
        let Some(v) = view_of(o) else { continue };
        for path in text_files(v, &o.prefix, lang) {
            if let Some(b) = bytes(v, &path) {
                stack.add(&b, &path, o.extension.as_deref());
            }
        }
    }
    let texts = stack.finish();

    // Index entries, the last declaration of a name winning.
    let mut index: [HashMap<String, IndexEntry>; 2] = [HashMap::new(), HashMap::new()];
    for (oi, o) in owners.iter().enumerate() {
        let Some(v) = view_of(o) else { continue };
        for (slot, file) in [(0, "index/macros.xml"), (1, "index/components.xml")] {
            let Some(b) = bytes(v, &format!("{}{file}", o.prefix)) else {
                continue;
            };
            for (name, value) in index_entries(&b) {
                if let Some(map) = index.get_mut(slot) {
                    map.insert(
                        name.to_lowercase(),
                        IndexEntry {
                            name,
                            value,
                            owner: oi,
                        },
                    );
                }
            }
        }
    }
    let [macro_index, component_index] = index;

    // Macro files: the indexed ones, then any other file a view keeps among its macros.
    let mut files: Vec<(usize, String, usize)> = Vec::new();
    let mut seen: HashSet<(usize, String)> = HashSet::new();
    let mut by_id: HashMap<String, (usize, String)> = HashMap::new();
    let mut entries: Vec<&IndexEntry> = macro_index.values().collect();
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    for e in &entries {
        let Some(o) = owners.get(e.owner) else {
            continue;
        };
        let order = std::iter::once(o.view).chain((0..views.len()).filter(|&i| i != o.view));
        let found = order.flat_map(|vi| {
            value_paths(&e.value, &o.prefix)
                .into_iter()
                .map(move |p| (vi, p))
        });
        let found = found
            .into_iter()
            .find(|(vi, p)| views.get(*vi).is_some_and(|v| v.exists(p)));
        if let Some((vi, p)) = found {
            by_id.insert(e.name.to_lowercase(), (vi, p.clone()));
            if seen.insert((vi, p.clone())) {
                files.push((vi, p, e.owner));
            }
        }
    }
    for (vi, v) in views.iter().enumerate() {
        for p in v.files("").unwrap_or_default() {
            // Mods keep macros in `macros/` folders or name them `*_macro.xml`; a loose file
            // elsewhere counts when it begins as a macro file does.
            let file = p.rsplit('/').next().unwrap_or("");
            if !p.ends_with(".xml") || seen.contains(&(vi, p.clone())) {
                continue;
            }
            let macroish = file.contains("macro")
                || p.contains("macros/")
                || (!skipped(&p) && starts_as_macros(v, &p));
            if !macroish {
                continue;
            }
            if let Some(oi) = owner_of_path(&owners, vi, &p) {
                seen.insert((vi, p.clone()));
                files.push((vi, p, oi));
            }
        }
    }
    // An extension changes a game's macro file with a `<diff>` at the same path below its folder.
    let patchers: Vec<(usize, &str)> = owners
        .iter()
        .filter(|o| !o.prefix.is_empty())
        .map(|o| (o.view, o.prefix.as_str()))
        .collect();
    let read: Vec<(usize, String, usize, Vec<MacroDef>)> = files
        .into_par_iter()
        .map(|(vi, p, oi)| {
            let defs = views
                .get(vi)
                .and_then(|v| {
                    let b = bytes(v, &p)?;
                    let patches: Vec<String> = if p.starts_with("extensions/") {
                        Vec::new()
                    } else {
                        patchers
                            .iter()
                            .filter(|(pv, _)| *pv == vi)
                            .map(|(_, prefix)| format!("{prefix}{p}"))
                            .filter(|q| v.exists(q))
                            .collect()
                    };
                    Some(if patches.is_empty() {
                        macros_in(&b)
                    } else {
                        patched_macros(v, &b, &patches)
                    })
                })
                .unwrap_or_default();
            (vi, p, oi, defs)
        })
        .collect();
    let mut items = Vec::new();
    let mut done: HashSet<String> = HashSet::new();
    // Each macro once: from the file its index entry names when there is one.
    let mut defs: Vec<(bool, usize, String, usize, MacroDef)> = Vec::new();
    for (vi, p, oi, ds) in read {
        for d in ds {
            let lower = d.id.to_lowercase();
            let indexed = by_id.get(&lower) == Some(&(vi, p.clone()));
            defs.push((indexed, vi, p.clone(), oi, d));
        }
    }
    defs.sort_by_key(|d| !d.0);
    // A component has no name of its own: the game shows it by the name of a macro building it.
    let mut component_names: HashMap<String, String> = HashMap::new();
    for (_, _, p, oi, d) in defs {
        if !done.insert(d.id.to_lowercase()) {
            continue;
        }
        let name = d.name.as_deref().and_then(|n| texts.shown(n));
        let basename = d.basename.as_deref().and_then(|n| texts.shown(n));
        if let (Some(c), Some(n)) = (&d.component, name.as_ref().or(basename.as_ref())) {
            component_names
                .entry(c.to_lowercase())
                .or_insert_with(|| n.clone());
        }
        let extension = owners.get(oi).and_then(|o| o.extension.clone());
        items.push(Item {
            found: Found {
                kind: Kind::Macro,
                id: d.id,
                name: name.clone().or(basename.clone()).unwrap_or_default(),
                file: p,
                extension,
            },
            also: basename
                .filter(|b| Some(b) != name.as_ref())
                .unwrap_or_default(),
        });
    }
    // Indexed macros whose file was not found: listed by id.
    for e in entries {
        if done.insert(e.name.to_lowercase()) {
            items.push(Item {
                found: Found {
                    kind: Kind::Macro,
                    id: e.name.clone(),
                    name: String::new(),
                    file: e.value.replace('\\', "/"),
                    extension: owners.get(e.owner).and_then(|o| o.extension.clone()),
                },
                also: String::new(),
            });
        }
    }

    // Components: their index entries.
    let mut comps: Vec<&IndexEntry> = component_index.values().collect();
    comps.sort_by(|a, b| a.name.cmp(&b.name));
    for e in comps {
        let o = owners.get(e.owner);
        let prefix = o.map_or("", |o| o.prefix.as_str());
        let paths = value_paths(&e.value, prefix);
        let v = o.and_then(|o| views.get(o.view));
        let file = paths
            .iter()
            .find(|p| v.is_some_and(|v| v.exists(p)))
            .or(paths.first())
            .cloned()
            .unwrap_or_default();
        items.push(Item {
            found: Found {
                kind: Kind::Component,
                id: e.name.clone(),
                name: component_names
                    .get(&e.name.to_lowercase())
                    .cloned()
                    .unwrap_or_default(),
                file,
                extension: o.and_then(|o| o.extension.clone()),
            },
            also: String::new(),
        });
    }

    items.extend(wares(views, &owners, &texts));
    let text_items = if with_texts {
        text_items(&texts)
    } else {
        Vec::new()
    };
    (items, text_items)
}

/// The wares of `libraries/wares.xml`, the game's with each extension's patch applied in load
/// order (an extension alone: its additions).
fn wares(views: &[GameView], owners: &[Owner], texts: &Texts) -> Vec<Item> {
    let mut doc = super::empty_doc("wares");
    let mut origin: HashMap<String, (String, Option<String>)> = HashMap::new();
    for o in owners {
        let Some(v) = views.get(o.view) else { continue };
        let path = format!("{}libraries/wares.xml", o.prefix);
        let Some(b) = bytes(v, &path) else { continue };
        let Ok(file) = xmlpatch::read(&b) else {
            continue;
        };
        let Some(root) = file.root() else { continue };
        if file.element(root).is_some_and(|e| e.name == "diff") {
            if let Ok(patch) = Patch::from_doc(file) {
                super::apply_tolerant(&mut doc, &patch, "ware");
            }
        } else if let Some(top) = doc.root() {
            // A whole file: its wares join the ones before.
            for w in file.elements(root) {
                let id = doc.import(&file, w);
                let n = doc.children(top).len();
                doc.insert(top, n, id);
            }
        }
        for (id, _, _) in ware_list(&doc) {
            origin
                .entry(id.to_lowercase())
                .or_insert_with(|| (path.clone(), o.extension.clone()));
        }
    }
    ware_list(&doc)
        .into_iter()
        .map(|(id, name, _)| {
            let (file, extension) = origin.get(&id.to_lowercase()).cloned().unwrap_or_default();
            Item {
                found: Found {
                    kind: Kind::Ware,
                    name: name.and_then(|n| texts.shown(&n)).unwrap_or_default(),
                    id,
                    file,
                    extension,
                },
                also: String::new(),
            }
        })
        .collect()
}

/// The `<ware>` children of the wares document: id, name attribute, node.
fn ware_list(doc: &Doc) -> Vec<(String, Option<String>, usize)> {
    let Some(top) = doc.root() else {
        return Vec::new();
    };
    doc.elements(top)
        .filter_map(|w| {
            let e = doc.element(w)?;
            (e.name == "ware").then_some(())?;
            Some((
                e.attr("id")?.to_string(),
                e.attr("name").map(str::to_string),
                w,
            ))
        })
        .collect()
}

/// Every text as an entry of kind text: `{page,id}`, the text as shown.
fn text_items(texts: &Texts) -> Vec<Item> {
    let mut keys: Vec<&(u64, u64)> = texts.by_key.keys().collect();
    keys.sort();
    keys.into_iter()
        .filter_map(|&(p, i)| {
            let t = texts.by_key.get(&(p, i))?;
            let id = format!("{{{p},{i}}}");
            Some(Item {
                found: Found {
                    kind: Kind::Text,
                    name: texts.shown(&id)?,
                    id,
                    file: t.file.clone(),
                    extension: t.extension.clone(),
                },
                also: String::new(),
            })
        })
        .collect()
}
