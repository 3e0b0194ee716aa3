//! Hostile inputs fuzzing and hand-made files found (issue 10): each is built here by code and must
//! give a clean error of the right kind (or a correct result), never a panic, a hang, a huge
//! allocation or a read outside the input's folder. Runs in debug and release (`cargo test --release`).

mod common;
use common::{f32s, octet_uri};
use hangar::ErrorKind;
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};

const F32: u32 = 5126;
const U8: u32 = 5121;
const U16: u32 = 5123;

/// A fresh folder under the target's tmp dir for one test.
fn scratch(test: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("hostile")
        .join(test);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn pad4(b: &mut Vec<u8>) {
    while b.len() % 4 != 0 {
        b.push(0);
    }
}

/// One triangle: accessor 0 POSITION (VEC3 float, with min/max), accessor 1 u16 indices, plus the
/// `extra` accessors given as (bytes, componentType, type, count). One buffer holds all of them.
fn gltf_doc(extra: &[(Vec<u8>, u32, &str, u32)]) -> (Value, Vec<u8>) {
    let pos = [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 2.0, 0.0];
    let idx: Vec<u8> = [0u16, 1, 2].iter().flat_map(|i| i.to_le_bytes()).collect();
    let mut arrays = vec![(f32s(&pos), F32, "VEC3", 3), (idx, U16, "SCALAR", 3)];
    arrays.extend(extra.iter().cloned());
    let (mut blob, mut views, mut accs) = (Vec::new(), Vec::new(), Vec::new());
    for (i, (data, ct, ty, count)) in arrays.iter().enumerate() {
        pad4(&mut blob);
        views.push(json!({"buffer": 0, "byteOffset": blob.len(), "byteLength": data.len()}));
        let mut a = json!({"bufferView": i, "componentType": ct, "count": count, "type": ty});
        if i == 0 {
            a["min"] = json!([0.0, 0.0, 0.0]);
            a["max"] = json!([1.0, 2.0, 0.0]);
        }
        accs.push(a);
        blob.extend_from_slice(data);
    }
    pad4(&mut blob);
    let doc = json!({
        "asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}],
        "nodes": [{"name": "part", "mesh": 0}],
        "meshes": [{"name": "part", "primitives": [{"attributes": {"POSITION": 0}, "indices": 1, "mode": 4}]}],
        "buffers": [{"byteLength": blob.len()}], "bufferViews": views, "accessors": accs,
    });
    (doc, blob)
}

/// The document as .gltf text with its buffer as a data: uri (or `uri` when given).
fn gltf_text(doc: &Value, blob: &[u8], uri: Option<&str>) -> Vec<u8> {
    let mut d = doc.clone();
    d["buffers"][0]["uri"] = match uri {
        Some(u) => json!(u),
        None => json!(octet_uri(blob)),
    };
    serde_json::to_vec(&d).unwrap()
}

/// Opens `bytes` as `name` and converts it to each of `outs`: the first error, or Ok.
fn open_convert(bytes: &[u8], path: &Path, outs: &[&str]) -> hangar::Result<()> {
    let opened = common::open(bytes, path)?;
    for out in outs {
        common::convert(&opened, &path.with_file_name(out))?;
    }
    Ok(())
}

fn gltf_error(test: &str, bytes: &[u8]) -> hangar::Error {
    let p = scratch(test).join("in.gltf");
    std::fs::write(&p, bytes).unwrap();
    open_convert(bytes, &p, &["out.xmf", "part-collision.xmf", "out.xac"]).unwrap_err()
}

#[test]
fn case1_position_of_the_wrong_type_is_refused() {
    let (mut doc, blob) = gltf_doc(&[]);
    doc["accessors"][0]["type"] = json!("SCALAR");
    doc["accessors"][0]["componentType"] = json!(U8);
    let e = gltf_error("case1a", &gltf_text(&doc, &blob, None));
    assert_eq!(e.kind, ErrorKind::Invalid, "{e}");
    assert!(e.path.contains("POSITION"), "{e}");
    assert!(e.message.contains("Scalar"), "{e}");
}

#[test]
fn case1_indices_naming_a_float_accessor_are_refused() {
    let (mut doc, blob) = gltf_doc(&[]);
    doc["meshes"][0]["primitives"][0]["indices"] = json!(0);
    let e = gltf_error("case1b", &gltf_text(&doc, &blob, None));
    assert_eq!(e.kind, ErrorKind::Invalid, "{e}");
    assert!(e.path.ends_with("indices (accessor 0)"), "{e}");
}

#[test]
fn case1_texcoord_of_u32_is_refused() {
    let uv: Vec<u8> = [0u32, 0, 1, 0, 0, 1]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let (mut doc, blob) = gltf_doc(&[(uv, 5125, "VEC2", 3)]);
    doc["meshes"][0]["primitives"][0]["attributes"]["TEXCOORD_0"] = json!(2);
    let e = gltf_error("case1c", &gltf_text(&doc, &blob, None));
    assert_eq!(e.kind, ErrorKind::Invalid, "{e}");
    assert!(e.path.contains("TEXCOORD_0"), "{e}");
}

#[test]
fn case2_attribute_naming_a_missing_accessor_is_refused() {
    let (mut doc, blob) = gltf_doc(&[]);
    doc["meshes"][0]["primitives"][0]["attributes"]["POSITION"] = json!(7);
    let e = gltf_error("case2", &gltf_text(&doc, &blob, None));
    assert_eq!(e.kind, ErrorKind::Invalid, "{e}");
    assert!(e.message.contains("accessor 7, there are 2"), "{e}");
}

#[test]
fn case3_collision_with_only_degenerate_triangles_is_refused() {
    let (mut doc, mut blob) = gltf_doc(&[]);
    // Three vertices on one point: welding leaves no triangle.
    blob[..36].copy_from_slice(&f32s(&[1.0; 9]));
    doc["accessors"][0]["min"] = json!([1.0, 1.0, 1.0]);
    doc["accessors"][0]["max"] = json!([1.0, 1.0, 1.0]);
    let bytes = gltf_text(&doc, &blob, None);
    let p = scratch("case3").join("in.gltf");
    std::fs::write(&p, &bytes).unwrap();
    let opened = common::open(&bytes, &p).unwrap();
    // A visual mesh keeps the triangle as it is; the collision mesh has none left.
    let (xmf, _) = common::convert(&opened, &p.with_file_name("out.xmf")).unwrap();
    assert_eq!(&xmf[..4], b"XUMF");
    let e = common::convert(&opened, &p.with_file_name("part-collision.xmf")).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Refused, "{e}");
    assert!(e.message.contains("no triangles left"), "{e}");
    assert!(e.message.contains("in.gltf"), "names the input: {e}");
}

