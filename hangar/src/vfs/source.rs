//! Game files that are not on a disk hangar can open: bytes read at an offset from some source
//! (a browser's `File` read in slices, a buffer in memory). A game view is built from them as
//! [`GameView::open`] builds one from a folder: the loose files, then the catalogs in the order
//! the game stacks them. Only a catalog's index is read up front; an entry is read when asked for,
//! so a game of many gigabytes is never read whole.

use super::{normalize, CatalogLayer, GameView, Layer};
use crate::error::{Error, ErrorKind, Result, Warning};
use crate::formats::catalog::{self, Catalog, PathIndex};
use crate::io::Input;
use std::collections::HashMap;
use std::sync::Arc;

/// Bytes read at an offset: a file the library cannot open by path.
pub trait ByteSource: Send + Sync {
    fn len(&self) -> u64;

    /// `len` bytes from `offset` (fewer only at the end of the source).
    fn read_at(&self, offset: u64, len: usize) -> Result<Vec<u8>>;

    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Bytes already in memory.
impl ByteSource for Vec<u8> {
    fn len(&self) -> u64 {
        self.as_slice().len() as u64
    }

    fn read_at(&self, offset: u64, len: usize) -> Result<Vec<u8>> {
        let start = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(self.len());
        let end = start.saturating_add(len).min(self.as_slice().len());
        Ok(self.get(start..end).unwrap_or_default().to_vec())
    }
}

/// A shared source.
pub type SharedSource = Arc<dyn ByteSource>;

/// Reads all of `source`, refusing one larger than memory can address.
fn read_whole(source: &dyn ByteSource, what: &str) -> Result<Vec<u8>> {
    let len = usize::try_from(source.len()).map_err(|_| {
        Error::new(
            ErrorKind::Refused,
            None,
            "",
            format!("{what}: {} bytes do not fit in memory", source.len()),
        )
    })?;
    source.read_at(0, len)
}

/// A layer whose files come from [`ByteSource`]s; a clone shares them.
#[derive(Clone)]
pub struct SourceLayer {
    kind: Arc<Kind>,
}

enum Kind {
    /// Loose files by normalized game path, each with its path as it was given (its spelling).
    Loose(HashMap<String, (String, SharedSource)>),
    /// A `.cat` index with its `.dat` as a source.
    Catalog {
        catalog: Catalog,
        index: PathIndex,
        mount: String,
        dat: SharedSource,
        label: String,
    },
}

impl SourceLayer {
    /// Loose files (game path, source); a later duplicate of a path wins. A path that leads out
    /// of the view is left out.
    pub fn loose(files: impl IntoIterator<Item = (String, SharedSource)>) -> SourceLayer {
        let map = files
            .into_iter()
            .filter_map(|(p, s)| normalize(&p).ok().map(|n| (n, (p, s))))
            .collect();
        SourceLayer {
            kind: Arc::new(Kind::Loose(map)),
        }
    }

    /// A catalog from the text of its `.cat` and its `.dat` as a source, below the game folder
    /// `mount` (`""` for the root); `label` names it in messages. The reader's warnings with it.
    pub fn catalog(
        cat_text: &[u8],
        dat: SharedSource,
        mount: &str,
        label: &str,
    ) -> Result<(SourceLayer, Vec<Warning>)> {
        let (catalog, index, warnings) =
            catalog::read_indexed(cat_text).map_err(|e| e.in_file(std::path::Path::new(label)))?;
        let mount = CatalogLayer::mount_prefix(mount)?;
        Ok((
            SourceLayer {
                kind: Arc::new(Kind::Catalog {
                    catalog,
                    index,
                    mount,
                    dat,
                    label: label.to_string(),
                }),
            },
            warnings,
        ))
    }

    /// A loose file's path as it was given (`Assets/Ship_Data/Part.XMF`); none for a catalog's.
    pub(super) fn spelled(&self, norm: &str) -> Option<&str> {
        match self.kind.as_ref() {
            Kind::Loose(m) => m.get(norm).map(|(p, _)| p.as_str()),
            Kind::Catalog { .. } => None,
        }
    }

    pub(super) fn has(&self, norm: &str) -> bool {
        match self.kind.as_ref() {
            Kind::Loose(m) => m.contains_key(norm),
            Kind::Catalog {
                catalog,
                index,
                mount,
                ..
            } => norm
                .strip_prefix(mount.as_str())
                .is_some_and(|inner| index.get(&catalog.entries, inner).is_some()),
        }
    }

