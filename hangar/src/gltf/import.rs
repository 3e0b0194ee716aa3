use super::data_color_role;
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
    let doc = load(bytes)?;
    let mut warnings = Vec::new();
    let mut buffers: Vec<Vec<u8>> = Vec::new();
    let fallback = super::meshopt::fallback_buffers(doc.as_json());
    // Decoded meshopt streams may be far larger than the file, but not without bound.
    let budget = bytes
        .len()
        .saturating_mul(256)
        .saturating_add(64 << 20)
        .min(1 << 31);
    let mut claimed = 0usize;
    for b in doc.buffers() {
        if fallback.get(b.index()) == Some(&true) {
            // EXT_meshopt_compression's fallback: no data, filled by decoding below.
            claimed = claimed.saturating_add(b.length());
            if claimed > budget {
                return Err(Error::refused(
                    format!("buffers[{}].byteLength", b.index()),
                    format!(
                        "{} bytes to decode: more than this file can hold",
                        b.length()
                    ),
                ));
            }
            buffers.push(vec![0; b.length()]);
            continue;
        }
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
                    let root = dir.ok_or_else(|| {
                        Error::refused(
                            format!("buffers[{}].uri", b.index()),
                            format!("external buffer {uri:?} without the glTF's folder"),
                        )
                    })?;
                    crate::io::read_inside(root, &percent_decode(uri), b.length()).map_err(|e| {
                        Error {
                            path: format!("buffers[{}].uri", b.index()),
                            ..e
                        }
                    })?
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
    super::meshopt::decompress(doc.as_json(), &mut buffers, budget)?;
    let get = |b: ::gltf::Buffer<'_>| buffers.get(b.index()).map(|d| d.as_slice());

    let mut scene = Scene::default();
    let mut image_errors: Vec<String> = Vec::new();
    for m in doc.materials() {
        let name = m
            .name()
            .map(str::to_string)
            .unwrap_or_else(|| format!("material_{}", m.index().unwrap_or(0)));
        // Texture paths: a file URI decoded back to a path, or the name of an embedded image.
        let mut uri = |t: ::gltf::Texture<'_>| match t.source().source() {
            ::gltf::image::Source::Uri { uri, .. } if !uri.starts_with("data:") => {
                // Only a name is kept, but never one that points outside the glTF's folder.
                let rel = percent_decode(uri);
                match texture_name(rel) {
                    // A file hangar wrote beside the glTF (`--textures copy|link`) is named
                    // with the game's texture path, as an embedded image is.
                    Ok(name) => Some(
                        t.source()
                            .name()
                            .filter(|n| n.contains(['/', '\\']))
                            .and_then(|n| texture_name(n.to_string()).ok())
                            .unwrap_or(name),
                    ),
                    Err(e) => {
                        image_errors.push(e.message);
                        None
                    }
                }
            }
            ::gltf::image::Source::Uri { .. } => None,
            // An embedded image hangar wrote is named with the game's texture path.
            ::gltf::image::Source::View { .. } => t.source().name().map(str::to_string),
        };
        let pbr = m.pbr_metallic_roughness();
        scene.materials.push(model::Material {
            name,
            textures: model::Textures {
                base_color: pbr.base_color_texture().and_then(|t| uri(t.texture())),
                normal: m.normal_texture().and_then(|t| uri(t.texture())),
                emissive: m.emissive_texture().and_then(|t| uri(t.texture())),
                occlusion: m.occlusion_texture().and_then(|t| uri(t.texture())),
                ..Default::default()
            },
            look: model::Look {
                base_color: pbr.base_color_factor(),
                metallic: pbr.metallic_factor(),
                roughness: pbr.roughness_factor(),
                emissive: m.emissive_factor(),
                alpha: match m.alpha_mode() {
                    ::gltf::material::AlphaMode::Opaque => model::Alpha::Opaque,
                    ::gltf::material::AlphaMode::Mask => {
                        model::Alpha::Mask(m.alpha_cutoff().unwrap_or(0.5))
                    }
                    ::gltf::material::AlphaMode::Blend => model::Alpha::Blend,
                },
                double_sided: m.double_sided(),
                team_colour: false,
            },
            extras: extras_map(m.extras()),
        });
    }
    if let Some(first) = image_errors.into_iter().next() {
        return Err(Error::refused("images.uri", first));
    }
    for mesh in doc.meshes() {
        let mut out = Mesh {
            name: mesh.name().unwrap_or("mesh").to_string(),
            extras: extras_map(mesh.extras()),
            morph_targets: Vec::new(),
            ..Default::default()
        };
        let mut parts: Vec<Part> = Vec::new();
        // Primitives that share their vertex accessors (hangar's own export does) share vertices.
        let mut seen: Vec<(Vec<(String, usize)>, usize)> = Vec::new();
        let mut shared: Vec<(usize, usize)> = Vec::new();
        for p in mesh.primitives() {
            let key: Vec<(String, usize)> = p
                .attributes()
                .map(|(s, a)| (s.to_string(), a.index()))
                .collect();
            let path = format!("meshes[{}].primitives[{}]", mesh.index(), p.index());
            use ::gltf::mesh::Mode;
            if !matches!(
                p.mode(),
                Mode::Triangles | Mode::TriangleStrip | Mode::TriangleFan
            ) {
                warnings.push(Warning::new(
                    None,
                    &path,
                    format!(
                        "mode {:?} skipped: only triangles (lists, strips, fans) are converted",
                        p.mode()
                    ),
                ));
                continue;
            }
            check_primitive(&p, &buffers, &path)?;
            let r = p.reader(get);
            // The primitive's triangles as a list over `n` vertices, every index checked.
            let triangles = |n: usize| -> Result<Vec<u32>> {
                let indices = triangle_list(
                    p.mode(),
                    match r.read_indices() {
                        Some(i) => i.into_u32().collect(),
                        None => (0..n as u32).collect(),
                    },
                );
                match indices.iter().find(|&&i| i as usize >= n) {
                    Some(bad) => Err(err(
                        &path,
                        format!("index {bad} is out of range: there are {n} vertices"),
                    )),
                    None => Ok(indices),
                }
            };
            if let Some(&(_, part)) = seen.iter().find(|(k, _)| *k == key) {
                let indices = triangles(parts[part].0.len())?;
                parts.push((
                    Vertices::default(),
                    indices,
                    p.material().index(),
                    Vec::new(),
                ));
                let last = parts.len() - 1;
                // Indices of a shared part are relative to the part that holds the vertices.
                shared.push((last, part));
                continue;
            }
            seen.push((key, parts.len()));
            let attribute = |sem: ::gltf::Semantic| p.get(&sem);
            let positions: Vec<[f32; 3]> = attribute(::gltf::Semantic::Positions)
                .map(|a| floats(&a, &buffers))
                .ok_or_else(|| err(&path, "no POSITION"))?;
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
            let normals: Option<Vec<[f32; 3]>> =
                attribute(::gltf::Semantic::Normals).map(|a| floats(&a, &buffers));
            let tangents: Option<Vec<[f32; 4]>> =
                attribute(::gltf::Semantic::Tangents).map(|a| floats(&a, &buffers));
            let mut uvs = Vec::new();
            while let Some(a) = attribute(::gltf::Semantic::TexCoords(uvs.len() as u32)) {
                uvs.push(floats::<2>(&a, &buffers));
            }
            // Colours and weights read as `floats` does, not as the gltf crate scales normalized
            // bytes (times 1/255, one bit off k/255 for half of them): bytes hangar wrote from
            // k/255 read back as the very same floats.
            let color = |a: &::gltf::Accessor<'_>| match a.dimensions() {
                ::gltf::accessor::Dimensions::Vec3 => floats_as::<3>(a, &buffers, true)
                    .into_iter()
                    .map(|[r, g, b]| [r, g, b, 1.0])
                    .collect(),
                _ => floats_as::<4>(a, &buffers, true),
            };
            let mut colors = Vec::new();
            while let Some(a) = attribute(::gltf::Semantic::Colors(colors.len() as u32)) {
                colors.push(color(&a));
            }
            // Sets that are shader data (`_X4_<ROLE>`) after the tints, in the order of their names.
            let mut data: Vec<(String, ::gltf::Accessor<'_>)> = p
                .attributes()
                .filter_map(|(sem, a)| match sem {
                    ::gltf::Semantic::Extras(name) => Some((data_color_role(&name)?, a)),
                    _ => None,
                })
                .collect();
            data.sort_by(|a, b| a.0.cmp(&b.0));
            let mut color_names = Vec::new();
            if !data.is_empty() {
                color_names = vec![String::new(); colors.len()];
                for (role, a) in data {
                    colors.push(color(&a));
                    color_names.push(role);
                }
            }
            // Every JOINTS_n/WEIGHTS_n pair; past four influences the strongest four stay.
            let mut sets: Vec<Influences> = Vec::new();
            while let (Some(j), Some(w)) = (
                r.read_joints(sets.len() as u32),
                attribute(::gltf::Semantic::Weights(sets.len() as u32)),
            ) {
                let (j, w): (Vec<_>, Vec<_>) =
                    (j.into_u16().collect(), floats_as::<4>(&w, &buffers, true));
                sized(&format!("JOINTS_{}", sets.len()), j.len())?;
                sized(&format!("WEIGHTS_{}", sets.len()), w.len())?;
                sets.push((j, w));
            }
            let (influences, cut) = strongest_four(sets);
            let (joints, weights) = influences.map_or((None, None), |(j, w)| (Some(j), Some(w)));
            if cut > 0 {
                warnings.push(Warning::new(
                    None,
                    &path,
                    format!(
                        "{cut} vertices have more than four joint weights: the strongest four are \
                         kept and renormalised"
                    ),
                ));
            }
            let targets: Vec<TargetData> = r
                .read_morph_targets()
                .map(|(p, nr, _)| {
                    (
                        p.map(|i| i.collect()).unwrap_or_else(|| vec![[0.0; 3]; n]),
                        nr.map(|i| i.collect()),
                    )
                })
                .collect();
            for (name, len) in targets
                .iter()
                .map(|t| ("a morph target's POSITION", t.0.len()))
                .chain(
                    targets
                        .iter()
                        .filter_map(|t| t.1.as_ref())
                        .map(|v| ("a morph target's NORMAL", v.len())),
                )
            {
                sized(name, len)?;
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
            let indices = triangles(n)?;
            parts.push((
                Vertices {
                    positions,
                    normals,
                    tangents,
                    uvs,
                    colors,
                    color_names,
                    joints: joints.filter(|_| weights.is_some()),
                    weights,
                    ..Default::default()
                },
                indices,
                p.material().index(),
                targets,
            ));
        }
        merge_primitives(&mut out, parts, &shared);
        // Blender and three.js keep morph target names in the mesh's extras.
        let names: Vec<String> = out
            .extras
            .get("targetNames")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|v| v.as_str().unwrap_or_default().to_string())
                    .collect()
            })
            .unwrap_or_default();
        for (k, t) in out.morph_targets.iter_mut().enumerate() {
            t.name = names
                .get(k)
                .filter(|n| !n.is_empty())
                .cloned()
                .unwrap_or_else(|| format!("target {k}"));
        }
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
            None if collision_name(&name) => Role::Collision,
            None => Role::Visual,
        };
        let camera = node
            .camera()
            .and_then(|c| read_camera(&c, &name, node.index(), &mut warnings))
            .map(|c| {
                scene.cameras.push(c);
                scene.cameras.len() - 1
            });
        let light = node.light().map(|l| {
            scene.lights.push(read_light(&l, &name));
            scene.lights.len() - 1
        });
        scene.nodes.push(model::Node {
            name,
            parent: None,
            translation: Vec3::from(t),
            rotation: Quat::from_array(r),
            scale: Vec3::from(s),
            mesh: node.mesh().map(|m| m.index()),
            skin: node.skin().map(|s| s.index()),
            camera,
            light,
            role,
            extras: ex,
        });
    }
    for skin in doc.skins() {
        let joints: Vec<usize> = skin.joints().map(|j| j.index()).collect();
        let given: Vec<[f32; 16]> = skin
            .reader(get)
            .read_inverse_bind_matrices()
            .map(|m| m.map(bytemuck::cast).collect())
            .unwrap_or_default();
        let inverse_bind = if given.len() == joints.len() {
            given
        } else {
            // Missing (or short): identity, as glTF says.
            vec![glam::Mat4::IDENTITY.to_cols_array(); joints.len()]
        };
        scene.skins.push(model::Skin {
            name: skin.name().unwrap_or("skin").to_string(),
            joints,
            inverse_bind,
        });
    }
    for node in doc.nodes() {
        for c in node.children() {
            scene.nodes[c.index()].parent = Some(node.index());
        }
    }
    for a in doc.animations() {
        let mut channels = Vec::new();
        for c in a.channels() {
            // The gltf crate's readers assume the types glTF allows for each target.
            use ::gltf::accessor::{DataType as C, Dimensions as D};
            use ::gltf::animation::Property as P;
            let path = format!("animations[{}].channels[{}]", a.index(), c.index());
            let sampler = c.sampler();
            check_accessor(
                &sampler.input(),
                &[D::Scalar],
                &[C::F32],
                &buffers,
                &format!("{path}.sampler.input"),
            )?;
            let ints = [C::F32, C::I8, C::U8, C::I16, C::U16];
            let (types, comps): (&[D], &[C]) = match c.target().property() {
                P::Translation | P::Scale => (&[D::Vec3], &[C::F32]),
                P::Rotation => (&[D::Vec4], &ints),
                P::MorphTargetWeights => (&[D::Scalar], &ints),
            };
            check_accessor(
                &sampler.output(),
                types,
                comps,
                &buffers,
                &format!("{path}.sampler.output"),
            )?;
            let r = c.reader(get);
            let (Some(times), Some(out)) = (r.read_inputs(), r.read_outputs()) else {
                continue;
            };
            let times: Vec<f32> = times.collect();
            use ::gltf::animation::util::ReadOutputs;
            let (property, values): (model::Property, Vec<f32>) = match out {
                ReadOutputs::Translations(v) => {
                    (model::Property::Translation, v.flatten().collect())
                }
                ReadOutputs::Rotations(v) => {
                    (model::Property::Rotation, v.into_f32().flatten().collect())
                }
                ReadOutputs::Scales(v) => (model::Property::Scale, v.flatten().collect()),
                ReadOutputs::MorphTargetWeights(v) => {
                    (model::Property::Weights, v.into_f32().collect())
                }
            };
            let width = match property {
                model::Property::Rotation => 4,
                model::Property::Weights => {
                    values.len().checked_div(times.len()).unwrap_or(1).max(1)
                }
                _ => 3,
            };
            // Cubic-spline keys hold (in-tangent, value, out-tangent). Translation and scale keep
            // them (an X4 .ani holds such curves); a rotation's curve, whose quaternions no Euler
            // curve follows, and weights are read as the curve sampled.
            let mut channel = model::Channel {
                node: c.target().node().index(),
                property,
                interpolation: match c.sampler().interpolation() {
                    ::gltf::animation::Interpolation::Step => model::Interpolation::Step,
                    ::gltf::animation::Interpolation::Linear => model::Interpolation::Linear,
                    ::gltf::animation::Interpolation::CubicSpline => {
                        model::Interpolation::CubicSpline
                    }
                },
                times: times.into(),
                values: values.into(),
            };
            let whole = channel.values.len() == channel.times.len() * 3 * width;
            if channel.interpolation == model::Interpolation::CubicSpline
                && (!whole
                    || matches!(
                        property,
                        model::Property::Rotation | model::Property::Weights
                    ))
            {
                channel = channel.sampled().into_owned();
            }
            channels.push(channel);
        }
        scene.animations.push(model::Animation {
            name: a.name().unwrap_or("animation").to_string(),
            channels,
            extras: extras_map(a.extras()),
        });
    }
    scene.name = doc
        .default_scene()
        .and_then(|s| s.name().map(str::to_string))
        .unwrap_or_default();
    Ok(Imported { scene, warnings })
}

