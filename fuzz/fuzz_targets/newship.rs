//! Any bytes as a glTF/GLB scene made into a new X4 ship extension (`hangar::new_ship`, in memory)
//! and into a new turret (`hangar::new_component`: its animations as states, its lights) with small
//! templates: nothing may panic, whatever the nodes, extras, meshes, animations and lights hold.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
use std::sync::OnceLock;

/// A one-macro extension in a temporary folder, made once: a ship's macro and a turret's (whose
/// component has a part and the cockpit connection its macro fills).
fn templates() -> &'static (PathBuf, PathBuf) {
    static T: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    T.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("hangar-fuzz-newship-{}", std::process::id()));
        let macros = dir.join("assets/units/size_s/macros");
        std::fs::create_dir_all(&macros).unwrap();
        std::fs::write(dir.join("content.xml"), "<content id=\"t\"/>").unwrap();
        let m = macros.join("ship_t_macro.xml");
        std::fs::write(&m, "<macros><macro name=\"ship_t_macro\" class=\"ship_s\"><component ref=\"ship_t\"/></macro></macros>").unwrap();
        let turrets = dir.join("assets/props/weaponsystems/macros");
        std::fs::create_dir_all(&turrets).unwrap();
        let t = turrets.join("turret_t_macro.xml");
        std::fs::write(&t, "<macros><macro name=\"turret_t_macro\" class=\"turret\"><component ref=\"turret_t\"/><connections><connection ref=\"con_x\"><macro ref=\"a_macro\" connection=\"c\"/></connection></connections></macro></macros>").unwrap();
        std::fs::write(
            dir.join("assets/props/weaponsystems/turret_t.xml"),
            "<components><component name=\"turret_t\" class=\"turret\"><connections><connection name=\"b\" tags=\"part\"><offset><position x=\"1\" y=\"0\" z=\"0\"/></offset><parts><part name=\"base\"/></parts></connection><connection name=\"con_x\" parent=\"base\" tags=\"turret\"><offset><quaternion qx=\"0\" qy=\"1\" qz=\"0\" qw=\"0\"/></offset></connection></connections></component></components>",
        )
        .unwrap();
        (m, t)
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
    let (ship, turret) = templates();
    let spec = hangar::NewComponent::new(ship.to_string_lossy(), "ship_fuzz");
    let _ = hangar::new_ship(&scene, &spec, None);
    let spec = hangar::NewComponent::new(turret.to_string_lossy(), "turret_fuzz");
    let _ = hangar::new_component(&scene, &spec, None);
});