#[test]
fn case5_normal_vec4_is_refused() {
    let n = f32s(&[0.0, 0.0, 1.0, 1.0].repeat(3));
    let (mut doc, blob) = gltf_doc(&[(n, F32, "VEC4", 3)]);
    doc["meshes"][0]["primitives"][0]["attributes"]["NORMAL"] = json!(2);
    let e = gltf_error("case5", &gltf_text(&doc, &blob, None));
    assert_eq!(e.kind, ErrorKind::Invalid, "{e}");
    assert!(e.path.contains("NORMAL"), "{e}");
}

#[test]
fn accessor_past_its_buffer_view_or_with_short_stride_is_refused() {
    let (mut doc, blob) = gltf_doc(&[]);
    doc["accessors"][0]["count"] = json!(4);
    let e = gltf_error("past-view", &gltf_text(&doc, &blob, None));
    assert_eq!(e.kind, ErrorKind::Invalid, "{e}");
    assert!(e.message.contains("run past bufferView 0"), "{e}");
    let (mut doc, blob) = gltf_doc(&[]);
    doc["bufferViews"][0]["byteStride"] = json!(4);
    let e = gltf_error("short-stride", &gltf_text(&doc, &blob, None));
    assert_eq!(e.kind, ErrorKind::Invalid, "{e}");
    let (mut doc, blob) = gltf_doc(&[]);
    doc["accessors"][1]["count"] = json!(0);
    let e = gltf_error("count-0", &gltf_text(&doc, &blob, None));
    assert_eq!(e.kind, ErrorKind::Invalid, "{e}");
}

