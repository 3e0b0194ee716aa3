//! Where a component's parts were read from, as its scene names them: `LABEL::game/path` in each
//! part node's `x4.source.path` (and `x4.reused`), LABEL the folder or game it was read in
//! (absolute: the scene is used from anywhere). A glTF carries LABEL relative to the glTF's own
//! folder (`../mods/my_ship::assets/units/...`): no absolute path lands in a file, so one input
//! gives the same bytes in any folder and on any system, and a glTF moved together with its
//! sources still finds them (an untouched part is written back as its very file).

use super::read::NODE_KEY;
use crate::model::Scene;
use serde_json::Value;
use std::path::Path;

/// Every source label of `scene` made relative to `dir` (the folder a glTF is written in).
/// A label that is no path on this system (a browser's file list) or lies on another drive
/// stays as it is.
pub(crate) fn relative_to(scene: &mut Scene, dir: &Path) {
    each_label(scene, |label| {
        let absolute = std::path::absolute(label).ok()?;
        crate::io::relative_path(dir, &absolute).map(|r| if r.is_empty() { ".".into() } else { r })
    });
}

/// Every relative source label of `scene` (read from a glTF in `dir`) made absolute again.
pub(crate) fn resolved_from(scene: &mut Scene, dir: &Path) {
    each_label(scene, |label| {
        let label = Path::new(label);
        (!label.is_absolute()).then(|| {
            let joined = dir.join(label);
            lexically_normal(&joined).display().to_string()
        })
    });
}

/// Whether `scene` names any source (so a borrowed scene is copied only when it must change).
pub(crate) fn any(scene: &Scene) -> bool {
    scene.nodes.iter().any(|n| {
        n.extras
            .get(NODE_KEY)
            .is_some_and(|m| m.get("source").is_some() || m.get("reused").is_some())
    })
}

/// Applies `change` to the label of every source path (`LABEL::inside`) in `scene`.
fn each_label(scene: &mut Scene, change: impl Fn(&str) -> Option<String>) {
    let fix = |v: &mut Value| {
        let Value::String(s) = v else { return };
        let Some((label, inside)) = s.split_once("::") else {
            return;
        };
        if let Some(new) = change(label) {
            *s = format!("{new}::{inside}");
        }
    };
    for n in &mut scene.nodes {
        let Some(Value::Object(m)) = n.extras.get_mut(NODE_KEY) else {
            continue;
        };
        if let Some(p) = m.get_mut("source").and_then(|s| s.get_mut("path")) {
            fix(p);
        }
        if let Some(r) = m.get_mut("reused") {
            fix(r);
        }
    }
}

/// `p` with `.` and `dir/..` taken out, without asking the system (the folder may be gone).
fn lexically_normal(p: &Path) -> std::path::PathBuf {
    use std::path::Component;
    let mut out = std::path::PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir
                if matches!(out.components().next_back(), Some(Component::Normal(_))) =>
            {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Node;
    use serde_json::json;

    fn part(path: &str) -> Scene {
        let mut n = Node::new("part");
        n.extras.insert(
            NODE_KEY.into(),
            json!({ "lod": 0, "source": { "path": path } }),
        );
        Scene {
            nodes: vec![n],
            ..Default::default()
        }
    }

    fn path_of(s: &Scene) -> &str {
        s.nodes[0].extras[NODE_KEY]["source"]["path"]
            .as_str()
            .unwrap()
    }

    #[cfg(unix)]
    #[test]
    fn a_source_is_carried_relative_to_the_gltf_and_found_again() {
        let mut s = part("/mods/my ship/ext::assets/units/ship_data/hull-lod0.xmf");
        relative_to(&mut s, Path::new("/out/glb"));
        assert_eq!(
            path_of(&s),
            "../../mods/my ship/ext::assets/units/ship_data/hull-lod0.xmf"
        );
        // The same input written beside itself, from any folder it lies in.
        let mut t = part("/a/b/ext::x.xmf");
        relative_to(&mut t, Path::new("/a/b/ext"));
        assert_eq!(path_of(&t), ".::x.xmf");
        resolved_from(&mut s, Path::new("/out/glb"));
        assert_eq!(
            path_of(&s),
            "/mods/my ship/ext::assets/units/ship_data/hull-lod0.xmf"
        );
        resolved_from(&mut t, Path::new("/a/b/ext"));
        assert_eq!(path_of(&t), "/a/b/ext::x.xmf");
    }

    #[test]
    fn a_label_that_is_no_path_here_is_kept() {
        // An absolute label is never made relative again on reading.
        let mut s = part("/abs::x.xmf");
        resolved_from(&mut s, Path::new("/elsewhere"));
        assert_eq!(path_of(&s), "/abs::x.xmf");
        assert!(any(&s));
        assert!(!any(&Scene::default()));
    }
}
