//! Small hand-made XMF files for what the corpus does not hold.

mod common;
#[allow(dead_code)]
#[path = "common/wedge.rs"]
mod wedge;

use hangar::formats::xmf::{
    self,
    decl::DeclType,
    mesh,
    read::read,
    write::{write, Target},
    Buffer, Element, Xmf,
};
use hangar::formats::{Bytes, F64Bits};
use std::path::Path;

fn sample(name: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../samples")
            .join(name),
    )
    .unwrap()
}

fn plain_buffer(
    kind: i32,
    usage_index: i32,
    format: i32,
    items: u32,
    item_size: u32,
    data: Vec<u8>,
) -> Buffer<'static> {
    Buffer {
        kind,
        usage_index,
        data_offset: None,
        compressed: 0,
        pad: 0,
        format,
        items,
        item_size,
        sections: 1,
        bounds: [F64Bits::default(); 2],
        elements: Vec::new(),
        unused_elements: Bytes::default(),
        extra: Bytes::default(),
        data: Bytes::owned(data),
    }
}

fn floats(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|f| f.to_le_bytes()).collect()
}

/// One triangle in file space, one buffer per attribute (numVertexElements = 0), stored uncompressed,
/// with 32-bit indices.
fn split_buffers() -> Xmf<'static> {
    let b = sample("wedge-collision.xmf");
    let x0 = read(&b).unwrap().0.into_owned();
    let pos = floats(&[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 2.0, 0.5, 0.0]);
    let nor = floats(&[0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0]);
    let uv = floats(&[0.0, 0.0, 1.0, 0.0, 0.25, 0.75]);
    let idx: Vec<u8> = [0u32, 1, 2].iter().flat_map(|i| i.to_le_bytes()).collect();
    let mut header = x0.header.clone();
    header.vertex_count = 3;
    header.index_count = 3;
    Xmf {
        header,
        buffers: vec![
            plain_buffer(0, 0, DeclType::Float3 as i32, 3, 12, pos),
            plain_buffer(2, 0, DeclType::Float3 as i32, 3, 12, nor),
            plain_buffer(6, 1, DeclType::Float2 as i32, 3, 8, uv),
            plain_buffer(0x1E, 0, 0x1F, 3, 4, idx),
        ],
        materials: Vec::new(),
        filler: Vec::new(),
    }
}

#[test]
fn implicit_elements_in_separate_uncompressed_buffers() {
    let x = split_buffers();
    let bytes = write(&x).unwrap();
    let (back, warnings) = read(&bytes).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(back, x);
    let layout = mesh::layout(&back).unwrap();
    let names: Vec<String> = layout
        .iter()
        .map(|l| format!("{}{} {}", l.usage.name(), l.usage_index, l.ty.name()))
        .collect();
    assert_eq!(
        names,
        ["POSITION0 FLOAT3", "NORMAL0 FLOAT3", "TEXCOORD1 FLOAT2"]
    );
    let (m, _, _) = mesh::to_mesh(&back, "t").unwrap();
    // X is mirrored; the index order is kept.
    assert_eq!(
        m.vertices.positions,
        vec![[-1.0, 0.0, 0.0], [-0.0, 1.0, 0.0], [-2.0, 0.5, 0.0]]
    );
    assert_eq!(m.vertices.normals.as_ref().unwrap()[0], [-0.0, 0.0, 1.0]);
    assert_eq!(
        m.vertices.uvs,
        vec![vec![[0.0, 0.0], [1.0, 0.0], [0.25, 0.75]]]
    );
    assert_eq!(m.primitives[0].indices, [0, 1, 2]);
}

#[test]
fn the_mirror_makes_clockwise_file_faces_counter_clockwise() {
    // In file space the triangle (1,0,0) (0,1,0) (2,0.5,0) winds clockwise around its normal (0,0,1)
    // (the game's front face); in glTF space it must wind counter-clockwise around the normal.
    let (m, _, _) = mesh::to_mesh(&split_buffers(), "t").unwrap();
    let p: Vec<glam::Vec3> = m
        .vertices
        .positions
        .iter()
        .map(|p| glam::Vec3::from(*p))
        .collect();
    let n = glam::Vec3::from(m.vertices.normals.as_ref().unwrap()[0]);
    let file_face = glam::Vec3::new(-1.0, 1.0, 0.0).cross(glam::Vec3::new(1.0, 0.5, 0.0));
    assert!(
        file_face.dot(glam::Vec3::new(0.0, 0.0, 1.0)) < 0.0,
        "clockwise in the file"
    );
    assert!(
        (p[1] - p[0]).cross(p[2] - p[0]).dot(n) > 0.0,
        "counter-clockwise in glTF"
    );
}

