use super::{data_color_attribute, quantize};
use crate::error::{Error, ErrorKind, Result, Warning};
use crate::model::{Interpolation, LightKind, Property, Role, Scene};
use accessor::ComponentType::{I16, I8, U8};
use gltf_json as json;
use json::validation::Checked::Valid;
use json::validation::USize64;
use json::{accessor, buffer, mesh, Index, Root};
use serde_json::{json as j, Map, Value};
use std::borrow::Cow;
use std::collections::BTreeMap;

/// A glTF document and its one buffer, kept as the pieces it is made of (mostly borrowed from the
/// scene): the buffer is assembled once, straight into the output file.
pub struct Export<'s> {
    pub root: Root,
    pieces: Vec<(usize, Cow<'s, [u8]>)>,
    bin_len: usize,
    pub warnings: Vec<Warning>,
}

/// How a glTF output is encoded (`--quantize`, `--compress`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// Integer vertex attributes and rotation keys where they keep the game's precision
    /// (KHR_mesh_quantization; see `gltf::quantize`).
    pub quantize: bool,
    /// Vertex, index, skin and animation data compressed with meshoptimizer
    /// (EXT_meshopt_compression; see `gltf::meshopt`).
    pub compress: bool,
}

struct Builder<'s> {
    root: Root,
    pieces: Vec<(usize, Cow<'s, [u8]>)>,
    len: usize,
    quantize: bool,
    /// Some attribute uses a type only KHR_mesh_quantization allows.
    needs_quantization: bool,
    shared: Shared,
}

/// Accessors with no target (animation keys) can lie in one buffer view rather than a view each:
/// an M3 with hundreds of clips had a fifth of its JSON in those views. Not when compressing,
/// which encodes view by view.
enum Shared {
    Off,
    /// The next such accessor opens the view.
    Ready,
    /// The view, and where it starts in the buffer.
    In(Index<buffer::View>, usize),
}

/// A float array as bytes, borrowed when it was borrowed.
fn as_bytes<'s, const N: usize>(data: Cow<'s, [[f32; N]]>) -> Cow<'s, [u8]> {
    match data {
        Cow::Borrowed(d) => Cow::Borrowed(bytemuck::cast_slice(d)),
        Cow::Owned(d) => Cow::Owned(bytemuck::cast_slice(&d).to_vec()),
    }
}

impl<'s> Builder<'s> {
    fn view(
        &mut self,
        bytes: Cow<'s, [u8]>,
        target: Option<buffer::Target>,
    ) -> Index<buffer::View> {
        let offset = self.len.next_multiple_of(4);
        let length = bytes.len();
        self.len = offset + length;
        self.pieces.push((offset, bytes));
        self.root.push(buffer::View {
            buffer: Index::new(0),
            byte_length: USize64::from(length),
            byte_offset: Some(USize64::from(offset)),
            byte_stride: None,
            name: None,
            target: target.map(Valid),
            extensions: None,
            extras: Default::default(),
        })
    }

    fn accessor(
        &mut self,
        bytes: Cow<'s, [u8]>,
        count: usize,
        component: accessor::ComponentType,
        ty: accessor::Type,
        bounds: Option<(Value, Value)>,
        target: Option<buffer::Target>,
    ) -> Index<accessor::Accessor> {
        let (view, byte_offset) = match (&self.shared, target) {
            (Shared::Ready, None) => {
                // The view starts where `view` places these bytes.
                let start = self.len.next_multiple_of(4);
                let v = self.view(bytes, None);
                self.shared = Shared::In(v, start);
                (v, None)
            }
            (&Shared::In(v, start), None) => {
                let offset = self.len.next_multiple_of(4);
                self.len = offset + bytes.len();
                self.pieces.push((offset, bytes));
                (v, Some(USize64::from(offset - start)))
            }
            _ => (self.view(bytes, target), None),
        };
        let (min, max) = bounds.map_or((None, None), |(a, b)| (Some(a), Some(b)));
        self.root.push(accessor::Accessor {
            buffer_view: Some(view),
            byte_offset,
            count: USize64::from(count),
            component_type: Valid(accessor::GenericComponentType(component)),
            extensions: None,
            extras: Default::default(),
            type_: Valid(ty),
            min,
            max,
            name: None,
            normalized: false,
            sparse: None,
        })
    }

    /// Normalized integers (`bytes` holds `count` elements); `stride` for elements padded to 4.
    fn normalized(
        &mut self,
        bytes: Vec<u8>,
        count: usize,
        component: accessor::ComponentType,
        ty: accessor::Type,
        stride: Option<usize>,
        target: Option<buffer::Target>,
    ) -> Index<accessor::Accessor> {
        let a = self.accessor(Cow::Owned(bytes), count, component, ty, None, target);
        if let Some(acc) = self.root.accessors.get_mut(a.value()) {
            acc.normalized = true;
            if let (Some(v), Some(st)) = (acc.buffer_view, stride) {
                if let Some(view) = self.root.buffer_views.get_mut(v.value()) {
                    view.byte_stride = Some(buffer::Stride(st));
                }
            }
        }
        a
    }

    fn floats<const N: usize>(
        &mut self,
        data: Cow<'s, [[f32; N]]>,
        ty: accessor::Type,
        bounds: bool,
    ) -> Index<accessor::Accessor> {
        self.floats_for(data, ty, bounds, Some(buffer::Target::ArrayBuffer))
    }

