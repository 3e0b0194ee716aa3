//! Any bytes as an MPQ archive (a StarCraft II map or mod): its tables read, every file it names
//! read whole, the same through the game view read in slices, and the files rebuilt into a new
//! archive that reads back. Nothing may panic or allocate more than the input allows.
#![no_main]

use hangar::formats::mpq::Archive;
use libfuzzer_sys::fuzz_target;
use std::sync::Arc;

fuzz_target!(|data: &[u8]| {
    let data = data.to_vec();
    let Ok(a) = Archive::from_source(&data) else {
        return;
    };
    let mut files = Vec::new();
    for e in &a.entries {
        if let Ok(b) = a.read(&data, e) {
            files.push((e.path.clone(), b));
        }
    }
    if let Ok(view) = hangar::GameView::archive_source(Arc::new(data.clone()), "fuzz.SC2Map") {
        for p in view.files("").unwrap_or_default() {
            let _ = view.read(&p);
        }
    }
    // The archive's own files ((listfile), (attributes)) are made by the writer, not given.
    let given: Vec<(String, &[u8])> = files
        .iter()
        .filter(|(n, _)| !n.starts_with('('))
        .map(|(n, b)| (n.clone(), &b[..]))
        .collect();
    if let Ok(again) = hangar::archives::build(&given) {
        assert!(Archive::from_source(&again).is_ok());
    }
});
