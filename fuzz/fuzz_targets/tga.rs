//! Any bytes as a TGA picture (read by name, so every input is tried as TGA), then to PNG. Nothing
//! may panic, and memory stays bounded by what the bytes can describe.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(img) = hangar::formats::tga::decode(data) {
        assert_eq!(img.rgba.len(), img.width as usize * img.height as usize * 4);
    }
    let opts = hangar::formats::dds::PngOptions::default();
    let _ = hangar::formats::dds::to_png_with(data, std::path::Path::new("f.tga"), opts);
});
