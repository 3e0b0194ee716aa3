//! A plain folder as a layer of the game view: names are matched case-insensitively one part at a
//! time (a mod made on Windows says `Assets\Textures\Foo.dds` for `assets/textures/foo.dds`), and a
//! path that resolves outside the folder, through `..` or a link, is never returned.

use crate::error::{Error, Result};
use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// What a folder entry is, as its listing says (no further system call).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    File,
    Dir,
    /// A link, or an entry whose type the listing does not give: resolved before it is trusted.
    Other,
}

/// A folder's entries by lower-case name (several when names differ only in case).
type Listing = Arc<HashMap<String, Vec<(OsString, Kind)>>>;

pub struct Folder {
    /// The folder with every link resolved, so a found file can be checked to lie inside it.
    root: PathBuf,
    /// Listings read for lookups: a model names many textures in one folder, and asking the
    /// system about each candidate name (and each of its parts) was a fifth of an M3 batch.
    listings: Mutex<HashMap<PathBuf, Listing>>,
}

impl Folder {
    pub fn new(root: &Path) -> Result<Folder> {
        let root = crate::io::canonical(root).map_err(|e| Error::io(root, e))?;
        if !root.is_dir() {
            return Err(Error::io(
                &root,
                std::io::Error::new(std::io::ErrorKind::NotADirectory, "not a folder"),
            ));
        }
        Ok(Folder {
            root,
            listings: Mutex::default(),
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The regular file at the normalized game path `norm` (see [`super::normalize`]). Where a
    /// folder holds names that differ only in case (`Assets/` and `assets/`, made on a system that
    /// tells them apart), each is searched, the exact name first.
    pub fn find(&self, norm: &str) -> Option<PathBuf> {
        let parts: Vec<&str> = norm.split('/').filter(|p| !p.is_empty()).collect();
        self.find_below(self.root.clone(), Kind::Dir, &parts)
    }

    /// The file at `parts` below `path` (an entry of kind `kind`).
    fn find_below(&self, path: PathBuf, kind: Kind, parts: &[&str]) -> Option<PathBuf> {
        let Some((part, rest)) = parts.split_first() else {
            return match kind {
                Kind::File => Some(path),
                Kind::Dir => None,
                // Links may point anywhere: only what resolves inside the root counts.
                Kind::Other => {
                    let real = crate::io::canonical(&path).ok()?;
                    (real.starts_with(&self.root) && real.is_file()).then_some(real)
                }
            };
        };
        if kind == Kind::File {
            return None;
        }
        self.children(&path, part)
            .into_iter()
            .find_map(|(name, k)| {
                let k = if kind == Kind::Other { kind } else { k };
                self.find_below(path.join(name), k, rest)
            })
    }

    /// Every regular file at or below the game folder `prefix`, as normalized game paths.
    pub fn files(&self, prefix: &str, out: &mut Vec<String>) {
        out.extend(self.entries(prefix, None).into_iter().map(|e| e.norm));
    }

    /// Every regular file at or below the game folder `prefix`, by its names on disk (relative to
    /// the root, `/`-separated; case twins are all listed); the folder `skip` is not entered.
    pub fn entries(&self, prefix: &str, skip: Option<&Path>) -> Vec<super::Entry> {
        let entry = |file: &Path| {
            let rel = file.strip_prefix(&self.root).ok()?;
            let shown = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/");
            Some(super::Entry {
                norm: super::normalize(&shown).ok()?,
                shown,
                disk: Some(file.to_path_buf()),
            })
        };
        // Every folder (or file) the prefix names in any case: case twins are all listed.
        let mut starts = vec![self.root.clone()];
        for part in prefix.split('/').filter(|p| !p.is_empty()) {
            starts = starts
                .iter()
                .flat_map(|s| self.children(s, part).into_iter().map(|(n, _)| s.join(n)))
                .collect();
        }
        let mut out = Vec::new();
        let mut stack = Vec::new();
        for start in starts {
            if start.is_file() {
                out.extend(entry(&start));
            } else {
                stack.push(start);
            }
        }
        while let Some(dir) = stack.pop() {
            if skip.is_some_and(|s| crate::io::canonical(&dir).is_ok_and(|d| d == s)) {
                continue;
            }
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in entries.filter_map(|e| e.ok()) {
                let Ok(ty) = e.file_type() else { continue };
                // Links are not followed while listing: a link loop must not hang a batch.
                if ty.is_dir() {
                    stack.push(e.path());
                } else if ty.is_file() {
                    out.extend(entry(&e.path()));
                }
            }
        }
        out
    }
}

impl Folder {
    /// The entries of `dir` named `part` in any case, the exact name first, from `dir`'s listing.
    fn children(&self, dir: &Path, part: &str) -> Vec<(OsString, Kind)> {
        let Some(listing) = self.listing(dir) else {
            return Vec::new();
        };
        let mut same = listing
            .get(&part.to_lowercase())
            .cloned()
            .unwrap_or_default();
        same.sort_by_key(|(n, _)| n.as_os_str() != part);
        same
    }

    fn listing(&self, dir: &Path) -> Option<Listing> {
        // A poisoned lock only means another thread panicked mid-insert: the map is still whole.
        let mut cache = self.listings.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(l) = cache.get(dir) {
            return Some(l.clone());
        }
        let mut names: HashMap<String, Vec<(OsString, Kind)>> = HashMap::new();
        for e in std::fs::read_dir(dir).ok()?.filter_map(|e| e.ok()) {
            let kind = match e.file_type() {
                Ok(t) if t.is_file() => Kind::File,
                Ok(t) if t.is_dir() => Kind::Dir,
                _ => Kind::Other,
            };
            let name = e.file_name();
            names
                .entry(name.to_string_lossy().to_lowercase())
                .or_default()
                .push((name, kind));
        }
        let l: Listing = Arc::new(names);
        cache.insert(dir.to_path_buf(), l.clone());
        Some(l)
    }
}

#[cfg(test)]
mod tests {
    use super::super::GameView;

    fn tree(test: &str) -> std::path::PathBuf {
        let root = std::env::temp_dir().join(format!("hangar-vfs-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("Assets/Textures")).unwrap();
        std::fs::write(root.join("Assets/Textures/War3_Black32.dds"), b"dds").unwrap();
        std::fs::write(root.join("top.txt"), b"top").unwrap();
        root
    }

    #[test]
    fn finds_files_in_any_case_and_lists_them() {
        let root = tree("case");
        let v = GameView::folder(&root).unwrap();
        assert_eq!(
            &*v.read(r"assets\textures\war3_black32.DDS").unwrap(),
            b"dds"
        );
        assert!(v.exists("ASSETS/Textures/war3_black32.dds"));
        assert!(!v.exists("assets/textures/missing.dds"));
        // A search's lookup by normalized path: the bytes, or None for a miss (no message made).
        assert_eq!(
            &*v.get("assets/textures/war3_black32.dds").unwrap().unwrap(),
            b"dds"
        );
        assert!(v.get("assets/textures/missing.dds").is_none());
        assert_eq!(
            v.files("").unwrap(),
            vec!["assets/textures/war3_black32.dds", "top.txt"]
        );
        assert_eq!(
            v.files("Assets").unwrap(),
            vec!["assets/textures/war3_black32.dds"]
        );
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn folders_that_differ_only_in_case_are_all_searched() {
        let root = tree("twins");
        std::fs::create_dir_all(root.join("assets/textures")).unwrap();
        std::fs::create_dir_all(root.join("ASSETS/TEXTURES")).unwrap();
        std::fs::write(root.join("assets/textures/lower.dds"), b"lower").unwrap();
        std::fs::write(root.join("ASSETS/TEXTURES/upper.dds"), b"upper").unwrap();
        // The same name under two twins: a game path is looked up in lower case, so the
        // lower-case spelling wins whatever case the reference uses.
        std::fs::write(root.join("assets/textures/war3_black32.dds"), b"twin").unwrap();
        let v = GameView::folder(&root).unwrap();
        for (path, bytes) in [
            (r"Assets\Textures\lower.dds", &b"lower"[..]),
            ("assets/textures/upper.dds", b"upper"),
            ("assets/textures/war3_black32.dds", b"twin"),
            ("Assets/Textures/War3_Black32.dds", b"twin"),
        ] {
            assert_eq!(&*v.read(path).unwrap(), bytes, "{path}");
        }
        assert!(v.read("assets/textures/missing.dds").is_err());
        assert_eq!(
            v.files("assets").unwrap(),
            vec![
                "assets/textures/lower.dds",
                "assets/textures/upper.dds",
                "assets/textures/war3_black32.dds",
            ]
        );
        let _ = std::fs::remove_dir_all(&root);
    }

    #[cfg(unix)]
    #[test]
    fn a_link_out_of_the_folder_is_not_followed() {
        let root = tree("link");
        let secret = root.with_extension("secret");
        std::fs::write(&secret, b"private").unwrap();
        std::os::unix::fs::symlink(&secret, root.join("assets_link.txt")).unwrap();
        let v = GameView::folder(&root).unwrap();
        assert!(!v.exists("assets_link.txt"));
        assert!(v.read("assets_link.txt").is_err());
        assert!(v.read("../x.secret").is_err());
        let _ = std::fs::remove_dir_all(&root);
        let _ = std::fs::remove_file(&secret);
    }

    #[test]
    fn around_finds_the_mod_root() {
        let root = tree("around");
        let (v, p) = GameView::around(&root.join("Assets/Textures/War3_Black32.dds")).unwrap();
        assert_eq!(p, "assets/textures/war3_black32.dds");
        assert!(v.exists("top.txt"));
        let _ = std::fs::remove_dir_all(&root);
    }
}
