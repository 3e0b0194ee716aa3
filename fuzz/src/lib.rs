//! What every fuzz target does with its bytes, so the targets differ only by the names they try.

use hangar::{ConvertOptions, Opened, Result, Source};
use std::path::Path;

/// `data` opened through the door, named `name`.
fn open(data: &[u8], name: &str) -> Result<Opened> {
    hangar::open(Source::bytes(name, data.to_vec()))
}

/// `opened` written as `out` with the default options.
fn convert(opened: &Opened, out: &Path) -> Result<Vec<u8>> {
    opened
        .write_as(out, &ConvertOptions::default())
        .map(|c| c.bytes)
}

/// Opens `data` as `name` and runs every command on it: info, validate, dump, and convert to each
/// of `outs`. Nothing may panic; errors are fine.
pub fn exercise(data: &[u8], name: &str, outs: &[&str]) {
    let Ok(opened) = open(data, name) else {
        return;
    };
    let _ = opened.info();
    let _ = opened.validate();
    let _ = opened.dump();
    for out in outs {
        let _ = convert(&opened, Path::new(out));
    }
}

/// Opens `data` as `name` and writes it as each of `outs` with `--textures write`: its images
/// go back as the game's textures. Nothing may panic; errors are fine.
pub fn textures_back(data: &[u8], name: &str, outs: &[&str]) {
    let Ok(opened) = open(data, name) else {
        return;
    };
    let mut options = ConvertOptions::default();
    options.textures.mode = hangar::TextureMode::Write;
    for out in outs {
        let _ = opened.write_as(out, &options);
    }
}

/// Read -> write -> read -> write: hangar's own output must read back and write the same bytes, and
/// its JSON dump must turn back into the same file.
pub fn round_trip(data: &[u8], name: &str) {
    let path = Path::new(name);
    let Ok(opened) = open(data, name) else {
        return;
    };
    let Ok(first) = convert(&opened, path) else {
        return;
    };
    let again = open(&first, name).expect("hangar's own output reads back");
    let second = convert(&again, path).expect("and writes again");
    assert!(first == second, "read -> write is not stable");
    if let Ok(dump) = opened.dump() {
        if let Ok(from_dump) = open(dump.as_bytes(), "f.json") {
            if let Ok(third) = convert(&from_dump, path) {
                assert!(
                    third == first,
                    "the dump does not turn back into the same file"
                );
            }
        }
    }
}

/// Picks one of `names` by the first byte; the rest is the file.
pub fn split<'a, 'n>(data: &'a [u8], names: &[&'n str]) -> Option<(&'n str, &'a [u8])> {
    let (&pick, bytes) = data.split_first()?;
    let name = names.get(pick as usize % names.len().max(1))?;
    Some((name, bytes))
}
