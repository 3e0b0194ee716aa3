//! A StarCraft II mod or map saved as a folder (`*.SC2Mod`, `*.SC2Map`): the asset paths its
//! `Base.SC2Data/GameData/*.xml` name (models' `.m3`, their `.m3a` animations, textures), and the
//! texture of each M3's material layers. Paths are relative to the data folder; the game reads
//! them in any case, but a path written with a case the file does not have is a warning (a Linux
//! server or the editor's archive may not find it).

use super::files::ModFiles;
use super::out::{validate_files, Out};
use super::world::{game_path, Found, Place};
use super::{xml, ModCheck};
use crate::validate::Finding;
use crate::vfs::GameView;
use std::path::Path;

/// Endings of the asset paths data files name.
const ASSETS: &[&str] = &[".m3", ".m3a", ".dds", ".tga"];

/// The mod's data folder (`Base.SC2Data/`, as a game path prefix), or its root.
fn data_root(files: &ModFiles) -> String {
    let has = files
        .files()
        .iter()
        .any(|f| f.norm.starts_with("base.sc2data/"));
    if has {
        "base.sc2data/".into()
    } else {
        String::new()
    }
}

/// The game's data folders (`Mods/*/Base.SC2Data` of an extracted game, else the folder itself).
pub fn game_views(game: &Path) -> Vec<GameView> {
    let mut out = Vec::new();
    let mods = crate::assemble::read::find_in(game, "mods");
    if let Some(mods) = mods.filter(|m| m.is_dir()) {
        let mut dirs: Vec<_> = std::fs::read_dir(&mods)
            .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
            .unwrap_or_default();
        dirs.sort();
        for d in dirs {
            let data = crate::assemble::read::find_in(&d, "base.sc2data").unwrap_or(d);
            out.extend(GameView::folder(&data).ok());
        }
    }
    out.extend(GameView::folder(game).ok());
    out
}

struct Sc2<'a> {
    files: &'a ModFiles,
    root: String,
    game: &'a [GameView],
    given: bool,
}

impl Sc2<'_> {
    /// Where an asset path leads, and how the file on disk spells it when it is the mod's.
    fn locate(&self, written: &str) -> Found {
        let norm = match game_path(written) {
            Ok(n) => n,
            Err(found) => return found,
        };
        for p in [format!("{}{norm}", self.root), norm.clone()] {
            if let Some(label) = self.files.find(&p) {
                return Found::Mod(Place::named(&label));
            }
        }
        if let Some(g) = self.game.iter().rev().find(|g| g.exists(&norm)) {
            return Found::Game(Place::named(&format!("{}::{norm}", g.label)));
        }
        if self.given {
            Found::Missing
        } else {
            Found::Unchecked("in the game's data (no --game given)".into())
        }
    }

    /// Follows `written` from `file`, warning when the mod's file has another letter case.
    fn follow(&self, out: &mut Out, file: &str, line: Option<u32>, written: &str, what: &str) {
        let found = self.locate(written);
        // Inside an archive names are hashed in upper case: any spelling finds the file.
        if let (Found::Mod(p), false) = (&found, self.files.archive) {
            let wanted = written.trim().replace('\\', "/");
            let wanted = wanted.trim_start_matches('/');
            let on_disk = p
                .label
                .get(p.label.len().saturating_sub(wanted.len())..)
                .unwrap_or("");
            if on_disk != wanted && on_disk.eq_ignore_ascii_case(wanted) {
                let msg = format!(
                    "{what} {written:?} is {:?} on disk: a case-sensitive reader (a Linux server, the editor's archive) does not find it",
                    p.label
                );
                out.push(Finding::warning("", msg).missing(written), file, line);
            }
        }
        out.follow(file, line, written, &found, what, true);
    }
}

pub(super) fn walk(files: &ModFiles, game: Option<&Path>) -> ModCheck {
    let all = files.files();
    let mut out = Out::default();
    validate_files(files, &all, &mut out);
    let views = game.map(game_views).unwrap_or_default();
    let s = Sc2 {
        files,
        root: data_root(files),
        game: &views,
        given: game.is_some(),
    };
    let gamedata = format!("{}gamedata/", s.root);
    for f in &all {
        if f.norm.starts_with(&gamedata) && f.norm.ends_with(".xml") {
            data_file(&s, f, &mut out);
        } else if f.norm.ends_with(".m3") {
            model_layers(&s, f, &mut out);
        }
    }
    out.summarize_unchecked();
    ModCheck {
        kind: "sc2".into(),
        name: files.folder.clone(),
        files: all.into_iter().map(|f| f.label).collect(),
        findings: out.findings,
        links: out.links,
    }
}

/// A data file: every attribute naming an asset (a model, its animations, a texture).
fn data_file(s: &Sc2<'_>, f: &super::files::ModFile, out: &mut Out) {
    let text = match s.files.read(f).map(|b| b.map(|b| xml::text(&b))) {
        Some(Ok(Ok(t))) => t,
        Some(Ok(Err(e))) => return out.push(Finding::error("", e.message), &f.label, e.line),
        Some(Err(e)) => return out.push(Finding::error("", e.to_string()), &f.label, None),
        None => return,
    };
    let doc = match xml::parse(&text) {
        Ok(d) => d,
        Err(e) => return out.push(Finding::error("", e.message), &f.label, e.line),
    };
    for n in doc.descendants().filter(|n| n.is_element()) {
        for a in n.attributes() {
            let v = a.value().trim();
            let lower = v.to_ascii_lowercase();
            if v.contains(['\\', '/']) && ASSETS.iter().any(|e| lower.ends_with(e)) {
                let owner = n
                    .ancestors()
                    .find_map(|x| {
                        x.attribute("id")
                            .map(|id| format!("{} {id}", x.tag_name().name()))
                    })
                    .unwrap_or_else(|| n.tag_name().name().to_string());
                let what = format!("{owner}: {}", n.tag_name().name());
                s.follow(out, &f.label, Some(xml::line(&doc, n)), v, &what);
            }
        }
    }
}

/// An M3: the texture of each of its materials' layers.
fn model_layers(s: &Sc2<'_>, f: &super::files::ModFile, out: &mut Out) {
    let Some(Ok(bytes)) = s.files.read(f) else {
        return;
    };
    let Ok(opened) = crate::any::open(&bytes, Path::new(&f.norm)) else {
        return;
    };
    let Ok((scene, _)) = opened.document.to_scene(&f.norm, &[]) else {
        return;
    };
    for m in &scene.materials {
        let layers = m
            .extras
            .get("m3")
            .and_then(|x| x.get("layers"))
            .and_then(|l| l.as_object());
        for (layer, v) in layers.into_iter().flatten() {
            if let Some(image) = v.get("image").and_then(|i| i.as_str()) {
                let what = format!("material {}: {layer}", m.name);
                s.follow(out, &f.label, None, image, &what);
            }
        }
    }
}
