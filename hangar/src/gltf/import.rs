use crate::error::{Error, ErrorKind, Result, Warning};
use crate::model::{self, Mesh, Primitive, Role, Scene, Vertices};
use glam::{Quat, Vec3};
use serde_json::{Map, Value};
use std::path::Path;

pub struct Imported {
    pub scene: Scene,
    pub warnings: Vec<Warning>,
}

fn err(path: impl Into<String>, message: impl Into<String>) -> Error {
    Error::new(ErrorKind::Invalid, None, path, message)
}

fn extras_map(raw: &::gltf::json::Extras) -> Map<String, Value> {
    raw.as_ref()
        .and_then(|r| serde_json::from_str::<Value>(r.get()).ok())
        .and_then(|v| v.as_object().cloned())
        .unwrap_or_default()
}

/// Loads a .glb or .gltf (`dir` resolves external buffer files) into the neutral model.
pub fn from_slice(bytes: &[u8], dir: Option<&Path>) -> Result<Imported> {
    let doc = ::gltf::Gltf::from_slice(bytes)
        .map_err(|e| err("gltf", format!("not a valid glTF: {e}")))?;
    let mut warnings = Vec::new();
    let mut buffers: Vec<Vec<u8>> = Vec::new();
    for b in doc.buffers() {
        let data = match b.source() {
            ::gltf::buffer::Source::Bin => doc.blob.clone().ok_or_else(|| {
                err(
                    format!("buffers[{}]", b.index()),
                    "refers to the GLB binary chunk, which is missing",
                )
            })?,
            ::gltf::buffer::Source::Uri(uri) => {
                if let Some(rest) = uri.strip_prefix("data:") {
                    use base64::Engine;
                    let (_, payload) = rest.split_once(";base64,").ok_or_else(|| {
                        err(
                            format!("buffers[{}].uri", b.index()),
                            "data URI is not base64",
                        )
                    })?;
                    base64::engine::general_purpose::STANDARD
                        .decode(payload)
                        .map_err(|e| {
                            err(
                                format!("buffers[{}].uri", b.index()),
                                format!("bad base64: {e}"),
                            )
                        })?
                } else {
                    let p = dir.unwrap_or(Path::new(".")).join(uri);
                    std::fs::read(&p).map_err(|e| Error::io(&p, e))?
                }
            }
        };
        if data.len() < b.length() {
            return Err(err(
                format!("buffers[{}]", b.index()),
                format!("{} bytes, byteLength says {}", data.len(), b.length()),
            ));
        }
        buffers.push(data);
    }
    let get = |b: ::gltf::Buffer<'_>| buffers.get(b.index()).map(|d| d.as_slice());

    let mut scene = Scene::default();
    for m in doc.materials() {
        let name = m
            .name()
            .map(str::to_string)
            .unwrap_or_else(|| format!("material_{}", m.index().unwrap_or(0)));
        // Texture paths: a file URI decoded back to a path, or the name of an embedded image.
        let uri = |t: ::gltf::Texture<'_>| match t.source().source() {
            ::gltf::image::Source::Uri { uri, .. } if !uri.starts_with("data:") => {
                Some(percent_decode(uri))
            }
            ::gltf::image::Source::Uri { .. } => None,
            // An embedded image hangar wrote is named with the game's texture path.
            ::gltf::image::Source::View { .. } => t.source().name().map(str::to_string),
        };
        scene.materials.push(model::Material {
            name,
            textures: model::Textures {
                base_color: m
                    .pbr_metallic_roughness()
                    .base_color_texture()
                    .and_then(|t| uri(t.texture())),
                normal: m.normal_texture().and_then(|t| uri(t.texture())),
                emissive: m.emissive_texture().and_then(|t| uri(t.texture())),
            },
            extras: extras_map(m.extras()),
        });
    }
    for mesh in doc.meshes() {
        let mut out = Mesh {
            name: mesh.name().unwrap_or("mesh").to_string(),
            extras: extras_map(mesh.extras()),
            morph_targets: Vec::new(),
            ..Default::default()
        };
        let mut parts: Vec<(Vertices, Vec<u32>, Option<usize>)> = Vec::new();
        // Primitives that share their vertex accessors (hangar's own export does) share vertices.
        let mut seen: Vec<(Vec<(String, usize)>, usize)> = Vec::new();
        let mut shared: Vec<(usize, usize)> = Vec::new();
        for p in mesh.primitives() {
            let key: Vec<(String, usize)> = p
                .attributes()
                .map(|(s, a)| (s.to_string(), a.index()))
                .collect();
            let path = format!("meshes[{}].primitives[{}]", mesh.index(), p.index());
            if p.mode() != ::gltf::mesh::Mode::Triangles {
                warnings.push(Warning::new(
                    None,
                    &path,
                    format!(
                        "mode {:?} skipped: only triangle lists are converted",
                        p.mode()
                    ),
                ));
                continue;
            }
            let r = p.reader(get);
            if let Some(&(_, part)) = seen.iter().find(|(k, _)| *k == key) {
                let indices: Vec<u32> = match r.read_indices() {
                    Some(i) => i.into_u32().collect(),
                    None => (0..parts[part].0.len() as u32).collect(),
                };
                let n = parts[part].0.len();
                if let Some(bad) = indices.iter().find(|&&i| i as usize >= n) {
                    return Err(err(
                        &path,
                        format!("index {bad} is out of range: there are {n} vertices"),
                    ));
                }
                parts.push((Vertices::default(), indices, p.material().index()));
                let last = parts.len() - 1;
                // Indices of a shared part are relative to the part that holds the vertices.
                shared.push((last, part));
                continue;
            }
            seen.push((key, parts.len()));
            let positions: Vec<[f32; 3]> = r
                .read_positions()
                .ok_or_else(|| err(&path, "no POSITION"))?
                .collect();
            let n = positions.len();
            let sized = |name: &str, len: usize| {
                if len == n {
                    Ok(())
                } else {
                    Err(err(
                        &path,
                        format!("{name} has {len} values for {n} positions"),
                    ))
                }
            };
            let normals: Option<Vec<[f32; 3]>> = r.read_normals().map(|i| i.collect());
            let tangents: Option<Vec<[f32; 4]>> = r.read_tangents().map(|i| i.collect());
            let mut uvs = Vec::new();
            while let Some(t) = r.read_tex_coords(uvs.len() as u32) {
                uvs.push(t.into_f32().collect::<Vec<_>>());
            }
            let mut colors = Vec::new();
            while let Some(c) = r.read_colors(colors.len() as u32) {
                colors.push(c.into_rgba_f32().collect::<Vec<_>>());
            }
            for (name, len) in normals
                .iter()
                .map(|v| ("NORMAL", v.len()))
                .chain(tangents.iter().map(|v| ("TANGENT", v.len())))
                .chain(uvs.iter().map(|v| ("TEXCOORD", v.len())))
                .chain(colors.iter().map(|v| ("COLOR", v.len())))
            {
                sized(name, len)?;
            }
            let indices: Vec<u32> = match r.read_indices() {
                Some(i) => i.into_u32().collect(),
                None => (0..n as u32).collect(),
            };
            if let Some(bad) = indices.iter().find(|&&i| i as usize >= n) {
                return Err(err(
                    &path,
                    format!("index {bad} is out of range: there are {n} vertices"),
                ));
            }
            parts.push((
                Vertices {
                    positions,
                    normals,
                    tangents,
                    uvs,
                    colors,
                    ..Default::default()
                },
                indices,
                p.material().index(),
            ));
        }
        merge_primitives(&mut out, parts, &shared);
        scene.meshes.push(out);
    }
    for node in doc.nodes() {
        let (t, r, s) = node.transform().decomposed();
        let ex = extras_map(node.extras());
        let name = node.name().unwrap_or("node").to_string();
        let marked = ex
            .get("hangar")
            .and_then(|h| h.get("collision"))
            .and_then(Value::as_bool);
        let role = match marked {
            Some(true) => Role::Collision,
            Some(false) => Role::Visual,
            None if name.to_ascii_lowercase().contains("collision") => Role::Collision,
            None => Role::Visual,
        };
        scene.nodes.push(model::Node {
            name,
            parent: None,
            translation: Vec3::from(t),
            rotation: Quat::from_array(r),
            scale: Vec3::from(s),
            mesh: node.mesh().map(|m| m.index()),
            role,
            extras: ex,
            ..Default::default()
        });
    }
    for node in doc.nodes() {
        for c in node.children() {
            scene.nodes[c.index()].parent = Some(node.index());
        }
    }
    scene.name = doc
        .default_scene()
        .and_then(|s| s.name().map(str::to_string))
        .unwrap_or_default();
    Ok(Imported { scene, warnings })
}

