//! A game view built from bytes, as the browser page builds one from the files a user chose: a
//! fuzzed `.cat` index and its `.dat` (split at the first zero byte), then the first entries listed,
//! each opened through the door, described, checked, converted to glTF and to a component, and
//! the files reading it reads listed (`files_read`). Nothing may panic.
#![no_main]

use hangar::{GameView, SharedSource, Source};
use libfuzzer_sys::fuzz_target;
use std::sync::Arc;

fuzz_target!(|data: &[u8]| {
    let split = data.iter().position(|&b| b == 0).unwrap_or(data.len());
    let (cat, dat) = data.split_at(split);
    let files: Vec<(String, SharedSource)> = vec![
        ("01.cat".into(), Arc::new(cat.to_vec())),
        ("01.dat".into(), Arc::new(dat.get(1..).unwrap_or_default().to_vec())),
    ];
    let Ok((view, _)) = GameView::from_sources("game", files) else {
        return;
    };
    let view = Arc::new(view);
    for path in view.files("").unwrap_or_default().into_iter().take(8) {
        if let Ok(o) = hangar::open(Source::InView(Arc::clone(&view), path.clone())) {
            let _ = o.info();
            let _ = o.validate();
            let _ = o.write_as("x.glb", &Default::default());
            // A component written again through the view (its untouched parts read from it).
            let mut options = hangar::ConvertOptions::default();
            options.textures.views = vec![GameView::clone(&view)];
            let _ = o.write_as("out/x.xml", &options);
        }
        let _ = hangar::files_read(&view, &path);
    }
});
