//! Any bytes as a .cat: read, then every derived step that works on the index alone (data length,
//! path map, rewriting the index, the line-ending diagnosis against the same bytes as a .dat, the
//! destination check of each entry). Nothing may panic.
#![no_main]

use hangar::formats::catalog;
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok((cat, _warnings)) = catalog::read(data) else {
        return;
    };
    let _ = cat.data_len();
    let _ = cat.by_path();
    let _ = catalog::read(&catalog::write_index(&cat));
    let _ = catalog::diagnose_line_endings(&cat, data);
    let _ = catalog::diff(&cat, &cat);
    for e in &cat.entries {
        let _ = catalog::safe_destination(Path::new("out"), e);
    }
});
