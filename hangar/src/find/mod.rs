//! `hangar find`: the macros, components and wares of a game view found by the name a player
//! reads. The view is gathered once (`gather`: extensions in load order, texts of one language
//! stacked as the game stacks them, index entries, macro files, wares patched by extensions) into
//! an [`Index`], kept beside the game between runs (`cache`), and searched case-insensitively,
//! words in any order, best matches first.

mod cache;
mod gather;
mod texts;

use crate::error::{Error, ErrorKind, Result};
use crate::vfs::GameView;
use crate::xmlpatch::{self, tree, Doc, Op, Patch};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// What an entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Macro,
    Component,
    Ware,
    /// A string of the `t` files (`--kind text`): its id is `{page,id}`.
    Text,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Macro => "macro",
            Kind::Component => "component",
            Kind::Ware => "ware",
            Kind::Text => "text",
        }
    }

    /// The kind a face names (`macro`, `component`, `ware`, `text`).
    pub fn parse(s: &str) -> Result<Kind> {
        match s.trim().to_ascii_lowercase().as_str() {
            "macro" | "macros" => Ok(Kind::Macro),
            "component" | "components" => Ok(Kind::Component),
            "ware" | "wares" => Ok(Kind::Ware),
            "text" | "texts" => Ok(Kind::Text),
            other => Err(Error::refused(
                "kind",
                format!("{other:?} is not a kind: macro, component, ware or text"),
            )),
        }
    }
}

/// One thing found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Found {
    pub kind: Kind,
    /// The macro's or component's index name, the ware's id, a text's `{page,id}`.
    pub id: String,
    /// The name the game shows (empty when it has none: unnamed macros). A component is shown
    /// by the name of a macro that builds it.
    pub name: String,
    /// The file that defines it, as a path in the view (`extensions/NAME/...` for an extension
    /// of a game folder).
    pub file: String,
    /// The extension that defines it (its content id); none for the game itself.
    pub extension: Option<String>,
}

/// An entry of the index: what is shown, and another name it answers to (a macro's basename).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Item {
    pub found: Found,
    pub also: String,
}

/// What to search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FindOptions {
    /// Only this kind; none: macros, components and wares (texts only when asked for).
    pub kind: Option<Kind>,
    /// The language of the names: 44 (English) by default, 49 German, 33 French...
    pub lang: u32,
    /// Keep the index in the user's cache folder and reuse it while the game's catalogs and
    /// extensions are unchanged (`find`, not [`find_in`]).
    pub cache: bool,
}

impl Default for FindOptions {
    fn default() -> Self {
        FindOptions {
            kind: None,
            lang: 44,
            cache: true,
        }
    }
}

/// Everything a set of game views defines, with names resolved in one language.
pub struct Index {
    pub(crate) items: Vec<Item>,
    pub(crate) texts: Vec<Item>,
}

impl Index {
    /// The index of `views` (a game folder, extensions, loose files) stacked in this order,
    /// names in the language `options.lang`; the texts themselves only when `options.kind` asks
    /// for them (which text file wrote each is worked out then, file by file).
    pub fn of_views(views: &[GameView], options: &FindOptions) -> Index {
        let texts = options.kind == Some(Kind::Text);
        let (items, texts) = gather::gather(views, options.lang, texts);
        Index { items, texts }
    }

    /// The index of the game, extension or catalog folders `dirs` (each refused when it holds
    /// none of them), read from the cache (`options.cache`) when one was kept for the same files.
    pub fn open(dirs: &[PathBuf], options: &FindOptions) -> Result<Index> {
        let (lang, use_cache) = (options.lang, options.cache);
        let texts = options.kind == Some(Kind::Text);
        for d in dirs {
            holds_a_game(d)?;
        }
        // The kept index is checked against the files on disk before any catalog is opened:
        // opening a whole game's catalogs costs more than reading the index.
        let sig = use_cache.then(|| cache::signature(dirs, lang, texts));
        if let Some(index) = sig.as_ref().and_then(cache::load) {
            return Ok(index);
        }
        let views = dirs
            .iter()
            .map(|d| GameView::open(d))
            .collect::<Result<Vec<_>>>()?;
        let index = Index::of_views(&views, options);
        let Some(sig) = sig else {
            return Ok(index);
        };
        // A cache that cannot be written only costs the next run its speed.
        let _ = cache::store(&sig, &index, &views);
        Ok(index)
    }

