//! The template new content is cloned from: a macro of any class named by file or by name in a game view
//! (a game with its extensions, or one extension), its component, its ware (plain or in a
//! `<diff>`), the extension it came from, and the names and text pages already used there.

use crate::assemble::read::find_in;
use crate::check::xml;
use crate::error::{Error, Result};
use crate::formats::x4xml::{content_ids, material_library::Library};
use crate::vfs::GameView;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Where a template was found.
pub(crate) struct Template {
    pub macro_name: String,
    /// The macro file's game path in its view (`assets/units/size_m/macros/x_macro.xml`).
    pub macro_path: String,
    /// The macro file's text.
    pub macro_text: String,
    /// `ship_s`, `ship_m`, `ship_l`, `ship_xl`...
    pub class: String,
    /// The template component's XML text, when it was found.
    pub component_text: Option<String>,
    /// The `<ware>` element whose `<component ref>` is the macro, as written.
    pub ware_text: Option<String>,
    /// The id of the extension the macro came from; none for the base game.
    pub extension: Option<String>,
    /// Index names (components and macros) and ware ids in use, lower case.
    pub used: HashSet<String>,
    /// Text pages in use.
    pub pages: HashSet<u64>,
    /// The game's material library with its extensions' patches, when the game itself is in view
    /// (`--game`, or the template's view); an extension alone does not know the game's materials.
    pub library: Option<Library>,
}

/// One index file of the view and the extension it belongs to (its folder names, lower case; none
/// for the game's own).
struct Owner {
    prefix: String,
    names: Vec<String>,
}

/// The id an extension goes by where others name it (`<dependency id>`): its content.xml's `id`,
/// else its folder (lower case, as `names` holds it).
fn content_id(owners: &[Owner], ids: &[Option<String>], name: &str) -> Option<String> {
    owners
        .iter()
        .zip(ids)
        .find(|(o, _)| o.names.iter().any(|n| n == name))
        .map(|(o, id)| id.clone().unwrap_or_else(|| o.names[0].clone()))
}

/// A folder of the view's root as an extension (content.xml): its names (folder, content id) and
/// the id it goes by.
fn extension_names(dir: &Path) -> Option<(Vec<String>, Option<String>)> {
    let content = find_in(dir, "content.xml")?;
    let folder = dir.file_name()?.to_string_lossy().to_lowercase();
    let id = std::fs::read(&content)
        .ok()
        .and_then(|b| content_ids(&b))
        .and_then(|(id, _)| id)
        .filter(|i| !i.trim().is_empty());
    let mut names = vec![folder];
    names.extend(id.iter().map(|i| i.to_lowercase()));
    Some((names, id))
}

/// The folder holding `file` that is an extension (has a content.xml), if any.
fn extension_root(file: &Path) -> Option<PathBuf> {
    let file = crate::io::canonical(file).ok()?;
    let mut dir = file.parent();
    while let Some(d) = dir {
        if find_in(d, "content.xml").is_some_and(|p| p.is_file()) {
            return Some(d.to_path_buf());
        }
        dir = d.parent();
    }
    None
}

/// The view and the game path of `template` when it names an XML file in `view`.
fn file_in(view: &GameView, template: &str) -> Option<(GameView, String)> {
    let norm = crate::vfs::normalize(template).ok()?;
    (norm.ends_with(".xml") && view.get(&norm).is_some()).then(|| (view.clone(), norm))
}

fn read_text(view: &GameView, path: &str) -> Option<String> {
    let bytes = view.read(path).ok()?;
    xml::text(&bytes).ok()
}

/// Index entries `(name, value)` of a file's text (plain or a `<diff>`).
fn entries(text: &str) -> Vec<(String, String)> {
    let Ok(doc) = xml::parse(text) else {
        return Vec::new();
    };
    doc.descendants()
        .filter(|e| e.has_tag_name("entry"))
        .filter_map(|e| {
            Some((
                e.attribute("name")?.to_string(),
                e.attribute("value")?.to_string(),
            ))
        })
        .collect()
}

