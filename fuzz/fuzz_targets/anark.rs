//! Any bytes as a .bgf, .bsg or .bgp (and as presentation XML): read, check, write, read again.
//! Nothing may panic; what was read must write back to the same bytes.
#![no_main]

use hangar::formats::anark::{self, check, xml, Anark};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(f) = xml::from_xml(text) {
            let _ = check::check_bgf(&f);
            if let Ok(bytes) = anark::bgf::write(&f) {
                let _ = anark::bgf::read(&bytes);
            }
        }
    }
    let Ok((a, _)) = anark::read(data, true) else {
        return;
    };
    let _ = check::check(&a);
    let _ = a.info();
    let json = a.to_json();
    let _ = Anark::from_json(&json);
    if let Anark::Bgf(f) = &a {
        let _ = xml::from_xml(&xml::to_xml(f));
    }
    if let Anark::Bsg(f) = &a {
        let _ = anark::scene::to_scene(f);
    }
    if let Ok(out) = a.write() {
        assert_eq!(out, data, "read then write must give the same bytes");
        assert!(anark::read(&out, true).is_ok());
    }
});
