//! `hangar new ship` with a material the game lacks: a glTF part painted with a new material
//! (Blender's `Red Paint`, an 8 x 8 red PNG) gives the extension that material as
//! `convert --textures write` writes one (an entry of a `libraries/material_library.xml` patch, its
//! image a gzip'd BC3 DDS at the path the entry names), the XMFs name it so, and the mod check
//! finds its texture. With `--textures none` nothing of it is written.

mod common;
use hangar::formats::dds;
use serde_json::json;
use std::path::{Path, PathBuf};

const ID: &str = "ship_paint_m_01";

/// A mod holding one ship macro of class ship_m (`paint_template_macro`), under `dir/tmod`.
fn template_mod(dir: &Path) -> PathBuf {
    let m = dir.join("tmod");
    common::write_text(&m, "content.xml", r#"<content id="tmod" version="100"/>"#);
    common::write_text(
        &m,
        "assets/units/size_m/macros/paint_template_macro.xml",
        r#"<macros><macro name="paint_template_macro" class="ship_m"><component ref="paint_template"/><properties><identification name="{1,1}"/></properties></macro></macros>"#,
    );
    common::write_text(
        &m,
        "index/macros.xml",
        r#"<diff><add sel="/index"><entry name="paint_template_macro" value="extensions\tmod\assets\units\size_m\macros\paint_template_macro"/></add></diff>"#,
    );
    m.join("assets/units/size_m/macros/paint_template_macro.xml")
}

/// A glTF of one part, `hull` (a tetrahedron of 4 triangles), drawn with `Red Paint`: an 8 x 8 red
/// PNG as its base colour, inside the file as a data URI.
fn painted_hull(dir: &Path) -> PathBuf {
    let positions = [0.0f32, 0., 0., 1., 0., 0., 0., 1., 0., 0., 0., 1.];
    let uvs = [0.0f32, 0., 1., 0., 0., 1., 1., 1.];
    let indices = [0u16, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3];
    let blob = [
        common::f32s(&positions),
        common::f32s(&uvs),
        common::u16s(&indices),
    ]
    .concat();
    let red = dds::Image {
        width: 8,
        height: 8,
        rgba: [255u8, 0, 0, 255].repeat(64),
    };
    let png = dds::encode_png(&red, dds::PngCompression::Fast).unwrap();
    let png_uri = {
        use base64::Engine;
        format!(
            "data:image/png;base64,{}",
            base64::engine::general_purpose::STANDARD.encode(&png)
        )
    };
    let gltf = json!({
        "asset": {"version": "2.0"},
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": [{"name": "hull", "mesh": 0}],
        "meshes": [{"name": "hull", "primitives": [{
            "attributes": {"POSITION": 0, "TEXCOORD_0": 1}, "indices": 2, "material": 0}]}],
        "materials": [{"name": "Red Paint",
            "pbrMetallicRoughness": {"baseColorTexture": {"index": 0}}}],
        "textures": [{"source": 0}],
        "images": [{"uri": png_uri}],
        "buffers": [{"uri": common::octet_uri(&blob), "byteLength": blob.len()}],
        "bufferViews": [
            {"buffer": 0, "byteOffset": 0, "byteLength": 48},
            {"buffer": 0, "byteOffset": 48, "byteLength": 32},
            {"buffer": 0, "byteOffset": 80, "byteLength": 24}],
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "count": 4, "type": "VEC3",
             "min": [0.0, 0.0, 0.0], "max": [1.0, 1.0, 1.0]},
            {"bufferView": 1, "componentType": 5126, "count": 4, "type": "VEC2"},
            {"bufferView": 2, "componentType": 5123, "count": 12, "type": "SCALAR"}]
    });
    let path = dir.join("painted.gltf");
    std::fs::write(&path, gltf.to_string()).unwrap();
    path
}

fn gunzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Read;
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(bytes)
        .read_to_end(&mut out)
        .unwrap();
    out
}

/// The material names an XMF of the extension holds.
fn xmf_materials(file: &Path) -> Vec<String> {
    let (scene, _) = hangar::open(file).unwrap().to_scene().unwrap();
    scene.materials.into_iter().map(|m| m.name).collect()
}