fn glb(doc: &Value, blob: &[u8], length: Option<u32>) -> Vec<u8> {
    let mut j = serde_json::to_vec(doc).unwrap();
    while j.len() % 4 != 0 {
        j.push(b' ');
    }
    let mut body = Vec::new();
    body.extend_from_slice(&(j.len() as u32).to_le_bytes());
    body.extend_from_slice(b"JSON");
    body.extend_from_slice(&j);
    body.extend_from_slice(&(blob.len() as u32).to_le_bytes());
    body.extend_from_slice(b"BIN\0");
    body.extend_from_slice(blob);
    let total = length.unwrap_or(12 + body.len() as u32);
    let mut out = b"glTF".to_vec();
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&total.to_le_bytes());
    out.extend_from_slice(&body);
    out
}

#[test]
fn case6_glb_length_under_its_header_is_refused() {
    let (doc, blob) = gltf_doc(&[]);
    let good = glb(&doc, &blob, None);
    let p = scratch("case6").join("in.glb");
    // The same GLB with a correct length converts: the check is about the field, nothing else.
    open_convert(&good, &p, &["out.xmf"]).unwrap();
    let bad = glb(&doc, &blob, Some(8));
    let e = open_convert(&bad, &p, &["out.xmf"]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Invalid, "{e}");
    assert_eq!(e.offset, Some(8), "{e}");
    assert!(e.message.contains("length 8"), "{e}");
}

/// The secret a hostile glTF tries to pull in: a valid buffer for the same document.
fn uri_case(test: &str, uri_of: impl Fn(&Path) -> String) -> hangar::Error {
    let d = scratch(test);
    let (inside, secret) = (d.join("in"), d.join("secret"));
    std::fs::create_dir_all(&inside).unwrap();
    std::fs::create_dir_all(&secret).unwrap();
    let (doc, blob) = gltf_doc(&[]);
    std::fs::write(secret.join("secret.bin"), &blob).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(secret.join("secret.bin"), inside.join("link.bin")).unwrap();
    // A buffer inside the folder is read: the rule refuses only what leaves it.
    std::fs::write(inside.join("ok.bin"), &blob).unwrap();
    let p = inside.join("model.gltf");
    let ok = gltf_text(&doc, &blob, Some("ok.bin"));
    open_convert(&ok, &p, &["out.xmf"]).unwrap();
    let bytes = gltf_text(&doc, &blob, Some(&uri_of(&secret.join("secret.bin"))));
    std::fs::File::create(&p)
        .unwrap()
        .write_all(&bytes)
        .unwrap();
    common::open(&bytes, &p).map(|_| ()).unwrap_err()
}

#[test]
fn case8_buffer_uris_leaving_the_folder_are_refused() {
    for (test, e) in [
        ("abs", uri_case("case8a", |s| s.display().to_string())),
        (
            "dotdot",
            uri_case("case8b", |_| "../secret/secret.bin".into()),
        ),
        (
            "encoded",
            uri_case("case8e", |_| "..%2Fsecret%2Fsecret.bin".into()),
        ),
        ("devzero", uri_case("case8c", |_| "/dev/zero".into())),
        #[cfg(unix)]
        ("link", uri_case("case8d", |_| "link.bin".into())),
    ] {
        assert_eq!(e.kind, ErrorKind::Refused, "{test}: {e}");
        assert_eq!(e.path, "buffers[0].uri", "{test}: {e}");
        assert!(e.message.contains("path \""), "{test}: names the uri: {e}");
    }
}

