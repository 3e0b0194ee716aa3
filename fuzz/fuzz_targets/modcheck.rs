//! The whole-mod check (`hangar validate MOD`) on a mod made of fuzzed files: the bytes split at
//! zero bytes are, in turn, the mod's content.xml, its indexes, a macro, a component, its mesh and
//! .ani, wares, the material library, a text file and an ext_01.cat with its .dat; the check and
//! its HTML page must end without a panic, however the references loop or point. The bytes' lines
//! are also a dropped folder's paths for the page's doors (`mod_kind_of_files`, `game_root_in`).
#![no_main]

use hangar::SharedSource;
use libfuzzer_sys::fuzz_target;
use std::sync::Arc;

const NAMES: &[&str] = &[
    "content.xml",
    "index/macros.xml",
    "index/components.xml",
    "assets/ship_macro.xml",
    "assets/ship.xml",
    "assets/ship_data/part-lod0.xmf",
    "assets/ship_data.ani",
    "libraries/wares.xml",
    "libraries/material_library.xml",
    "t/0001-l044.xml",
    "ext_01.cat",
    "ext_01.dat",
];

fuzz_target!(|data: &[u8]| {
    let files: Vec<(String, SharedSource)> = data
        .split(|&b| b == 0)
        .zip(NAMES)
        .map(|(bytes, name)| (name.to_string(), Arc::new(bytes.to_vec()) as SharedSource))
        .collect();
    if let Ok(checked) = hangar::check_mod_files("fuzz", files, None) {
        let _ = checked.to_html();
    }
    let text = String::from_utf8_lossy(data);
    let paths: Vec<&str> = text.lines().take(64).collect();
    let _ = hangar::mod_kind_of_files("fuzz.SC2Mod", paths.iter().copied());
    for p in &paths {
        let _ = hangar::game_root_in(paths.iter().copied(), p);
    }
});