/// A strip's or a fan's indices as a triangle list (each strip triangle wound as the first);
/// a list as it is.
fn triangle_list(mode: ::gltf::mesh::Mode, indices: Vec<u32>) -> Vec<u32> {
    use ::gltf::mesh::Mode;
    let n = indices.len();
    let corners = |k: usize| -> Option<[usize; 3]> {
        match mode {
            Mode::TriangleStrip if k % 2 == 0 => Some([k, k + 1, k + 2]),
            Mode::TriangleStrip => Some([k + 1, k, k + 2]),
            Mode::TriangleFan => Some([0, k + 1, k + 2]),
            _ => None,
        }
    };
    if corners(0).is_none() {
        return indices;
    }
    (0..n.saturating_sub(2))
        .filter_map(corners)
        .map(|c| c.map(|i| indices.get(i).copied().unwrap_or(0)))
        .filter(|[a, b, c]| a != b && b != c && a != c)
        .flatten()
        .collect()
}

/// One joint and weight list from the JOINTS_n/WEIGHTS_n sets, keeping each vertex's four
/// strongest influences (renormalised to add up to what they did before the cut); also how many
/// vertices lost a non-zero weight.
fn strongest_four(sets: Vec<Influences>) -> (Option<Influences>, usize) {
    let mut sets = sets.into_iter();
    let Some((mut joints, mut weights)) = sets.next() else {
        return (None, 0);
    };
    let more: Vec<_> = sets.collect();
    if more.is_empty() {
        return (Some((joints, weights)), 0);
    }
    let mut cut = 0;
    for (v, (j, w)) in joints.iter_mut().zip(weights.iter_mut()).enumerate() {
        let mut all: Vec<(u16, f32)> = j.iter().copied().zip(w.iter().copied()).collect();
        for (mj, mw) in &more {
            if let (Some(a), Some(b)) = (mj.get(v), mw.get(v)) {
                all.extend(a.iter().copied().zip(b.iter().copied()));
            }
        }
        all.retain(|x| x.1.is_finite() && x.1 > 0.0);
        all.sort_by(|a, b| b.1.total_cmp(&a.1));
        let total: f32 = all.iter().map(|x| x.1).sum();
        if all.len() > 4 {
            cut += 1;
        }
        all.truncate(4);
        let kept: f32 = all.iter().map(|x| x.1).sum();
        *j = [0; 4];
        *w = [0.0; 4];
        for (k, (jj, ww)) in all.into_iter().enumerate() {
            j[k] = jj;
            w[k] = if kept > 0.0 { ww * total / kept } else { ww };
        }
    }
    (Some((joints, weights)), cut)
}

