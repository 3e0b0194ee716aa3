//! glTF 2.0 input (.glb, .gltf) in the registry: a neutral scene read from a file.

use crate::detect::Format;
use crate::document::{no_motions, Document, FileFormat, Info, Opened};
use crate::error::{Result, Warning};
use crate::model::{Role, Scene};
use crate::validate::Finding;
use serde_json::json;
use std::path::Path;

pub struct GltfFormat;

/// The scene read, and the bytes it was read from (its images are read again for `--textures write`).
struct SceneDocument<'a>(Scene, &'a [u8]);

impl FileFormat for GltfFormat {
    fn formats(&self) -> &'static [Format] {
        &[Format::Glb, Format::GltfText]
    }

    /// A GLB by its magic; a .gltf is a JSON object with an `asset` (a hangar dump says `hangar_dump`).
    fn detect(&self, bytes: &[u8], ext: &str) -> Option<Format> {
        if bytes.starts_with(b"glTF") {
            return Some(Format::Glb);
        }
        let head = crate::detect::json_head(bytes)?;
        let gltf =
            !head.contains("\"hangar_dump\"") && (ext == "gltf" || head.contains("\"asset\""));
        gltf.then_some(Format::GltfText)
    }

    fn open<'a>(&self, format: Format, bytes: &'a [u8], path: &Path) -> Result<Opened<'a>> {
        let imported = super::from_slice(bytes, path.parent())?;
        let mut scene = imported.scene;
        if scene.name.is_empty() {
            scene.name = path
                .file_stem()
                .map_or("model".into(), |s| s.to_string_lossy().into_owned());
        }
        Ok(Opened::new(
            format,
            SceneDocument(scene, bytes),
            imported.warnings,
        ))
    }
}

impl Document for SceneDocument<'_> {
    fn info(&self) -> Info {
        let s = &self.0;
        Info {
            vertices: s.meshes.iter().map(|m| m.vertices.len() as u64).sum(),
            triangles: s.meshes.iter().map(|m| m.triangle_count() as u64).sum(),
            details: json!({
                "nodes": s.nodes.iter().map(|n| json!({"name": n.name, "mesh": n.mesh, "collision": n.role == Role::Collision})).collect::<Vec<_>>(),
                "materials": s.materials.iter().map(|m| m.name.clone()).collect::<Vec<_>>(),
            }),
            ..Default::default()
        }
    }

    fn validate(&self) -> Vec<Finding> {
        let mut out = Vec::new();
        for (mi, m) in self.0.meshes.iter().enumerate() {
            let n = m.vertices.len();
            for (pi, p) in m.primitives.iter().enumerate() {
                if p.indices.iter().any(|&i| i as usize >= n) {
                    out.push(Finding::error(
                        format!("meshes[{mi}].primitives[{pi}]"),
                        "index out of range",
                    ));
                }
            }
        }
        out
    }

    fn to_scene(
        &self,
        _name: &str,
        motions: &[(String, &Opened<'_>)],
    ) -> Result<(Scene, Vec<Warning>)> {
        no_motions(motions)?;
        Ok((self.0.clone(), Vec::new()))
    }

    fn source(&self) -> Option<&[u8]> {
        Some(self.1)
    }
}
