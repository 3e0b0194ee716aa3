//! image_dds encodes through intel_tex_2, whose prebuilt kernels include a C++ object that needs
//! the C++ runtime; on Linux nothing else links it (intel_tex_2 leaves it out), so say so here.

fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-lib=dylib=stdc++");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