    /// A VEC4 vertex attribute (colours, weights) as the normalized bytes `bytes` when there are
    /// some, else as its floats.
    fn unorm8_or_floats(
        &mut self,
        bytes: Option<Vec<u8>>,
        v: &'s [[f32; 4]],
    ) -> Index<accessor::Accessor> {
        match bytes {
            Some(bytes) => self.normalized(
                bytes,
                v.len(),
                U8,
                accessor::Type::Vec4,
                None,
                Some(buffer::Target::ArrayBuffer),
            ),
            None => self.floats(v.into(), accessor::Type::Vec4, false),
        }
    }

    /// Floats for a vertex attribute (`target` ArrayBuffer) or for skins and animations (`None`).
    fn floats_for<const N: usize>(
        &mut self,
        data: Cow<'s, [[f32; N]]>,
        ty: accessor::Type,
        bounds: bool,
        target: Option<buffer::Target>,
    ) -> Index<accessor::Accessor> {
        let b = bounds.then(|| {
            let mut lo = [f32::MAX; N];
            let mut hi = [f32::MIN; N];
            // Compare-and-select, which vectorizes (`f32::min` keeps NaN rules that do not); a NaN
            // is skipped either way.
            for v in data.iter() {
                for k in 0..N {
                    if v[k] <= lo[k] {
                        lo[k] = v[k];
                    }
                    if v[k] >= hi[k] {
                        hi[k] = v[k];
                    }
                }
            }
            (j!(lo.to_vec()), j!(hi.to_vec()))
        });
        let count = data.len();
        self.accessor(
            as_bytes(data),
            count,
            accessor::ComponentType::F32,
            ty,
            b,
            target,
        )
    }

    fn texture(
        &mut self,
        uri: &str,
        images: &mut Vec<(String, Index<json::Texture>)>,
        placed: Option<&'s crate::textures::Placement>,
    ) -> Index<json::Texture> {
        if let Some((_, t)) = images.iter().find(|(u, _)| u == uri) {
            return *t;
        }
        // An image keeps the game's path as its name, so the way back can find it.
        let embedded = placed.and_then(|p| p.embedded.get(uri));
        let linked = placed.and_then(|p| p.linked.get(uri));
        let image = match (embedded, linked) {
            (_, Some(rel)) => self.root.push(json::Image {
                buffer_view: None,
                mime_type: Some(json::image::MimeType("image/png".into())),
                name: Some(uri.to_string()),
                uri: Some(uri_escape(rel)),
                extensions: None,
                extras: Default::default(),
            }),
            (Some(png), None) => {
                let view = self.view(Cow::Borrowed(png.as_slice()), None);
                self.root.push(json::Image {
                    buffer_view: Some(view),
                    mime_type: Some(json::image::MimeType("image/png".into())),
                    name: Some(uri.to_string()),
                    uri: None,
                    extensions: None,
                    extras: Default::default(),
                })
            }
            (None, None) => self.root.push(json::Image {
                buffer_view: None,
                mime_type: None,
                name: Some(uri.to_string()),
                uri: Some(uri_escape(uri)),
                extensions: None,
                extras: Default::default(),
            }),
        };
        let t = self.root.push(json::Texture {
            name: None,
            sampler: None,
            source: image,
            extensions: None,
            extras: Default::default(),
        });
        images.push((uri.to_string(), t));
        t
    }
}