/// The view paths an index value may name (`extensions\\ext\\assets\\x` -> `assets/x.xml` inside
/// the extension `ext` when the view is that extension, else `extensions/ext/assets/x.xml`; an
/// extension installed under another folder name than its index says is tried both ways), and
/// the extension it names.
fn value_path(value: &str, owner: &Owner, own: &[String]) -> (Vec<String>, Option<String>) {
    let v = value.replace('\\', "/");
    let v = v.trim_start_matches('/');
    let lower = v.to_lowercase();
    if let Some((ext, rest)) = lower
        .strip_prefix("extensions/")
        .and_then(|r| r.split_once('/'))
    {
        let rest_written = v.get(v.len() - rest.len()..).unwrap_or(rest);
        let inside = format!("{}{rest_written}.xml", owner.prefix);
        if owner.names.iter().chain(own).any(|n| n == ext) {
            return (vec![inside], Some(ext.to_string()));
        }
        return (vec![format!("{v}.xml"), inside], Some(ext.to_string()));
    }
    let ext = owner.names.first().cloned();
    (vec![format!("{}{v}.xml", owner.prefix)], ext)
}

/// The index files of the view: the game's (or the extension's own), then each extension's in
/// `extensions/` (loose or in catalogs).
fn owners(view: &GameView, own: &[String]) -> Vec<Owner> {
    owners_with_ids(view, own, None).0
}

/// [`owners`] and each one's content id as written (`own_id` for the view's own).
fn owners_with_ids(
    view: &GameView,
    own: &[String],
    own_id: Option<&str>,
) -> (Vec<Owner>, Vec<Option<String>>) {
    let mut out = vec![Owner {
        prefix: String::new(),
        names: own.to_vec(),
    }];
    let mut ids = vec![own_id.map(str::to_string)];
    let mut folders: Vec<String> = view
        .files("extensions")
        .unwrap_or_default()
        .iter()
        .filter_map(|f| {
            f.strip_prefix("extensions/")?
                .split_once('/')
                .map(|(e, _)| e.to_string())
        })
        .collect();
    folders.sort();
    folders.dedup();
    for folder in folders {
        let prefix = format!("extensions/{folder}/");
        let mut names = vec![folder.clone()];
        let id = view
            .read(&format!("{prefix}content.xml"))
            .ok()
            .and_then(|b| content_ids(&b))
            .and_then(|(id, _)| id)
            .filter(|i| !i.trim().is_empty());
        names.extend(id.iter().map(|i| i.to_lowercase()));
        out.push(Owner { prefix, names });
        ids.push(id);
    }
    (out, ids)
}

/// The game's material library patched by each extension's, in `owners` order; `None` when the
/// view's own library is no whole `<materiallibrary>` (an extension's patch alone).
fn material_library(view: &GameView, owners: &[Owner]) -> Option<Library> {
    const FILE: &str = "libraries/material_library.xml";
    let game = read_text(view, FILE)?;
    if xml::parse(&game).ok()?.root_element().tag_name().name() != "materiallibrary" {
        return None;
    }
    let mut lib = Library::default();
    lib.apply(&game).ok()?;
    for o in owners.iter().filter(|o| !o.prefix.is_empty()) {
        if let Some(text) = read_text(view, &format!("{}{FILE}", o.prefix)) {
            // A patch that does not apply leaves the library as it was.
            let _ = lib.apply(&text);
        }
    }
    Some(lib)
}