    pub(super) fn get(&self, norm: &str) -> Option<Result<Input>> {
        match self.kind.as_ref() {
            Kind::Loose(m) => {
                let (_, s) = m.get(norm)?;
                Some(read_whole(s.as_ref(), norm).map(Input::Read))
            }
            Kind::Catalog {
                catalog,
                index,
                mount,
                dat,
                label,
            } => {
                let i = index.get(&catalog.entries, norm.strip_prefix(mount.as_str())?)?;
                let e = catalog.entries.get(i)?;
                let end = e.offset.checked_add(e.size);
                let Some(size) = end
                    .filter(|&end| end <= dat.len())
                    .and_then(|_| usize::try_from(e.size).ok())
                else {
                    return Some(Err(e
                        .past_the_end(dat.len())
                        .in_file(std::path::Path::new(label))));
                };
                Some(dat.read_at(e.offset, size).map(Input::Read))
            }
        }
    }

    pub(super) fn files(&self, prefix: &str, out: &mut Vec<String>) {
        match self.kind.as_ref() {
            Kind::Loose(m) => super::listed(m.keys().map(String::as_str), "", prefix, out),
            Kind::Catalog {
                catalog,
                index,
                mount,
                ..
            } => super::listed(index.paths(&catalog.entries), mount, prefix, out),
        }
    }
}

impl GameView {
    /// A view with no layer yet ([`GameView::push`] adds them); `label` names it in messages.
    pub fn empty(label: &str) -> GameView {
        GameView {
            label: label.to_string(),
            layers: Vec::new(),
        }
    }

    /// A folder given as its files (path inside it, source), its loose files only (as
    /// [`GameView::folder`] reads one from disk; catalogs are files like any other).
    pub(crate) fn loose(label: &str, files: Vec<(String, SharedSource)>) -> GameView {
        let mut view = GameView::empty(label);
        view.push(Layer::Source(SourceLayer::loose(files)));
        view
    }

