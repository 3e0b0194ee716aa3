//! An X4 component XML in the registry: opened from its path (its parts are files beside it), shown,
//! and turned into one scene. Writing a component back makes several files: see
//! [`crate::assemble::from_scene`].

use crate::detect::Format;
use crate::document::{no_motions, Document, FileFormat, Info, Opened};
use crate::error::{Error, ErrorKind, Result, Warning};
use crate::model::Scene;
use crate::validate::Finding;
use crate::vfs::GameView;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub struct ComponentFormat;

/// Where a component is read from: the parts, the `_data` folder and the .ani are found from it.
enum ComponentDocument {
    /// An XML file on disk (read inside the mod around it) or `GAME::path`.
    Xml(PathBuf),
    /// An XML inside a game view (a catalog, a browser's folder), its label in messages, and the
    /// scene once built: the page asks for info, the glTF and validation of one component, and
    /// building a ship's scene is most of each.
    InView(Arc<GameView>, String, PathBuf, Box<SceneOnce>),
    /// A bare folder of `PART-lodN.xmf` files and their `_data.ani`, with no XML.
    Bare(PathBuf),
}

type SceneOnce = std::sync::OnceLock<Result<(Scene, Vec<Warning>)>>;

impl ComponentDocument {
    /// `f` given the scene: built each time from disk, built once inside a view (lent, not
    /// copied: info and validation only count and check it).
    fn with_scene<R>(&self, f: impl FnOnce(Result<&(Scene, Vec<Warning>)>) -> R) -> R {
        match self {
            ComponentDocument::Xml(xml) => f(super::to_scene(xml).as_ref().map_err(Error::clone)),
            ComponentDocument::InView(view, inside, label, once) => f(once
                .get_or_init(|| super::read::to_scene_in(view, inside, label))
                .as_ref()
                .map_err(Error::clone)),
            ComponentDocument::Bare(dir) => f(Self::bare(dir).as_ref().map_err(Error::clone)),
        }
    }

    /// The scene, owned.
    fn scene(&self) -> Result<(Scene, Vec<Warning>)> {
        match self {
            ComponentDocument::Bare(dir) => Self::bare(dir),
            ComponentDocument::Xml(xml) => super::to_scene(xml),
            _ => self.with_scene(|s| s.cloned()),
        }
    }

    fn bare(dir: &Path) -> Result<(Scene, Vec<Warning>)> {
        let (scene, warnings) = super::bare::to_scene(dir).map_err(|e| e.in_file(dir))?;
        if scene.meshes.is_empty() && scene.animations.is_empty() {
            return Err(Error::new(
                ErrorKind::Invalid,
                None,
                "",
                "no model in this folder: a component folder holds PART-lodN.xmf files (or give its XML)",
            )
            .in_file(dir));
        }
        Ok((scene, warnings))
    }
}

/// The component at game path `inside` of `view` as an opened document (a catalog's, or a view
/// the caller built from a browser's files: see [`GameView::from_sources`]); `label` names it in
/// messages.
pub fn open_in_view(view: Arc<GameView>, inside: &str, label: &Path) -> Opened<'static> {
    Opened::new(
        Format::ComponentXml,
        ComponentDocument::InView(
            view,
            inside.to_string(),
            label.to_path_buf(),
            Box::default(),
        ),
        Vec::new(),
    )
}

/// A component folder: the `NAME_data/` folder of an XML beside it, or a bare folder of parts.
pub fn open_folder(dir: &Path) -> Opened<'static> {
    let doc = match super::xml_beside(dir) {
        Some(xml) => ComponentDocument::Xml(xml),
        None => ComponentDocument::Bare(dir.to_path_buf()),
    };
    Opened::new(Format::ComponentXml, doc, Vec::new())
}

impl FileFormat for ComponentFormat {
    fn formats(&self) -> &'static [Format] {
        &[Format::ComponentXml]
    }

    /// A `<components` root within the first KiB.
    fn detect(&self, bytes: &[u8], _ext: &str) -> Option<Format> {
        super::read::is_component(bytes).then_some(Format::ComponentXml)
    }

    fn open<'a>(&self, format: Format, _bytes: &'a [u8], path: &Path) -> Result<Opened<'a>> {
        Ok(Opened::new(
            format,
            ComponentDocument::Xml(path.to_path_buf()),
            Vec::new(),
        ))
    }
}

impl Document for ComponentDocument {
    fn info(&self) -> Info {
        self.with_scene(|s| match s {
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
                warnings: warnings.clone(),
                ..Default::default()
            },
            Err(e) => Info {
                details: json!({ "error": e.to_string() }),
                ..Default::default()
            },
        })
    }

    fn validate(&self) -> Vec<Finding> {
        self.with_scene(|s| match s {
            Ok((_, warnings)) => warnings.iter().cloned().map(Into::into).collect(),
            Err(e) => vec![e.into()],
        })
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
