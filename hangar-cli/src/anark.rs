//! `hangar hash`: the Anark name hash, as .bgf/.bgp/.bsg files store names.

pub fn print_hashes(names: &[String]) {
    for n in names {
        let h = hangar::anark_hash(n);
        out!("{n}\t{}\t0x{h:08X}", h as i32);
    }
}