    /// A game or mod folder given as its files (path inside the folder, source), as
    /// [`GameView::open`] reads one from disk: the loose files, the folder's data catalogs in
    /// override order, then each extension's (`extensions/NAME/`), an `ext_` catalog below its
    /// extension's folder and a `subst_` one at the root. Only the `.cat` indexes are read here.
    /// The catalogs' warnings come with the view.
    pub fn from_sources(
        label: &str,
        files: Vec<(String, SharedSource)>,
    ) -> Result<(GameView, Vec<Warning>)> {
        let mut view = GameView::empty(label);
        let mut warnings = Vec::new();
        let by_path: HashMap<String, &SharedSource> = files
            .iter()
            .filter_map(|(p, s)| normalize(p).ok().map(|n| (n, s)))
            .collect();
        // (extension folder or "" for the root, rank, name, path of the .cat)
        let mut cats: Vec<(String, u8, String, String)> = Vec::new();
        for path in by_path.keys() {
            let (dir, name) = path.rsplit_once('/').unwrap_or(("", path.as_str()));
            let ext_dir = match dir.split_once('/') {
                None if dir.is_empty() => Some(String::new()),
                Some(("extensions", rest)) if !rest.contains('/') => Some(rest.to_string()),
                _ => None,
            };
            if let Some(ext_dir) = ext_dir.filter(|_| catalog::is_data_catalog(name)) {
                cats.push((
                    ext_dir,
                    super::catalog_rank(name),
                    name.to_string(),
                    path.clone(),
                ));
            }
        }
        cats.sort();
        view.push(Layer::Source(SourceLayer::loose(files.iter().cloned())));
        for (ext_dir, rank, _, cat) in cats {
            let dat_name = catalog::dat_path(std::path::Path::new(&cat))
                .to_string_lossy()
                .to_lowercase();
            let (Some(cat_src), Some(dat)) = (by_path.get(&cat), by_path.get(&dat_name)) else {
                warnings.push(Warning::new(
                    None,
                    "",
                    format!("{cat}: no .dat beside it: its files are not in view"),
                ));
                continue;
            };
            let mount = if ext_dir.is_empty() || rank == 2 {
                String::new()
            } else {
                format!("extensions/{ext_dir}")
            };
            let text = read_whole(cat_src.as_ref(), &cat)?;
            let label = format!("{label}/{cat}");
            let (layer, w) = SourceLayer::catalog(&text, Arc::clone(dat), &mount, &label)?;
            warnings.extend(w);
            view.push(Layer::Source(layer));
        }
        // MPQ archives (StarCraft II maps and mods) over the root, by name: their tables only.
        let mut archives: Vec<&(String, SharedSource)> = files
            .iter()
            .filter(|(p, s)| {
                crate::formats::mpq::has_archive_name(p) && super::is_archive_source(s.as_ref())
            })
            .collect();
        archives.sort_by(|a, b| a.0.cmp(&b.0));
        for (path, src) in archives {
            match super::ArchiveLayer::from_source(Arc::clone(src), &format!("{label}/{path}")) {
                Ok(a) => view.push(Layer::Archive(a)),
                Err(e) => warnings.push(Warning::new(e.offset, "", e.to_string())),
            }
        }
        Ok((view, warnings))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src(b: &[u8]) -> SharedSource {
        Arc::new(b.to_vec())
    }

    fn cat(files: &[(&str, &[u8])]) -> (SharedSource, SharedSource) {
        let mut text = String::new();
        let mut dat = Vec::new();
        for (p, b) in files {
            text.push_str(&format!("{p} {} 0 {}\n", b.len(), catalog::md5_hex(b)));
            dat.extend_from_slice(b);
        }
        (src(text.as_bytes()), Arc::new(dat))
    }

    #[test]
    fn a_folder_of_sources_stacks_like_one_on_disk() {
        let (c1, d1) = cat(&[(r"Assets\A.xml", b"one"), ("assets/b.xml", b"bee")]);
        let (c2, d2) = cat(&[("assets/a.xml", b"two")]);
        let (ce, de) = cat(&[("assets/a.xml", b"own")]);
        let (cs, ds) = cat(&[("assets/b.xml", b"replaced")]);
        let files = vec![
            ("01.cat".to_string(), c1),
            ("01.dat".to_string(), d1),
            ("02.CAT".to_string(), c2),
            ("02.dat".to_string(), d2),
            ("extensions/ego_dlc_x/ext_01.cat".to_string(), ce),
            ("extensions/ego_dlc_x/ext_01.dat".to_string(), de),
            ("extensions/ego_dlc_x/subst_01.cat".to_string(), cs),
            ("extensions/ego_dlc_x/subst_01.dat".to_string(), ds),
            ("Loose/File.txt".to_string(), src(b"loose")),
            ("03.cat".to_string(), src(b"assets/x.xml 1 0 0\n")),
        ];
        let (v, warnings) = GameView::from_sources("game", files).unwrap();
        assert_eq!(warnings.len(), 1, "03.cat has no .dat: {warnings:?}");
        assert_eq!(&*v.read("ASSETS/a.xml").unwrap(), b"two");
        assert_eq!(&*v.read("assets/b.xml").unwrap(), b"replaced");
        assert_eq!(
            &*v.read("extensions/ego_dlc_x/assets/a.xml").unwrap(),
            b"own"
        );
        assert_eq!(&*v.read("loose/file.txt").unwrap(), b"loose");
        // A loose file keeps its spelling; a catalog's entry has only its game path.
        assert_eq!(
            v.spelled("loose/FILE.txt").as_deref(),
            Some("Loose/File.txt")
        );
        assert_eq!(v.spelled("assets/a.xml"), None);
        assert_eq!(v.spelled("assets/none.xml"), None);
        assert_eq!(
            v.files("assets").unwrap(),
            vec!["assets/a.xml", "assets/b.xml"]
        );
        assert!(v.exists("extensions/ego_dlc_x/assets/a.xml"));
        assert!(v.read("assets/c.xml").is_err());
        let again = v.clone();
        assert_eq!(&*again.read("assets/b.xml").unwrap(), b"replaced");
    }

    #[test]
    fn an_entry_past_the_end_of_the_dat_is_an_error_not_a_short_read() {
        let (c, _) = cat(&[("a.bin", b"12345678")]);
        let text = read_whole(c.as_ref(), "x").unwrap();
        let (layer, _) = SourceLayer::catalog(&text, src(b"1234"), "", "x.cat").unwrap();
        let mut v = GameView::empty("x");
        v.push(Layer::Source(layer));
        let Err(e) = v.read("a.bin") else {
            panic!("an entry past the end was read")
        };
        assert_eq!(e.kind, ErrorKind::Truncated);
        assert_eq!(e.offset, Some(0));
        assert!(e.to_string().contains("8 bytes run past"), "{e}");
    }

    #[test]
    fn memory_reads_stop_at_the_end() {
        let s: Vec<u8> = b"abcdef".to_vec();
        assert_eq!(s.read_at(4, 10).unwrap(), b"ef");
        assert_eq!(s.read_at(9, 2).unwrap(), b"");
        assert_eq!(s.read_at(u64::MAX, 2).unwrap(), b"");
    }
}