#[test]
fn the_sample_is_stored_mirrored_with_the_sign_in_the_normal() {
    let b = sample("wedge-lod0.xmf");
    let (x, _) = read(&b).unwrap();
    let (_, vb) = (0, &x.buffers[0]);
    let data = mesh::inflate(vb, 0).unwrap();
    let stride = vb.item_size as usize;
    assert_eq!(stride, 28);
    // Vertex 1 of the +Z face is (3, 0, 1) in glTF space, so (-3, 0, 1) in the file.
    let v1 = &data[stride..stride + 12];
    assert_eq!(v1, floats(&[-3.0, 0.0, 1.0]).as_slice());
    // Face 3 (-X in glTF) has the file normal +X: D3DCOLOR B,G,R = z,y,x -> R byte 255.
    let n = &data[12 * stride + 12..12 * stride + 16];
    assert_eq!(&n[..3], &[128, 128, 255]);
    // The sample's UVs put +V down the faces, so every tangent frame has the same sign.
    let (m, _, _) = mesh::to_mesh(&x, "w").unwrap();
    let (orig, _) = wedge::wedge();
    assert_eq!(
        m.vertices
            .tangents
            .as_ref()
            .unwrap()
            .iter()
            .map(|t| t[3])
            .collect::<Vec<_>>(),
        orig.vertices
            .tangents
            .as_ref()
            .unwrap()
            .iter()
            .map(|t| t[3])
            .collect::<Vec<_>>()
    );
    for (a, b) in m.vertices.positions.iter().zip(&orig.vertices.positions) {
        assert_eq!(a, b);
    }
}

#[test]
fn the_samples_are_what_the_writer_makes() {
    let (mesh, materials) = wedge::wedge();
    for (name, target) in [
        ("wedge-lod0.xmf", Target::Visual),
        ("wedge-collision.xmf", Target::Collision),
    ] {
        let (x, _) = mesh::from_mesh(&mesh, &materials, target).unwrap();
        assert!(
            write(&x).unwrap() == sample(name),
            "samples/{name} is stale: run cargo run -p hangar --example make_samples"
        );
    }
}

#[test]
fn garbage_header_bytes_are_read_with_warnings() {
    let mut b = sample("wedge-lod0.xmf");
    b[7] = 0x5a;
    b[12..30].copy_from_slice(&[
        0x7c, 0xf6, 0xdf, 0, 0x95, 8, 0xba, 0x4e, 0x7c, 0xf6, 4, 0, 0, 0, 0, 0, 0, 0,
    ]);
    let (x, warnings) = read(&b).unwrap();
    let paths: Vec<&str> = warnings.iter().map(|w| w.path.as_str()).collect();
    assert_eq!(paths, ["XMF.vertexCount", "XMF.indexCount"]);
    assert_eq!(warnings[0].offset, Some(14));
    assert_eq!(x.header.pad7, 0x5a);
    assert_eq!(write(&x).unwrap(), b);
    let (m, _, _) = mesh::to_mesh(&x, "g").unwrap();
    assert_eq!(m.vertices.len(), 32);
}

#[test]
fn short_descriptors_read_as_zero_padded() {
    let b = sample("wedge-collision.xmf");
    let (mut x, _) = read(&b).unwrap();
    x.header.desc_size = 60;
    let bytes = write(&x).unwrap();
    assert_eq!(
        bytes.len(),
        sample("wedge-collision.xmf").len() - 2 * (188 - 60)
    );
    let (back, warnings) = read(&bytes).unwrap();
    assert_eq!(warnings[0].path, "XMF.dataBufferDescSize");
    assert_eq!(mesh::to_mesh(&back, "s").unwrap().0.vertices.len(), 9);
    // A declared element does not fit a 60-byte descriptor: refused, not cut.
    x.buffers[0].elements.push(Element {
        ty: 2,
        usage: 0,
        usage_index: 0,
        pad: [0; 2],
    });
    let err = write(&x).unwrap_err();
    assert_eq!(err.kind, hangar::ErrorKind::Refused);
    assert_eq!(err.path, "XMF.buffers[0]");
}

