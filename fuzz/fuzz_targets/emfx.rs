//! XAC / XSM / XPM reader, checks and conversions (the first byte picks the kind).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some((name, bytes)) = hangar_fuzz::split(data, &["f.xac", "f.xsm", "f.xpm"]) {
        hangar_fuzz::exercise(bytes, name, &["out.glb", name]);
    }
});
