//! `--quantize` and `--compress` (KHR_mesh_quantization, EXT_meshopt_compression): every corpus
//! M3 and XMF written each way reads back with the same counts, the same positions, and normals,
//! texture coordinates and rotation keys within one step of their integer type; outputs go to
//! the validator; sizes shrink.

mod common;
use common::{corpus, gltf_out, name};
use hangar::model::{Property, Scene};
use hangar::GltfOptions as Options;

fn scene_of(path: &std::path::Path) -> Scene {
    let bytes = std::fs::read(path).unwrap();
    let opened = common::open(&bytes, path).unwrap();
    let mut scene = opened.to_scene().unwrap().0;
    // No image URIs: the textures are not beside these files, and the validator would look.
    for m in &mut scene.materials {
        m.textures = Default::default();
    }
    scene
}

fn close(a: f32, b: f32, step: f32) -> bool {
    (a - b).abs() <= step || (a.is_nan() && b.is_nan())
}

/// `back` against `first` as the encoding allows; returns how many values were compared.
fn compare(first: &Scene, back: &Scene, quantized: bool, file: &str) -> usize {
    let mut compared = 0;
    let exported: Vec<_> = first
        .meshes
        .iter()
        .filter(|m| !m.vertices.positions.is_empty())
        .collect();
    assert_eq!(exported.len(), back.meshes.len(), "{file}: meshes");
    for (a, b) in exported.iter().zip(&back.meshes) {
        let (va, vb) = (&a.vertices, &b.vertices);
        let tris =
            |m: &hangar::model::Mesh| m.primitives.iter().map(|p| p.indices.len()).sum::<usize>();
        assert_eq!(tris(a), tris(b), "{file}: {} corners", a.name);
        // Positions stay floats, bit for bit (the importer may reorder nothing here).
        assert_eq!(va.positions, vb.positions, "{file}: {} positions", a.name);
        compared += va.positions.len() * 3;
        let (n_step, uv_step) = if quantized {
            (1.5 / 127.0, 1.0 / 32767.0)
        } else {
            (0.0, 0.0)
        };
        if let (Some(na), Some(nb)) = (&va.normals, &vb.normals) {
            for (x, y) in na.iter().zip(nb) {
                // Rounding picks the nearest unit-length neighbour: within 1.5 steps.
                assert!(
                    (0..3).all(|k| close(x[k].clamp(-1.0, 1.0), y[k], n_step + 1e-6)),
                    "{file}: normal {x:?} came back {y:?}"
                );
            }
            compared += na.len() * 3;
        }
        // Weights and colours that are bytes in the game file go out as normalized bytes when
        // not quantized, and come back as the very same floats.
        if !quantized {
            assert_eq!(va.weights, vb.weights, "{file}: {} weights", a.name);
            assert_eq!(va.colors, vb.colors, "{file}: {} colours", a.name);
            compared += va.weights.as_ref().map_or(0, |w| w.len() * 4);
        }
        assert_eq!(va.uvs.len(), vb.uvs.len(), "{file}: uv sets");
        for (sa, sb) in va.uvs.iter().zip(&vb.uvs) {
            for (x, y) in sa.iter().zip(sb) {
                assert!(
                    close(x[0], y[0], uv_step) && close(x[1], y[1], uv_step),
                    "{file}: uv {x:?} came back {y:?}"
                );
            }
            compared += sa.len() * 2;
        }
    }
    assert_eq!(
        first.animations.len(),
        back.animations.len(),
        "{file}: animations"
    );
    for (a, b) in first.animations.iter().zip(&back.animations) {
        assert_eq!(
            a.channels.len(),
            b.channels.len(),
            "{file}: {} channels",
            a.name
        );
        for (ca, cb) in a.channels.iter().zip(&b.channels) {
            assert_eq!(ca.times, cb.times, "{file}: key times");
            let step = if quantized && ca.property == Property::Rotation {
                1.0 / 32767.0
            } else {
                0.0
            };
            assert_eq!(ca.values.len(), cb.values.len());
            for (x, y) in ca.values.iter().zip(&cb.values) {
                assert!(close(*x, *y, step), "{file}: key {x} came back {y}");
            }
            compared += ca.values.len();
        }
    }
    compared
}

