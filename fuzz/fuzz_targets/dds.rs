//! Any bytes as a texture file: DDS, gzip'd DDS or PNG. Nothing may panic, and memory stays bounded
//! by the size the header allows.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(png) = hangar::formats::dds::to_png(data, hangar::formats::dds::PngCompression::Fast)
    {
        assert!(!png.bytes.is_empty());
    }
});