/// A relative file path as a URI reference: `/` separators, and spaces and other reserved
/// characters percent-encoded.
fn uri_escape(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.replace('\\', "/").bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn extras(map: &Map<String, Value>) -> json::Extras {
    if map.is_empty() {
        return None;
    }
    serde_json::value::to_raw_value(map).ok()
}

/// The extension a specular colour texture travels in (Blender's importer and three.js read it).
const SPECULAR: &str = "KHR_materials_specular";

/// A material's name, factors, alpha and extras, as glTF has them; its textures are added by
/// slot.
fn material(m: &crate::model::Material) -> json::Material {
    use crate::model::Alpha;
    let look = &m.look;
    let (alpha_mode, alpha_cutoff) = match look.alpha {
        Alpha::Opaque => (json::material::AlphaMode::Opaque, None),
        Alpha::Mask(c) => (
            json::material::AlphaMode::Mask,
            Some(json::material::AlphaCutoff(c.clamp(0.0, 1.0))),
        ),
        Alpha::Blend => (json::material::AlphaMode::Blend, None),
    };
    let unit = |v: f32| {
        if v.is_finite() {
            v.clamp(0.0, 1.0)
        } else {
            1.0
        }
    };
    json::Material {
        name: Some(m.name.clone()),
        alpha_mode: Valid(alpha_mode),
        alpha_cutoff,
        double_sided: look.double_sided,
        pbr_metallic_roughness: json::material::PbrMetallicRoughness {
            base_color_factor: json::material::PbrBaseColorFactor(look.base_color.map(unit)),
            metallic_factor: json::material::StrengthFactor(unit(look.metallic)),
            roughness_factor: json::material::StrengthFactor(unit(look.roughness)),
            ..Default::default()
        },
        extras: extras(&m.extras),
        ..Default::default()
    }
}

/// [`to_gltf`] with the materials' images (by the paths the materials name) embedded in the buffer
/// or named by URI, as `placed` says, encoded as `opts` says.
pub fn to_gltf_with<'s>(
    scene: &'s Scene,
    placed: Option<&'s crate::textures::Placement>,
    opts: Options,
) -> Result<Export<'s>> {
    let mut b = Builder {
        root: Root::default(),
        pieces: Vec::new(),
        len: 0,
        quantize: opts.quantize,
        needs_quantization: false,
        shared: Shared::Off,
    };
    let mut warnings = Vec::new();
    b.root.asset.generator = Some(format!("hangar {}", env!("CARGO_PKG_VERSION")));
    // Room for every accessor and view up front: these vectors of large structures otherwise
    // grow (and move) step by step, a few percent of an M3 batch.
    let channels: usize = scene.animations.iter().map(|a| a.channels.len()).sum();
    let primitives: usize = scene.meshes.iter().map(|m| m.primitives.len()).sum();
    let expected = 2 * channels + 10 * primitives + scene.skins.len();
    b.root.accessors.reserve(expected);
    b.root.buffer_views.reserve(expected);
    b.pieces.reserve(expected);

    let mut images = Vec::new();
    let mut specular_used = false;
    for m in &scene.materials {
        let mut mat = material(m);
        for (slot, recipe) in crate::material::images(m) {
            let key = recipe.key();
            // A packed image exists only where the textures were resolved into one.
            let made = placed
                .is_some_and(|p| p.embedded.contains_key(&key) || p.linked.contains_key(&key));
            if matches!(recipe, crate::material::Recipe::MetalRoughness { .. }) && !made {
                continue;
            }
            let index = b.texture(&key, &mut images, placed);
            let info = json::texture::Info {
                index,
                tex_coord: 0,
                extensions: None,
                extras: Default::default(),
            };
            use crate::material::Slot;
            match slot {
                Slot::BaseColor => mat.pbr_metallic_roughness.base_color_texture = Some(info),
                Slot::MetallicRoughness => {
                    mat.pbr_metallic_roughness.metallic_roughness_texture = Some(info)
                }
                Slot::Emissive => {
                    mat.emissive_texture = Some(info);
                    mat.emissive_factor = json::material::EmissiveFactor(m.look.emissive);
                }
                Slot::Normal => {
                    mat.normal_texture = Some(json::material::NormalTexture {
                        index,
                        scale: 1.0,
                        tex_coord: 0,
                        extensions: None,
                        extras: Default::default(),
                    })
                }
                Slot::Occlusion => {
                    mat.occlusion_texture = Some(json::material::OcclusionTexture {
                        index,
                        strength: json::material::StrengthFactor(1.0),
                        tex_coord: 0,
                        extensions: None,
                        extras: Default::default(),
                    })
                }
                Slot::Specular => {
                    specular_used = true;
                    let ext = mat.extensions.get_or_insert_with(Default::default);
                    ext.others.insert(
                        SPECULAR.into(),
                        j!({ "specularColorTexture": { "index": index.value() } }),
                    );
                }
            }
        }
        b.root.push(mat);
    }
    if specular_used {
        b.root.extensions_used.push(SPECULAR.into());
    }

    let mut mesh_index: Vec<Option<Index<json::Mesh>>> = Vec::with_capacity(scene.meshes.len());
    for (mi, m) in scene.meshes.iter().enumerate() {
        let v = &m.vertices;
        let n = v.len();
        let prims: Vec<_> = m
            .primitives
            .iter()
            .filter(|p| p.indices.len() >= 3)
            .collect();
        if n == 0 || prims.is_empty() {
            warnings.push(Warning::new(
                None,
                format!("meshes[{mi}]"),
                format!("mesh {:?} has no triangles: its node gets no mesh", m.name),
            ));
            mesh_index.push(None);
            continue;
        }
        let check = |name: &str, len: usize| -> Result<()> {
            if len != n {
                return Err(Error::new(
                    ErrorKind::Invalid,
                    None,
                    format!("meshes[{mi}].{name}"),
                    format!("{len} values for {n} vertices"),
                ));
            }
            Ok(())
        };
        // Copied only when something must be replaced.
        let bad = v
            .positions
            .iter()
            .filter(|p| p.iter().any(|c| !c.is_finite()))
            .count();
        let positions: std::borrow::Cow<'_, [[f32; 3]]> = if bad == 0 {
            v.positions.as_slice().into()
        } else {
            warnings.push(Warning::new(
                None,
                format!("meshes[{mi}].positions"),
                format!("{bad} positions with NaN or infinity set to 0"),
            ));
            v.positions
                .iter()
                .map(|p| p.map(|c| if c.is_finite() { c } else { 0.0 }))
                .collect::<Vec<_>>()
                .into()
        };
        let mut attributes = BTreeMap::new();
        attributes.insert(
            Valid(mesh::Semantic::Positions),
            b.floats(positions, accessor::Type::Vec3, true),
        );
        let vertex = Some(buffer::Target::ArrayBuffer);
        if let Some(ns) = &v.normals {
            check("normals", ns.len())?;
            let a = if b.quantize {
                b.needs_quantization = true;
                let bytes = quantize::unit_vectors(ns);
                b.normalized(bytes, n, I8, accessor::Type::Vec3, Some(4), vertex)
            } else {
                b.floats(ns.as_slice().into(), accessor::Type::Vec3, false)
            };
            attributes.insert(Valid(mesh::Semantic::Normals), a);
        }
        if let Some(ts) = &v.tangents {
            check("tangents", ts.len())?;
            let a = if b.quantize {
                b.needs_quantization = true;
                let bytes = quantize::unit_vectors(ts);
                b.normalized(bytes, n, I8, accessor::Type::Vec4, None, vertex)
            } else {
                b.floats(ts.as_slice().into(), accessor::Type::Vec4, false)
            };
            attributes.insert(Valid(mesh::Semantic::Tangents), a);
        }
        for (k, s) in v.uvs.iter().enumerate() {
            check("uvs", s.len())?;
            let a = match b.quantize.then(|| quantize::tex_coords(s)).flatten() {
                Some((bytes, component)) => {
                    // Signed texture coordinates are KHR_mesh_quantization's.
                    b.needs_quantization |= component == I16;
                    b.normalized(bytes, n, component, accessor::Type::Vec2, None, vertex)
                }
                None => b.floats(s.as_slice().into(), accessor::Type::Vec2, false),
            };
            attributes.insert(Valid(mesh::Semantic::TexCoords(k as u32)), a);
        }
        // A set that is shader data (it has a role) is an application attribute, kept exact: as a
        // COLOR_n every viewer would multiply it into the base colour.
        let mut tints = 0;
        for (k, s) in v.colors.iter().enumerate() {
            check("colors", s.len())?;
            let role = v.color_names.get(k).filter(|r| !r.is_empty());
            let bytes = match (role, b.quantize) {
                (None, true) => quantize::colors(s),
                (Some(_), true) => quantize::exact_unorm8(s, false).or_else(|| quantize::colors(s)),
                (_, false) => quantize::exact_unorm8(s, false),
            };
            let a = b.unorm8_or_floats(bytes, s);
            let semantic = match role {
                Some(r) => mesh::Semantic::Extras(data_color_attribute(r)),
                None => {
                    tints += 1;
                    mesh::Semantic::Colors(tints - 1)
                }
            };
            attributes.insert(Valid(semantic), a);
        }
        if let (Some(js), Some(ws)) = (&v.joints, &v.weights) {
            check("joints", js.len())?;
            check("weights", ws.len())?;
            let small = js.iter().all(|j| j.iter().all(|&x| x < 256));
            let (bytes, component) = if small {
                // Collected as arrays (one exact-size pass), then flattened in place.
                let b8: Vec<[u8; 4]> = js.iter().map(|j| j.map(|x| x as u8)).collect();
                let b8 = b8.into_flattened();
                (Cow::Owned(b8), accessor::ComponentType::U8)
            } else {
                (
                    Cow::Borrowed(bytemuck::cast_slice(js.as_slice())),
                    accessor::ComponentType::U16,
                )
            };
            let ja = b.accessor(
                bytes,
                js.len(),
                component,
                accessor::Type::Vec4,
                None,
                Some(buffer::Target::ArrayBuffer),
            );
            attributes.insert(Valid(mesh::Semantic::Joints(0)), ja);
            let bytes = match b.quantize {
                true => Some(quantize::weights(ws)),
                false => quantize::exact_unorm8(ws, true),
            };
            let wa = b.unorm8_or_floats(bytes, ws);
            attributes.insert(Valid(mesh::Semantic::Weights(0)), wa);
        }
        for c in &v.custom {
            check(&c.name, c.values.len())?;
            attributes.insert(
                Valid(mesh::Semantic::Extras(c.name.clone())),
                b.floats(c.values.as_slice().into(), accessor::Type::Vec4, false),
            );
        }
        // Morph targets: position (with the bounds glTF requires) and normal offsets, shared by the
        // primitives; names in extras.targetNames, as Blender and three.js read them.
        let mut targets = Vec::new();
        for (ti, t) in m.morph_targets.iter().enumerate() {
            check(&format!("morph_targets[{ti}].positions"), t.positions.len())?;
            let mut mt = mesh::MorphTarget {
                positions: Some(b.floats(
                    t.positions.as_slice().into(),
                    accessor::Type::Vec3,
                    true,
                )),
                normals: None,
                tangents: None,
            };
            if let (Some(ns), true) = (&t.normals, v.normals.is_some()) {
                check(&format!("morph_targets[{ti}].normals"), ns.len())?;
                mt.normals = Some(b.floats(ns.as_slice().into(), accessor::Type::Vec3, false));
            }
            targets.push(mt);
        }
        let mut primitives = Vec::with_capacity(prims.len());
        for p in prims {
            let count = p.indices.len() - p.indices.len() % 3;
            let idx = &p.indices[..count];
            // 0xFFFF is the primitive-restart value glTF forbids in u16 indices.
            let accessor = if n <= u16::MAX as usize {
                let mut small = Vec::with_capacity(count * 2);
                for &i in idx {
                    small.extend_from_slice(&(i as u16).to_le_bytes());
                }
                b.accessor(
                    Cow::Owned(small),
                    count,
                    accessor::ComponentType::U16,
                    accessor::Type::Scalar,
                    None,
                    Some(buffer::Target::ElementArrayBuffer),
                )
            } else {
                b.accessor(
                    Cow::Borrowed(bytemuck::cast_slice(idx)),
                    count,
                    accessor::ComponentType::U32,
                    accessor::Type::Scalar,
                    None,
                    Some(buffer::Target::ElementArrayBuffer),
                )
            };
            primitives.push(mesh::Primitive {
                attributes: attributes.clone(),
                extensions: None,
                extras: Default::default(),
                indices: Some(accessor),
                material: p
                    .material
                    .filter(|&m| m < scene.materials.len())
                    .map(|m| Index::new(m as u32)),
                mode: Valid(mesh::Mode::Triangles),
                targets: (!targets.is_empty()).then(|| targets.clone()),
            });
        }
        let mut mesh_extras = m.extras.clone();
        if !m.morph_targets.is_empty() {
            mesh_extras.insert(
                "targetNames".into(),
                j!(m.morph_targets
                    .iter()
                    .map(|t| t.name.clone())
                    .collect::<Vec<_>>()),
            );
        }
        let idx = b.root.push(json::Mesh {
            extensions: None,
            extras: extras(&mesh_extras),
            name: Some(m.name.clone()),
            primitives,
            weights: (!m.morph_targets.is_empty()).then(|| vec![0.0; m.morph_targets.len()]),
        });
        mesh_index.push(Some(idx));
    }

    let skins = export_skins(&mut b, scene);
    let cameras: Vec<Index<json::Camera>> = scene
        .cameras
        .iter()
        .map(|c| {
            b.root.push(json::Camera {
                name: Some(c.name.clone()),
                orthographic: None,
                perspective: Some(json::camera::Perspective {
                    aspect_ratio: None,
                    yfov: c.yfov,
                    zfar: c.zfar.filter(|f| *f > c.znear),
                    znear: c.znear,
                    extensions: None,
                    extras: Default::default(),
                }),
                type_: Valid(json::camera::Type::Perspective),
                extensions: None,
                extras: Default::default(),
            })
        })
        .collect();
    if !scene.lights.is_empty() {
        use json::extensions::scene::khr_lights_punctual as klp;
        let lights = scene
            .lights
            .iter()
            .map(|l| klp::Light {
                color: l.color,
                extensions: None,
                extras: Default::default(),
                intensity: l.intensity,
                name: Some(l.name.clone()),
                range: l.range,
                spot: match l.kind {
                    LightKind::Spot { inner, outer } => Some(klp::Spot {
                        inner_cone_angle: inner,
                        outer_cone_angle: outer,
                    }),
                    _ => None,
                },
                type_: Valid(match l.kind {
                    LightKind::Directional => klp::Type::Directional,
                    LightKind::Point => klp::Type::Point,
                    LightKind::Spot { .. } => klp::Type::Spot,
                }),
            })
            .collect();
        b.root.extensions = Some(json::extensions::Root {
            khr_lights_punctual: Some(json::extensions::root::KhrLightsPunctual { lights }),
            others: Default::default(),
        });
        b.root.extensions_used.push("KHR_lights_punctual".into());
    }

    b.root.nodes.reserve(scene.nodes.len());
    let mut children: Vec<Vec<Index<json::Node>>> = vec![Vec::new(); scene.nodes.len()];
    let mut roots = Vec::new();
    for (i, n) in scene.nodes.iter().enumerate() {
        match n.parent {
            Some(p) if p < scene.nodes.len() && p != i => children[p].push(Index::new(i as u32)),
            _ => roots.push(Index::new(i as u32)),
        }
    }
    for (i, n) in scene.nodes.iter().enumerate() {
        // Copied only when a role is added to it.
        let mut ex = Cow::Borrowed(&n.extras);
        if n.role == Role::Collision {
            ex.to_mut()
                .insert("hangar".into(), j!({ "collision": true }));
        }
        let identity = n.translation == glam::Vec3::ZERO
            && n.rotation == glam::Quat::IDENTITY
            && n.scale == glam::Vec3::ONE;
        b.root.push(json::Node {
            camera: n.camera.and_then(|c| cameras.get(c).copied()),
            children: (!children[i].is_empty()).then(|| std::mem::take(&mut children[i])),
            extensions: n.light.filter(|&l| l < scene.lights.len()).map(|l| {
                json::extensions::scene::Node {
                    khr_lights_punctual: Some(
                        json::extensions::scene::khr_lights_punctual::KhrLightsPunctual {
                            light: Index::new(l as u32),
                        },
                    ),
                    others: Default::default(),
                }
            }),
            extras: extras(&ex),
            matrix: None,
            mesh: n.mesh.and_then(|m| mesh_index.get(m).copied().flatten()),
            name: Some(n.name.clone()),
            rotation: (!identity && n.rotation != glam::Quat::IDENTITY)
                .then(|| json::scene::UnitQuaternion(n.rotation.to_array())),
            scale: (!identity && n.scale != glam::Vec3::ONE).then(|| n.scale.to_array()),
            translation: (!identity && n.translation != glam::Vec3::ZERO)
                .then(|| n.translation.to_array()),
            skin: n
                .skin
                .filter(|_| n.mesh.is_some())
                .and_then(|s| skins.get(s).copied()),
            weights: None,
        });
    }
    if !opts.compress {
        b.shared = Shared::Ready;
    }
    export_animations(&mut b, scene, &mut warnings);
    if let Shared::In(v, start) = b.shared {
        b.root.buffer_views[v.value()].byte_length = USize64::from(b.len - start);
    }
    b.shared = Shared::Off;
    let s = b.root.push(json::Scene {
        extensions: None,
        extras: Default::default(),
        name: Some(scene.name.clone()),
        nodes: roots,
    });
    b.root.scene = Some(s);
    if b.needs_quantization {
        for list in [&mut b.root.extensions_used, &mut b.root.extensions_required] {
            list.push("KHR_mesh_quantization".into());
        }
    }
    let bin_len = b.len.next_multiple_of(4);
    if bin_len > 0 {
        b.root.push(json::Buffer {
            byte_length: USize64::from(bin_len),
            name: None,
            uri: None,
            extensions: None,
            extras: Default::default(),
        });
    }
    let mut e = Export {
        root: b.root,
        pieces: b.pieces,
        bin_len,
        warnings,
    };
    if opts.compress {
        super::meshopt::compress(&mut e.root, &mut e.pieces, &mut e.bin_len)?;
    }
    Ok(e)
}

