//! Where a reference leads: the mod's own files, the extensions it depends on, the game. Paths
//! are resolved as the game resolves them (case-insensitive, `\` or `/`), a path that would leave
//! the mod or the game is refused, and without a game a reference into it is "not checked".

use super::files::ModFiles;
use super::xml;
use crate::vfs::{normalize, GameView};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// A file a reference led to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// How findings and links name it: a mod's file as the mod holds it, a dependency's as
    /// `extensions/NAME/path`, the game's as `GAME::path`.
    pub label: String,
    norm: String,
    at: At,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum At {
    Own,
    Subst,
    Dep(usize),
    Game,
    /// A definition found by name (an index entry, a library's material): nothing to read.
    Name,
}

impl Place {
    /// A definition found by its name, shown as `label`.
    pub fn named(label: &str) -> Place {
        Place {
            label: label.to_string(),
            norm: String::new(),
            at: At::Name,
        }
    }
}

/// Where a reference led.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// A file of the mod, or of a dependency beside it.
    Mod(Place),
    /// A file of the game.
    Game(Place),
    /// Outside what was given (the game, or another extension): why.
    Unchecked(String),
    Missing,
    /// A path the game would not read (`..`, a drive, a network path): why.
    Refused(String),
}

impl Found {
    /// The file or definition it names, when there is one.
    pub fn target(&self) -> Option<String> {
        match self {
            Found::Mod(p) | Found::Game(p) => Some(p.label.clone()),
            _ => None,
        }
    }
}

/// An extension the mod depends on, found beside it.
pub struct Dependency {
    /// Its folder name and content id, lower case (the names its files are read under).
    pub names: Vec<String>,
    /// Its folder's name, lower case.
    pub folder: String,
    /// Its content id as written (`None` without one: the folder name stands in).
    pub id: Option<String>,
    pub files: ModFiles,
}

/// The mod with everything its references may lead to.
pub struct World {
    pub files: ModFiles,
    /// The names the game reads the mod's own files under (`extensions/<name>/`): its folder
    /// name and its content id, lower case.
    pub names: Vec<String>,
    pub deps: Vec<Dependency>,
    pub game: Option<GameView>,
    /// The game's folder on disk, to list its extensions.
    game_dir: Option<PathBuf>,
    game_names: OnceLock<Names>,
}

/// Component and macro names by index, lower case: the file value each names.
#[derive(Default)]
pub struct Names {
    pub components: HashMap<String, String>,
    pub macros: HashMap<String, String>,
    /// Entries whose name has a `*`: (kind is macros, pattern, value).
    pub patterns: Vec<(bool, String, String)>,
}

impl Names {
    /// Adds the entries of an index file's text (`<index>` or a `<diff>` adding to one).
    pub fn add(&mut self, macros: bool, text: &str) {
        let Ok(doc) = xml::parse(text) else {
            return;
        };
        for e in doc.descendants().filter(|e| e.has_tag_name("entry")) {
            if let (Some(n), Some(v)) = (e.attribute("name"), e.attribute("value")) {
                let n = n.to_lowercase();
                if n.contains('*') {
                    self.patterns.push((macros, n, v.to_string()));
                } else if macros {
                    self.macros.insert(n, v.to_string());
                } else {
                    self.components.insert(n, v.to_string());
                }
            }
        }
    }

    /// The index value of the component (or macro) `name`.
    pub fn get(&self, macros: bool, name: &str) -> Option<&str> {
        let n = name.to_lowercase();
        let map = if macros {
            &self.macros
        } else {
            &self.components
        };
        map.get(&n).map(String::as_str).or_else(|| {
            self.patterns
                .iter()
                .find(|(m, p, _)| *m == macros && glob(p, &n))
                .map(|(_, _, v)| v.as_str())
        })
    }
}