/// Joint indices and weights of each vertex (one JOINTS_n/WEIGHTS_n pair).
type Influences = (Vec<[u16; 4]>, Vec<[f32; 4]>);

/// A perspective camera (named after its node when it has no name); an orthographic one has no
/// counterpart in the neutral model and is reported.
fn read_camera(
    c: &::gltf::Camera<'_>,
    node_name: &str,
    node: usize,
    warnings: &mut Vec<Warning>,
) -> Option<model::Camera> {
    match c.projection() {
        ::gltf::camera::Projection::Perspective(p) => Some(model::Camera {
            name: c.name().unwrap_or(node_name).to_string(),
            yfov: p.yfov(),
            znear: p.znear(),
            zfar: p.zfar(),
        }),
        ::gltf::camera::Projection::Orthographic(_) => {
            warnings.push(Warning::new(
                None,
                format!("nodes[{node}].camera"),
                "an orthographic camera is not converted (perspective cameras only)",
            ));
            None
        }
    }
}

/// A KHR_lights_punctual light (named after its node when it has no name).
fn read_light(l: &::gltf::khr_lights_punctual::Light<'_>, node_name: &str) -> model::Light {
    use ::gltf::khr_lights_punctual::Kind;
    model::Light {
        name: l.name().unwrap_or(node_name).to_string(),
        kind: match l.kind() {
            Kind::Directional => model::LightKind::Directional,
            Kind::Point => model::LightKind::Point,
            Kind::Spot {
                inner_cone_angle,
                outer_cone_angle,
            } => model::LightKind::Spot {
                inner: inner_cone_angle,
                outer: outer_cone_angle,
            },
        },
        color: l.color(),
        intensity: l.intensity(),
        range: l.range(),
    }
}

