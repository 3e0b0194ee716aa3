use crate::error::{Error, ErrorKind, Result, Warning};
use crate::model::{Role, Scene};
use gltf_json as json;
use json::validation::Checked::Valid;
use json::validation::USize64;
use json::{accessor, buffer, mesh, Index, Root};
use serde_json::{json as j, Map, Value};
use std::collections::BTreeMap;

/// A glTF document and the bytes of its one buffer.
pub struct Export {
    pub root: Root,
    pub bin: Vec<u8>,
    pub warnings: Vec<Warning>,
}

struct Builder {
    root: Root,
    bin: Vec<u8>,
}

impl Builder {
    fn view(&mut self, bytes: &[u8], target: buffer::Target) -> Index<buffer::View> {
        while self.bin.len() % 4 != 0 {
            self.bin.push(0);
        }
        let offset = self.bin.len();
        self.bin.extend_from_slice(bytes);
        self.root.push(buffer::View {
            buffer: Index::new(0),
            byte_length: USize64::from(bytes.len()),
            byte_offset: Some(USize64::from(offset)),
            byte_stride: None,
            name: None,
            target: Some(Valid(target)),
            extensions: None,
            extras: Default::default(),
        })
    }

    fn accessor(
        &mut self,
        bytes: &[u8],
        count: usize,
        component: accessor::ComponentType,
        ty: accessor::Type,
        bounds: Option<(Value, Value)>,
        target: buffer::Target,
    ) -> Index<accessor::Accessor> {
        let view = self.view(bytes, target);
        let (min, max) = bounds.map_or((None, None), |(a, b)| (Some(a), Some(b)));
        self.root.push(accessor::Accessor {
            buffer_view: Some(view),
            byte_offset: None,
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

    fn floats<const N: usize>(
        &mut self,
        data: &[[f32; N]],
        ty: accessor::Type,
        bounds: bool,
    ) -> Index<accessor::Accessor> {
        let b = bounds.then(|| {
            let mut lo = [f32::MAX; N];
            let mut hi = [f32::MIN; N];
            for v in data {
                for k in 0..N {
                    lo[k] = lo[k].min(v[k]);
                    hi[k] = hi[k].max(v[k]);
                }
            }
            (j!(lo.to_vec()), j!(hi.to_vec()))
        });
        self.accessor(
            bytemuck::cast_slice(data),
            data.len(),
            accessor::ComponentType::F32,
            ty,
            b,
            buffer::Target::ArrayBuffer,
        )
    }
}

fn extras(map: &Map<String, Value>) -> json::Extras {
    if map.is_empty() {
        return None;
    }
    serde_json::value::to_raw_value(&Value::Object(map.clone())).ok()
}

/// Builds the glTF document of `scene`. Non-finite values are replaced by 0 (glTF forbids them in
/// bounded accessors) and reported.
pub fn to_gltf(scene: &Scene) -> Result<Export> {
    // The buffer's size is known up front: one allocation instead of a doubling series.
    let bytes: usize = scene
        .meshes
        .iter()
        .map(|m| {
            let v = &m.vertices;
            let per = 12
                + v.normals.as_ref().map_or(0, |_| 12)
                + v.tangents.as_ref().map_or(0, |_| 16)
                + 8 * v.uvs.len()
                + 16 * (v.colors.len() + v.custom.len());
            let indices: usize = m.primitives.iter().map(|p| p.indices.len() * 4 + 4).sum();
            per * v.len() + indices + 64
        })
        .sum();
    let mut b = Builder {
        root: Root::default(),
        bin: Vec::with_capacity(bytes),
    };
    let mut warnings = Vec::new();
    b.root.asset.generator = Some(format!("hangar {}", env!("CARGO_PKG_VERSION")));

    for m in &scene.materials {
        let mut mat = json::Material {
            name: Some(m.name.clone()),
            ..Default::default()
        };
        mat.extras = extras(&m.extras);
        b.root.push(mat);
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
        let mut bad = 0usize;
        let positions: Vec<[f32; 3]> = v
            .positions
            .iter()
            .map(|p| {
                if p.iter().all(|c| c.is_finite()) {
                    *p
                } else {
                    bad += 1;
                    p.map(|c| if c.is_finite() { c } else { 0.0 })
                }
            })
            .collect();
        if bad > 0 {
            warnings.push(Warning::new(
                None,
                format!("meshes[{mi}].positions"),
                format!("{bad} positions with NaN or infinity set to 0"),
            ));
        }
        let mut attributes = BTreeMap::new();
        attributes.insert(
            Valid(mesh::Semantic::Positions),
            b.floats(&positions, accessor::Type::Vec3, true),
        );
        if let Some(ns) = &v.normals {
            check("normals", ns.len())?;
            attributes.insert(
                Valid(mesh::Semantic::Normals),
                b.floats(ns, accessor::Type::Vec3, false),
            );
        }
        if let Some(ts) = &v.tangents {
            check("tangents", ts.len())?;
            attributes.insert(
                Valid(mesh::Semantic::Tangents),
                b.floats(ts, accessor::Type::Vec4, false),
            );
        }
        for (k, s) in v.uvs.iter().enumerate() {
            check("uvs", s.len())?;
            attributes.insert(
                Valid(mesh::Semantic::TexCoords(k as u32)),
                b.floats(s, accessor::Type::Vec2, false),
            );
        }
        for (k, s) in v.colors.iter().enumerate() {
            check("colors", s.len())?;
            attributes.insert(
                Valid(mesh::Semantic::Colors(k as u32)),
                b.floats(s, accessor::Type::Vec4, false),
            );
        }
        for c in &v.custom {
            check(&c.name, c.values.len())?;
            attributes.insert(
                Valid(mesh::Semantic::Extras(c.name.clone())),
                b.floats(&c.values, accessor::Type::Vec4, false),
            );
        }
        let mut primitives = Vec::with_capacity(prims.len());
        for p in prims {
            let count = p.indices.len() - p.indices.len() % 3;
            let idx = &p.indices[..count];
            // 0xFFFF is the primitive-restart value glTF forbids in u16 indices.
            let accessor = if n <= u16::MAX as usize {
                let small: Vec<u16> = idx.iter().map(|&i| i as u16).collect();
                b.accessor(
                    bytemuck::cast_slice(&small),
                    count,
                    accessor::ComponentType::U16,
                    accessor::Type::Scalar,
                    None,
                    buffer::Target::ElementArrayBuffer,
                )
            } else {
                b.accessor(
                    bytemuck::cast_slice(idx),
                    count,
                    accessor::ComponentType::U32,
                    accessor::Type::Scalar,
                    None,
                    buffer::Target::ElementArrayBuffer,
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
                targets: None,
            });
        }
        let idx = b.root.push(json::Mesh {
            extensions: None,
            extras: extras(&m.extras),
            name: Some(m.name.clone()),
            primitives,
            weights: None,
        });
        mesh_index.push(Some(idx));
    }

    let mut children: Vec<Vec<Index<json::Node>>> = vec![Vec::new(); scene.nodes.len()];
    let mut roots = Vec::new();
    for (i, n) in scene.nodes.iter().enumerate() {
        match n.parent {
            Some(p) if p < scene.nodes.len() && p != i => children[p].push(Index::new(i as u32)),
            _ => roots.push(Index::new(i as u32)),
        }
    }
    for (i, n) in scene.nodes.iter().enumerate() {
        let mut ex = n.extras.clone();
        if n.role == Role::Collision {
            ex.insert("hangar".into(), j!({ "collision": true }));
        }
        let identity = n.translation == glam::Vec3::ZERO
            && n.rotation == glam::Quat::IDENTITY
            && n.scale == glam::Vec3::ONE;
        b.root.push(json::Node {
            camera: None,
            children: (!children[i].is_empty()).then(|| children[i].clone()),
            extensions: None,
            extras: extras(&ex),
            matrix: None,
            mesh: n.mesh.and_then(|m| mesh_index.get(m).copied().flatten()),
            name: Some(n.name.clone()),
            rotation: (!identity && n.rotation != glam::Quat::IDENTITY)
                .then(|| json::scene::UnitQuaternion(n.rotation.to_array())),
            scale: (!identity && n.scale != glam::Vec3::ONE).then(|| n.scale.to_array()),
            translation: (!identity && n.translation != glam::Vec3::ZERO)
                .then(|| n.translation.to_array()),
            skin: None,
            weights: None,
        });
    }
    let s = b.root.push(json::Scene {
        extensions: None,
        extras: Default::default(),
        name: Some(scene.name.clone()),
        nodes: roots,
    });
    b.root.scene = Some(s);
    while b.bin.len() % 4 != 0 {
        b.bin.push(0);
    }
    if !b.bin.is_empty() {
        b.root.push(json::Buffer {
            byte_length: USize64::from(b.bin.len()),
            name: None,
            uri: None,
            extensions: None,
            extras: Default::default(),
        });
    }
    Ok(Export {
        root: b.root,
        bin: b.bin,
        warnings,
    })
}

impl Export {
    /// Binary glTF: the JSON and the buffer in one file.
    pub fn to_glb(&self) -> Result<Vec<u8>> {
        let json = serde_json::to_vec(&self.root)
            .map_err(|e| Error::new(ErrorKind::Invalid, None, "gltf", e.to_string()))?;
        let glb = ::gltf::binary::Glb {
            header: ::gltf::binary::Header {
                magic: *b"glTF",
                version: 2,
                length: 0,
            },
            json: json.into(),
            bin: (!self.bin.is_empty()).then(|| self.bin.as_slice().into()),
        };
        glb.to_vec()
            .map_err(|e| Error::new(ErrorKind::Invalid, None, "gltf", e.to_string()))
    }

    /// Text glTF with the buffer embedded as a base64 data URI, so one file holds everything.
    pub fn to_gltf_text(&self) -> Result<Vec<u8>> {
        use base64::Engine;
        let mut root = self.root.clone();
        if let Some(buf) = root.buffers.first_mut() {
            buf.uri = Some(format!(
                "data:application/octet-stream;base64,{}",
                base64::engine::general_purpose::STANDARD.encode(&self.bin)
            ));
        }
        serde_json::to_vec_pretty(&root)
            .map_err(|e| Error::new(ErrorKind::Invalid, None, "gltf", e.to_string()))
    }
}

/// `scene` as a .glb file.
pub fn to_glb(scene: &Scene) -> Result<(Vec<u8>, Vec<Warning>)> {
    let e = to_gltf(scene)?;
    Ok((e.to_glb()?, e.warnings))
}
