//! Any bytes as a glTF/GLB scene made into a new X4 ship extension (`hangar::new_ship`, in memory)
//! with a small template: nothing may panic, whatever the nodes, extras and meshes hold.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
use std::sync::OnceLock;

/// A one-macro extension in a temporary folder, made once.
fn template() -> &'static PathBuf {
    static T: OnceLock<PathBuf> = OnceLock::new();
    T.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("hangar-fuzz-newship-{}", std::process::id()));
        let macros = dir.join("assets/units/size_s/macros");
        std::fs::create_dir_all(&macros).unwrap();
        std::fs::write(dir.join("content.xml"), "<content id=\"t\"/>").unwrap();
        let m = macros.join("ship_t_macro.xml");
        std::fs::write(&m, "<macros><macro name=\"ship_t_macro\" class=\"ship_s\"><component ref=\"ship_t\"/></macro></macros>").unwrap();
        m
    })
}

fuzz_target!(|data: &[u8]| {
    let name = if data.starts_with(b"glTF") { "s.glb" } else { "s.gltf" };
    let Ok(opened) = hangar::open(hangar::Source::bytes(name, data.to_vec())) else {
        return;
    };
    let Ok((scene, _)) = opened.to_scene() else {
        return;
    };
    let spec = hangar::NewShip::new(template().to_string_lossy(), "ship_fuzz");
    let _ = hangar::new_ship(&scene, &spec, None);
});