#[test]
fn a_new_material_is_written_with_its_texture_and_a_library_patch() {
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join("newship-materials");
    let _ = std::fs::remove_dir_all(&work);
    let ext_dir = work.join("extensions");
    let template = template_mod(&ext_dir);
    let gltf = painted_hull(&work);
    let opened = hangar::open(&gltf).unwrap();
    let (scene, _) = opened.to_scene().unwrap();
    let (images, warnings) = opened.images().unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(images.len(), 1);
    assert_eq!(images[0].material, "Red Paint");

    let mut spec = hangar::NewShip::new(template.to_string_lossy(), ID);
    spec.folder = Some("newship_paint".into());
    spec.lods = 0;
    spec.images = images;
    let ext = hangar::new_ship(&scene, &spec, None).unwrap();
    let out = ext_dir.join("newship_paint");
    ext.write_to(&out, false).unwrap();
    assert!(
        ext.warnings.iter().any(|w| w.message.contains(
            "\"Red Paint\" is not in the game's library: written as \"ship_paint_m_01.red_paint\""
        )),
        "{:?}",
        ext.warnings
    );

    // The patch: a new collection named after the ship, the material and its one map.
    let library = std::fs::read_to_string(out.join("libraries/material_library.xml")).unwrap();
    assert!(library.starts_with("<?xml") && library.contains("<diff>"));
    assert!(
        library.contains("<add sel=\"/materiallibrary\">"),
        "{library}"
    );
    assert!(library.contains(&format!("<collection name=\"{ID}\">")));
    assert!(library.contains(r#"<material name="red_paint" shader="P1_complex_surface.fx" blendmode="NONE" preview="none">"#));
    assert_eq!(library.matches("<property ").count(), 1, "{library}");
    assert!(library.contains(r#"<property type="BitMap" name="diffuse_map" value="extensions\newship_paint\assets\textures\ship_paint_m_01\red_paint_diffuse"/>"#), "{library}");

    // The texture: BC3 with its 4 mip levels (8, 4, 2, 1), gzip'd, red.
    let gz = std::fs::read(out.join(format!("assets/textures/{ID}/red_paint_diffuse.gz"))).unwrap();
    assert_eq!(&gz[..2], &[0x1f, 0x8b]);
    let bytes = gunzip(&gz);
    let h = dds::read_header(&bytes).unwrap();
    assert_eq!(
        (h.format, h.width, h.height, h.mips),
        (dds::Format::Bc3, 8, 8, 4)
    );
    let back = dds::decode(&bytes).unwrap().0;
    assert!(back.rgba.chunks_exact(4).all(|p| p == [255, 0, 0, 255]));

    // The XMFs name the material as the library does.
    let data = out.join(format!("assets/units/size_m/{ID}_data"));
    assert_eq!(
        xmf_materials(&data.join("hull-lod0.xmf")),
        [format!("{ID}.red_paint")]
    );

    // The patch gives the game's library the name the XMF uses.
    let mut lib = hangar::formats::x4xml::material_library::Library::default();
    lib.apply(&library).unwrap();
    let entry = lib.find(&format!("{ID}.red_paint")).unwrap();
    assert_eq!(entry.properties.len(), 1);

    // The mod check finds the texture the patch names, and no error.
    let (check, errors) = common::mod_errors(&out);
    assert!(errors.is_empty(), "{errors:#?}");
    let texture = check
        .links
        .iter()
        .find(|l| l.written.ends_with("red_paint_diffuse"))
        .and_then(|l| l.target.clone());
    assert_eq!(
        texture.as_deref(),
        Some("assets/textures/ship_paint_m_01/red_paint_diffuse.gz")
    );

    // --textures none: the scene's name in the XMF, no patch, no texture.
    spec.textures = false;
    let ext = hangar::new_ship(&scene, &spec, None).unwrap();
    let names: Vec<String> = ext
        .files()
        .iter()
        .map(|f| f.0.to_string_lossy().replace('\\', "/"))
        .collect();
    assert!(!names
        .iter()
        .any(|n| n.starts_with("libraries/material_library")));
    assert!(!names.iter().any(|n| n.starts_with("assets/textures")));
    assert_eq!(names.len(), 9, "{names:?}");
}
