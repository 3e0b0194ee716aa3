//! XMF reader, checks and conversions (visual and collision).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    hangar_fuzz::exercise(data, "f.xmf", &["out.glb", "out.xmf"]);
    hangar_fuzz::exercise(data, "f-collision.xmf", &["out.glb"]);
});
