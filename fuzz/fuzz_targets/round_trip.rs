//! Read -> write -> read -> write gives the same bytes, and the dump turns back into the same file.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some((name, bytes)) = hangar_fuzz::split(
        data,
        &["f.xmf", "f.m3", "f.xac", "f.xsm", "f.xpm", "f_data.ani"],
    ) {
        hangar_fuzz::round_trip(bytes, name);
    }
});
