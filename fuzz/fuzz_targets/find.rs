//! `hangar find` on a game made of fuzzed files: the bytes split at zero bytes are, in turn, an
//! extension's content.xml, its indexes, two macro files, its wares, its texts (plain and for a
//! language) and an installed extension's patches of them; gathering the index and searching it
//! must end without a panic, however the texts' references loop or the patches fail.
#![no_main]

use hangar::SharedSource;
use libfuzzer_sys::fuzz_target;
use std::sync::Arc;

const NAMES: &[&str] = &[
    "content.xml",
    "index/macros.xml",
    "index/components.xml",
    "assets/macros/ship_macro.xml",
    "assets/other.xml",
    "libraries/wares.xml",
    "t/0001.xml",
    "t/0001-l044.xml",
    "extensions/ext/content.xml",
    "extensions/ext/t/0001-l044.xml",
    "extensions/ext/libraries/wares.xml",
    "extensions/ext/index/macros.xml",
];

fuzz_target!(|data: &[u8]| {
    let files: Vec<(String, SharedSource)> = data
        .split(|&b| b == 0)
        .zip(NAMES)
        .map(|(bytes, name)| (name.to_string(), Arc::new(bytes.to_vec()) as SharedSource))
        .collect();
    let Ok((view, _)) = hangar::GameView::from_sources("fuzz", files) else {
        return;
    };
    let query = String::from_utf8_lossy(data.get(..8).unwrap_or(data)).into_owned();
    for kind in [None, Some(hangar::FoundKind::Text)] {
        let options = hangar::FindOptions {
            kind,
            cache: false,
            ..Default::default()
        };
        let _ = hangar::find_in(std::slice::from_ref(&view), &query, &options);
        let _ = hangar::find_in(std::slice::from_ref(&view), "a", &options);
    }
    let _ = hangar::macro_by_name(&view, "ship");
});