/// Looks the template up. `template` is a macro file, or a macro's name found through `game` (a
/// game folder, an extension folder, a game with its extensions).
pub(crate) fn find(template: &str, game: Option<&GameView>) -> Result<Template> {
    // A file named relative to the current folder is found from its full path (its folder, the
    // extension above it).
    let full = Path::new(template)
        .is_file()
        .then(|| crate::io::canonical(Path::new(template)).ok())
        .flatten();
    let as_file = full.as_deref().unwrap_or(Path::new(template));
    let (view, root, macro_path) = if as_file.is_file() {
        let root = extension_root(as_file);
        let (view, inside) = match &root {
            Some(r) => {
                let view = GameView::open(r)?;
                let file = crate::io::canonical(as_file).map_err(|e| Error::io(as_file, e))?;
                let rel = file
                    .strip_prefix(r)
                    .map(|p| p.to_string_lossy().replace('\\', "/"))
                    .unwrap_or_default();
                (view, crate::vfs::normalize(&rel)?)
            }
            None => GameView::around(as_file).unwrap_or((
                GameView::folder(as_file.parent().unwrap_or(Path::new(".")))?,
                crate::vfs::normalize(
                    &as_file
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                )?,
            )),
        };
        (view, root, Some(inside))
    } else if let Some((view, inside)) = game.and_then(|g| file_in(g, template)) {
        // A macro file inside the game view (the page's dropped folder).
        (view, None, Some(inside))
    } else {
        let view = game.cloned().ok_or_else(|| {
            Error::refused(
                "template",
                format!(
                    "{template:?} is not a file: name the game or extension it is in with --game"
                ),
            )
        })?;
        (view, None, None)
    };
    // A game view that is itself an extension (a content.xml at its root) names itself too.
    let root_ext = root.as_deref().and_then(extension_names).or_else(|| {
        let (id, _) = content_ids(&view.read("content.xml").ok()?)?;
        let folder = Path::new(&view.label)
            .file_name()?
            .to_string_lossy()
            .to_lowercase();
        let id = id.filter(|i| !i.trim().is_empty());
        let mut names = vec![folder];
        names.extend(id.iter().map(|i| i.to_lowercase()));
        Some((names, id))
    });
    let own: Vec<String> = root_ext
        .as_ref()
        .map(|(n, _)| n.clone())
        .unwrap_or_default();
    let own_id = root_ext.as_ref().and_then(|(_, id)| id.as_deref());
    let (owners, ids) = owners_with_ids(&view, &own, own_id);

    // Every index entry and ware id in view; the macro's file and extension.
    let mut used = HashSet::new();
    let mut macro_found: Option<(Vec<String>, Option<String>)> = None;
    let mut components: Vec<(String, Vec<String>)> = Vec::new();
    let mut prefixed_ext: Option<String> = None;
    let wanted = macro_path
        .as_deref()
        .and_then(|p| p.rsplit('/').next())
        .and_then(|f| f.strip_suffix(".xml"))
        .unwrap_or(template)
        .to_lowercase();
    for o in &owners {
        for (file, macros) in [("index/macros.xml", true), ("index/components.xml", false)] {
            let Some(text) = read_text(&view, &format!("{}{file}", o.prefix)) else {
                continue;
            };
            for (name, value) in entries(&text) {
                let lower = name.to_lowercase();
                let (path, ext) = value_path(&value, o, &own);
                if macros && lower == wanted {
                    if value
                        .replace('\\', "/")
                        .to_lowercase()
                        .starts_with("extensions/")
                    {
                        prefixed_ext = ext.clone();
                    }
                    if macro_found.is_none() {
                        macro_found = Some((path.clone(), ext.clone()));
                    }
                }
                if !macros {
                    components.push((lower.clone(), path));
                }
                used.insert(lower);
            }
        }
    }
    let (macro_path, macro_ext) = match (macro_path, macro_found) {
        (Some(p), found) => (vec![p], found.and_then(|f| f.1).or(prefixed_ext.clone())),
        (None, Some((p, e))) => (p, e),
        // Not an id: the name a player reads ("Cerberus Dropship"), one macro's or refused with
        // the candidates listed.
        (None, None) => {
            let id = crate::find::macro_by_name(&view, template)
                .map_err(|e| Error::refused("template", e.message))?;
            if id.eq_ignore_ascii_case(template) {
                return Err(Error::refused(
                    "template",
                    format!("no macro named {template:?} in the index of {}", view.label),
                ));
            }
            return find(&id, Some(&view));
        }
    };
    let (macro_path, macro_text) = macro_path
        .iter()
        .find_map(|p| Some((p.clone(), read_text(&view, p)?)))
        .ok_or_else(|| {
            Error::refused(
                "template",
                format!(
                    "{} cannot be read in {}",
                    macro_path.join(" or "),
                    view.label
                ),
            )
        })?;
    let doc = xml::parse(&macro_text)
        .map_err(|e| Error::refused("template", format!("{macro_path}: {}", e.message)))?;
    let m = doc
        .descendants()
        .find(|e| e.has_tag_name("macro"))
        .ok_or_else(|| Error::refused("template", format!("{macro_path} holds no <macro>")))?;
    let class = m.attribute("class").unwrap_or("").to_string();
    let macro_name = m.attribute("name").unwrap_or(&wanted).to_string();
    let comp_ref = m
        .children()
        .find(|c| c.has_tag_name("component"))
        .and_then(|c| c.attribute("ref"))
        .unwrap_or("")
        .to_lowercase();
    // The component: through the index, else beside the macros folder, by file name, then by
    // the name inside (a mod may keep a game component's name in a file of its own).
    let units = macro_path
        .rsplit_once('/')
        .and_then(|(d, _)| d.rsplit_once('/'))
        .map_or(String::new(), |(d, _)| d.to_string());
    let named = |p: &String| {
        let text = read_text(&view, p)?;
        let doc = xml::parse(&text).ok()?;
        let found = doc.descendants().any(|c| {
            c.has_tag_name("component")
                && c.attribute("name")
                    .is_some_and(|n| n.eq_ignore_ascii_case(&comp_ref))
        });
        drop(doc);
        found.then_some(text)
    };
    let component_text = components
        .iter()
        .filter(|(n, _)| *n == comp_ref)
        .flat_map(|(_, p)| p.iter().cloned())
        .chain(std::iter::once(format!("{units}/{comp_ref}.xml")))
        .find_map(|p| read_text(&view, &p))
        .or_else(|| {
            let prefix = format!("{units}/");
            view.files(&units)
                .unwrap_or_default()
                .iter()
                .filter(|f| {
                    f.strip_prefix(&prefix)
                        .is_some_and(|rest| !rest.contains('/') && rest.ends_with(".xml"))
                })
                .find_map(named)
        });

    // Wares: the ids in use and the template's.
    let mut ware_text = None;
    for o in &owners {
        let Some(text) = read_text(&view, &format!("{}libraries/wares.xml", o.prefix)) else {
            continue;
        };
        let Ok(doc) = xml::parse(&text) else { continue };
        for w in doc.descendants().filter(|e| e.has_tag_name("ware")) {
            if let Some(id) = w.attribute("id") {
                used.insert(id.to_lowercase());
            }
            let ours = w.children().any(|c| {
                c.has_tag_name("component")
                    && c.attribute("ref")
                        .is_some_and(|r| r.eq_ignore_ascii_case(&macro_name))
            });
            if ours && ware_text.is_none() {
                ware_text = text.get(w.range()).map(str::to_string);
            }
        }
    }
    // Text pages in use (English and the default language file).
    let mut pages = HashSet::new();
    for o in &owners {
        for f in ["t/0001-l044.xml", "t/0001.xml"] {
            let Some(text) = read_text(&view, &format!("{}{f}", o.prefix)) else {
                continue;
            };
            let Ok(doc) = xml::parse(&text) else { continue };
            pages.extend(
                doc.descendants()
                    .filter(|e| e.has_tag_name("page"))
                    .filter_map(|e| e.attribute("id")?.trim().parse::<u64>().ok()),
            );
        }
    }
    // The extension the template came from, by the id the game matches dependencies with: the
    // content id of the extension the template lies in (without one the game names it by the
    // folder it is installed in: the one its own index paths name, `extensions\<folder>\`,
    // where it works at all; else the folder it lies in), or of the extension in view whose folder
    // the macro's path names.
    let extension = match &root_ext {
        Some((names, id)) => id
            .clone()
            .or(prefixed_ext)
            .or_else(|| {
                root.as_deref()
                    .and_then(Path::file_name)
                    .map(|n| n.to_string_lossy().into_owned())
            })
            .or_else(|| names.first().cloned()),
        None => macro_ext.map(|e| content_id(&owners, &ids, &e).unwrap_or(e)),
    };
    let library = game
        .and_then(|g| material_library(g, &self::owners(g, &[])))
        .or_else(|| material_library(&view, &owners));
    Ok(Template {
        library,
        macro_path,
        macro_name,
        macro_text,
        class,
        component_text,
        ware_text,
        extension,
        used,
        pages,
    })
}