/// Puts a glTF mesh's primitives (each with its own vertices) into one vertex set.
/// `shared` lists parts with no vertices of their own, as (part, part holding its vertices).
fn merge_primitives(
    out: &mut Mesh,
    parts: Vec<(Vertices, Vec<u32>, Option<usize>)>,
    shared: &[(usize, usize)],
) {
    let total: usize = parts.iter().map(|p| p.0.len()).sum();
    let with_normals = parts.iter().any(|p| p.0.normals.is_some());
    let with_tangents = parts.iter().any(|p| p.0.tangents.is_some());
    let uv_sets = parts.iter().map(|p| p.0.uvs.len()).max().unwrap_or(0);
    let color_sets = parts.iter().map(|p| p.0.colors.len()).max().unwrap_or(0);
    let v = &mut out.vertices;
    v.positions.reserve(total);
    v.normals = with_normals.then(|| Vec::with_capacity(total));
    v.tangents = with_tangents.then(|| Vec::with_capacity(total));
    v.uvs = vec![Vec::with_capacity(total); uv_sets];
    v.colors = vec![Vec::with_capacity(total); color_sets];
    let mut bases = Vec::with_capacity(parts.len());
    for (pi, (src, indices, material)) in parts.into_iter().enumerate() {
        let base = match shared.iter().find(|(p, _)| *p == pi) {
            Some(&(_, owner)) => bases[owner],
            None => v.positions.len() as u32,
        };
        bases.push(base);
        let n = src.len();
        v.positions.extend_from_slice(&src.positions);
        if let Some(d) = v.normals.as_mut() {
            d.extend(src.normals.unwrap_or_else(|| vec![[0.0, 0.0, 1.0]; n]));
        }
        if let Some(d) = v.tangents.as_mut() {
            d.extend(
                src.tangents
                    .unwrap_or_else(|| vec![[1.0, 0.0, 0.0, 1.0]; n]),
            );
        }
        for (k, d) in v.uvs.iter_mut().enumerate() {
            d.extend(
                src.uvs
                    .get(k)
                    .cloned()
                    .unwrap_or_else(|| vec![[0.0, 0.0]; n]),
            );
        }
        for (k, d) in v.colors.iter_mut().enumerate() {
            d.extend(
                src.colors
                    .get(k)
                    .cloned()
                    .unwrap_or_else(|| vec![[1.0; 4]; n]),
            );
        }
        out.primitives.push(Primitive {
            indices: indices.into_iter().map(|i| i + base).collect(),
            material,
        });
    }
}

/// `%20` and friends back to bytes (a URI reference back to a file path).
fn percent_decode(uri: &str) -> String {
    let b = uri.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = b
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (b[i], hex) {
            (b'%', Some(v)) => {
                out.push(v);
                i += 3;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}
