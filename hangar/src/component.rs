//! An X4 component folder as one scene: each part's `-lod0.xmf` as its mesh, the other LODs and the
//! collision meshes as marked child nodes, and the `*_data.ani` beside them as one animation a state.

use crate::assemble::component::{split_piece_as_written, Piece};
use crate::error::{Error, Result, Warning};
use crate::formats::{ani, xmf};
use crate::model::{Node, Role, Scene};
use serde_json::json;
use std::path::{Path, PathBuf};

/// Reads the folder's parts and animations into one scene named after the folder.
pub fn to_scene(dir: &Path) -> Result<(Scene, Vec<Warning>)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| Error::io(dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
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
    let mut pieces: Vec<(String, Piece, &PathBuf)> = files
        .iter()
        .filter(|p| crate::io::has_ext(p, "xmf"))
        .filter_map(|p| {
            let stem = p.file_stem()?.to_string_lossy().into_owned();
            split_piece_as_written(&stem).map(|(part, piece)| (part.to_string(), piece, p))
        })
        .collect();
    pieces.sort_by_key(|(part, piece, _)| (part.clone(), !matches!(piece, Piece::Lod(0))));
    for (part, piece, path) in pieces {
        let bytes = crate::io::read_input(path)?;
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
    let mut anis: Vec<PathBuf> = files
        .iter()
        .filter(|p| crate::io::has_ext(p, "ani"))
        .cloned()
        .collect();
    anis.extend(crate::assemble::data_ani(dir));
    for path in &anis {
        let bytes = crate::io::read_input(path)?;
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