/// A texture's path, kept as a name only: import never opens it, and hangar's own exports link
/// textures found in the folders above (`../textures/x.png`). What may never come in is a name
/// that is not relative to the glTF at all (`/etc/passwd`, `C:\\x`, `file:...`); whatever opens
/// a texture later must go through [`crate::io::resolve_inside`].
fn texture_name(rel: String) -> Result<String> {
    if Path::new(&rel).is_absolute()
        || rel.starts_with(['/', '\\'])
        || rel.split(['/', '\\']).any(|c| c.contains(':'))
    {
        return Err(Error::refused(
            "",
            format!("path {rel:?} is not relative to the glTF's folder"),
        ));
    }
    Ok(rel)
}

/// Loads the glTF document, checking first what the gltf crate would otherwise panic on: a GLB
/// length under its own header, and a POSITION naming an accessor that does not exist.
fn load(bytes: &[u8]) -> Result<::gltf::Gltf> {
    if bytes.starts_with(b"glTF") {
        let length = bytes
            .get(8..12)
            .and_then(|b| b.try_into().ok())
            .map(u32::from_le_bytes)
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::Truncated,
                    Some(0),
                    "GLB.header",
                    "GLB header cut short",
                )
            })?;
        if length < 12 {
            return Err(Error::invalid(
                8,
                "GLB.header.length",
                format!("length {length} is less than the 12-byte header"),
            ));
        }
    }
    let gltf = ::gltf::Gltf::from_slice_without_validation(bytes)
        .map_err(|e| err("gltf", format!("not a valid glTF: {e}")))?;
    let root = gltf.document.as_json();
    let n = root.accessors.len();
    for (mi, m) in root.meshes.iter().enumerate() {
        for (pi, p) in m.primitives.iter().enumerate() {
            for (sem, a) in &p.attributes {
                if a.value() >= n {
                    return Err(err(
                        format!("meshes[{mi}].primitives[{pi}].attributes"),
                        format!("{sem:?} names accessor {}, there are {n}", a.value()),
                    ));
                }
            }
        }
    }
    // gltf-json does not validate channel targets, and the gltf crate unwraps them.
    let nodes = root.nodes.len();
    for (ai, a) in root.animations.iter().enumerate() {
        for (ci, c) in a.channels.iter().enumerate() {
            let path = format!("animations[{ai}].channels[{ci}].target");
            if c.target.node.value() >= nodes {
                return Err(err(
                    format!("{path}.node"),
                    format!("names node {}, there are {nodes}", c.target.node.value()),
                ));
            }
            if matches!(c.target.path, ::gltf::json::validation::Checked::Invalid) {
                return Err(err(
                    format!("{path}.path"),
                    "not translation, rotation, scale or weights",
                ));
            }
        }
    }
    let mut json = gltf.document.into_json();
    // Read here (integer attributes, meshopt streams), unknown to the gltf crate's validation.
    json.extensions_required
        .retain(|e| e != "KHR_mesh_quantization" && e != "EXT_meshopt_compression");
    let document = ::gltf::Document::from_json(json)
        .map_err(|e| err("gltf", format!("not a valid glTF: {e}")))?;
    Ok(::gltf::Gltf {
        document,
        blob: gltf.blob,
    })
}