    /// How many entries of each kind: macros, components, wares, texts.
    pub fn counts(&self) -> [usize; 4] {
        let mut n = [0; 4];
        for i in &self.items {
            if let Some(c) = n.get_mut(i.found.kind as usize) {
                *c += 1;
            }
        }
        n[3] = self.texts.len();
        n
    }

    /// [`Index::search`], an empty query refused (with the words `hangar find` says it with).
    pub fn find(&self, query: &str, kind: Option<Kind>) -> Result<Vec<Found>> {
        refuse_empty(query)?;
        Ok(self.search(query, kind))
    }

    /// The entries matching `query` (case-insensitive, its words in any order, in the id or the
    /// name), best first: the whole name (or id) equal, then the name holding the query, then
    /// every word in the name, then the id holding the query, then the words anywhere.
    pub fn search(&self, query: &str, kind: Option<Kind>) -> Vec<Found> {
        let q = query.trim().to_lowercase();
        let words: Vec<&str> = q.split_whitespace().collect();
        if words.is_empty() {
            return Vec::new();
        }
        let pool: &[Item] = if kind == Some(Kind::Text) {
            &self.texts
        } else {
            &self.items
        };
        let mut hits: Vec<(u8, &Found)> = pool
            .iter()
            .filter(|i| kind.is_none_or(|k| i.found.kind == k))
            .filter_map(|i| Some((rank(i, &q, &words)?, &i.found)))
            .collect();
        hits.sort_by(|a, b| {
            (a.0, a.1.kind, &a.1.name, &a.1.id).cmp(&(b.0, b.1.kind, &b.1.name, &b.1.id))
        });
        hits.into_iter().map(|(_, f)| f.clone()).collect()
    }
}

/// How well `item` answers the query `q` (lower case; `words` its words): lower is better, none
/// when it does not.
fn rank(item: &Item, q: &str, words: &[&str]) -> Option<u8> {
    let name = item.found.name.to_lowercase();
    let id = item.found.id.to_lowercase();
    let also = item.also.to_lowercase();
    let q_spaced = words.join(" ");
    if name == q || name == q_spaced || id == q || (!also.is_empty() && also == q_spaced) {
        return Some(0);
    }
    if name.contains(&q_spaced) {
        return Some(1);
    }
    if words.iter().all(|w| name.contains(w)) {
        return Some(2);
    }
    if id.contains(q) || also.contains(&q_spaced) {
        return Some(3);
    }
    let all = format!("{id} {name} {also}");
    words.iter().all(|w| all.contains(w)).then_some(4)
}

/// A game folder, an extension folder (its loose files and catalogs), a folder of catalogs or one
/// `.cat`, as a view; refused when it holds no game, extension or catalog.
pub fn open_game(dir: &Path) -> Result<GameView> {
    holds_a_game(dir)?;
    GameView::open(dir)
}

/// Refuses a folder that holds no game, extension or catalog (looked at on disk: a content.xml,
/// a catalog, or one of the game's top folders).
fn holds_a_game(dir: &Path) -> Result<()> {
    if !dir.exists() {
        return Err(Error::new(
            ErrorKind::Io,
            None,
            "",
            format!("{}: no such folder", dir.display()),
        ));
    }
    let has = |n: &str| crate::assemble::read::find_in(dir, n).is_some();
    let holds = (dir.is_file() && crate::io::has_ext(dir, "cat"))
        || (dir.is_dir()
            && (has("content.xml")
                || ["index", "libraries", "t", "extensions", "assets"]
                    .iter()
                    .any(|d| has(d))
                || !crate::vfs::catalogs_in(dir).is_empty()));
    if !holds {
        return Err(Error::refused(
            "game",
            format!(
                "{}: holds no game, extension or catalog (no content.xml, .cat, index/, libraries/, t/ or assets/)",
                dir.display()
            ),
        ));
    }
    Ok(())
}

