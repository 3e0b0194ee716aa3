//! X4 component XML: read into a scene (connections, parts, lights, offsets) and written back.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The component reader works on files (its parts are found beside the XML): one scratch
    // folder a fuzzing process.
    let dir = std::env::temp_dir().join(format!("hangar-fuzz-component-{}", std::process::id()));
    if std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    let xml = dir.join("ship.xml");
    if std::fs::write(&xml, data).is_err() {
        return;
    }
    if let Ok((scene, _)) = hangar::open(xml.as_path()).and_then(|o| o.to_scene()) {
        let options = hangar::ConvertOptions::default();
        let _ = hangar::write_scene(&scene, dir.join("out").join("ship.xml"), &options);
    }
});