/// Checks every accessor a primitive names against the types glTF allows for its semantic.
fn check_primitive(p: &::gltf::Primitive<'_>, buffers: &[Vec<u8>], path: &str) -> Result<()> {
    use ::gltf::accessor::{DataType as C, Dimensions as D};
    use ::gltf::Semantic as S;
    for (sem, a) in p.attributes() {
        let (types, comps): (&[D], &[C]) = match sem {
            // The integer types are KHR_mesh_quantization's (gltfpack, `--quantize`).
            S::Positions => (&[D::Vec3], &[C::F32, C::I8, C::U8, C::I16, C::U16]),
            S::Normals => (&[D::Vec3], &[C::F32, C::I8, C::I16]),
            S::Tangents => (&[D::Vec4], &[C::F32, C::I8, C::I16]),
            S::TexCoords(_) => (&[D::Vec2], &[C::F32, C::I8, C::U8, C::I16, C::U16]),
            S::Colors(_) => (&[D::Vec3, D::Vec4], &[C::F32, C::U8, C::U16]),
            S::Joints(_) => (&[D::Vec4], &[C::U8, C::U16]),
            S::Weights(_) => (&[D::Vec4], &[C::F32, C::U8, C::U16]),
            _ => continue,
        };
        check_accessor(
            &a,
            types,
            comps,
            buffers,
            &format!("{path}.attributes.{}", sem.to_string()),
        )?;
    }
    if let Some(a) = p.indices() {
        check_accessor(
            &a,
            &[D::Scalar],
            &[C::U8, C::U16, C::U32],
            buffers,
            &format!("{path}.indices"),
        )?;
    }
    Ok(())
}

