//! An X4 component folder as one scene: each part's `-lod0.xmf` as its mesh, the other LODs and the
//! collision meshes as marked child nodes, and the `*_data.ani` beside them as one animation a state.

use super::read::{split_piece_as_written, Piece};
use crate::error::{Error, Result, Warning};
use crate::formats::{ani, xmf};
use crate::model::{Node, Role, Scene};
use crate::vfs::{Entry, GameView};
use serde_json::json;
use std::path::Path;

/// Reads the folder's parts and animations into one scene named after the folder. The folder is
/// read through a view of the folder above it, where the game keeps `<folder>.ani`.
pub fn to_scene(dir: &Path) -> Result<(Scene, Vec<Warning>)> {
    let abs = std::path::absolute(dir).map_err(|e| Error::io(dir, e))?;
    let (view, inside) = match (abs.parent(), abs.file_name()) {
        (Some(up), Some(name)) => (GameView::folder(up)?, name.to_string_lossy().into_owned()),
        _ => (GameView::folder(&abs)?, String::new()),
    };
    to_scene_in(&view, &inside, dir)
}

/// [`to_scene`] for the folder `inside` of `view`, named `dir` in messages.
pub fn to_scene_in(view: &GameView, inside: &str, dir: &Path) -> Result<(Scene, Vec<Warning>)> {
    let depth = inside.split('/').filter(|p| !p.is_empty()).count() + 1;
    let files: Vec<Entry> = view
        .entries(inside, None)?
        .into_iter()
        .filter(|e| e.shown.split('/').count() == depth)
        .collect();
    let read = |e: &Entry| {
        view.read(&e.norm)
            .map_err(|err| err.in_file(Path::new(&e.name())))
    };
    let name = dir
        .file_name()
        .map_or("component".into(), |n| n.to_string_lossy().into_owned());
    let mut scene = Scene {
        name: name.clone(),
        ..Default::default()
    };
    scene.nodes.push(Node::new(&name));
    let mut warnings = Vec::new();
    let mut parts: Vec<(String, usize)> = Vec::new();
    // lod0 first, so every part has its node before its other pieces.
    let mut pieces: Vec<(String, Piece, &Entry)> = files
        .iter()
        .filter(|e| crate::io::has_ext(Path::new(&e.shown), "xmf"))
        .filter_map(|e| {
            let stem = Path::new(&e.shown)
                .file_stem()?
                .to_string_lossy()
                .into_owned();
            split_piece_as_written(&stem).map(|(part, piece)| (part.to_string(), piece, e))
        })
        .collect();
    pieces.sort_by_key(|(part, piece, _)| (part.clone(), !matches!(piece, Piece::Lod(0))));
    for (part, piece, entry) in pieces {
        let name = entry.name();
        let path = Path::new(&name);
        let bytes = read(entry)?;
        let (file, w) = xmf::read::read(&bytes).map_err(|e| e.in_file(path))?;
        warnings.extend(w);
        let role = if matches!(piece, Piece::Collision) {
            Role::Collision
        } else {
            Role::Visual
        };
        let (sub, w) = xmf::mesh::to_scene(&file, &part, role).map_err(|e| e.in_file(path))?;
        warnings.extend(w);
        let node = match parts.iter().find(|p| p.0 == part) {
            Some(&(_, n)) => n,
            None => {
                let mut n = Node::new(&part);
                n.parent = Some(0);
                scene.nodes.push(n);
                parts.push((part.clone(), scene.nodes.len() - 1));
                scene.nodes.len() - 1
            }
        };
        let file_name = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let map = scene.append(sub, Some(node));
        for i in map {
            let n = &mut scene.nodes[i];
            n.name = file_name
                .trim_end_matches(".xmf")
                .trim_end_matches(".XMF")
                .to_string();
            match piece {
                Piece::Lod(0) => {}
                Piece::Lod(l) => {
                    n.extras.insert("hangar".into(), json!({ "lod": l }));
                }
                Piece::Collision => {}
            }
        }
    }
    if parts.is_empty() {
        warnings.push(Warning::new(
            None,
            "",
            format!("{}: no -lodN.xmf or -collision.xmf parts", dir.display()),
        ));
    }
    // The game keeps `<folder>.ani` beside the folder, next to the component XML; some copies keep
    // it inside.
    let beside = Entry {
        shown: format!("{inside}.ani"),
        norm: crate::gamepath::normalize(&format!("{inside}.ani"))?,
        disk: None,
    };
    let anis = files
        .iter()
        .filter(|e| crate::io::has_ext(Path::new(&e.shown), "ani"))
        .chain((!inside.is_empty() && view.exists(&beside.norm)).then_some(&beside));
    for entry in anis {
        let name = entry.name();
        let path = Path::new(&name);
        let bytes = read(entry)?;
        let (a, w) = ani::read(&bytes).map_err(|e| e.in_file(path))?;
        warnings.extend(w);
        let (anims, w) = ani::animations(&a, &mut |part| find_part(&parts, part));
        warnings.extend(w);
        scene.animations.extend(anims);
    }
    Ok((scene, warnings))
}

/// The node of `part`: the same name (any case), or a file named `<source>__<part>` (the
/// corpus names its files that way).
fn find_part(parts: &[(String, usize)], part: &str) -> Option<usize> {
    let lower = part.to_ascii_lowercase();
    parts
        .iter()
        .find(|p| p.0.to_ascii_lowercase() == lower)
        .or_else(|| {
            parts
                .iter()
                .find(|p| p.0.to_ascii_lowercase().ends_with(&format!("__{lower}")))
        })
        .map(|p| p.1)
}
