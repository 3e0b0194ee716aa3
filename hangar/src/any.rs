//! The format-neutral front door: open any supported file, describe it, check it, dump it, convert it.
//! The CLI calls only this; every decision about a format lives in the format's module.

use crate::detect::{detect, Format};
use crate::error::{Error, ErrorKind, Result, Warning};
use crate::formats::xmf::{self, write::Target, Xmf};
use crate::model::{Role, Scene};
use crate::validate::Finding;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::path::Path;

/// An opened file.
pub enum Document<'a> {
    Xmf { file: Xmf<'a>, target: Target },
    Scene(Scene),
}

pub struct Opened<'a> {
    pub format: Format,
    pub document: Document<'a>,
    pub warnings: Vec<Warning>,
}

/// The JSON form of `hangar dump`: a version marker, the format, then every field of the file.
#[derive(Serialize, Deserialize)]
struct Dump<'a> {
    hangar_dump: u32,
    #[serde(flatten)]
    body: DumpBody<'a>,
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "format", rename_all = "lowercase")]
enum DumpBody<'a> {
    Xmf(Xmf<'a>),
}

const DUMP_VERSION: u32 = 1;

/// `hangar info --json`: the numbers every format reports, then what is particular to the format.
#[derive(Debug, Serialize)]
pub struct Info {
    pub format: String,
    pub vertices: u64,
    pub triangles: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bones: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sequences: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub animations: Option<u64>,
    pub details: Value,
    pub warnings: Vec<Warning>,
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "model".into())
}

/// Opens `bytes` read from `path` (the path names the file in errors and hints the format).
pub fn open<'a>(bytes: &'a [u8], path: &Path) -> Result<Opened<'a>> {
    open_inner(bytes, path).map_err(|e| e.in_file(path))
}

fn open_inner<'a>(bytes: &'a [u8], path: &Path) -> Result<Opened<'a>> {
    let format = detect(bytes, Some(path));
    let target = Target::from_path(path);
    match format {
        Format::Xmf => {
            let (file, warnings) = xmf::read::read(bytes)?;
            Ok(Opened {
                format,
                document: Document::Xmf { file, target },
                warnings,
            })
        }
        Format::Glb | Format::GltfText => {
            let imported = crate::gltf::from_slice(bytes, path.parent())?;
            let mut scene = imported.scene;
            if scene.name.is_empty() {
                scene.name = stem(path);
            }
            Ok(Opened {
                format,
                document: Document::Scene(scene),
                warnings: imported.warnings,
            })
        }
        Format::HangarJson => {
            let dump: Dump<'static> = serde_json::from_slice(bytes).map_err(|e| {
                Error::new(
                    ErrorKind::Invalid,
                    None,
                    format!("json line {} column {}", e.line(), e.column()),
                    format!("not a hangar dump: {e}"),
                )
            })?;
            if dump.hangar_dump > DUMP_VERSION {
                return Err(Error::unsupported(format!(
                    "dump version {} is newer than this hangar ({DUMP_VERSION})",
                    dump.hangar_dump
                )));
            }
            let DumpBody::Xmf(file) = dump.body;
            Ok(Opened {
                format: Format::Xmf,
                document: Document::Xmf { file, target },
                warnings: Vec::new(),
            })
        }
        Format::Unknown => Err(Error::new(
            ErrorKind::Unsupported,
            Some(0),
            "magic",
            format!(
                "unknown format (first bytes {:02x?})",
                &bytes[..bytes.len().min(8)]
            ),
        )),
        other => Err(Error::unsupported(format!(
            "{} is not supported yet",
            other.name()
        ))),
    }
}