#[test]
fn gaps_and_trailing_bytes_are_kept() {
    let mut x = split_buffers();
    x.buffers[1].data_offset = Some(40); // 4 bytes of gap after the 36 position bytes
    x.buffers[2].data_offset = None;
    let mut bytes = write(&x).unwrap();
    bytes.extend_from_slice(b"TAIL");
    let (back, warnings) = read(&bytes).unwrap();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert_eq!(back.filler.len(), 2);
    assert_eq!(&back.filler[1].bytes[..], b"TAIL");
    assert_eq!(write(&back).unwrap(), bytes);
}

#[test]
fn index_and_material_errors_are_found_by_validate() {
    let mut x = split_buffers();
    x.buffers[3].data = Bytes::owned([0u32, 1, 7].iter().flat_map(|i| i.to_le_bytes()).collect());
    x.materials.push(xmf::Material {
        first_index: 0,
        num_indices: 6,
        name: hangar::formats::FixedString::from_text("a.b", 128).unwrap(),
        extra: Bytes::default(),
    });
    let findings = xmf::check::check(&x, Target::Visual);
    let text: Vec<String> = findings.iter().map(|f| f.to_string()).collect();
    assert!(
        text.iter()
            .any(|t| t.contains("1 indices point past the 3 vertices")),
        "{text:?}"
    );
    assert!(
        text.iter()
            .any(|t| t.contains("ranges cover 6 indices, the index buffer has 3")),
        "{text:?}"
    );
    assert!(
        text.iter().any(|t| t.contains("outside the 3 indices")),
        "{text:?}"
    );
    let err = mesh::to_mesh(&x, "bad").unwrap_err();
    assert_eq!(err.path, "XMF.buffers[3].data[2]");
}

#[test]
fn a_visual_mesh_is_refused_as_a_collision_target() {
    let b = sample("wedge-lod0.xmf");
    let opened = common::open(&b, Path::new("wedge-lod0.xmf")).unwrap();
    let err = common::convert(&opened, Path::new("wedge-collision.xmf")).unwrap_err();
    assert_eq!(err.kind, hangar::ErrorKind::Refused);
    assert!(
        err.message
            .contains("declares 4 elements (POSITION, NORMAL, TANGENT, TEXCOORD)"),
        "{err}"
    );
    assert!(err.message.contains("2 materials"), "{err}");
    assert!(
        xmf::write::check_collision_rule(&read(&sample("wedge-collision.xmf")).unwrap().0).is_ok()
    );
    assert_eq!(
        Target::from_path(Path::new("x/part-collision1.xmf")),
        Target::Collision
    );
    assert_eq!(
        Target::from_path(Path::new("part_main-COLLISION.XMF")),
        Target::Collision
    );
    assert_eq!(
        Target::from_path(Path::new("part_main-lod1.xmf")),
        Target::Visual
    );
}

#[test]
fn large_meshes_get_32_bit_indices() {
    let (mut m, mats) = wedge::wedge();
    let n = 70_000;
    m.vertices.positions = (0..n).map(|i| [i as f32, (i % 7) as f32, 0.0]).collect();
    m.vertices.normals = None;
    m.vertices.tangents = None;
    m.vertices.uvs.clear();
    m.primitives = vec![hangar::model::Primitive {
        indices: vec![0, 1, n as u32 - 1],
        material: Some(0),
    }];
    let (x, _) = mesh::from_mesh(&m, &mats, Target::Visual).unwrap();
    let (_, ib) = x.index_buffer().unwrap();
    assert_eq!((ib.format, ib.item_size), (0x1F, 4));
    assert_eq!(mesh::indices(&x).unwrap(), [0, 1, n as u32 - 1]);
    assert_eq!(
        (ib.bounds[0].get(), ib.bounds[1].get()),
        (0.0, (n - 1) as f64)
    );
}

#[test]
fn info_json_of_the_sample() {
    let b = sample("wedge-lod0.xmf");
    let o = common::open(&b, Path::new("wedge-lod0.xmf")).unwrap();
    insta::assert_json_snapshot!(o.info());
}
