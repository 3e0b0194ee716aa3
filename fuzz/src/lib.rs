//! What every fuzz target does with its bytes, so the targets differ only by the names they try.

use hangar::any;
use std::path::Path;

/// Opens `data` as `name` and runs every command on it: info, validate, dump, and convert to each
/// of `outs`. Nothing may panic; errors are fine.
pub fn exercise(data: &[u8], name: &str, outs: &[&str]) {
    let path = Path::new(name);
    let Ok(opened) = any::open(data, path) else {
        return;
    };
    let _ = opened.info();
    let _ = opened.validate();
    let _ = opened.dump();
    for out in outs {
        let _ = any::convert(&opened, path, Path::new(out));
    }
}

/// Read -> write -> read -> write: hangar's own output must read back and write the same bytes, and
/// its JSON dump must turn back into the same file.
pub fn round_trip(data: &[u8], name: &str) {
    let path = Path::new(name);
    let Ok(opened) = any::open(data, path) else {
        return;
    };
    let Ok((first, _)) = any::convert(&opened, path, path) else {
        return;
    };
    let again = any::open(&first, path).expect("hangar's own output reads back");
    let (second, _) = any::convert(&again, path, path).expect("and writes again");
    assert!(first == second, "read -> write is not stable");
    if let Ok(dump) = opened.dump() {
        let json = Path::new("f.json");
        if let Ok(from_dump) = any::open(dump.as_bytes(), json) {
            if let Ok((third, _)) = any::convert(&from_dump, json, path) {
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
