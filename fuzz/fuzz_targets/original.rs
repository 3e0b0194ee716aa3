//! `hangar convert GLB OUT --original SRC`: any glTF bytes, written back as an XMF (first byte even)
//! or a component (odd) with the shipped sample as the original: the extras taken back by name, the
//! mesh compared as triangles, carried files checked.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, glb)) = data.split_first() else {
        return;
    };
    let original = concat!(env!("CARGO_MANIFEST_DIR"), "/../samples/wedge-lod0.xmf");
    let Ok(opened) = hangar::open(hangar::Source::bytes("edited.glb", glb.to_vec())) else {
        return;
    };
    let options = hangar::ConvertOptions {
        original: Some(original.into()),
        ..Default::default()
    };
    let dir = std::env::temp_dir().join(format!("hangar-fuzz-original-{}", std::process::id()));
    let out = if pick % 2 == 0 { dir.join("wedge-lod0.xmf") } else { dir.join("ship.xml") };
    let _ = opened.write_as(&out, &options);
});
