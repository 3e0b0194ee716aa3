//! The game view: files addressed by game paths (`assets/units/size_s/ship.xml`), the way the game
//! addresses them: case-insensitive, `/` and `\` alike, never outside the root the view was given.
//!
//! A view is a stack of layers; a later layer overrides an earlier one for the same path, as later
//! catalogs override earlier ones in the game. Every reader that follows a path found inside a file
//! (textures, component geometry, the material library) asks a view, so loose and packed files
//! resolve the same way.

use crate::error::{Error, ErrorKind, Result};
use crate::io::Input;
use std::path::{Path, PathBuf};

mod folder;
pub use folder::Folder;

/// A game path in the form the game compares: lower case, `/`-separated, no leading `/`, no `.` or
/// `..` parts. A path that climbs above the root is refused: a file must not reach outside its view.
pub fn normalize(path: &str) -> Result<String> {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split(['/', '\\']) {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err(outside(path));
                }
            }
            p => parts.push(p),
        }
    }
    if parts.first().is_some_and(|p| p.ends_with(':')) {
        // `C:\x`: a drive, not a path inside the game.
        return Err(outside(path));
    }
    Ok(parts.join("/").to_lowercase())
}

fn outside(path: &str) -> Error {
    Error::new(
        ErrorKind::Refused,
        None,
        "",
        format!("{path:?} leads outside the game folder: refused"),
    )
}

/// One source of game files.
pub enum Layer {
    Folder(Folder),
}

impl Layer {
    /// Where the file at the normalized path `norm` is, when this layer has it.
    fn find(&self, norm: &str) -> Option<PathBuf> {
        match self {
            Layer::Folder(f) => f.find(norm),
        }
    }

    fn files(&self, prefix: &str, out: &mut Vec<String>) {
        match self {
            Layer::Folder(f) => f.files(prefix, out),
        }
    }
}

/// Files by game path, from layers in override order (the last one that has a path wins).
pub struct GameView {
    /// What the user named (a folder, a .cat), for messages.
    pub label: String,
    layers: Vec<Layer>,
}

impl GameView {
    /// A plain folder as the game's root.
    pub fn folder(root: &Path) -> Result<GameView> {
        Ok(GameView {
            label: root.display().to_string(),
            layers: vec![Layer::Folder(Folder::new(root)?)],
        })
    }

    /// The view a user names on the command line (`GAME` in `GAME::path`): a plain folder today.
    pub fn open(spec: &Path) -> Result<GameView> {
        if spec.is_dir() {
            return GameView::folder(spec);
        }
        Err(Error::new(
            ErrorKind::Unsupported,
            None,
            "",
            format!(
                "{}: a game view is a folder (catalogs are not read yet)",
                spec.display()
            ),
        ))
    }

    /// The view around a loose file: the nearest folder above it that holds the game's top folders
    /// (`assets/`, `libraries/`, `Assets/`; a mod's root), and the file's game path inside it.
    pub fn around(file: &Path) -> Option<(GameView, String)> {
        let file = std::fs::canonicalize(file).ok()?;
        let mut dir = file.parent();
        while let Some(d) = dir {
            if is_game_root(d) {
                let rel = file.strip_prefix(d).ok()?;
                let game_path = normalize(&rel.to_string_lossy()).ok()?;
                return Some((GameView::folder(d).ok()?, game_path));
            }
            dir = d.parent();
        }
        None
    }

    /// Adds a layer that overrides the ones before it.
    pub fn push(&mut self, layer: Layer) {
        self.layers.push(layer);
    }

    /// True when some layer holds `path`.
    pub fn exists(&self, path: &str) -> bool {
        normalize(path).is_ok_and(|n| self.layers.iter().rev().any(|l| l.find(&n).is_some()))
    }

    /// The bytes of the file at `path`.
    pub fn read(&self, path: &str) -> Result<Input> {
        let norm = normalize(path)?;
        for layer in self.layers.iter().rev() {
            if let Some(found) = layer.find(&norm) {
                return crate::io::read_input(&found);
            }
        }
        Err(Error::new(
            ErrorKind::Io,
            None,
            "",
            format!("{path}: not found in {}", self.label),
        ))
    }

    /// Every file at or below the game folder `prefix` (`""` for all), normalized, sorted, each once.
    pub fn files(&self, prefix: &str) -> Result<Vec<String>> {
        let prefix = normalize(prefix)?;
        let mut out = Vec::new();
        for layer in &self.layers {
            layer.files(&prefix, &mut out);
        }
        out.sort();
        out.dedup();
        Ok(out)
    }
}

/// True when `dir` looks like the root of the game or of a mod.
fn is_game_root(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries.filter_map(|e| e.ok()).any(|e| {
            let n = e.file_name().to_string_lossy().to_lowercase();
            (n == "assets" || n == "libraries") && e.path().is_dir()
        })
    })
}

/// `GAME::path/inside` on the command line: the game (folder or catalog) and the path inside it.
pub fn split_spec(arg: &str) -> Option<(PathBuf, &str)> {
    let (game, inside) = arg.split_once("::")?;
    (!game.is_empty()).then(|| (PathBuf::from(game), inside))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_folds_case_and_separators() {
        assert_eq!(
            normalize(r"Assets\Units/Size_S\\Ship.XML").unwrap(),
            "assets/units/size_s/ship.xml"
        );
        assert_eq!(normalize("./a/b/../c").unwrap(), "a/c");
        assert_eq!(normalize("/abs/x").unwrap(), "abs/x");
    }

    #[test]
    fn normalize_refuses_escapes() {
        for bad in ["../x", "a/../../x", r"C:\x", r"..\..\etc\passwd"] {
            let e = normalize(bad).unwrap_err();
            assert_eq!(e.kind, ErrorKind::Refused, "{bad}");
        }
    }

    #[test]
    fn split_spec_takes_the_first_double_colon() {
        let (g, p) = split_spec("X4::assets/units").unwrap();
        assert_eq!(g, PathBuf::from("X4"));
        assert_eq!(p, "assets/units");
        assert!(split_spec("plain/path.xmf").is_none());
        assert!(split_spec("::x").is_none());
    }
}
