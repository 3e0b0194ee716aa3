//! XMF in the registry: open, describe, check, dump, convert; and the game-ready writer from a scene.

use super::write::Target;
use super::{check, mesh, read, write, Xmf};
use crate::detect::Format;
use crate::document::{no_motions, Document, FileFormat, Info, Opened, WriteOptions};
use crate::error::{Error, ErrorKind, Result, Warning};
use crate::model::{Role, Scene};
use crate::validate::Finding;
use serde_json::{json, Value};
use std::path::Path;

pub struct XmfFormat;

/// An XMF and what its file name says it is (a `-collision` mesh or a visual one).
struct XmfDocument<'a> {
    file: Xmf<'a>,
    target: Target,
}

impl FileFormat for XmfFormat {
    fn formats(&self) -> &'static [Format] {
        &[Format::Xmf]
    }

    fn detect(&self, bytes: &[u8], _ext: &str) -> Option<Format> {
        bytes.starts_with(b"XUMF").then_some(Format::Xmf)
    }

    fn open<'a>(&self, format: Format, bytes: &'a [u8], path: &Path) -> Result<Opened<'a>> {
        let (file, warnings) = read::read(bytes)?;
        let target = Target::from_path(path);
        Ok(Opened::new(format, XmfDocument { file, target }, warnings))
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["xmf"]
    }

    fn dump_name(&self) -> Option<&'static str> {
        Some("xmf")
    }

    fn open_dump(&self, body: Value, path: &Path) -> Result<Opened<'static>> {
        let file: Xmf<'static> = serde_json::from_value(body).map_err(|e| {
            Error::new(
                ErrorKind::Invalid,
                None,
                "xmf",
                format!("not an XMF dump: {e}"),
            )
        })?;
        let target = Target::from_path(path);
        Ok(Opened::new(
            Format::Xmf,
            XmfDocument { file, target },
            Vec::new(),
        ))
    }

    fn writes_scene(&self, output: &Path) -> bool {
        crate::io::has_ext(output, "xmf")
    }

    /// A game-ready mesh: `-collision.xmf` gets the nodes marked collision, `-lodN.xmf` the visual
    /// nodes of LOD N (LOD 0 for any other name).
    fn write_scene(
        &self,
        scene: &Scene,
        output: &Path,
        _opts: &WriteOptions,
    ) -> Result<(Vec<u8>, Vec<Warning>)> {
        let target = Target::from_path(output);
        let lod = lod_of_name(output);
        let want = if target == Target::Collision {
            Role::Collision
        } else {
            Role::Visual
        };
        let in_lod = scene.lod_mask(lod);
        let keep = |i: usize| {
            scene.nodes.get(i).is_some_and(|n| {
                n.mesh.is_some()
                    && n.role == want
                    && (want == Role::Collision || in_lod.get(i) == Some(&true))
            })
        };
        let has_role = (0..scene.nodes.len()).any(keep);
        let mut warnings = Vec::new();
        if !has_role {
            warnings.push(Warning::new(
                None,
                "",
                format!(
                    "no node is marked {}: all meshes are merged",
                    if want == Role::Collision {
                        "collision".to_string()
                    } else {
                        format!("visual LOD {lod}")
                    }
                ),
            ));
        }
        let mesh = scene.flatten(|i| !has_role || keep(i));
        let (x, w) = mesh::from_mesh(&mesh, &scene.materials, target)?;
        warnings.extend(w);
        Ok((write::write(&x)?, warnings))
    }
}

/// The N of a `name-lodN.xmf` output, 0 otherwise.
fn lod_of_name(output: &Path) -> u32 {
    let stem = output
        .file_stem()
        .map(|s| s.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    stem.rfind("-lod")
        .and_then(|i| stem.get(i + 4..))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

impl Document for XmfDocument<'_> {
    fn info(&self) -> Info {
        let file = &self.file;
        let vertices = file
            .buffers
            .iter()
            .find(|b| !b.is_index())
            .map_or(0, |b| b.items as u64 * b.sections as u64);
        let indices = file
            .index_buffer()
            .map_or(0, |(_, b)| b.items as u64 * b.sections as u64);
        let layout: Vec<String> = match mesh::layout(file) {
            Ok(l) => l
                .iter()
                .map(|l| {
                    format!(
                        "{}{} {} @{}+{}",
                        l.usage.name(),
                        l.usage_index,
                        l.ty.name(),
                        l.buffer,
                        l.offset
                    )
                })
                .collect(),
            Err(e) => vec![format!("unreadable: {}", e.message)],
        };
        let buffers: Vec<Value> = file
            .buffers
            .iter()
            .map(|b| {
                json!({
                    "kind": if b.is_index() { "index" } else { "vertex" },
                    "items": b.items,
                    "item_size": b.item_size,
                    "compressed": b.compressed != 0,
                    "stored_bytes": b.data.len(),
                    "format": format!("0x{:x}", b.format),
                })
            })
            .collect();
        let materials: Vec<Value> = file
            .materials
            .iter()
            .map(|m| json!({ "name": m.name.text(), "first_index": m.first_index, "num_indices": m.num_indices }))
            .collect();
        Info {
            format: format!("XMF v{}", file.header.version),
            vertices,
            triangles: indices / 3,
            details: json!({
                "collision": self.target == Target::Collision,
                "layout": layout,
                "buffers": buffers,
                "materials": materials,
                "index_format": file.index_buffer().map(|(_, b)| if b.item_size == 4 { "u32" } else { "u16" }),
            }),
            ..Default::default()
        }
    }

    fn dump(&self) -> Result<Value> {
        serde_json::to_value(&self.file).map_err(crate::document::dump_error)
    }

    fn validate(&self) -> Vec<Finding> {
        check::check(&self.file, self.target)
    }

    fn to_scene(
        &self,
        name: &str,
        motions: &[(String, &Opened<'_>)],
    ) -> Result<(Scene, Vec<Warning>)> {
        no_motions(motions)?;
        let role = if self.target == Target::Collision {
            Role::Collision
        } else {
            Role::Visual
        };
        mesh::to_scene(&self.file, name, role)
    }

    /// The same file again, byte for byte; a collision target must still keep the rule.
    fn write(&self, output: &Path) -> Option<Result<(Vec<u8>, Vec<Warning>)>> {
        if !crate::io::has_ext(output, "xmf") {
            return None;
        }
        Some((|| {
            if Target::from_path(output) == Target::Collision {
                write::check_collision_rule(&self.file)?;
            }
            Ok((write::write(&self.file)?, Vec::new()))
        })())
    }
}
