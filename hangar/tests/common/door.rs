//! The door as the tests and benches call it (benches include this file by path).

use std::path::Path;

/// `bytes` opened through the door, named `path` (its extension hints the format; errors name it).
pub fn open(bytes: &[u8], path: &Path) -> hangar::Result<hangar::Opened> {
    hangar::open(hangar::Source::bytes(
        path.to_string_lossy(),
        bytes.to_vec(),
    ))
}

/// `opened` written as `output` with the default options: its bytes and the warnings.
pub fn convert(
    opened: &hangar::Opened,
    output: &Path,
) -> hangar::Result<(Vec<u8>, Vec<hangar::Warning>)> {
    opened
        .write_as(output, &hangar::ConvertOptions::default())
        .map(|c| (c.bytes, c.warnings))
}