impl<'s> Export<'s> {
    /// The buffer's bytes.
    pub fn bin(&self) -> Vec<u8> {
        laid_out(Vec::new(), self.borrowed(), self.bin_len).to_vec()
    }

    fn borrowed(&self) -> Vec<(usize, Cow<'_, [u8]>)> {
        self.pieces
            .iter()
            .map(|(o, b)| (*o, Cow::Borrowed(&b[..])))
            .collect()
    }

    /// Binary glTF: a 12-byte header, the JSON chunk padded with spaces, the BIN chunk.
    #[cfg(test)]
    pub fn to_glb(&self) -> Result<Vec<u8>> {
        Ok(laid_out(self.glb_head()?, self.borrowed(), self.bin_len).to_vec())
    }

    /// [`Self::to_glb`] as the slices it is made of: the head (header, JSON chunk, BIN chunk
    /// header), then the buffer's pieces, still borrowed from the scene, with their alignment
    /// zeros. The file is written from these without being assembled (that copy, and the fresh
    /// memory it faulted in, was a third of an XMF batch).
    pub fn into_glb_pieces(self) -> Result<crate::io::Pieces<'s>> {
        Ok(laid_out(self.glb_head()?, self.pieces, self.bin_len))
    }

    /// The .glb up to the BIN chunk's bytes.
    fn glb_head(&self) -> Result<Vec<u8>> {
        // The JSON goes straight after the 20 header bytes, into room sized from the document
        // (growing it step by step, then copying it behind the header, was a tenth of an M3 batch).
        let r = &self.root;
        let items = r.accessors.len() + r.buffer_views.len() + r.nodes.len() + r.materials.len();
        // A channel and its sampler take about 110 bytes.
        let channels: usize = r.animations.iter().map(|a| a.channels.len()).sum();
        let mut head = Vec::with_capacity(4096 + 160 * items + 110 * channels);
        head.extend_from_slice(&[0; 20]);
        super::json_text::write(r, &mut head)
            .map_err(|e| Error::new(ErrorKind::Invalid, None, "gltf", e.to_string()))?;
        head.resize(head.len().next_multiple_of(4), b' ');
        let json_len = head.len() - 20;
        let bin_chunk = if self.bin_len > 0 {
            8 + self.bin_len
        } else {
            0
        };
        let total = head.len() + bin_chunk;
        let total32 = u32::try_from(total).map_err(|_| {
            Error::new(
                ErrorKind::Refused,
                None,
                "gltf",
                "a .glb holds at most 4 GiB",
            )
        })?;
        head[..4].copy_from_slice(b"glTF");
        head[4..8].copy_from_slice(&2u32.to_le_bytes());
        head[8..12].copy_from_slice(&total32.to_le_bytes());
        head[12..16].copy_from_slice(&(json_len as u32).to_le_bytes());
        head[16..20].copy_from_slice(b"JSON");
        if self.bin_len > 0 {
            head.extend_from_slice(&(self.bin_len as u32).to_le_bytes());
            head.extend_from_slice(b"BIN\0");
        }
        Ok(head)
    }

    /// Text glTF with the buffer embedded as a base64 data URI, so one file holds everything.
    pub fn to_gltf_text(&self) -> Result<Vec<u8>> {
        use base64::Engine;
        let mut root = self.root.clone();
        if let Some(buf) = root.buffers.first_mut() {
            buf.uri = Some(format!(
                "data:application/octet-stream;base64,{}",
                base64::engine::general_purpose::STANDARD.encode(self.bin())
            ));
        }
        serde_json::to_vec_pretty(&root)
            .map_err(|e| Error::new(ErrorKind::Invalid, None, "gltf", e.to_string()))
    }
}

