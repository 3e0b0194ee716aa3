//! The files of a mod as the game mounts them: its loose files and `ext_` catalogs under the
//! extension's own folder (`extensions/NAME/`), its `subst_` catalogs over the game's root. Each
//! piece is a game view, so hostile paths never leave the mod, and findings name a file as the
//! mod holds it (`assets/x.xml`, `ext_01.cat::assets/x.xml`).

use crate::error::Result;
use crate::formats::catalog;
use crate::io::Input;
use crate::vfs::{GameView, Layer, SharedSource, SourceLayer};
use std::path::Path;

/// One piece of a mod: its loose files or one catalog.
pub struct Piece {
    /// The catalog's name (`ext_01.cat`); none for the loose files.
    pub catalog: Option<String>,
    pub view: GameView,
}

/// A file of a mod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModFile {
    /// How findings name it: the path on disk relative to the mod (its letter case kept), or
    /// `ext_01.cat::path` inside a catalog.
    pub label: String,
    /// Its game path inside its namespace (the extension's folder, or the root for `subst_`).
    pub norm: String,
    /// True for a file of a `subst_` catalog.
    pub subst: bool,
}

pub struct ModFiles {
    /// The folder's name: the game reads the mod's own files as `extensions/<folder>/...`.
    pub folder: String,
    /// True for a mod held in an MPQ archive, whose names the game finds in any letter case.
    pub archive: bool,
    /// The loose files, then the `ext_` catalogs in the order the game stacks them.
    own: Vec<Piece>,
    subst: Vec<Piece>,
}

/// The file the game reads loose even when a catalog of the extension holds one too.
const LOOSE_ONLY: &str = "content.xml";

/// True for `NAME.cat` / `NAME.dat` at a mod's root: catalogs, read as pieces, not as files.
fn is_catalog_file(norm: &str) -> bool {
    !norm.contains('/') && (norm.ends_with(".cat") || norm.ends_with(".dat"))
}

impl ModFiles {
    /// The mod in the folder `dir`, or in the MPQ archive `dir` (its files as one piece).
    pub fn open(dir: &Path) -> Result<ModFiles> {
        if crate::formats::mpq::is_archive_file(dir) {
            let folder = dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            return Ok(ModFiles {
                folder,
                archive: true,
                own: vec![Piece {
                    catalog: None,
                    view: GameView::archive(dir)?,
                }],
                subst: Vec::new(),
            });
        }
        let folder = dir
            .canonicalize()
            .ok()
            .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_default();
        let mut m = ModFiles {
            folder,
            archive: false,
            own: vec![Piece {
                catalog: None,
                view: GameView::folder(dir)?,
            }],
            subst: Vec::new(),
        };
        for cat in crate::vfs::catalogs_in(dir) {
            let name = cat
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let piece = Piece {
                view: GameView::open(&cat)?,
                catalog: Some(name.clone()),
            };
            m.push(piece, &name);
        }
        Ok(m)
    }

