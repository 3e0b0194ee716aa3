//! The format-neutral front door: open any supported file, describe it, check it, dump it, convert it.
//! The CLI calls only this; every decision about a format lives in the format's module.

use crate::detect::{detect, Format};
use crate::error::{Error, ErrorKind, Result, Warning};
use crate::formats::ani::{self, Ani};
use crate::formats::emfx;
use crate::formats::m3::{self, M3};
use crate::formats::xmf::{self, write::Target, Xmf};
use crate::model::{Role, Scene};
use crate::validate::Finding;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::path::Path;

/// An opened file.
pub enum Document<'a> {
    Xmf {
        file: Xmf<'a>,
        target: Target,
    },
    M3(M3<'a>),
    /// XAC, XSM or XPM.
    Emfx(emfx::File),
    Ani(Ani),
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
    M3(Value),
    Emfx(Value),
    Ani(Value),
}

const DUMP_VERSION: u32 = 1;

fn dump_json(body: DumpBody<'_>) -> Result<String> {
    let d = Dump {
        hangar_dump: DUMP_VERSION,
        body,
    };
    serde_json::to_string_pretty(&d)
        .map_err(|e| Error::new(ErrorKind::Invalid, None, "dump", e.to_string()))
}

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
        Format::M3Md34 | Format::M3Md33 => {
            let (file, warnings) = m3::read::read(bytes)?;
            Ok(Opened {
                format,
                document: Document::M3(file),
                warnings,
            })
        }
        Format::Xac | Format::Xsm | Format::Xpm => {
            let (file, warnings) = emfx::read(bytes)?;
            Ok(Opened {
                format,
                document: Document::Emfx(file),
                warnings,
            })
        }
        Format::Ani => {
            let (file, warnings) = ani::read(bytes)?;
            Ok(Opened {
                format,
                document: Document::Ani(file),
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
            match dump.body {
                DumpBody::Xmf(file) => Ok(Opened {
                    format: Format::Xmf,
                    document: Document::Xmf { file, target },
                    warnings: Vec::new(),
                }),
                DumpBody::Emfx(v) => {
                    let file = emfx::from_json(&v)?;
                    Ok(Opened {
                        format: match file.kind {
                            emfx::Kind::Xac => Format::Xac,
                            emfx::Kind::Xsm => Format::Xsm,
                            emfx::Kind::Xpm => Format::Xpm,
                        },
                        document: Document::Emfx(file),
                        warnings: Vec::new(),
                    })
                }
                DumpBody::Ani(fields) => Ok(Opened {
                    format: Format::Ani,
                    document: Document::Ani(Ani { fields }),
                    warnings: Vec::new(),
                }),
                DumpBody::M3(v) => {
                    let file = m3::dump::from_json(&v)?;
                    Ok(Opened {
                        format: if file.small_refs() {
                            Format::M3Md33
                        } else {
                            Format::M3Md34
                        },
                        document: Document::M3(file),
                        warnings: Vec::new(),
                    })
                }
            }
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
            Document::M3(file) => {
                let s = m3::check::summary(file);
                Info {
                    format: format.name().to_string(),
                    vertices: s.vertices,
                    triangles: s.triangles,
                    bones: Some(s.bones),
                    sequences: Some(s.sequences),
                    animations: None,
                    details: s.details,
                    warnings: warnings.to_vec(),
                }
            }
            Document::Emfx(file) => {
                let s = emfx::check::summary(file);
                Info {
                    format: format.name().to_string(),
                    vertices: s.vertices,
                    triangles: s.triangles,
                    bones: Some(s.nodes),
                    sequences: None,
                    animations: Some(s.animations),
                    details: s.details,
                    warnings: warnings.to_vec(),
                }
            }
            Document::Ani(file) => {
                let states = ani::states(file);
                Info {
                    format: format.name().to_string(),
                    vertices: 0,
                    triangles: 0,
                    bones: None,
                    sequences: None,
                    animations: Some(states.len() as u64),
                    details: json!({
                        "states": states.iter().map(|(s, parts)| format!("{s}: {}", parts.join(", "))).collect::<Vec<_>>(),
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
            Document::Xmf { file, .. } => dump_json(DumpBody::Xmf(file.clone())),
            Document::M3(file) => dump_json(DumpBody::M3(m3::dump::to_json(file))),
            Document::Emfx(file) => dump_json(DumpBody::Emfx(emfx::to_json(file))),
            Document::Ani(file) => dump_json(DumpBody::Ani(file.fields.clone())),
            Document::Scene(_) => Err(Error::unsupported(
                "a glTF file has no dump: it is JSON already",
            )),
        }
    }

    pub fn validate(&self) -> Vec<Finding> {
        match self {
            Document::Xmf { file, target } => xmf::check::check(file, *target),
            Document::M3(file) => m3::check::check(file),
            Document::Emfx(file) => emfx::check::check(file),
            Document::Ani(file) => ani::check(file),
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
        self.to_scene_with(name, &[])
    }

    /// The document as a neutral scene, with the animations of `motions` (name, opened file) added.
    pub fn to_scene_with(
        &self,
        name: &str,
        motions: &[(String, &Opened<'_>)],
    ) -> Result<(Scene, Vec<Warning>)> {
        if let Document::M3(file) = self {
            let mut files = Vec::with_capacity(motions.len());
            for (label, o) in motions {
                match &o.document {
                    Document::M3(m) => files.push((label.as_str(), m)),
                    _ => {
                        return Err(Error::unsupported(format!(
                            "{label}: an M3 model takes M3 animation files (.m3a or .m3), not {}",
                            o.format.name()
                        )))
                    }
                }
            }
            return m3::scene::to_scene(file, name, &files);
        }
        if let Document::Emfx(file) = self {
            let (mut scene, mut warnings) = emfx::scene::to_scene(file, name)?;
            for (label, o) in motions {
                match &o.document {
                    Document::Emfx(m) => {
                        warnings.extend(emfx::scene::add_motion(&mut scene, m, label)?)
                    }
                    _ => {
                        return Err(Error::unsupported(format!(
                            "{label}: an XAC actor takes XSM motions, not {}",
                            o.format.name()
                        )))
                    }
                }
            }
            return Ok((scene, warnings));
        }
        if let Some((label, _)) = motions.first() {
            return Err(Error::unsupported(format!(
                "{label}: motions can be added to M3 models and XAC actors only"
            )));
        }
        match self {
            Document::M3(_) | Document::Emfx(_) => unreachable!("handled above"),
            Document::Ani(file) => Ok(ani::to_scene(file, name)),
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
    M3,
    Emfx,
    Ani,
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
            "m3" | "m3a" => Output::M3,
            "xac" | "xsm" | "xpm" => Output::Emfx,
            "ani" => Output::Ani,
            "json" => Output::Json,
            _ => {
                return Err(Error::unsupported(format!(
                    "cannot tell what to write from the extension {ext:?}: use .glb, .gltf, .obj, .xmf, .m3, .xac, .xsm, .xpm, .ani or .json"
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
    convert_with(opened, input, output, &[])
}

/// [`convert`] with animation files (`--motion`) whose clips are added to a glTF output.
pub fn convert_with(
    opened: &Opened<'_>,
    input: &Path,
    output: &Path,
    motions: &[(String, &Opened<'_>)],
) -> Result<(Vec<u8>, Vec<Warning>)> {
    convert_textured(opened, input, output, motions, &Default::default())
}

/// [`convert_with`] with texture options (where to look, embed or not, PNG compression).
pub fn convert_textured(
    opened: &Opened<'_>,
    input: &Path,
    output: &Path,
    motions: &[(String, &Opened<'_>)],
    textures: &crate::textures::Options,
) -> Result<(Vec<u8>, Vec<Warning>)> {
    convert_inner(opened, input, output, motions, textures).map_err(|e| e.in_file(output))
}

fn convert_inner(
    opened: &Opened<'_>,
    input: &Path,
    output: &Path,
    motions: &[(String, &Opened<'_>)],
    textures: &crate::textures::Options,
) -> Result<(Vec<u8>, Vec<Warning>)> {
    let kind = Output::from_path(output)?;
    if !motions.is_empty() && !matches!(kind, Output::Glb | Output::Gltf) {
        return Err(Error::unsupported(
            "--motion adds animations to a glTF output (.glb or .gltf) only",
        ));
    }
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
        (Output::M3, Document::M3(file)) => Ok((m3::write::write(file)?, Vec::new())),
        (Output::M3, _) => Err(Error::unsupported(
            "M3 is written from an M3 file or its JSON dump; building an M3 from other formats is not supported yet",
        )),
        (Output::Emfx, Document::Emfx(file)) => Ok((emfx::write(file)?, Vec::new())),
        (Output::Emfx, Document::Scene(scene)) if crate::io::has_ext(output, "xac") => {
            Ok((emfx::write(&emfx::build::actor(scene)?)?, Vec::new()))
        }
        (Output::Ani, Document::Ani(file)) => Ok((ani::write(file)?, Vec::new())),
        (Output::Emfx | Output::Ani, _) => Err(Error::unsupported(
            "XAC is written from glTF or an XAC (or its dump); XSM, XPM and .ani from the same kind of file or its JSON dump",
        )),
        (Output::Xmf, Document::M3(_) | Document::Emfx(_) | Document::Ani(_)) => Err(Error::unsupported(
            "writing XMF from this format is not supported: go through glTF and check the result",
        )),
        (Output::Json, _) => Ok((doc.dump()?.into_bytes(), Vec::new())),
        (Output::Glb | Output::Gltf | Output::Obj, _) => {
            let (mut scene, mut warnings) = doc.to_scene_with(&name, motions)?;
            let (images, w) = crate::textures::resolve(&mut scene, input, textures);
            warnings.extend(w);
            let bytes = match kind {
                Output::Obj => crate::obj::to_obj(&scene),
                _ => {
                    let e = crate::gltf::export::to_gltf_with(&scene, Some(&images))?;
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

/// A component folder (parts and their `_data.ani`, see [`crate::component`]) as one glTF file.
pub fn convert_component(dir: &Path, output: &Path) -> Result<(Vec<u8>, Vec<Warning>)> {
    let kind = Output::from_path(output)?;
    if !matches!(kind, Output::Glb | Output::Gltf) {
        return Err(
            Error::unsupported("a component folder converts to .glb or .gltf").in_file(output),
        );
    }
    let (scene, mut warnings) = crate::component::to_scene(dir).map_err(|e| e.in_file(dir))?;
    let e = crate::gltf::to_gltf(&scene).map_err(|e| e.in_file(output))?;
    warnings.extend(e.warnings.iter().cloned());
    let bytes = if kind == Output::Glb {
        e.to_glb()?
    } else {
        e.to_gltf_text()?
    };
    Ok((bytes, warnings))
}
