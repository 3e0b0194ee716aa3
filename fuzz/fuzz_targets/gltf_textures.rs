//! A glTF's images written back as game textures (`hangar convert x.glb Model.m3 --textures write`):
//! the images read, decoded, compared with the originals and encoded as DDS.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some((name, bytes)) = hangar_fuzz::split(data, &["f.gltf", "f.glb"]) {
        hangar_fuzz::textures_back(bytes, name, &["Model.m3", "part-lod0.xmf"]);
    }
});
