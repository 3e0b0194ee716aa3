//! M3 reader, checks and conversions.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    hangar_fuzz::exercise(data, "f.m3", &["out.glb", "out.m3"]);
});
