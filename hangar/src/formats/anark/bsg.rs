//! .bsg scene graphs: a node tree with transforms and bounding boxes, and the assets (materials,
//! textures) hung on nodes.

use super::{endianness, keep_tail, section, write_section, Bytes, Tails, F32};
use crate::bytes::{Cursor, Writer};
use crate::error::Result;
use crate::Warning;
use serde::{Deserialize, Serialize};

/// Header bytes after the `headerSize` field the spec lists.
const HEADER_SIZE: u32 = 0x18;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bsg {
    pub big_endian: bool,
    pub header: Header,
    pub nodes: Vec<Node>,
    pub assets: Vec<Asset>,
    #[serde(default, skip_serializing_if = "Tails::is_empty")]
    pub tails: Tails,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub byte1: u8,
    pub short: u16,
    pub version: u32,
    pub ignored: u32,
    pub ignored_bytes: Bytes,
}

impl Default for Header {
    fn default() -> Self {
        Header {
            byte1: 4,
            short: 0,
            version: 2,
            ignored: 2,
            ignored_bytes: Bytes(vec![0; 8]),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Node {
    /// Index into the nodes, -1 for roots.
    pub parent: i32,
    /// Matches node `AK<id>` of the .dae.
    pub id: i32,
    /// 1 dummy, 2 geometry, 3 camera, 4 light, 5 text, 8 layer.
    #[serde(rename = "type")]
    pub kind: u8,
    pub pad: [u8; 3],
    /// Z negated against glTF.
    pub translation: [F32; 3],
    /// Euler radians, X and Y negated against glTF.
    pub rotation: [F32; 3],
    pub scale: [F32; 3],
    pub rotate_pivot: [F32; 3],
    pub bbox_min: [F32; 3],
    pub bbox_max: [F32; 3],
    pub opacity: F32,
    pub layer: u8,
    pub rotation_method: u8,
    pub invert_y: u8,
    pub unused: i32,
    pub transparent: u8,
}

/// Size of one node in the file.
pub const NODE_SIZE: usize = 96;

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Asset {
    pub node: i32,
    /// 6 material, 7 texture.
    #[serde(rename = "type")]
    pub kind: u8,
}

fn vec3(c: &mut Cursor, field: &'static str) -> Result<[F32; 3]> {
    Ok([F32(c.f32(field)?), F32(c.f32(field)?), F32(c.f32(field)?)])
}

pub fn read(data: &[u8]) -> Result<(Bsg, Vec<Warning>)> {
    let mut c = Cursor::new(data, "BSG");
    let mut tails = Tails::new();
    let mut warnings = Vec::new();
    let big_endian = endianness(&mut c)?;
    c.set_big_endian(big_endian);
    let byte1 = c.u8("ignored")?;
    let short = c.u16("ignored")?;
    let header_end = super::header_end(&mut c, HEADER_SIZE, data.len())?;
    if c.array::<8>("magic")? != *super::bgf::MAGIC {
        return Err(c.error_at(8, "magic", "magic is not AnarkBGF"));
    }
    let header = Header {
        byte1,
        short,
        version: c.u32("version")?,
        ignored: c.u32("ignored")?,
        ignored_bytes: Bytes(c.bytes(8, "ignored")?.to_vec()),
    };
    keep_tail(&mut tails, "header", &c, header_end);
    c.seek(header_end, "header")?;

    let (mut s, end) = section(&mut c, "memory")?;
    let num_nodes = s.u32("numNodes")? as usize;
    let num_assets = s.u32("numAssets")? as usize;
    keep_tail(&mut tails, "memory", &s, end);

    let (mut s, end) = section(&mut c, "sceneGraph")?;
    s.check_count(num_nodes, NODE_SIZE, "numNodes")?;
    let mut nodes = Vec::with_capacity(num_nodes);
    for i in 0..num_nodes {
        nodes.push(s.within_item("nodes", i, |s| {
            Ok(Node {
                parent: s.i32("parentNodeIdx")?,
                id: s.i32("sceneNodeId")?,
                kind: s.u8("type")?,
                pad: s.array("ignored")?,
                translation: vec3(s, "translation")?,
                rotation: vec3(s, "rotation")?,
                scale: vec3(s, "scale")?,
                rotate_pivot: vec3(s, "rotatePivot")?,
                bbox_min: vec3(s, "boundingBoxMinPos")?,
                bbox_max: vec3(s, "boundingBoxMaxPos")?,
                opacity: F32(s.f32("localOpacity")?),
                layer: s.u8("layerIdx")?,
                rotation_method: s.u8("rotationMethod")?,
                invert_y: s.u8("bInvertY")?,
                unused: s.i32("unused")?,
                transparent: s.u8("bTransparent")?,
            })
        })?);
    }
    keep_tail(&mut tails, "sceneGraph", &s, end);

    let (mut s, end) = section(&mut c, "assets")?;
    s.check_count(num_assets, 5, "numAssets")?;
    let mut assets = Vec::with_capacity(num_assets);
    for i in 0..num_assets {
        assets.push(s.within_item("assets", i, |s| {
            Ok(Asset {
                node: s.i32("sceneNodeId")?,
                kind: s.u8("type")?,
            })
        })?);
    }
    keep_tail(&mut tails, "assets", &s, end);
    let rest = data.get(c.pos()..).unwrap_or_default();
    if !rest.is_empty() {
        warnings.push(c.warning(
            c.pos(),
            "",
            format!("{} bytes after the assets: kept", rest.len()),
        ));
        tails.insert("file".into(), Bytes(rest.to_vec()));
    }
    Ok((
        Bsg {
            big_endian,
            header,
            nodes,
            assets,
            tails,
        },
        warnings,
    ))
}

pub fn write(f: &Bsg) -> Vec<u8> {
    let be = f.big_endian;
    let mut w = Writer::new(be);
    w.u8(u8::from(be));
    w.u8(f.header.byte1);
    w.u16(f.header.short);
    let head_tail = f.tails.get("header").map(|t| t.0.len()).unwrap_or(0);
    // The fixed part is magic, version, ignored and 8 bytes; any other length goes to the tail.
    let mut fixed = f.header.ignored_bytes.0.clone();
    fixed.resize(8, 0);
    w.u32(HEADER_SIZE + head_tail as u32);
    w.bytes(super::bgf::MAGIC);
    w.u32(f.header.version);
    w.u32(f.header.ignored);
    w.bytes(&fixed);
    if let Some(t) = f.tails.get("header") {
        w.bytes(&t.0);
    }
    let mut s = Writer::new(be);
    s.u32(f.nodes.len() as u32);
    s.u32(f.assets.len() as u32);
    write_section(&mut w, &s.buf, &f.tails, "memory");
    let mut s = Writer::new(be);
    for n in &f.nodes {
        s.i32(n.parent);
        s.i32(n.id);
        s.u8(n.kind);
        s.bytes(&n.pad);
        for v in [
            n.translation,
            n.rotation,
            n.scale,
            n.rotate_pivot,
            n.bbox_min,
            n.bbox_max,
        ] {
            for x in v {
                s.f32(x.0);
            }
        }
        s.f32(n.opacity.0);
        s.u8(n.layer);
        s.u8(n.rotation_method);
        s.u8(n.invert_y);
        s.i32(n.unused);
        s.u8(n.transparent);
    }
    write_section(&mut w, &s.buf, &f.tails, "sceneGraph");
    let mut s = Writer::new(be);
    for a in &f.assets {
        s.i32(a.node);
        s.u8(a.kind);
    }
    write_section(&mut w, &s.buf, &f.tails, "assets");
    if let Some(t) = f.tails.get("file") {
        w.bytes(&t.0);
    }
    w.buf
}
