//! glTF and GLB import, converted to every format hangar writes from a scene.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some((name, bytes)) = hangar_fuzz::split(data, &["f.gltf", "f.glb"]) {
        hangar_fuzz::exercise(
            bytes,
            name,
            &["out.xmf", "part-collision.xmf", "out.xac", "out.glb"],
        );
    }
});