    /// A mod given as its files (path inside the mod, bytes): a page's dropped folder, a test, a
    /// fuzzer. `.cat` files at its root with their `.dat` are its catalogs.
    pub fn from_sources(folder: &str, files: Vec<(String, SharedSource)>) -> Result<ModFiles> {
        let mut loose = Vec::new();
        let mut cats = Vec::new();
        let mut archives = Vec::new();
        for (path, src) in &files {
            let norm = crate::vfs::normalize(path).unwrap_or_default();
            if crate::formats::mpq::has_archive_name(&norm)
                && crate::vfs::is_archive_source(src.as_ref())
            {
                // A map or mod saved as one archive: its files are the mod's.
                archives.push(Piece {
                    catalog: None,
                    view: GameView::archive_source(src.clone(), path)?,
                });
            } else if is_catalog_file(&norm) {
                if catalog::is_data_catalog(&norm) {
                    cats.push((norm, path.clone(), src.clone()));
                }
            } else {
                loose.push((path.clone(), src.clone()));
            }
        }
        let mut view = GameView::empty(folder);
        view.push(Layer::Source(SourceLayer::loose(loose)));
        let archive = !archives.is_empty();
        let mut own = vec![Piece {
            catalog: None,
            view,
        }];
        own.extend(archives);
        let mut m = ModFiles {
            folder: folder.to_string(),
            archive,
            own,
            subst: Vec::new(),
        };
        cats.sort_by_key(|c| (rank(&c.0), c.0.clone()));
        for (norm, name, cat) in cats {
            let dat_name = catalog::dat_path(Path::new(&norm))
                .to_string_lossy()
                .into_owned();
            let Some(dat) = files.iter().find_map(|(p, s)| {
                crate::vfs::normalize(p)
                    .is_ok_and(|n| n == dat_name)
                    .then(|| s.clone())
            }) else {
                continue;
            };
            let text = cat.read_at(0, usize::try_from(cat.len()).unwrap_or(usize::MAX))?;
            let (layer, _) = SourceLayer::catalog(&text, dat, "", &name)?;
            let mut view = GameView::empty(&name);
            view.push(Layer::Source(layer));
            let piece = Piece {
                catalog: Some(name.clone()),
                view,
            };
            m.push(piece, &norm);
        }
        Ok(m)
    }

    fn push(&mut self, piece: Piece, name: &str) {
        if name.to_ascii_lowercase().starts_with("subst_") {
            self.subst.push(piece);
        } else {
            self.own.push(piece);
        }
    }

    /// Every file, once each (a later catalog's file hides an earlier one's of the same path),
    /// sorted by label.
    pub fn files(&self) -> Vec<ModFile> {
        let mut out: Vec<ModFile> = Vec::new();
        for (subst, pieces) in [(false, &self.own), (true, &self.subst)] {
            let mut by_norm: std::collections::HashMap<String, usize> = Default::default();
            let start = out.len();
            for p in pieces {
                for e in p.view.entries("", None).unwrap_or_default() {
                    if p.catalog.is_none() && is_catalog_file(&e.norm) {
                        continue;
                    }
                    let label = match &p.catalog {
                        Some(c) => format!("{c}::{}", e.norm),
                        // A folder's file by its names on disk; a given file as it was named.
                        None if e.disk.is_some() => e.shown.clone(),
                        None => p.view.spelled(&e.norm).unwrap_or_else(|| e.shown.clone()),
                    };
                    let f = ModFile {
                        label,
                        norm: e.norm.clone(),
                        subst,
                    };
                    match by_norm.get(&e.norm) {
                        // The game reads the loose content.xml, whatever a catalog holds.
                        Some(_) if p.catalog.is_some() && e.norm == LOOSE_ONLY => {}
                        // Case twins on disk are two files; a catalog's entry hides the loose one.
                        Some(&i) if p.catalog.is_some() => {
                            if let Some(slot) = out.get_mut(i) {
                                *slot = f;
                            }
                        }
                        _ => {
                            by_norm.insert(e.norm, out.len());
                            out.push(f);
                        }
                    }
                }
            }
            if let Some(part) = out.get_mut(start..) {
                part.sort_by(|a, b| a.label.cmp(&b.label));
            }
        }
        out
    }

    /// The label of the file at `norm` in the extension's own folder, when the mod has it.
    pub fn find(&self, norm: &str) -> Option<String> {
        let loose = self
            .own
            .first()
            .filter(|p| p.catalog.is_none() && norm == LOOSE_ONLY);
        loose
            .and_then(|p| find_in(std::slice::from_ref(p), norm))
            .or_else(|| find_in(&self.own, norm))
    }

    /// The label of the file at the root game path `norm` in a `subst_` catalog.
    pub fn find_subst(&self, norm: &str) -> Option<String> {
        find_in(&self.subst, norm)
    }