#[test]
fn case8_buffer_of_another_length_than_declared_is_refused() {
    let d = scratch("case8-length");
    let (doc, blob) = gltf_doc(&[]);
    std::fs::write(d.join("big.bin"), vec![0u8; blob.len() + 100]).unwrap();
    let bytes = gltf_text(&doc, &blob, Some("big.bin"));
    let e = common::open(&bytes, &d.join("m.gltf"))
        .map(|_| ())
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Refused, "{e}");
    assert!(e.message.contains("declared"), "{e}");
}

#[test]
fn case8_image_uri_that_is_not_relative_is_refused() {
    let d = scratch("case8-image");
    let (mut doc, blob) = gltf_doc(&[]);
    doc["images"] = json!([{"uri": "/etc/passwd"}]);
    doc["textures"] = json!([{"source": 0}]);
    doc["materials"] =
        json!([{"name": "m", "pbrMetallicRoughness": {"baseColorTexture": {"index": 0}}}]);
    let bytes = gltf_text(&doc, &blob, None);
    let e = common::open(&bytes, &d.join("m.gltf"))
        .map(|_| ())
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Refused, "{e}");
    assert!(e.message.contains("/etc/passwd"), "{e}");
}

// ---- XAC ----

fn xac_chunk(id: u32, version: u32, body: &[u8]) -> Vec<u8> {
    let mut c = Vec::new();
    for v in [id, body.len() as u32, version] {
        c.extend_from_slice(&v.to_le_bytes());
    }
    c.extend_from_slice(body);
    c
}

const XAC_HEAD: &[u8] = b"XAC \x01\x00\x00\x00";

fn nested_lods(depth: usize) -> Vec<u8> {
    let mut inner = XAC_HEAD.to_vec();
    for _ in 0..depth {
        let mut body = 1u32.to_le_bytes().to_vec();
        body.extend_from_slice(&(inner.len() as u32).to_le_bytes());
        body.extend_from_slice(&inner);
        let mut f = XAC_HEAD.to_vec();
        f.extend_from_slice(&xac_chunk(0x8, 1, &body));
        inner = f;
    }
    inner
}

#[test]
fn case4_nested_lods_are_read_one_level_deep_in_linear_time() {
    for depth in [4000, (64 << 10) / 28] {
        let bytes = nested_lods(depth);
        let p = scratch("case4").join("nested.xac");
        let t = std::time::Instant::now();
        let opened = common::open(&bytes, &p).unwrap();
        assert!(
            opened
                .warnings()
                .iter()
                .any(|w| w.message.contains("nesting is limited to one level")),
            "the second level is kept raw with a warning"
        );
        let (glb, _) = common::convert(&opened, &p.with_file_name("out.glb")).unwrap();
        assert_eq!(&glb[..4], b"glTF");
        let dump = opened.dump().unwrap();
        // One level parsed, the rest raw: the dump stays about the size of the file (base64).
        assert!(
            dump.len() < bytes.len() * 3,
            "{} for {}",
            dump.len(),
            bytes.len()
        );
        assert!(
            t.elapsed().as_secs() < 5,
            "{depth} levels took {:?}",
            t.elapsed()
        );
    }
}

fn xac_string(s: &str) -> Vec<u8> {
    let mut b = (s.len() as u32).to_le_bytes().to_vec();
    b.extend_from_slice(s.as_bytes());
    b
}