/// An accessor's elements as floats, whatever type it stores them as (normalized integers are
/// scaled as glTF defines). Ranges were checked by [`check_accessor`]; a short read gives NaN.
fn floats<const N: usize>(a: &::gltf::Accessor<'_>, buffers: &[Vec<u8>]) -> Vec<[f32; N]> {
    floats_as(a, buffers, a.normalized())
}

/// [`floats`], integers read as normalized or not as `normalized` says (colours and weights are
/// normalized whatever the accessor claims, as the gltf crate reads them).
fn floats_as<const N: usize>(
    a: &::gltf::Accessor<'_>,
    buffers: &[Vec<u8>],
    normalized: bool,
) -> Vec<[f32; N]> {
    let Some(view) = a.view() else {
        return Vec::new();
    };
    let data = buffers
        .get(view.buffer().index())
        .map_or(&[][..], Vec::as_slice);
    let c = a.data_type();
    let cs = super::quantize::component_size(c);
    let stride = view.stride().unwrap_or(a.size());
    let base = view.offset() + a.offset();
    (0..a.count())
        .map(|i| {
            std::array::from_fn(|k| {
                let at = base + i * stride + k * cs;
                data.get(at..at + cs)
                    .map_or(f32::NAN, |b| super::quantize::component(b, c, normalized))
            })
        })
        .collect()
}

/// Refuses an accessor the gltf crate's reader would panic on or misread: a type or component
/// type other than those `types`/`components` allow, sparse storage, a stride shorter than an
/// element, or elements running past their buffer view or buffer.
fn check_accessor(
    a: &::gltf::Accessor<'_>,
    types: &[::gltf::accessor::Dimensions],
    components: &[::gltf::accessor::DataType],
    buffers: &[Vec<u8>],
    path: &str,
) -> Result<()> {
    let bad = |m: String| err(format!("{path} (accessor {})", a.index()), m);
    if !types.contains(&a.dimensions()) || !components.contains(&a.data_type()) {
        return Err(bad(format!(
            "type {:?} of {:?}; glTF allows {types:?} of {components:?} here",
            a.dimensions(),
            a.data_type()
        )));
    }
    if a.sparse().is_some() {
        return Err(Error::new(
            ErrorKind::Unsupported,
            None,
            path,
            "sparse accessors are not read",
        ));
    }
    let view = a.view().ok_or_else(|| bad("no bufferView".into()))?;
    let size = a.size();
    let stride = view.stride().unwrap_or(size);
    if stride < size {
        return Err(bad(format!(
            "byteStride {stride} is less than an element ({size} bytes)"
        )));
    }
    let count = a.count();
    if count == 0 {
        return Err(bad("count is 0".into()));
    }
    let end = (count - 1)
        .checked_mul(stride)
        .and_then(|x| x.checked_add(size))
        .and_then(|x| x.checked_add(a.offset()));
    if end.is_none_or(|e| e > view.length()) {
        return Err(bad(format!(
            "{count} elements run past bufferView {}",
            view.index()
        )));
    }
    let have = buffers.get(view.buffer().index()).map_or(0, Vec::len);
    if view
        .offset()
        .checked_add(view.length())
        .is_none_or(|e| e > have)
    {
        return Err(bad(format!(
            "bufferView {} runs past its buffer",
            view.index()
        )));
    }
    Ok(())
}

/// Puts a glTF mesh's primitives (each with its own vertices) into one vertex set.
/// `shared` lists parts with no vertices of their own, as (part, part holding its vertices).
fn merge_primitives(out: &mut Mesh, parts: Vec<Part>, shared: &[(usize, usize)]) {
    let total: usize = parts.iter().map(|p| p.0.len()).sum();
    let with_normals = parts.iter().any(|p| p.0.normals.is_some());
    let with_tangents = parts.iter().any(|p| p.0.tangents.is_some());
    let uv_sets = parts.iter().map(|p| p.0.uvs.len()).max().unwrap_or(0);
    let color_sets = parts.iter().map(|p| p.0.colors.len()).max().unwrap_or(0);
    let skinned = parts.iter().any(|p| p.0.joints.is_some());
    let target_count = parts.iter().map(|p| p.3.len()).max().unwrap_or(0);
    let target_normals = parts.iter().any(|p| p.3.iter().any(|t| t.1.is_some()));
    out.morph_targets = (0..target_count)
        .map(|_| model::MorphTarget {
            positions: Vec::with_capacity(total),
            normals: target_normals.then(|| Vec::with_capacity(total)),
            ..Default::default()
        })
        .collect();
    let v = &mut out.vertices;
    v.positions.reserve(total);
    v.normals = with_normals.then(|| Vec::with_capacity(total));
    v.tangents = with_tangents.then(|| Vec::with_capacity(total));
    v.uvs = vec![Vec::with_capacity(total); uv_sets];
    v.colors = vec![Vec::with_capacity(total); color_sets];
    v.color_names = parts
        .iter()
        .map(|p| &p.0.color_names)
        .find(|n| n.len() == color_sets)
        .cloned()
        .unwrap_or_default();
    v.joints = skinned.then(|| Vec::with_capacity(total));
    v.weights = skinned.then(|| Vec::with_capacity(total));
    let mut bases = Vec::with_capacity(parts.len());
    for (pi, (src, indices, material, targets)) in parts.into_iter().enumerate() {
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
        if let (Some(j), Some(w)) = (v.joints.as_mut(), v.weights.as_mut()) {
            match (src.joints, src.weights) {
                (Some(sj), Some(sw)) => {
                    j.extend(sj);
                    w.extend(sw);
                }
                _ => {
                    j.extend(vec![[0; 4]; n]);
                    w.extend(vec![[1.0, 0.0, 0.0, 0.0]; n]);
                }
            }
        }
        for (k, t) in out.morph_targets.iter_mut().enumerate() {
            let src = targets.get(k);
            t.positions
                .extend(src.map_or_else(|| vec![[0.0; 3]; n], |s| s.0.clone()));
            if let Some(d) = t.normals.as_mut() {
                d.extend(
                    src.and_then(|s| s.1.clone())
                        .unwrap_or_else(|| vec![[0.0; 3]; n]),
                );
            }
        }
        out.primitives.push(Primitive {
            indices: indices.into_iter().map(|i| i + base).collect(),
            material,
        });
    }
}

