//! An X4 component XML in the registry: opened from its path (its parts are files beside it), shown,
//! and turned into one scene. Writing a component back makes several files: see
//! [`crate::any::gltf_to_component`].

use crate::any::{no_motions, Document, FileFormat, Info, Opened};
use crate::detect::Format;
use crate::error::{Result, Warning};
use crate::model::Scene;
use crate::validate::Finding;
use crate::vfs::GameView;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub struct ComponentFormat;

/// Where the XML is: the parts, the `_data` folder and the .ani are found from it.
enum ComponentDocument {
    /// A file (or `GAME::path`) named by the user.
    File(PathBuf),
    /// A game path inside a view built by the caller (a browser's folder), its label, and the
    /// scene once built: the page asks for info, the glTF and validation of one component, and
    /// building a ship's scene is most of each.
    InView(Arc<GameView>, String, PathBuf, Box<SceneOnce>),
}

type SceneOnce = std::sync::OnceLock<Result<(Scene, Vec<Warning>)>>;

/// The component at game path `xml` in `view` as an opened document (a view the caller built,
/// e.g. from a browser's files: see [`GameView::from_sources`]); `label` names it in messages.
pub fn open_in(view: Arc<GameView>, xml: &str, label: &Path) -> Opened<'static> {
    Opened::new(
        Format::ComponentXml,
        ComponentDocument::InView(view, xml.to_string(), label.to_path_buf(), Box::default()),
        Vec::new(),
    )
}

impl ComponentDocument {
    fn scene(&self) -> Result<(Scene, Vec<Warning>)> {
        match self {
            ComponentDocument::File(xml) => super::to_scene(xml),
            ComponentDocument::InView(view, xml, label, once) => once
                .get_or_init(|| super::component::to_scene_in(view, xml, label))
                .clone(),
        }
    }
}

impl FileFormat for ComponentFormat {
    fn formats(&self) -> &'static [Format] {
        &[Format::ComponentXml]
    }

    /// A `<components` root within the first KiB.
    fn detect(&self, bytes: &[u8], _ext: &str) -> Option<Format> {
        let head = bytes.get(..bytes.len().min(1024))?;
        let text = String::from_utf8_lossy(head);
        let text = text.trim_start_matches('\u{feff}').trim_start();
        (text.starts_with('<') && text.contains("<components")).then_some(Format::ComponentXml)
    }

    fn open<'a>(&self, format: Format, _bytes: &'a [u8], path: &Path) -> Result<Opened<'a>> {
        Ok(Opened::new(
            format,
            ComponentDocument::File(path.to_path_buf()),
            Vec::new(),
        ))
    }
}

impl Document for ComponentDocument {
    fn info(&self) -> Info {
        match self.scene() {
            Ok((scene, warnings)) => Info {
                vertices: scene.meshes.iter().map(|m| m.vertices.len() as u64).sum(),
                triangles: scene.meshes.iter().map(|m| m.triangle_count() as u64).sum(),
                animations: Some(scene.animations.len() as u64),
                details: json!({
                    "nodes": scene.nodes.len(),
                    "meshes": scene.meshes.len(),
                    "lights": scene.lights.len(),
                    "animations": scene.animations.iter().map(|a| a.name.clone()).collect::<Vec<_>>(),
                }),
                warnings,
                ..Default::default()
            },
            Err(e) => Info {
                details: json!({ "error": e.to_string() }),
                ..Default::default()
            },
        }
    }

    fn validate(&self) -> Vec<Finding> {
        match self.scene() {
            Ok((_, warnings)) => warnings.into_iter().map(Into::into).collect(),
            Err(e) => vec![e.into()],
        }
    }

    fn to_scene(
        &self,
        _name: &str,
        motions: &[(String, &Opened<'_>)],
    ) -> Result<(Scene, Vec<Warning>)> {
        no_motions(motions)?;
        self.scene()
    }
}
