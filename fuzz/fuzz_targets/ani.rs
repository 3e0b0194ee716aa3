//! .ani reader, checks and conversion.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    hangar_fuzz::exercise(data, "f_data.ani", &["out.glb", "out.ani"]);
});
