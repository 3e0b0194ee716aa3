//! Writes the sample models in `samples/` with hangar's own XMF writer:
//! `cargo run -p hangar --example make_samples`.

use hangar::formats::xmf::{mesh::from_mesh, write::write, write::Target};
use std::path::Path;

// The wedge is built in code through `hangar::model`; the tests build it from the same file.
#[path = "../tests/common/wedge.rs"]
#[allow(dead_code)]
mod wedge;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples");
    std::fs::create_dir_all(&dir)?;
    let (mesh, materials) = wedge::wedge();
    for (name, target) in [
        ("wedge-lod0.xmf", Target::Visual),
        ("wedge-collision.xmf", Target::Collision),
    ] {
        let (x, _) = from_mesh(&mesh, &materials, target)?;
        let bytes = write(&x)?;
        std::fs::write(dir.join(name), &bytes)?;
        println!("wrote samples/{name} ({} bytes)", bytes.len());
    }
    Ok(())
}