fn le(vals: &[i32]) -> Vec<u8> {
    vals.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// An actor with one node and one mesh of 3 vertices; sub-mesh 0 holds triangle (0, 1, 2) and
/// sub-mesh 1 (0 vertices of its own) indices 2^32-3.. that wrap to 0.. once offset by 3.
fn xac_wrapping_submesh() -> Vec<u8> {
    let mut nodes = le(&[1, 1]);
    nodes.extend(f32s(&[
        0., 0., 0., 1., 0., 0., 0., 1., 0., 0., 0., 1., 1., 1., 0., 0., 0.,
    ]));
    nodes.extend(le(&[-1, -1, -1, 0, 1]));
    nodes.extend(f32s(&[
        1., 0., 0., 0., 0., 1., 0., 0., 0., 0., 1., 0., 0., 0., 0., 1., 1.,
    ]));
    nodes.extend(xac_string("root"));
    let mut mesh = le(&[0, 0, 3, 6, 2, 1, 0]);
    mesh.extend(le(&[0, 12, 0]));
    mesh.extend(f32s(&[0., 0., 0., 1., 0., 0., 0., 2., 0.]));
    mesh.extend(le(&[3, 3, 0, 0, 0, 1, 2]));
    mesh.extend(le(&[3, 0, 0, 0, -3, -2, -1]));
    let mut f = XAC_HEAD.to_vec();
    f.extend(xac_chunk(0xB, 1, &nodes));
    f.extend(xac_chunk(0x1, 1, &mesh));
    f
}

#[test]
fn case7_submesh_indices_do_not_wrap_onto_vertices() {
    let bytes = xac_wrapping_submesh();
    let p = scratch("case7").join("wrap.xac");
    let opened = common::open(&bytes, &p).unwrap();
    assert_eq!(opened.format(), hangar::Format::Xac);
    let (scene, warnings) = opened.to_scene().unwrap();
    let tris: Vec<&Vec<u32>> = scene.meshes[0]
        .primitives
        .iter()
        .map(|p| &p.indices)
        .collect();
    assert_eq!(tris.len(), 2);
    assert_eq!(tris[0].len(), 3, "sub-mesh 0 keeps its triangle");
    assert!(
        tris[1].is_empty(),
        "the wrapping triangle is dropped: {tris:?}"
    );
    assert!(
        warnings
            .iter()
            .any(|w| w.message.contains("1 triangles index past the 3 vertices")),
        "{warnings:?}"
    );
}

// ---- XMF ----

fn xmf_descriptor(
    kind: i32,
    format: i32,
    offset: i32,
    csize: i32,
    items: u32,
    item_size: u32,
) -> Vec<u8> {
    let mut d = Vec::new();
    d.extend(le(&[kind, 0, offset, 1, 0, format, csize]));
    d.extend(le(&[items as i32, item_size as i32, 1]));
    d.resize(0xBC, 0);
    d
}

fn xmf_header(buffers: u8) -> Vec<u8> {
    let mut h = b"XUMF".to_vec();
    h.extend_from_slice(&[3, 0, 0x40, 0, buffers, 0xBC, 0, 0x88, 1, 0]);
    h.extend(le(&[0, 0, 4, 0]));
    h.resize(0x40, 0);
    h
}

fn zlib(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

#[test]
fn case10_buffers_sharing_one_zlib_stream_are_refused_before_inflating() {
    let s = 12 * 8 * 350_000u32;
    let z = zlib(&vec![0u8; s as usize]);
    let mut f = xmf_header(32);
    f.extend(xmf_descriptor(0x1E, 0x1F, 0, z.len() as i32, s / 4, 4));
    for _ in 0..31 {
        f.extend(xmf_descriptor(0, 2, 0, z.len() as i32, s / 12, 12));
    }
    f.extend(&z);
    let p = scratch("case10").join("shared.xmf");
    let e = common::open(&f, &p).map(|_| ()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Refused, "{e}");
    assert!(e.message.contains("64 MiB + 16 x"), "names the limit: {e}");
}

/// A small valid XMF: 3 uncompressed FLOAT3 positions, u16 indices (kept compressed off).
fn small_xmf() -> Vec<u8> {
    let vb = f32s(&[0., 0., 0., 1., 0., 0., 0., 1., 0.]);
    let ib: Vec<u8> = [0u16, 1, 2].iter().flat_map(|i| i.to_le_bytes()).collect();
    let mut f = xmf_header(2);
    let mut d0 = xmf_descriptor(0, 2, 0, vb.len() as i32, 3, 12);
    d0[12..16].copy_from_slice(&0u32.to_le_bytes());
    let mut d1 = xmf_descriptor(0x1E, 0x1E, vb.len() as i32, ib.len() as i32, 3, 2);
    d1[12..16].copy_from_slice(&0u32.to_le_bytes());
    f.extend(d0);
    f.extend(d1);
    f.extend(vb);
    f.extend(ib);
    f
}

#[test]
fn case9_dump_declaring_gigabytes_writes_nothing() {
    let d = scratch("case9");
    let x = small_xmf();
    let p = d.join("small.xmf");
    let opened = common::open(&x, &p).unwrap();
    // The dump turns back into the same file...
    let dump: Value = serde_json::from_str(&opened.dump().unwrap()).unwrap();
    let back = serde_json::to_vec(&dump).unwrap();
    let jp = d.join("small.json");
    let reopened = common::open(&back, &jp).unwrap();
    let (same, _) = common::convert(&reopened, &d.join("same.xmf")).unwrap();
    assert_eq!(same, x);
    // ...but not into 4 GiB of zeros when edited to place bytes far away.
    let mut far = dump.clone();
    far["filler"] = json!([{"offset": 0xFFFF_FF00u32, "bytes": "SE9TVA=="}]);
    let mut far2 = dump.clone();
    far2["buffers"][1]["data_offset"] = json!(0x7FFF_FF00u32);
    for v in [far, far2] {
        let bytes = serde_json::to_vec(&v).unwrap();
        let opened = common::open(&bytes, &jp).unwrap();
        let e = common::convert(&opened, &d.join("out.xmf")).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Refused, "{e}");
        assert!(e.message.contains("over the limit"), "{e}");
    }
}

/// Found by fuzzing (gltf_import): an animation channel whose target path is not a glTF property,
/// whose node does not exist, or whose output has a type glTF does not allow for its target,
/// panicked inside the gltf crate (gltf-json leaves targets unvalidated). All are refused, naming
/// the channel.
#[test]
fn fuzz_animation_targets_that_do_not_exist_are_refused() {
    let (mut doc, mut blob) = gltf_doc(&[]);
    // A sampler over two key times and two translations, appended to the buffer.
    pad4(&mut blob);
    let times_at = blob.len();
    blob.extend(f32s(&[0.0, 1.0]));
    let values_at = blob.len();
    blob.extend(f32s(&[0.0; 6]));
    doc["buffers"][0]["byteLength"] = json!(blob.len());
    let views = doc["bufferViews"].as_array_mut().unwrap();
    views.push(json!({"buffer": 0, "byteOffset": times_at, "byteLength": 8}));
    views.push(json!({"buffer": 0, "byteOffset": values_at, "byteLength": 24}));
    let accs = doc["accessors"].as_array_mut().unwrap();
    accs.push(json!({"bufferView": 2, "componentType": F32, "count": 2, "type": "SCALAR", "min": [0.0], "max": [1.0]}));
    accs.push(json!({"bufferView": 3, "componentType": F32, "count": 2, "type": "VEC3"}));
    // The same 24 bytes read as rotations of u32 (VEC4 UNSIGNED_INT: glTF allows none).
    accs.push(json!({"bufferView": 3, "componentType": 5125, "count": 1, "type": "VEC4"}));
    for (target, output, what) in [
        (json!({"node": 0, "path": "translaoion"}), 3, "target.path"),
        (json!({"node": 7, "path": "translation"}), 3, "target.node"),
        (
            json!({"node": 0, "path": "rotation"}),
            4,
            "sampler.output (accessor 4)",
        ),
    ] {
        doc["animations"] = json!([{
            "samplers": [{"input": 2, "output": output, "interpolation": "LINEAR"}],
            "channels": [{"sampler": 0, "target": target}],
        }]);
        let e = gltf_error("fuzz_anim", &gltf_text(&doc, &blob, None));
        assert_eq!(e.kind, ErrorKind::Invalid, "{e}");
        assert_eq!(e.path, format!("animations[0].channels[0].{what}"), "{e}");
    }
}

/// An MPQ archive of `files` as hangar writes it, and where its block table lies.
fn mpq(files: &[(&str, &[u8])]) -> (Vec<u8>, usize) {
    let given: Vec<(String, &[u8])> = files.iter().map(|(n, b)| (n.to_string(), *b)).collect();
    let a = hangar::archives::build(&given).unwrap();
    let block_pos = u32::from_le_bytes(a[20..24].try_into().unwrap()) as usize;
    (a, block_pos)
}

/// Rewrites block `i` of `a` (decrypting and encrypting the table around the change).
fn mpq_block(a: &mut [u8], block_pos: usize, i: usize, field: usize, value: u32) {
    use hangar::formats::mpq::{block_table_key, decrypt, encrypt};
    let table = &mut a[block_pos..];
    decrypt(table, block_table_key());
    let at = i * 16 + field * 4;
    table[at..at + 4].copy_from_slice(&value.to_le_bytes());
    encrypt(table, block_table_key());
}

fn mpq_read(a: Vec<u8>, name: &str) -> hangar::Result<Vec<u8>> {
    let view = hangar::GameView::archive_source(std::sync::Arc::new(a), "hostile.SC2Map")?;
    view.read(name).map(|b| b.to_vec())
}

#[test]
fn mpq_tables_pointing_outside_the_archive_are_errors() {
    let (a, _) = mpq(&[("a.txt", b"hello")]);
    // The hash table moved past the end; then the block table claims 2^28 entries.
    let mut far = a.clone();
    far[16..20].copy_from_slice(&0x7FFF_FFF0u32.to_le_bytes());
    let e = mpq_read(far, "a.txt").unwrap_err();
    assert_eq!(e.kind, ErrorKind::Truncated, "{e}");
    assert!(e.to_string().contains("hash table"), "{e}");
    let mut many = a.clone();
    many[28..32].copy_from_slice(&0x1000_0000u32.to_le_bytes());
    let e = mpq_read(many, "a.txt").unwrap_err();
    assert_eq!(e.kind, ErrorKind::Truncated, "{e}");
    assert!(e.to_string().contains("block table"), "{e}");
    // A header cut short, and no magic at all.
    assert_eq!(
        mpq_read(a[..20].to_vec(), "a.txt").unwrap_err().kind,
        ErrorKind::Truncated
    );
    assert_eq!(
        mpq_read(b"MPQ".to_vec(), "a.txt").unwrap_err().kind,
        ErrorKind::Invalid
    );
}

/// Found by the `mpq` fuzz target: a format-4 header whose block table is stored packed in 16 bytes
/// but claims 2^32 - 1 entries (64 GiB). Its size is refused before anything is allocated for it.
#[test]
fn mpq_packed_tables_claiming_gigabytes_are_refused() {
    let mut a = vec![0u8; 0xF0];
    a[0..4].copy_from_slice(b"MPQ\x1a");
    a[4..8].copy_from_slice(&0xD0u32.to_le_bytes()); // header size: format 4
    a[8..12].copy_from_slice(&0xF0u32.to_le_bytes());
    a[12..14].copy_from_slice(&3u16.to_le_bytes()); // format_version 3 = format 4
    a[14..16].copy_from_slice(&3u16.to_le_bytes());
    a[16..20].copy_from_slice(&0xD0u32.to_le_bytes()); // hash table: one entry
    a[20..24].copy_from_slice(&0xE0u32.to_le_bytes()); // block table
    a[24..28].copy_from_slice(&1u32.to_le_bytes());
    a[28..32].copy_from_slice(&u32::MAX.to_le_bytes());
    a[0x44..0x4C].copy_from_slice(&16u64.to_le_bytes()); // hash table stored whole
    a[0x4C..0x54].copy_from_slice(&16u64.to_le_bytes()); // block table "packed" into 16 bytes
    let e = mpq_read(a, "a.txt").unwrap_err();
    // Past the one limit on what a call inflates (--max-inflate): refused, its sizes named.
    assert_eq!(e.kind, ErrorKind::Refused, "{e}");
    assert!(e.to_string().contains("block table"), "{e}");
    assert!(e.to_string().contains("4294967295 entries"), "{e}");
    assert!(e.to_string().contains("from 16 stored"), "{e}");
}

#[test]
fn mpq_files_claiming_gigabytes_or_lying_outside_are_refused_by_name() {
    let text: Vec<u8> = b"abcdefgh".iter().cycle().take(40_000).copied().collect();
    let (a, blocks) = mpq(&[("Assets\\big.txt", &text), ("small.txt", b"tiny")]);
    assert_eq!(mpq_read(a.clone(), "assets/big.txt").unwrap(), text);
    // Block 0 (big.txt) claims 4 GB from a few hundred bytes stored.
    let mut huge = a.clone();
    mpq_block(&mut huge, blocks, 0, 2, 0xFFFF_FF00);
    let e = mpq_read(huge, "assets/big.txt").unwrap_err();
    assert!(e.to_string().contains("Assets\\big.txt"), "{e}");
    assert!(e.to_string().contains("refused"), "{e}");
    // Its bytes said to lie 2 GB in.
    let mut out = a.clone();
    mpq_block(&mut out, blocks, 0, 0, 0x7FFF_0000);
    let e = mpq_read(out, "assets/big.txt").unwrap_err();
    assert_eq!(e.kind, ErrorKind::Truncated, "{e}");
    assert!(e.to_string().contains("Assets\\big.txt"), "{e}");
    // The other file still reads.
    let mut one = a.clone();
    mpq_block(&mut one, blocks, 0, 0, 0x7FFF_0000);
    assert_eq!(mpq_read(one, "small.txt").unwrap(), b"tiny");
}

#[test]
fn mpq_sector_tables_running_backwards_are_errors() {
    let text: Vec<u8> = b"0123456789".iter().cycle().take(40_000).copied().collect();
    let (mut a, _) = mpq(&[("x.txt", &text)]);
    // x.txt's sectors start at byte 32: three sectors, four offsets; swap the middle two.
    let offs: Vec<u32> = (0..4)
        .map(|i| u32::from_le_bytes(a[32 + i * 4..36 + i * 4].try_into().unwrap()))
        .collect();
    a[36..40].copy_from_slice(&offs[2].to_le_bytes());
    a[40..44].copy_from_slice(&offs[1].to_le_bytes());
    let e = mpq_read(a, "x.txt").unwrap_err();
    assert_eq!(e.kind, ErrorKind::Invalid, "{e}");
    assert!(e.to_string().contains("runs backwards at sector 1"), "{e}");
    assert!(e.to_string().contains("x.txt"), "{e}");
}

#[test]
fn mpq_names_leaving_the_output_folder_are_refused_by_name() {
    let dir = scratch("mpq-names");
    let (a, _) = mpq(&[
        ("..\\..\\evil.txt", b"climb"),
        ("C:\\evil.txt", b"drive"),
        ("\\abs.txt", b"absolute"),
        ("Assets\\ok.txt", b"fine"),
    ]);
    let path = dir.join("hostile.SC2Map");
    std::fs::write(&path, &a).unwrap();
    let o = hangar::archives::open(&path).unwrap();
    let out = dir.join("out");
    let x = hangar::archives::extract(&o, &out, &[], &|_| {});
    assert_eq!(x.written, 2, "Assets\\ok.txt and (listfile)");
    assert_eq!(x.failed.len(), 3);
    for e in &x.failed {
        assert_eq!(e.kind, ErrorKind::Refused, "{e}");
        assert!(
            e.to_string().contains("evil.txt") || e.to_string().contains("abs.txt"),
            "{e}"
        );
    }
    assert_eq!(std::fs::read(out.join("Assets/ok.txt")).unwrap(), b"fine");
    assert!(!dir.join("evil.txt").exists() && !dir.parent().unwrap().join("evil.txt").exists());
    // In the game view those names are simply not there.
    let view = hangar::GameView::open(&path).unwrap();
    assert_eq!(view.files("").unwrap(), ["abs.txt", "assets/ok.txt"]);
    assert!(view.read("../../evil.txt").is_err());
}