/// `head`, then a buffer of `len` bytes made of `pieces` (at their offsets, which never overlap)
/// with zeros in the gaps.
fn laid_out<'p>(
    head: Vec<u8>,
    mut pieces: Vec<(usize, Cow<'p, [u8]>)>,
    len: usize,
) -> crate::io::Pieces<'p> {
    static ZEROS: [u8; 4] = [0; 4];
    let gap = |n: usize| -> Option<Cow<'p, [u8]>> {
        match n {
            0 => None,
            1..=4 => Some(Cow::Borrowed(&ZEROS[..n])),
            _ => Some(Cow::Owned(vec![0; n])),
        }
    };
    pieces.sort_by_key(|(offset, _)| *offset);
    let mut out = vec![Cow::Owned(head)];
    let mut at = 0;
    for (offset, bytes) in pieces {
        debug_assert!(offset >= at, "buffer pieces overlap");
        out.extend(gap(offset.saturating_sub(at)));
        at = offset + bytes.len();
        out.push(bytes);
    }
    out.extend(gap(len.saturating_sub(at)));
    crate::io::Pieces(out)
}

fn export_skins<'s>(b: &mut Builder<'s>, scene: &'s Scene) -> Vec<Index<json::Skin>> {
    scene
        .skins
        .iter()
        .map(|s| {
            // glTF wants finite matrices whose last row is exactly 0 0 0 1.
            let fixed: Vec<[f32; 16]> = s
                .inverse_bind
                .iter()
                .map(|m| {
                    let mut m = m.map(|v| if v.is_finite() { v } else { 0.0 });
                    m[3] = 0.0;
                    m[7] = 0.0;
                    m[11] = 0.0;
                    m[15] = 1.0;
                    m
                })
                .collect();
            let ibm = b.floats_for(fixed.into(), accessor::Type::Mat4, false, None);
            b.root.push(json::Skin {
                extensions: None,
                extras: Default::default(),
                inverse_bind_matrices: Some(ibm),
                joints: s.joints.iter().map(|&j| Index::new(j as u32)).collect(),
                name: Some(s.name.clone()),
                skeleton: None,
            })
        })
        .collect()
}