    /// The bytes of `f`.
    pub fn read(&self, f: &ModFile) -> Option<Result<Input>> {
        if f.subst {
            return self.subst.iter().rev().find_map(|p| p.view.get(&f.norm));
        }
        self.read_own(&f.norm)
    }

    /// The bytes of the file at the root game path `norm` in a `subst_` catalog.
    pub fn read_subst(&self, norm: &str) -> Option<Result<Input>> {
        self.subst.iter().rev().find_map(|p| p.view.get(norm))
    }

    /// The bytes of the file at `norm` in the extension's own folder.
    pub fn read_own(&self, norm: &str) -> Option<Result<Input>> {
        let loose = self
            .own
            .first()
            .filter(|p| p.catalog.is_none() && norm == LOOSE_ONLY);
        loose
            .and_then(|p| p.view.get(norm))
            .or_else(|| self.own.iter().rev().find_map(|p| p.view.get(norm)))
    }
}

fn find_in(pieces: &[Piece], norm: &str) -> Option<String> {
    pieces.iter().rev().find_map(|p| {
        if !p.view.exists(norm) {
            return None;
        }
        Some(match &p.catalog {
            Some(c) => format!("{c}::{norm}"),
            None => p.view.spelled(norm).unwrap_or_else(|| norm.to_string()),
        })
    })
}

/// Where a catalog stacks among a mod's: `ext_` (and plain `NN.cat`) below `subst_`.
fn rank(norm: &str) -> u8 {
    u8::from(norm.starts_with("subst_"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn src(b: &[u8]) -> SharedSource {
        Arc::new(b.to_vec())
    }

    #[test]
    fn catalogs_and_loose_files_are_named_as_the_mod_holds_them() {
        let cat = b"libraries/parameters.xml 3 0 00000000000000000000000000000000\n";
        let m = ModFiles::from_sources(
            "mymod",
            vec![
                ("Content.xml".into(), src(b"<content/>")),
                ("ext_01.cat".into(), src(cat)),
                ("ext_01.dat".into(), src(b"abc")),
                (
                    "subst_01.cat".into(),
                    src(b"assets/t.gz 2 0 00000000000000000000000000000000\n"),
                ),
                ("subst_01.dat".into(), src(b"zz")),
            ],
        )
        .unwrap();
        let files = m.files();
        let labels: Vec<&str> = files.iter().map(|f| f.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "Content.xml",
                "ext_01.cat::libraries/parameters.xml",
                "subst_01.cat::assets/t.gz"
            ]
        );
        assert_eq!(
            m.find("libraries/parameters.xml").as_deref(),
            Some("ext_01.cat::libraries/parameters.xml")
        );
        assert_eq!(m.find("content.xml").as_deref(), Some("Content.xml"));
        assert!(m.find("assets/t.gz").is_none());
        assert_eq!(
            m.find_subst("assets/t.gz").as_deref(),
            Some("subst_01.cat::assets/t.gz")
        );
        assert_eq!(&*m.read(&files[1]).unwrap().unwrap(), b"abc");
    }

    #[test]
    fn the_loose_content_xml_is_read_even_when_a_catalog_holds_one() {
        let m = ModFiles::from_sources(
            "mymod",
            vec![
                ("CONTENT.XML".into(), src(b"<content id=")),
                (
                    "ext_01.cat".into(),
                    src(b"content.xml 10 0 00000000000000000000000000000000\n"),
                ),
                ("ext_01.dat".into(), src(b"<content/>")),
            ],
        )
        .unwrap();
        let files = m.files();
        let labels: Vec<&str> = files.iter().map(|f| f.label.as_str()).collect();
        assert_eq!(labels, ["CONTENT.XML"]);
        assert_eq!(&*m.read(&files[0]).unwrap().unwrap(), b"<content id=");
        assert_eq!(
            &*m.read_own("content.xml").unwrap().unwrap(),
            b"<content id="
        );
        assert_eq!(m.find("content.xml").as_deref(), Some("CONTENT.XML"));
    }
}