fn refuse_empty(query: &str) -> Result<()> {
    if query.trim().is_empty() {
        return Err(Error::refused(
            "query",
            "an empty query: name what to find (a name as the game shows it, or part of an id)",
        ));
    }
    Ok(())
}

/// `hangar find`: what the game, extension or catalog folders `games` (stacked in this order)
/// define whose id or in-game name matches `query`, best matches first. The index is kept in
/// the user's cache folder when `options.cache` is set.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = std::env::temp_dir().join(format!("hangar-find-doc-{}", std::process::id()));
/// std::fs::create_dir_all(dir.join("t"))?;
/// std::fs::create_dir_all(dir.join("libraries"))?;
/// std::fs::write(dir.join("content.xml"), r#"<content id="my_mod" name="My mod"/>"#)?;
/// std::fs::write(
///     dir.join("t/0001-l044.xml"),
///     r#"<language id="44"><page id="90001"><t id="1">Osprey (a ship)Dropship</t></page></language>"#,
/// )?;
/// std::fs::write(
///     dir.join("libraries/wares.xml"),
///     r#"<diff><add sel="/wares"><ware id="my_dropship" name="{90001,1}"/></add></diff>"#,
/// )?;
/// let options = hangar::FindOptions { cache: false, ..Default::default() };
/// let found = hangar::find(&[dir.clone()], "dropship osprey", &options)?;
/// assert_eq!(found[0].id, "my_dropship");
/// assert_eq!(found[0].name, "Osprey Dropship");
/// assert_eq!(found[0].extension.as_deref(), Some("my_mod"));
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok(())
/// # }
/// ```
pub fn find(games: &[PathBuf], query: &str, options: &FindOptions) -> Result<Vec<Found>> {
    refuse_empty(query)?;
    if games.is_empty() {
        return Err(Error::refused(
            "game",
            "no game named: give a game, extension or catalog folder",
        ));
    }
    Index::open(games, options)?.find(query, options.kind)
}

/// [`find`] over views already open (the page's dropped folders, a test's bytes); no cache.
pub fn find_in(views: &[GameView], query: &str, options: &FindOptions) -> Result<Vec<Found>> {
    refuse_empty(query)?;
    Index::of_views(views, options).find(query, options.kind)
}

/// The id of the one macro of `view` the game shows as `name` (or whose id it is): a name shared
/// by several macros is refused with the candidates listed (`--template "Cerberus Dropship"`).
pub fn macro_by_name(view: &GameView, name: &str) -> Result<String> {
    refuse_empty(name)?;
    let index = Index::of_views(std::slice::from_ref(view), &FindOptions::default());
    let found = index.search(name, Some(Kind::Macro));
    let q = name.trim().to_lowercase();
    let exact: Vec<&Found> = found
        .iter()
        .filter(|f| f.id.to_lowercase() == q || f.name.to_lowercase() == q)
        .collect();
    let pick = if exact.is_empty() {
        found.iter().collect()
    } else {
        exact
    };
    match pick.as_slice() {
        [one] => Ok(one.id.clone()),
        [] => Err(Error::refused(
            "template",
            format!("no macro named {name:?} in {}", view.label),
        )),
        many => {
            let listed: Vec<String> = many
                .iter()
                .take(20)
                .map(|f| format!("{} ({})", f.id, f.name))
                .collect();
            let more = many.len().saturating_sub(20);
            let more = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            Err(Error::refused(
                "template",
                format!(
                    "{} macros are named {name:?} in {}: {}{more}; name one by its id",
                    many.len(),
                    view.label,
                    listed.join(", ")
                ),
            ))
        }
    }
}

/// An empty document whose root element is `<root/>`: what an extension's `<diff>` adds to when
/// the game's own file is not in view.
fn empty_doc(root: &str) -> Doc {
    let mut doc = Patch::new().store;
    doc.push(
        tree::Kind::Element(tree::Element {
            name: root.to_string(),
            attrs: Vec::new(),
            ns: Vec::new(),
        }),
        crate::xmlpatch::tree::DOCUMENT,
    );
    doc
}