/// True when `name` matches `pattern`, whose `*` stands for any run of characters.
fn glob(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let (Some(first), Some(last)) = (parts.first(), parts.last()) else {
        return false;
    };
    if parts.len() == 1 {
        return pattern == name;
    }
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    for mid in parts.iter().skip(1).take(parts.len().saturating_sub(2)) {
        match rest.find(mid) {
            Some(i) => rest = rest.get(i + mid.len()..).unwrap_or(""),
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// Why a path written in a mod is one the game would not read, if it is: a `..` part, a drive
/// letter, a network path.
pub fn hostile(written: &str) -> Option<String> {
    let t = written.trim();
    if t.starts_with("\\\\") || t.starts_with("//") {
        return Some(format!("{t:?} is a network path: never read"));
    }
    let mut parts = t.split(['/', '\\']).filter(|p| !p.is_empty());
    if parts.clone().next().is_some_and(|p| p.ends_with(':')) || t.get(1..2) == Some(":") {
        return Some(format!("{t:?} names a drive: never read"));
    }
    if parts.any(|p| p.trim() == "..") {
        return Some(format!("{t:?} climbs with '..': never read"));
    }
    None
}

/// The game path a path written in a mod names, or why it leads nowhere: refused when the game
/// would not read it (see [`hostile`]), missing when it is empty.
pub fn game_path(written: &str) -> Result<String, Found> {
    if let Some(why) = hostile(written) {
        return Err(Found::Refused(why));
    }
    match normalize(written.trim()) {
        Ok(n) if !n.is_empty() => Ok(n),
        Ok(_) => Err(Found::Missing),
        Err(e) => Err(Found::Refused(e.message)),
    }
}

/// The game paths a file reference may mean: as written, with the endings the game tries.
pub type Candidates = fn(&str) -> Vec<String>;

/// A path as written: the file itself.
pub fn as_written(p: &str) -> Vec<String> {
    vec![p.to_string()]
}

/// An index entry's value: the file without its `.xml`, as the game writes them.
pub fn index_file(p: &str) -> Vec<String> {
    if p.ends_with(".xml") {
        vec![p.to_string()]
    } else {
        vec![format!("{p}.xml"), p.to_string(), format!("{p}.xml.gz")]
    }
}

/// A texture as a material names it: without an ending the game tries `.gz` then `.dds`; an
/// image's ending may stand for either.
pub fn texture(p: &str) -> Vec<String> {
    let mut out = vec![
        p.to_string(),
        format!("{p}.gz"),
        format!("{p}.dds"),
        format!("{p}.dds.gz"),
    ];
    if let Some((stem, ext)) = p.rsplit_once('.') {
        if !stem.ends_with('/') && ["dds", "tga", "png", "jpg", "jpeg", "bmp", "gz"].contains(&ext)
        {
            out.extend([
                format!("{stem}.gz"),
                format!("{stem}.dds"),
                stem.to_string(),
            ]);
        }
    }
    out
}

impl World {
    /// The mod `files` on `game` (its folder `game_dir`), with the extensions its content.xml
    /// depends on found beside `mod_dir`.
    pub fn new(
        files: ModFiles,
        game: Option<GameView>,
        game_dir: Option<&Path>,
        mod_dir: Option<&Path>,
    ) -> World {
        let content = content_of(&files);
        let mut names = vec![files.folder.to_lowercase()];
        if let Some(id) = content.as_ref().and_then(|c| c.0.clone()) {
            names.push(id.to_lowercase());
        }
        let deps = match (mod_dir, &content) {
            (Some(dir), Some((_, deps))) => beside(dir, deps),
            _ => Vec::new(),
        };
        World {
            files,
            names,
            deps,
            game,
            game_dir: game_dir.map(Path::to_path_buf),
            game_names: OnceLock::new(),
        }
    }

    /// Where the path `written` leads; `candidates` gives the game paths to try for a path.
    pub fn locate(&self, written: &str, candidates: Candidates) -> Found {
        let norm = match game_path(written) {
            Ok(n) => n,
            Err(found) => return found,
        };
        if let Some((ext, rest)) = norm
            .strip_prefix("extensions/")
            .and_then(|r| r.split_once('/'))
        {
            if self.names.iter().any(|n| n == ext) {
                return self
                    .own(&candidates(rest))
                    .map_or(Found::Missing, Found::Mod);
            }
            if let Some((i, d)) = self
                .deps
                .iter()
                .enumerate()
                .find(|(_, d)| d.names.iter().any(|n| n == ext))
            {
                return first(candidates(rest), |p| {
                    d.files.find(p).map(|_| Place {
                        label: format!("extensions/{ext}/{p}"),
                        norm: p.to_string(),
                        at: At::Dep(i),
                    })
                })
                .map_or(Found::Missing, Found::Mod);
            }
            return match &self.game {
                Some(g) => self.in_game(g, &candidates(&norm)),
                None => Found::Unchecked(format!("extension {ext:?} is not beside this mod")),
            };
        }
        let paths = candidates(&norm);
        let subst = first(paths.clone(), |p| {
            self.files.find_subst(p).map(|label| Place {
                label,
                norm: p.to_string(),
                at: At::Subst,
            })
        });
        // Else the mod's own file at the same path: how an extension's loose files patch the game's.
        if let Some(p) = subst.or_else(|| self.own(&paths)) {
            return Found::Mod(p);
        }
        match &self.game {
            Some(g) => self.in_game(g, &paths),
            None => Found::Unchecked("in the base game (no --game given)".into()),
        }
    }

    /// The first of `paths` among the mod's own files.
    fn own(&self, paths: &[String]) -> Option<Place> {
        first(paths.to_vec(), |p| {
            self.files.find(p).map(|label| Place {
                label,
                norm: p.to_string(),
                at: At::Own,
            })
        })
    }

    fn in_game(&self, g: &GameView, paths: &[String]) -> Found {
        paths
            .iter()
            .find(|p| g.exists(p))
            .map_or(Found::Missing, |p| {
                Found::Game(Place {
                    label: format!("{}::{p}", g.label),
                    norm: p.clone(),
                    at: At::Game,
                })
            })
    }

    /// The bytes of a file a reference led to.
    pub fn read(&self, p: &Place) -> Option<crate::io::Input> {
        let got = match p.at {
            At::Own => self.files.read_own(&p.norm),
            At::Subst => self.files.read_subst(&p.norm),
            At::Dep(i) => self.deps.get(i)?.files.read_own(&p.norm),
            At::Game => self.game.as_ref()?.get(&p.norm),
            At::Name => None,
        };
        got?.ok()
    }

    /// The index names of the extensions beside the mod and of the game.
    pub fn outside_names(&self) -> &Names {
        self.game_names.get_or_init(|| {
            let mut n = Names::default();
            for (macros, file) in [(false, "index/components.xml"), (true, "index/macros.xml")] {
                for t in self.outside_texts(file) {
                    n.add(macros, &t);
                }
            }
            n
        })
    }

    /// The folders of the game's `extensions/`, lower case.
    pub fn game_extensions(&self) -> Vec<String> {
        let Some(dir) = &self.game_dir else {
            return Vec::new();
        };
        let mut out: Vec<String> = std::fs::read_dir(dir.join("extensions"))
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .filter(|e| e.path().is_dir())
                    .map(|e| e.file_name().to_string_lossy().to_lowercase())
                    .collect()
            })
            .unwrap_or_default();
        out.sort();
        out
    }

    /// The texts of `path` in the game, in its extensions (their patches of it) and in each
    /// dependency, in the order they apply.
    pub fn outside_texts(&self, path: &str) -> Vec<String> {
        let text = |b: Option<crate::error::Result<crate::io::Input>>| {
            b.and_then(|b| b.ok()).and_then(|b| xml::text(&b).ok())
        };
        let mut out = Vec::new();
        if let Some(g) = &self.game {
            let paths = std::iter::once(path.to_string()).chain(
                self.game_extensions()
                    .into_iter()
                    .map(|e| format!("extensions/{e}/{path}")),
            );
            out.extend(paths.filter_map(|p| text(g.get(&p))));
        }
        out.extend(
            self.deps
                .iter()
                .filter_map(|d| text(d.files.read_own(path))),
        );
        out
    }
}

fn first<T>(paths: Vec<String>, f: impl Fn(&str) -> Option<T>) -> Option<T> {
    paths.iter().find_map(|p| f(p))
}

/// The id and the dependency ids of a mod's content.xml, when it reads.
fn content_of(files: &ModFiles) -> Option<(Option<String>, Vec<String>)> {
    crate::formats::x4xml::content_ids(&files.read_own("content.xml")?.ok()?)
}

/// The extensions named `ids` among the folders beside `dir` (by folder name or content id).
fn beside(dir: &Path, ids: &[String]) -> Vec<Dependency> {
    let Some(parent) = dir
        .canonicalize()
        .ok()
        .and_then(|d| d.parent().map(Path::to_path_buf))
    else {
        return Vec::new();
    };
    let own = dir.canonicalize().ok();
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(&parent) else {
        return out;
    };
    // A crowded folder (a download folder) is not searched far.
    for e in entries.filter_map(|e| e.ok()).take(1000) {
        let path = e.path();
        if !path.is_dir() || path.canonicalize().ok() == own {
            continue;
        }
        let folder = e.file_name().to_string_lossy().to_lowercase();
        let named = ids.iter().any(|i| i.to_lowercase() == folder);
        if !named && crate::assemble::read::find_in(&path, "content.xml").is_none() {
            continue;
        }
        let Ok(files) = ModFiles::open(&path) else {
            continue;
        };
        let written = (content_of(&files).and_then(|c| c.0)).filter(|i| !i.trim().is_empty());
        let id = written.as_ref().map(|i| i.to_lowercase());
        if named
            || id
                .as_ref()
                .is_some_and(|i| ids.iter().any(|x| x.to_lowercase() == *i))
        {
            out.push(Dependency {
                names: std::iter::once(folder.clone()).chain(id).collect(),
                folder,
                id: written,
                files,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_paths_are_named() {
        assert!(hostile(r"..\..\etc\passwd").is_some());
        assert!(hostile(r"assets\..\..\x").is_some());
        assert!(hostile(r"C:\Windows\x").is_some());
        assert!(hostile("c:x").is_some());
        assert!(hostile(r"\\server\share\x").is_some());
        assert!(hostile(r"\Extensions\mod\assets\x").is_none());
        assert!(hostile("assets/units/x.xml").is_none());
    }

    #[test]
    fn patterns_match_as_the_index_means_them() {
        assert!(glob("map_xff_sec_*", "map_xff_sec_001"));
        assert!(glob("a*b*c", "axxbyyc"));
        assert!(!glob("a*b*c", "axxbyy"));
        assert!(!glob("map_*", "other"));
        let mut n = Names::default();
        n.add(true, r#"<diff><add sel="/index"><entry name="M_one" value="x\y"/><entry name="p_*" value="z"/></add></diff>"#);
        assert_eq!(n.get(true, "m_ONE"), Some(r"x\y"));
        assert_eq!(n.get(true, "p_q"), Some("z"));
        assert_eq!(n.get(false, "m_one"), None);
    }

    #[test]
    fn textures_are_tried_with_the_endings_the_game_tries() {
        let t = texture("a/b/tex");
        assert!(t.contains(&"a/b/tex.gz".to_string()) && t.contains(&"a/b/tex.dds".to_string()));
        assert!(texture("a/tex.tga").contains(&"a/tex.dds".to_string()));
    }
}
