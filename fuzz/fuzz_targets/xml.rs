//! The library's one XML reading (`hangar::read_xml`): any bytes, DOCTYPEs and entities
//! included, end in a tree or a refusal; no panic, no stack overflow, no expansion past the
//! bounds (a "billion laughs" is refused before it is expanded).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(nodes) = hangar::read_xml(data) {
        assert!(nodes >= 2, "a document holds its root and one element");
    }
});
