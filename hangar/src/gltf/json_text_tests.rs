//! `json_text::write` gives the bytes serde_json gives for the same document: on every
//! corpus model exported plain, quantized and compressed, and on a hand-made document with what
//! the hand-written paths leave to serde (extensions, a sparse accessor, odd names, NaN).

use crate::gltf::export::{to_gltf_with, Options};
use crate::gltf::json_text;
use crate::test_corpus::corpus;
use gltf_json as json;
use std::path::Path;

fn name(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

fn both(root: &json::Root) -> (Vec<u8>, Vec<u8>) {
    let mut fast = Vec::new();
    json_text::write(root, &mut fast).unwrap();
    (fast, serde_json::to_vec(root).unwrap())
}

#[test]
fn corpus_exports_are_written_as_serde_writes_them() {
    let Some(m3) = corpus("m3", "m3") else { return };
    let xmf = corpus("x4", "xmf").unwrap();
    let xac = corpus("emfx", "xac").unwrap();
    let (mut docs, mut accessors, mut bytes) = (0, 0, 0);
    for path in m3.iter().chain(&xmf).chain(&xac) {
        let data = std::fs::read(path).unwrap();
        let opened = crate::any::open(&data, path).unwrap();
        let scene = opened.document.to_scene("x", &[]).unwrap().0;
        for (quantize, compress) in [(false, false), (true, false), (false, true)] {
            let e = to_gltf_with(&scene, None, Options { quantize, compress }).unwrap();
            let (fast, serde) = both(&e.root);
            assert!(
                fast == serde,
                "{} (quantize {quantize}, compress {compress}): the JSON differs",
                name(path)
            );
            docs += 1;
            accessors += e.root.accessors.len();
            bytes += fast.len();
        }
    }
    // 82 M3s, 18 XMFs and the XACs, three ways each.
    assert_eq!(docs, 3 * (m3.len() + xmf.len() + xac.len()));
    assert!(docs >= 3 * 100, "{docs} documents");
    assert!(accessors > 100_000, "{accessors} accessors");
    assert!(bytes > 20_000_000, "{bytes} bytes of JSON");
}

/// Every field the hand-written paths write, and items they pass to serde.
const ODD: &str = r#"{
  "asset": {"version": "2.0", "generator": "test"},
  "scene": 0,
  "extras": {"root": [1, -2, 3.5]},
  "extensionsUsed": ["KHR_lights_punctual"],
  "extensions": {"KHR_lights_punctual": {"lights": [{"type": "point", "intensity": 2.0}]}},
  "buffers": [{"byteLength": 64}],
  "bufferViews": [
    {"buffer": 0, "byteLength": 48, "byteOffset": 0, "byteStride": 12, "name": "v\"iew\n", "target": 34962, "extras": {"a": 1}},
    {"buffer": 0, "byteLength": 12, "byteOffset": 48, "target": 34963},
    {"buffer": 0, "byteLength": 4, "byteOffset": 60}
  ],
  "accessors": [
    {"bufferView": 0, "count": 4, "componentType": 5126, "type": "VEC3", "min": [-1, 0, 0.25], "max": [18446744073709551615, 2, 1e30], "name": "ünïcode", "extras": {"x": null}},
    {"bufferView": 1, "byteOffset": 0, "count": 6, "componentType": 5123, "type": "SCALAR", "normalized": true},
    {"count": 4, "componentType": 5126, "type": "VEC3",
     "sparse": {"count": 1, "indices": {"bufferView": 2, "componentType": 5125}, "values": {"bufferView": 0}}},
    {"bufferView": 0, "count": 1, "componentType": 5126, "type": "MAT4", "min": [{"no": 1}]}
  ],
  "animations": [
    {"name": "clip", "extras": {"m3": {"sequence": 0}},
     "channels": [
       {"sampler": 0, "target": {"node": 0, "path": "rotation"}},
       {"sampler": 1, "target": {"node": 1, "path": "weights", "extras": {"t": true}}, "extras": {"c": 1}}
     ],
     "samplers": [
       {"input": 1, "output": 0, "interpolation": "STEP"},
       {"input": 1, "output": 0, "interpolation": "CUBICSPLINE", "extras": {"s": "x"}}
     ]},
    {"channels": [{"sampler": 0, "target": {"node": 0, "path": "scale"}}],
     "samplers": [{"input": 1, "output": 0}]}
  ],
  "nodes": [
    {"name": "root\\tab\t", "children": [1, 2], "rotation": [0, 0, 0, 1], "scale": [1, 2, 3], "translation": [0.1, -0.0, 3e-20], "extras": {"hangar": {"m3_axes": "Z up"}}},
    {"mesh": 0, "skin": 0, "weights": [0.5, 0.25], "matrix": [1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1]},
    {"camera": 0, "children": []},
    {"extensions": {"KHR_lights_punctual": {"light": 0}}, "name": "lamp"}
  ],
  "meshes": [{"primitives": [{"attributes": {"POSITION": 0}, "indices": 1}], "weights": [0, 0]}],
  "skins": [{"joints": [0]}],
  "cameras": [{"type": "perspective", "perspective": {"yfov": 0.8, "znear": 0.1}}],
  "scenes": [{"nodes": [0, 3]}]
}"#;

#[test]
fn odd_documents_are_written_as_serde_writes_them() {
    let mut root: json::Root = serde_json::from_str(ODD).unwrap();
    let (fast, serde) = both(&root);
    assert_eq!(
        String::from_utf8(fast).unwrap(),
        String::from_utf8(serde).unwrap()
    );
    // Non-finite floats become null, as serde_json writes them.
    root.nodes[0].translation = Some([f32::NAN, f32::INFINITY, -0.0]);
    root.nodes[1].weights = Some(vec![f32::NEG_INFINITY, 1.5]);
    let (fast, serde) = both(&root);
    assert_eq!(fast, serde);
    let text = String::from_utf8(fast).unwrap();
    assert!(text.contains(r#""translation":[null,null,-0.0]"#), "{text}");
    assert!(text.contains(r#""weights":[null,1.5]"#), "{text}");
    assert!(text.contains(r#""name":"root\\tab\t""#), "{text}");
    assert!(
        text.contains(r#""max":[18446744073709551615,2,1e+30]"#),
        "{text}"
    );
}

#[test]
fn an_invalid_item_is_refused_as_serde_refuses_it() {
    let mut root: json::Root = serde_json::from_str(ODD).unwrap();
    root.accessors[0].type_ = json::validation::Checked::Invalid;
    let mut fast = Vec::new();
    let e = json_text::write(&root, &mut fast).unwrap_err();
    assert_eq!(
        e.to_string(),
        serde_json::to_vec(&root).unwrap_err().to_string()
    );
    assert_eq!(e.to_string(), "invalid item");
}