/// `patch` applied to `doc` as the game applies it; then the `<tag id>` elements that failing
/// operations carry and the document's root lacks are appended to it. An extension read alone
/// replaces game wares and pages that are not in view: what it defines is still its own.
fn apply_tolerant(doc: &mut Doc, patch: &Patch, tag: &str) {
    let failures = xmlpatch::apply(doc, patch);
    if failures.is_empty() {
        return;
    }
    let Some(root) = doc.root() else { return };
    let id_of = |d: &Doc, n: xmlpatch::Id| {
        d.element(n)
            .filter(|e| e.name == tag)
            .and_then(|e| e.attr("id"))
            .map(|i| i.trim().to_string())
    };
    let mut have: std::collections::HashSet<String> =
        doc.elements(root).filter_map(|n| id_of(doc, n)).collect();
    for f in failures {
        let nodes = match patch.ops.get(f.index.wrapping_sub(1)) {
            Some(Op::Add { nodes, .. } | Op::Replace { nodes, .. }) => nodes,
            _ => continue,
        };
        for &n in nodes {
            let Some(id) = id_of(&patch.store, n) else {
                continue;
            };
            if have.insert(id) {
                let new = doc.import(&patch.store, n);
                let at = doc.children(root).len();
                doc.insert(root, at, new);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vfs::SharedSource;
    use std::sync::Arc;

    fn view(files: &[(&str, &str)]) -> GameView {
        let files: Vec<(String, SharedSource)> = files
            .iter()
            .map(|(p, t)| {
                (
                    p.to_string(),
                    Arc::new(t.as_bytes().to_vec()) as SharedSource,
                )
            })
            .collect();
        GameView::from_sources("test", files).unwrap().0
    }

    fn options() -> FindOptions {
        FindOptions {
            cache: false,
            ..Default::default()
        }
    }

    /// Pieces of texts: references (to themselves too), comments, escapes, words.
    const PIECES: &[&str] = &[
        "{1,1}",
        "{1,2}",
        "{2,3}",
        "{ 2 , 1 }",
        "{9,9}",
        "(",
        ")",
        "\\(",
        "\\)",
        "Osprey",
        " ",
        "{",
    ];
    /// Operations an extension's patches carry, failing or not.
    const OPS: &[&str] = &[
        "<add sel=\"/language\"><page id=\"2\"><t id=\"3\">Added {1,1}</t></page></add>",
        "<replace sel=\"/language/page[@id='1']/t[@id='1']/text()\">Changed {1,2}</replace>",
        "<remove sel=\"/language/page[@id='1']\"/>",
        "<replace sel=\"//page[@id='7']\"><page id=\"7\"><t id=\"1\">{7,1}</t></page></replace>",
        "<add sel=\"/wares\"><ware id=\"w9\" name=\"{2,3}\"/></add>",
        "<replace sel=\"//ware[@id='w1']/@name\">{1,1}</replace>",
        "<remove sel=\"//ware\"/>",
    ];

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]
        /// What the fuzz target `find` does, on a game and an extension made of random texts
        /// (references that loop, unclosed comments) and patches that apply or fail: no panic,
        /// every name bounded.
        #[test]
        fn any_view_is_gathered_and_searched(
            texts in proptest::collection::vec((1u8..3, 1u8..4, proptest::collection::vec(0..PIECES.len(), 0..12)), 0..10),
            ops in proptest::collection::vec(0..OPS.len(), 0..6),
            broken in 0usize..6,
        ) {
            let mut t = String::from("<language>");
            for (p, i, pieces) in &texts {
                let text: String = pieces.iter().filter_map(|&k| PIECES.get(k).copied()).collect();
                t.push_str(&format!("<page id=\"{p}\"><t id=\"{i}\">{text}</t></page>"));
            }
            t.push_str("</language>");
            let diff: String = ops.iter().filter_map(|&k| OPS.get(k).copied()).collect();
            let diff = format!("<diff>{diff}</diff>");
            let mut files = [
                ("content.xml", "<content id=\"g\"/>".to_string()),
                ("index/macros.xml", r#"<index><entry name="m1" value="assets\m1"/></index>"#.to_string()),
                ("assets/m1.xml", r#"<macros><macro name="m1"><properties><identification name="{1,1}" basename="{2,3}"/></properties></macro></macros>"#.to_string()),
                ("libraries/wares.xml", r#"<wares><ware id="w1" name="{1,2}"/></wares>"#.to_string()),
                ("t/0001-l044.xml", t),
                ("extensions/e/content.xml", r#"<content id="e"><dependency id="e"/></content>"#.to_string()),
                ("extensions/e/t/0001-l044.xml", diff.clone()),
                ("extensions/e/libraries/wares.xml", diff),
            ];
            // One file cut short: read around.
            if let Some(f) = files.get_mut(broken) {
                let cut = f.1.len() / 2;
                f.1.truncate(cut);
            }
            let files: Vec<(&str, &str)> = files.iter().map(|(n, t)| (*n, t.as_str())).collect();
            let v = view(&files);
            for kind in [None, Some(Kind::Text)] {
                let o = FindOptions { kind, ..options() };
                for f in find_in(std::slice::from_ref(&v), "1", &o).unwrap() {
                    proptest::prop_assert!(f.name.len() <= 4096);
                }
            }
            let _ = macro_by_name(&v, "Osprey");
        }
    }

    #[test]
    fn the_whole_name_comes_before_a_part_of_it() {
        let v = view(&[
            ("content.xml", r#"<content id="m"/>"#),
            (
                "t/0001-l044.xml",
                r#"<language><page id="1"><t id="1">Nova</t><t id="2">Nova Vanguard</t><t id="3">Supernova</t></page></language>"#,
            ),
            (
                "libraries/wares.xml",
                r#"<wares><ware id="w_b" name="{1,2}"/><ware id="w_a" name="{1,1}"/><ware id="w_c" name="{1,3}"/><ware id="nova_parts" name="Parts"/></wares>"#,
            ),
        ]);
        let found = find_in(&[v], "NOVA", &options()).unwrap();
        let ids: Vec<&str> = found.iter().map(|f| f.id.as_str()).collect();
        // Equal, then names holding it (by name), then the id holding it.
        assert_eq!(ids, ["w_a", "w_b", "w_c", "nova_parts"]);
        assert!(find_in(&[], " ", &options()).is_err());
    }

    #[test]
    fn broken_files_and_failing_patches_are_read_around() {
        let v = view(&[
            ("content.xml", "<content id="),
            (
                "index/macros.xml",
                r#"<index><entry name="a_macro" value="..\..\etc\passwd"/><entry name="b_macro" value="assets\b_macro"/></index>"#,
            ),
            (
                "assets/b_macro.xml",
                r#"<macros><macro name="b_macro" class="ship_s"><properties><identification name="{5,5}"/></properties></macro></macros>"#,
            ),
            ("assets/macros/broken_macro.xml", "<macros><macro name="),
            (
                "t/0001-l044.xml",
                r#"<diff><replace sel="/language/page[@id='5']"><page id="5"><t id="5">{5,5} loops (forever)</t></page></replace><remove sel="/nothing"/></diff>"#,
            ),
            (
                "libraries/wares.xml",
                r#"<diff><replace sel="//ware[@id='game_ware']"><ware id="game_ware" name="{5,5}"/></replace><add sel="/wares/ware[@id='none']"><ware id="x"/></add></diff>"#,
            ),
        ]);
        let found = find_in(std::slice::from_ref(&v), "loops", &options()).unwrap();
        let got: Vec<(&str, &str, &str)> = found
            .iter()
            .map(|f| (f.kind.name(), f.id.as_str(), f.name.as_str()))
            .collect();
        // The replaced page and ware stand (the game's are not in view); the loop ends at the
        // depth limit, the last reference as written.
        let shown = format!("{{5,5}}{}", " loops".repeat(6));
        assert_eq!(
            got,
            [
                ("macro", "b_macro", shown.as_str()),
                ("ware", "game_ware", shown.as_str())
            ]
        );
        // The entry that climbs out of the view is listed by its id, with no file read.
        let a = find_in(std::slice::from_ref(&v), "a_macro", &options()).unwrap();
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].name, "");
        assert_eq!(macro_by_name(&v, "b_macro").unwrap(), "b_macro");
    }
}