/// One glTF animation a clip; channels whose times or values do not fit are dropped and reported.
fn export_animations<'s>(b: &mut Builder<'s>, scene: &'s Scene, warnings: &mut Vec<Warning>) {
    use json::animation;
    use std::collections::hash_map::Entry;
    // Channels with the same key times (an M3 sequence's bones, mostly) share one input accessor:
    // a smaller JSON and buffer, and less to write. Keyed by count and end times, then compared
    // (hashing every time array was 3% of an M3 batch).
    // Channels reading the very same times (a scene may share one range, see `model::Keys`) are
    // matched by address first, with no comparison.
    // The first times of a key and then any others (a list of one allocated a block an input).
    type Input<'s> = (&'s [u8], Index<accessor::Accessor>);
    type Inputs<'s> = (Input<'s>, Vec<Input<'s>>);
    // Sized for every channel up front: grown step by step, rehashing was 3% of an M3 batch.
    let channels = scene.animations.iter().map(|a| a.channels.len()).sum();
    let mut inputs: std::collections::HashMap<(usize, u32, u32), Inputs<'s>> =
        std::collections::HashMap::with_capacity(channels);
    let mut outputs: std::collections::HashMap<(usize, usize, u8), Index<accessor::Accessor>> =
        std::collections::HashMap::with_capacity(channels);
    for (ai, a) in scene.animations.iter().enumerate() {
        let mut channels = Vec::with_capacity(a.channels.len());
        let mut samplers = Vec::with_capacity(a.channels.len());
        for (ci, c) in a.channels.iter().enumerate() {
            let width = match c.property {
                Property::Rotation => 4,
                Property::Weights => scene
                    .nodes
                    .get(c.node)
                    .and_then(|n| n.mesh)
                    .and_then(|m| scene.meshes.get(m))
                    .map_or(0, |m| m.morph_targets.len()),
                _ => 3,
            };
            let n = c.times.len();
            let rising = c.times.windows(2).all(|w| w[0] < w[1]);
            // A cubic spline's key is its in-tangent, value and out-tangent.
            let per_key = match c.interpolation {
                Interpolation::CubicSpline => 3,
                _ => 1,
            };
            if n == 0
                || width == 0
                || c.values.len() != n * width * per_key
                || !rising
                || c.node >= scene.nodes.len()
            {
                warnings.push(Warning::new(
                    None,
                    format!("animations[{ai}].channels[{ci}]"),
                    format!(
                        "{n} key times (rising: {rising}) for {} values: channel dropped",
                        c.values.len()
                    ),
                ));
                continue;
            }
            let lo = c.times[0];
            let hi = c.times[n - 1];
            let times: &'s [u8] = bytemuck::cast_slice(&c.times);
            let new_input = |b: &mut Builder<'s>| {
                b.accessor(
                    Cow::Borrowed(times),
                    n,
                    accessor::ComponentType::F32,
                    accessor::Type::Scalar,
                    Some((j!([lo]), j!([hi]))),
                    None,
                )
            };
            // One lookup of the key: new times take the entry, known ones are searched there.
            let input = match inputs.entry((n, lo.to_bits(), hi.to_bits())) {
                Entry::Vacant(e) => e.insert(((times, new_input(b)), Vec::new())).0 .1,
                Entry::Occupied(mut e) => {
                    let (first, more) = e.get_mut();
                    let all = || std::iter::once(&*first).chain(more.iter());
                    let found = all()
                        .find(|(t, _)| std::ptr::eq(*t, times))
                        .or_else(|| all().find(|(t, _)| *t == times))
                        .map(|&(_, i)| i);
                    found.unwrap_or_else(|| {
                        let i = new_input(b);
                        more.push((times, i));
                        i
                    })
                }
            };
            let (count, ty) = match c.property {
                Property::Weights => (n * width * per_key, accessor::Type::Scalar),
                Property::Rotation => (n * per_key, accessor::Type::Vec4),
                _ => (n * per_key, accessor::Type::Vec3),
            };
            // Channels reading the very same floats (M3 bones sharing an anim id) share one
            // output accessor: the slice's address names them, as the scene outlives the export.
            let shared_output = (c.values.as_ptr() as usize, c.values.len(), c.property as u8);
            let output = *outputs.entry(shared_output).or_insert_with(|| {
                if b.quantize && c.property == Property::Rotation && per_key == 1 {
                    b.normalized(quantize::rotations(&c.values), count, I16, ty, None, None)
                } else {
                    b.accessor(
                        Cow::Borrowed(bytemuck::cast_slice(&c.values)),
                        count,
                        accessor::ComponentType::F32,
                        ty,
                        None,
                        None,
                    )
                }
            });
            samplers.push(animation::Sampler {
                extensions: None,
                extras: Default::default(),
                input,
                interpolation: Valid(match c.interpolation {
                    Interpolation::Step => animation::Interpolation::Step,
                    Interpolation::Linear => animation::Interpolation::Linear,
                    Interpolation::CubicSpline => animation::Interpolation::CubicSpline,
                }),
                output,
            });
            channels.push(animation::Channel {
                sampler: Index::new(samplers.len() as u32 - 1),
                target: animation::Target {
                    extensions: None,
                    extras: Default::default(),
                    node: Index::new(c.node as u32),
                    path: Valid(match c.property {
                        Property::Translation => animation::Property::Translation,
                        Property::Rotation => animation::Property::Rotation,
                        Property::Scale => animation::Property::Scale,
                        Property::Weights => animation::Property::MorphTargetWeights,
                    }),
                },
                extensions: None,
                extras: Default::default(),
            });
        }
        if channels.is_empty() {
            warnings.push(Warning::new(
                None,
                format!("animations[{ai}]"),
                format!("animation {:?} has no channel left: not exported", a.name),
            ));
            continue;
        }
        b.root.push(json::Animation {
            extensions: None,
            extras: extras(&a.extras),
            channels,
            name: Some(a.name.clone()),
            samplers,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::{to_gltf_with, Options};
    use crate::model::{Animation, Channel, Interpolation, Node, Property, Scene};

    fn two_clips() -> Scene {
        let channel = |property, width: usize, n: usize| Channel {
            node: 0,
            property,
            interpolation: Interpolation::Linear,
            times: (0..n).map(|i| i as f32 * 0.5).collect(),
            values: (0..n * width)
                .map(|i| if width == 4 { 0.5 } else { i as f32 })
                .collect(),
        };
        Scene {
            nodes: vec![Node::new("bone")],
            animations: vec![
                Animation {
                    name: "Stand".into(),
                    channels: vec![
                        channel(Property::Translation, 3, 3),
                        channel(Property::Rotation, 4, 3),
                    ],
                    extras: Default::default(),
                },
                Animation {
                    name: "Walk".into(),
                    channels: vec![channel(Property::Scale, 3, 5)],
                    extras: Default::default(),
                },
            ],
            ..Default::default()
        }
    }

    #[test]
    fn channels_reading_the_same_keys_share_their_accessors() {
        use crate::model::Keys;
        use std::sync::Arc;
        // Two bones driven by one track (as M3 bones sharing an anim id): one range of one buffer.
        let pool = Arc::new(vec![0.0, 1.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let channel = |node| Channel {
            node,
            property: Property::Translation,
            interpolation: Interpolation::Linear,
            times: Keys::shared(&pool, 0..2).unwrap(),
            values: Keys::shared(&pool, 2..8).unwrap(),
        };
        // A third channel with equal floats of its own keeps its own output.
        let own = Channel {
            values: vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0].into(),
            ..channel(2)
        };
        let scene = Scene {
            nodes: vec![Node::new("a"), Node::new("b"), Node::new("c")],
            animations: vec![Animation {
                name: "Walk".into(),
                channels: vec![channel(0), channel(1), own],
                extras: Default::default(),
            }],
            ..Default::default()
        };
        let e = to_gltf_with(&scene, None, Options::default()).unwrap();
        let a = &e.root.animations[0];
        let io: Vec<(u32, u32)> = a
            .samplers
            .iter()
            .map(|s| (s.input.value() as u32, s.output.value() as u32))
            .collect();
        assert_eq!(io, vec![(0, 1), (0, 1), (0, 2)]);
        assert_eq!(e.root.accessors.len(), 3);
        // 2 times and two outputs of 6 floats in the buffer, not three.
        assert_eq!(e.bin().len(), 4 * (2 + 6 + 6));
    }

    #[test]
    fn animation_keys_share_one_buffer_view_unless_compressed() {
        let scene = two_clips();
        let e = to_gltf_with(&scene, None, Options::default()).unwrap();
        // Inputs: 3 keys (shared by Stand's two channels) and 5 keys; outputs: three.
        assert_eq!(e.root.accessors.len(), 5);
        assert_eq!(e.root.buffer_views.len(), 1);
        let offsets: Vec<u64> = e
            .root
            .accessors
            .iter()
            .map(|a| a.byte_offset.map_or(0, |o| o.0))
            .collect();
        // times 12 bytes, 3 vec3 36, 3 quats 48, times 20, 5 vec3 60: laid end to end.
        assert_eq!(offsets, vec![0, 12, 48, 96, 116]);
        assert_eq!(e.root.buffer_views[0].byte_length.0, 176);
        let glb = e.to_glb().unwrap();
        let back = gltf::Gltf::from_slice(&glb).unwrap();
        assert_eq!(back.animations().count(), 2);

        let c = to_gltf_with(
            &scene,
            None,
            Options {
                compress: true,
                ..Default::default()
            },
        );
        #[cfg(feature = "native")]
        {
            let c = c.unwrap();
            assert_eq!(c.root.accessors.len(), 5);
            assert!(c.root.accessors.iter().all(|a| a.byte_offset.is_none()));
        }
        // Without meshoptimizer --compress is refused, never silently dropped.
        #[cfg(not(feature = "native"))]
        match c {
            Err(e) => assert_eq!(
                (e.kind, e.message.as_str()),
                (
                    crate::error::ErrorKind::Unsupported,
                    "--compress (EXT_meshopt_compression) needs the native build of hangar (meshoptimizer is C++)"
                )
            ),
            Ok(_) => panic!("--compress gave a file without meshoptimizer"),
        }
    }
}
