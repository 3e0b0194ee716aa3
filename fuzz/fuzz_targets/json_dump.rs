//! hangar JSON dumps turned back into binaries.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    hangar_fuzz::exercise(
        data,
        "f.json",
        &["out.xmf", "out.xac", "out.m3", "out.ani", "out.glb"],
    );
});