impl Document<'_> {
    pub fn info(&self, format: Format, warnings: &[Warning]) -> Info {
        match self {
            Document::Xmf { file, target } => {
                let vertices = file
                    .buffers
                    .iter()
                    .find(|b| !b.is_index())
                    .map_or(0, |b| b.items as u64 * b.sections as u64);
                let indices = file
                    .index_buffer()
                    .map_or(0, |(_, b)| b.items as u64 * b.sections as u64);
                let layout: Vec<String> = match xmf::mesh::layout(file) {
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
                    bones: None,
                    sequences: None,
                    animations: None,
                    details: json!({
                        "collision": *target == Target::Collision,
                        "layout": layout,
                        "buffers": buffers,
                        "materials": materials,
                        "index_format": file.index_buffer().map(|(_, b)| if b.item_size == 4 { "u32" } else { "u16" }),
                    }),
                    warnings: warnings.to_vec(),
                }
            }
            Document::Scene(s) => Info {
                format: format.name().to_string(),
                vertices: s.meshes.iter().map(|m| m.vertices.len() as u64).sum(),
                triangles: s.meshes.iter().map(|m| m.triangle_count() as u64).sum(),
                bones: None,
                sequences: None,
                animations: None,
                details: json!({
                    "nodes": s.nodes.iter().map(|n| json!({"name": n.name, "mesh": n.mesh, "collision": n.role == Role::Collision})).collect::<Vec<_>>(),
                    "materials": s.materials.iter().map(|m| m.name.clone()).collect::<Vec<_>>(),
                }),
                warnings: warnings.to_vec(),
            },
        }
    }

    /// Every field as JSON; [`open`] on the text gives back a document that writes the same bytes.
    pub fn dump(&self) -> Result<String> {
        match self {
            Document::Xmf { file, .. } => {
                let d = Dump {
                    hangar_dump: DUMP_VERSION,
                    body: DumpBody::Xmf(file.clone()),
                };
                serde_json::to_string_pretty(&d)
                    .map_err(|e| Error::new(ErrorKind::Invalid, None, "dump", e.to_string()))
            }
            Document::Scene(_) => Err(Error::unsupported(
                "a glTF file has no dump: it is JSON already",
            )),
        }
    }

    pub fn validate(&self) -> Vec<Finding> {
        match self {
            Document::Xmf { file, target } => xmf::check::check(file, *target),
            Document::Scene(s) => {
                let mut out = Vec::new();
                for (mi, m) in s.meshes.iter().enumerate() {
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
        }
    }

    /// The document as a neutral scene named `name`.
    pub fn to_scene(&self, name: &str) -> Result<(Scene, Vec<Warning>)> {
        match self {
            Document::Xmf { file, target } => {
                let role = if *target == Target::Collision {
                    Role::Collision
                } else {
                    Role::Visual
                };
                xmf::mesh::to_scene(file, name, role)
            }
            Document::Scene(s) => Ok((s.clone(), Vec::new())),
        }
    }
}

/// What `hangar convert` writes, from the output file's extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    Glb,
    Gltf,
    Obj,
    Xmf,
    Json,
}

impl Output {
    pub fn from_path(path: &Path) -> Result<Output> {
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        Ok(match ext.as_str() {
            "glb" => Output::Glb,
            "gltf" => Output::Gltf,
            "obj" => Output::Obj,
            "xmf" => Output::Xmf,
            "json" => Output::Json,
            _ => {
                return Err(Error::unsupported(format!(
                    "cannot tell what to write from the extension {ext:?}: use .glb, .gltf, .obj, .xmf or .json"
                ))
                .in_file(path))
            }
        })
    }
}

/// Converts an opened document to the bytes of `output` (whose name picks the type and, for XMF,
/// collision or visual). Nothing is written here: the caller stores the bytes.
pub fn convert(
    opened: &Opened<'_>,
    input: &Path,
    output: &Path,
) -> Result<(Vec<u8>, Vec<Warning>)> {
    convert_inner(opened, input, output).map_err(|e| e.in_file(output))
}

fn convert_inner(
    opened: &Opened<'_>,
    input: &Path,
    output: &Path,
) -> Result<(Vec<u8>, Vec<Warning>)> {
    let kind = Output::from_path(output)?;
    let doc = &opened.document;
    let name = stem(input);
    match (kind, doc) {
        (Output::Xmf, Document::Xmf { file, .. }) => {
            // The same file again, byte for byte; a collision target must still keep the rule.
            if Target::from_path(output) == Target::Collision {
                xmf::write::check_collision_rule(file)?;
            }
            Ok((xmf::write::write(file)?, Vec::new()))
        }
        (Output::Xmf, Document::Scene(scene)) => {
            let target = Target::from_path(output);
            let want = if target == Target::Collision {
                Role::Collision
            } else {
                Role::Visual
            };
            let has_role = scene
                .nodes
                .iter()
                .any(|n| n.mesh.is_some() && n.role == want);
            let mesh = scene.flatten(|n| !has_role || n.role == want);
            let mut warnings = Vec::new();
            if !has_role {
                warnings.push(Warning::new(
                    None,
                    "",
                    format!(
                        "no node is marked {}: all meshes are merged",
                        if want == Role::Collision {
                            "collision"
                        } else {
                            "visual"
                        }
                    ),
                ));
            }
            let (x, w) = xmf::mesh::from_mesh(&mesh, &scene.materials, target)?;
            warnings.extend(w);
            Ok((xmf::write::write(&x)?, warnings))
        }
        (Output::Json, _) => Ok((doc.dump()?.into_bytes(), Vec::new())),
        (Output::Glb | Output::Gltf | Output::Obj, _) => {
            let (scene, mut warnings) = doc.to_scene(&name)?;
            let bytes = match kind {
                Output::Obj => crate::obj::to_obj(&scene),
                _ => {
                    let e = crate::gltf::to_gltf(&scene)?;
                    warnings.extend(e.warnings.iter().cloned());
                    if kind == Output::Glb {
                        e.to_glb()?
                    } else {
                        e.to_gltf_text()?
                    }
                }
            };
            Ok((bytes, warnings))
        }
    }
}