/// A morph target of one primitive: position offsets and normal offsets.
type TargetData = (Vec<[f32; 3]>, Option<Vec<[f32; 3]>>);

/// A primitive read on its own: vertices, indices, material, morph targets.
type Part = (Vertices, Vec<u32>, Option<usize>, Vec<TargetData>);

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

/// The images a glTF's materials are drawn with, as edits to write back to the game
/// (`--textures write`): each image named with its game path (as hangar names them), decoded from
/// PNG, inside the GLB, a data URI or a file beside the glTF. An image with no name, in another
/// format, or that cannot be read is left out with a warning.
pub fn images(
    bytes: &[u8],
    dir: Option<&Path>,
) -> Result<(Vec<crate::textures::Edit>, Vec<Warning>)> {
    use crate::material::Slot;
    let doc = ::gltf::Gltf::from_slice_without_validation(bytes)
        .map_err(|e| Error::invalid(0, "glTF", format!("not a glTF: {e}")))?;
    let mut edits: Vec<crate::textures::Edit> = Vec::new();
    let mut warnings = Vec::new();
    let mut skip = |what: String| warnings.push(Warning::new(None, "images", what));
    for m in doc.materials() {
        let pbr = m.pbr_metallic_roughness();
        let slots = [
            (
                Slot::BaseColor,
                pbr.base_color_texture().map(|t| t.texture()),
            ),
            (
                Slot::MetallicRoughness,
                pbr.metallic_roughness_texture().map(|t| t.texture()),
            ),
            (Slot::Normal, m.normal_texture().map(|t| t.texture())),
            (Slot::Occlusion, m.occlusion_texture().map(|t| t.texture())),
            (Slot::Emissive, m.emissive_texture().map(|t| t.texture())),
        ];
        for (slot, t) in slots {
            let Some(img) = t.map(|t| t.source()) else {
                continue;
            };
            let material = m.name().unwrap_or("").to_string();
            // hangar names each image by its game path; one without a name is new (a new
            // material's), written where its material's library entry says.
            let key = img.name().unwrap_or("");
            if edits.iter().any(|e| {
                e.key == key && e.slot == slot && (!key.is_empty() || e.material == material)
            }) {
                continue;
            }
            let data = match img.source() {
                ::gltf::image::Source::View { view, .. } => match view.buffer().source() {
                    ::gltf::buffer::Source::Bin => doc
                        .blob
                        .as_deref()
                        .and_then(|b| b.get(view.offset()..view.offset() + view.length()))
                        .map(<[u8]>::to_vec),
                    ::gltf::buffer::Source::Uri(_) => None,
                },
                ::gltf::image::Source::Uri { uri, .. } => match uri.strip_prefix("data:") {
                    Some(rest) => rest.split_once(";base64,").and_then(|(_, p)| {
                        use base64::Engine;
                        base64::engine::general_purpose::STANDARD.decode(p).ok()
                    }),
                    None => dir
                        .and_then(|d| crate::io::resolve_inside(d, &percent_decode(uri)).ok())
                        .and_then(|f| std::fs::read(f).ok()),
                },
            };
            let image = data
                .filter(|d| d.starts_with(&crate::formats::dds::PNG_MAGIC))
                .and_then(|d| crate::formats::dds::encode::read_png(&d).ok());
            match image {
                Some(image) => edits.push(crate::textures::Edit {
                    material,
                    slot,
                    key: key.to_string(),
                    image,
                }),
                None => skip(format!(
                    "image {key:?} is not a PNG hangar can read here: not written back"
                )),
            }
        }
    }
    Ok((edits, warnings))
}

