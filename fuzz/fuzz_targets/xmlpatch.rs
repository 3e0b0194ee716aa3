//! X4 `<diff>` patches (`hangar diff`, `hangar patch`): the bytes split at their first zero byte
//! are a base XML and an edited one. The patch `diff_xml` writes must apply to the base with no
//! operation failing; the second part is also applied to the base as a patch of its own. Neither
//! may panic, however the documents nest or what the `sel`s say.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (base, edited) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &b""[..]),
    };
    if let Ok(patch) = hangar::diff_xml(base, edited) {
        let done = hangar::patch_xml(base, patch.as_bytes()).expect("a written patch reads");
        assert!(done.failures.is_empty(), "{:?}\n{patch}", done.failures);
    }
    let _ = hangar::patch_xml(base, edited);
});
