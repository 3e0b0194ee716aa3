//! Any bytes, under every name hangar recognises: open, describe, check, dump, the scene's edge
//! tables (as the Python package hands Blender), and convert to glTF, back to the file's own
//! format and to a whole component. Nothing may panic; errors are fine.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;

const NAMES: [&str; 8] = [
    "f.xmf",
    "f-collision.xmf",
    "f.m3",
    "f.xac",
    "f.xsm",
    "f.xpm",
    "f_data.ani",
    "f.json",
];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    let path = Path::new(NAMES[pick as usize % NAMES.len()]);
    let Ok(opened) = hangar::open(hangar::Source::bytes(
        NAMES[pick as usize % NAMES.len()],
        bytes.to_vec(),
    )) else {
        return;
    };
    let options = hangar::ConvertOptions::default();
    let _ = opened.info();
    let _ = opened.validate();
    let _ = opened.dump();
    if let Ok((scene, _)) = opened.to_scene() {
        for m in &scene.meshes {
            let e = m.edges();
            assert_eq!(e.of_corners.len(), m.corners().count());
        }
    }
    let _ = opened.write_as("out.glb", &options);
    let _ = opened.write_as(path, &options);
    let _ = opened.write_as("out/f.xml", &options);
});
