//! X4's vertex colours are shader data, not a tint (issue 52): every corpus XMF with colour sets goes
//! to glTF with no COLOR_n, each set kept as an `_X4_<ROLE>` attribute holding the XMF's very bytes,
//! and comes back from that glTF with the same COLOR elements byte for byte.

mod common;

use hangar::formats::xmf;
use std::io::Read;
use std::path::{Path, PathBuf};

/// D3DDECLTYPE sizes in bytes (FLOAT1..FLOAT16_4).
const DECL_SIZE: [usize; 17] = [4, 8, 12, 16, 4, 4, 4, 8, 4, 4, 8, 4, 8, 4, 4, 4, 8];
const USAGE_COLOR: u8 = 10;
const D3DCOLOR: i32 = 4;

/// Each D3DCOLOR COLOR element of the XMF as (usage index, RGBA bytes of every vertex), in file
/// order, decoded here from the raw buffers (not through the model the conversion uses).
fn colour_sets(bytes: &[u8]) -> Vec<Set<u8>> {
    let (x, _) = xmf::read::read(bytes).unwrap();
    let mut out = Vec::new();
    for b in &x.buffers {
        if b.elements.iter().all(|e| e.usage != USAGE_COLOR) {
            continue;
        }
        let mut data = b.data.to_vec();
        if b.compressed != 0 {
            let mut inflated = Vec::new();
            flate2::read::ZlibDecoder::new(&data[..])
                .read_to_end(&mut inflated)
                .unwrap();
            data = inflated;
        }
        let mut at = 0;
        for e in &b.elements {
            if e.usage == USAGE_COLOR && e.ty == D3DCOLOR {
                let rgba = (0..b.items as usize)
                    .map(|v| {
                        let p = v * b.item_size as usize + at;
                        [data[p + 2], data[p + 1], data[p], data[p + 3]]
                    })
                    .collect();
                out.push((e.usage_index, rgba));
            }
            at += DECL_SIZE.get(e.ty as usize).copied().unwrap_or(0);
        }
    }
    out
}

/// A set's name (or COLOR index) and its RGBA bytes, one a vertex.
type Set<K> = (K, Vec<[u8; 4]>);

/// The primitives' attributes of a glb: (name, bytes of a normalized u8 VEC4 accessor) for every
/// `_` attribute of the first primitive, and how many primitives carry a COLOR_n.
fn data_attributes(glb: &[u8]) -> (Vec<Set<String>>, usize) {
    let (doc, blob) = common::load_glb(glb);
    let mut tints = 0;
    let mut out = Vec::new();
    for m in doc.meshes() {
        for (k, p) in m.primitives().enumerate() {
            for (sem, a) in p.attributes() {
                match sem {
                    gltf::Semantic::Colors(_) => tints += 1,
                    gltf::Semantic::Extras(name) if k == 0 => {
                        assert_eq!(a.data_type(), gltf::accessor::DataType::U8, "{name}");
                        assert!(a.normalized(), "{name} is normalized");
                        assert_eq!(a.dimensions(), gltf::accessor::Dimensions::Vec4);
                        let v = a.view().unwrap();
                        let stride = v.stride().unwrap_or(4);
                        let base = v.offset() + a.offset();
                        let values = (0..a.count())
                            .map(|i| {
                                let s = &blob[base + i * stride..base + i * stride + 4];
                                [s[0], s[1], s[2], s[3]]
                            })
                            .collect();
                        out.push((name, values));
                    }
                    _ => {}
                }
            }
        }
    }
    (out, tints)
}

fn corpus_xmfs() -> Option<Vec<PathBuf>> {
    let root = common::corpus_root()?;
    let mut files = Vec::new();
    common::walk(&root, &["xmf"], &mut files);
    files.sort();
    Some(files)
}

#[test]
fn x4_colour_sets_are_data_attributes_with_the_xmf_bytes_and_come_back() {
    let Some(files) = corpus_xmfs() else { return };
    let (mut with_sets, mut sets_seen, mut multimat) = (0, 0, 0);
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        let want = colour_sets(&bytes);
        if want.is_empty() {
            continue;
        }
        with_sets += 1;
        sets_seen += want.len();
        let opened = common::open(&bytes, f).unwrap();
        let (glb, _) = common::convert(&opened, Path::new("out.glb")).unwrap();
        let (got, tints) = data_attributes(&glb);
        let name = common::name(f);
        assert_eq!(tints, 0, "{name}: a primitive carries COLOR_n");
        assert_eq!(got.len(), want.len(), "{name}: one attribute a colour set");
        for (id, values) in &want {
            let (attr, _) = got
                .iter()
                .find(|(_, v)| v == values)
                .unwrap_or_else(|| panic!("{name}: no attribute holds COLOR{id}'s bytes"));
            assert!(attr.starts_with("X4_"), "{name}: {attr}");
            if attr == "X4_MULTIMAT" {
                multimat += 1;
                assert!(*id > 0, "{name}: COLOR0 is never the multimat set");
            } else if *id == 0 {
                assert_eq!(attr, "X4_COL", "{name}");
            }
        }
        // Back to XMF from the glb: the same COLOR elements, byte for byte.
        let back = common::open(&glb, Path::new("back.glb")).unwrap();
        let (xmf_again, _) = common::convert(&back, Path::new("back.xmf")).unwrap();
        let again = colour_sets(&xmf_again);
        let ids = |s: &[Set<u8>]| s.iter().map(|x| x.0).collect::<Vec<_>>();
        assert_eq!(
            ids(&again),
            ids(&want),
            "{name}: COLOR indices after glTF -> XMF"
        );
        assert!(
            again == want,
            "{name}: colour bytes differ after glTF -> XMF"
        );
    }
    eprintln!("{with_sets} XMFs with {sets_seen} colour sets ({multimat} multimat sets)");
    assert!(with_sets >= 140, "{with_sets} corpus XMFs with colour sets");
    assert!(multimat >= 30, "{multimat} multimat sets");
}