/// A node named as a collision piece is one (`hull-collision`, `hull_collision2`, `collision.001`),
/// not a node whose name merely holds the word (the part `anim_ladder_collision-lod0`).
fn collision_name(name: &str) -> bool {
    let lower = crate::model::base_name(name).to_ascii_lowercase();
    lower
        .trim_end_matches(|c: char| c.is_ascii_digit())
        .ends_with("collision")
}

#[cfg(test)]
mod tests {
    use crate::model::hermite_samples;

    #[test]
    fn a_cubic_move_is_kept_as_its_keys_and_written_back_so() {
        use crate::model::Interpolation;
        // Two keys at 0 and 1 s; per key in-tangent, value, out-tangent (x only).
        let times = [0.0f32, 1.0];
        let values = [
            0.0f32, 0.0, 0.0, 0.0, 0.0, 0.0, 3.0, 0.0, 0.0, //
            -1.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0,
        ];
        let bytes: Vec<u8> = times
            .iter()
            .chain(&values)
            .flat_map(|f| f.to_le_bytes())
            .collect();
        let uri = format!(
            "data:application/octet-stream;base64,{}",
            base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &bytes)
        );
        let gltf = serde_json::json!({
            "asset": {"version": "2.0"},
            "scene": 0, "scenes": [{"nodes": [0]}], "nodes": [{"name": "door"}],
            "buffers": [{"byteLength": bytes.len(), "uri": uri}],
            "bufferViews": [{"buffer": 0, "byteLength": 8}, {"buffer": 0, "byteOffset": 8, "byteLength": 72}],
            "accessors": [
                {"bufferView": 0, "componentType": 5126, "count": 2, "type": "SCALAR", "min": [0.0], "max": [1.0]},
                {"bufferView": 1, "componentType": 5126, "count": 6, "type": "VEC3"}
            ],
            "animations": [{"name": "open", "samplers": [{"input": 0, "output": 1, "interpolation": "CUBICSPLINE"}],
                            "channels": [{"sampler": 0, "target": {"node": 0, "path": "translation"}}]}]
        });
        let read = super::from_slice(gltf.to_string().as_bytes(), None)
            .unwrap()
            .scene;
        let c = &read.animations[0].channels[0];
        assert_eq!(c.interpolation, Interpolation::CubicSpline);
        assert_eq!((&c.times[..], &c.values[..]), (&times[..], &values[..]));
        // Out at 3 a second, in at -1: the curve overshoots 1 and comes back to 2.
        let mid = c.value_at(0.5).unwrap()[0];
        // Hermite at u = 0.5: p1 / 2 + m0 / 8 - m1 / 8.
        assert!(
            (mid - (0.5 * 2.0 + 0.125 * 3.0 + 0.125)).abs() < 1e-6,
            "{mid}"
        );
        // Written as glTF: CUBICSPLINE again, the same floats.
        let glb = crate::gltf::export::to_gltf_with(&read, None, Default::default())
            .unwrap()
            .to_glb()
            .unwrap();
        let back = super::from_slice(&glb, None).unwrap().scene;
        let b = &back.animations[0].channels[0];
        assert_eq!(b.interpolation, Interpolation::CubicSpline);
        assert_eq!(&b.values[..], &values[..]);
        // A writer without curves takes it sampled: every key and 30 a second.
        let s = c.sampled();
        assert_eq!(
            (s.interpolation, s.times.len()),
            (Interpolation::Linear, 31)
        );
        assert!((s.value_at(0.5).unwrap()[0] - mid).abs() < 1e-6);
    }

    #[test]
    fn a_cubic_track_is_read_as_its_curve() {
        // 0 -> 1 over 1 s, both tangents 0: an ease in and out, 0.5 at the middle, 0.15625 at 0.25.
        let values = [0.0, 0.0, 0.0, 0.0, 1.0, 0.0];
        let (t, v) = hermite_samples(&[0.0, 1.0], &values, 1, false);
        assert_eq!(t.len(), 31);
        assert_eq!((t[0], v[0], t[30], v[30]), (0.0, 0.0, 1.0, 1.0));
        let at = |x: f32| v[t.iter().position(|&y| (y - x).abs() < 1e-4).unwrap()];
        assert!((at(0.5) - 0.5).abs() < 1e-5);
        assert!((at(1.0 / 6.0) - 0.074_074).abs() < 1e-4);
        // A rotation stays a unit quaternion between its keys.
        let h = std::f32::consts::FRAC_1_SQRT_2;
        let q = [0.0; 4]
            .iter()
            .chain(&[0.0, 0.0, 0.0, 1.0])
            .chain(&[0.0; 4])
            .chain(&[0.0; 4])
            .chain(&[0.0, h, 0.0, h])
            .chain(&[0.0; 4])
            .copied()
            .collect::<Vec<f32>>();
        let (_, r) = hermite_samples(&[0.0, 0.5], &q, 4, true);
        assert!(r
            .chunks(4)
            .all(|c| (c.iter().map(|x| x * x).sum::<f32>() - 1.0).abs() < 1e-5));
    }
}