#[test]
fn corpus_models_quantized_and_compressed_read_back_within_one_step() {
    let (Some(m3), Some(xmf)) = (corpus("m3", "m3"), corpus("x4", "xmf")) else {
        return;
    };
    let out = gltf_out("gltf_encoding");
    let ways = [
        ("plain", Options::default()),
        (
            "q",
            Options {
                quantize: true,
                compress: false,
            },
        ),
        (
            "c",
            Options {
                quantize: false,
                compress: true,
            },
        ),
        (
            "qc",
            Options {
                quantize: true,
                compress: true,
            },
        ),
    ];
    let mut sizes = [0usize; 4];
    let mut files = 0;
    // Skinned meshes whose plain output holds its weights as normalized bytes, and in all.
    let (mut byte_weights, mut skinned) = (0, 0);
    let mut compared = 0;
    // Every XMF; every fourth M3 keeps the debug-build test short (the others run in the bench).
    for f in xmf.iter().chain(m3.iter().step_by(4)) {
        let first = scene_of(f);
        files += 1;
        for (k, (tag, opts)) in ways.iter().enumerate() {
            let (glb, _) = common::to_glb_with(&first, *opts).unwrap();
            let root = common::glb_root(&glb);
            sizes[k] += glb.len();
            if k == 0 {
                for m in &root.meshes {
                    let Some(p) = m.primitives.first() else {
                        continue;
                    };
                    let weights = gltf_json::validation::Checked::Valid(
                        gltf_json::mesh::Semantic::Weights(0),
                    );
                    if let Some(a) = p.attributes.get(&weights) {
                        let acc = &root.accessors[a.value()];
                        skinned += 1;
                        let u8 = gltf_json::accessor::ComponentType::U8;
                        if matches!(acc.component_type, gltf_json::validation::Checked::Valid(c) if c.0 == u8)
                        {
                            assert!(acc.normalized, "{}: byte weights are normalized", name(f));
                            byte_weights += 1;
                        }
                    }
                }
            }
            let used = &root.extensions_used;
            if !opts.compress {
                assert!(!used.iter().any(|x| x == "EXT_meshopt_compression"));
            }
            if !opts.quantize {
                assert!(!used.iter().any(|x| x == "KHR_mesh_quantization"));
            }
            std::fs::write(out.join(format!("{}.{tag}.glb", name(f))), &glb).unwrap();
            let back =
                common::from_glb(&glb).unwrap_or_else(|e| panic!("{} ({tag}): {e}", name(f)));
            compared += compare(
                &first,
                &back,
                opts.quantize,
                &format!("{} ({tag})", name(f)),
            );
        }
    }
    eprintln!(
        "{files} files, {compared} values compared; bytes plain {} quantized {} compressed {} both {}",
        sizes[0], sizes[1], sizes[2], sizes[3]
    );
    assert!(compared > 100_000);
    // The corpus M3s' weights are bytes adding up to 255 in all but a few regions.
    eprintln!("{byte_weights} of {skinned} skinned meshes with byte weights");
    assert!(
        skinned > 20 && byte_weights * 10 >= skinned * 9,
        "{byte_weights} of {skinned}"
    );
    // Each way shrinks the whole set; both together most.
    assert!(sizes[1] < sizes[0] && sizes[2] < sizes[0], "{sizes:?}");
    assert!(sizes[3] < sizes[1] && sizes[3] < sizes[2], "{sizes:?}");
    assert!(sizes[3] * 2 < sizes[0], "{sizes:?}");
}

#[test]
fn a_meshopt_stream_claiming_more_than_the_file_can_hold_is_refused() {
    // A compressed view claiming 2^40 elements: refused before any allocation.
    let json = r#"{"asset":{"version":"2.0"},
        "extensionsUsed":["EXT_meshopt_compression"],"extensionsRequired":["EXT_meshopt_compression"],
        "buffers":[{"byteLength":8},{"byteLength":16,"extensions":{"EXT_meshopt_compression":{"fallback":true}}}],
        "bufferViews":[{"buffer":1,"byteOffset":0,"byteLength":16,"extensions":{"EXT_meshopt_compression":
            {"buffer":0,"byteOffset":0,"byteLength":8,"byteStride":4,"count":1099511627776,"mode":"ATTRIBUTES"}}}]}"#;
    let mut glb = Vec::new();
    let mut j = json.as_bytes().to_vec();
    j.resize(j.len().next_multiple_of(4), b' ');
    let total = 12 + 8 + j.len() + 8 + 8;
    glb.extend_from_slice(b"glTF");
    glb.extend_from_slice(&2u32.to_le_bytes());
    glb.extend_from_slice(&(total as u32).to_le_bytes());
    glb.extend_from_slice(&(j.len() as u32).to_le_bytes());
    glb.extend_from_slice(b"JSON");
    glb.extend_from_slice(&j);
    glb.extend_from_slice(&8u32.to_le_bytes());
    glb.extend_from_slice(b"BIN\0");
    glb.extend_from_slice(&[0; 8]);
    let e = common::open(&glb, std::path::Path::new("x.glb")).unwrap_err();
    assert_eq!(e.path, "bufferViews[0].extensions.EXT_meshopt_compression");
    assert!(e.message.contains("more than this file can hold"), "{e}");
}
