//! The Anark name hash and the reverse table that turns hashes back into names.
//!
//! Files store names only as hashes. The table holds every name the spec lists (attribute names,
//! param types, Lua registry words) and every name in the published presentation XML dumps.

use std::sync::OnceLock;

/// Mask of the name bits of an attribute key; bits 27..29 hold the value type.
pub const NAME_BITS: u32 = 0x07FF_FFFF;

/// The spec's hash: over the bytes including the final zero, as signed chars, wrapping at 32 bits.
pub fn hash(name: &str) -> u32 {
    let mut r: u32 = 0;
    let bytes = name.as_bytes();
    for i in 0..100 {
        // The hash reads at most 100 chars; a shorter name ends with its zero.
        let c = bytes.get(i).copied().unwrap_or(0);
        r = r.wrapping_mul(0x1003F).wrapping_add(c as i8 as i32 as u32);
        if c == 0 {
            break;
        }
    }
    r
}

struct Table {
    full: Vec<(u32, &'static str)>,
    low: Vec<(u32, &'static str)>,
}

fn table() -> &'static Table {
    static T: OnceLock<Table> = OnceLock::new();
    T.get_or_init(|| {
        let names = include_str!("names.txt").lines().filter(|l| !l.is_empty());
        let mut full: Vec<(u32, &'static str)> = names.map(|n| (hash(n), n)).collect();
        full.sort_unstable();
        full.dedup_by_key(|e| e.0);
        let mut low: Vec<(u32, &'static str)> =
            full.iter().map(|&(h, n)| (h & NAME_BITS, n)).collect();
        low.sort_unstable();
        low.dedup_by_key(|e| e.0);
        Table { full, low }
    })
}

fn find(list: &[(u32, &'static str)], h: u32) -> Option<&'static str> {
    list.binary_search_by_key(&h, |e| e.0)
        .ok()
        .and_then(|i| list.get(i))
        .map(|e| e.1)
}

/// The name whose full 32-bit hash is `h` (element names, param types).
pub fn name_of(h: u32) -> Option<&'static str> {
    find(&table().full, h)
}

/// The name whose hash matches `key` in bits 0..26 (attribute keys).
pub fn attr_name_of(key: u32) -> Option<&'static str> {
    find(&table().low, key & NAME_BITS)
}

/// A full hash as text: the known name, or `0x........`.
pub fn show(h: u32) -> String {
    name_of(h).map_or_else(|| format!("0x{h:08X}"), str::to_string)
}

/// An attribute key's name bits as text: the known name, or `0x........` of bits 0..26.
pub fn show_attr(key: u32) -> String {
    attr_name_of(key).map_or_else(|| format!("0x{:08X}", key & NAME_BITS), str::to_string)
}

/// Reads a name written by [`show`]/[`show_attr`] back: `0x` hex is taken as is, anything else hashed.
pub fn parse(text: &str) -> u32 {
    text.strip_prefix("0x")
        .or_else(|| text.strip_prefix("0X"))
        .and_then(|h| u32::from_str_radix(h, 16).ok())
        .unwrap_or_else(|| hash(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_hashes() {
        assert_eq!(hash("_AKIsContract"), 0x473F25FB);
        assert_eq!(hash(""), 0);
        assert_eq!(attr_name_of(0x073F25FB | (4 << 27)), Some("_AKIsContract"));
        assert_eq!(show(hash("opacity")), "opacity");
        assert_eq!(show(0x1234_5678), "0x12345678");
        assert_eq!(parse("0x073F25FB"), 0x073F25FB);
        assert_eq!(parse("opacity"), hash("opacity"));
    }

    #[test]
    fn chars_above_127_are_signed() {
        // "\u{e9}" is C3 A9 in UTF-8: both bytes count as negative chars.
        let want = ((0xC3u8 as i8 as i32 as u32).wrapping_mul(0x1003F))
            .wrapping_add(0xA9u8 as i8 as i32 as u32)
            .wrapping_mul(0x1003F);
        assert_eq!(hash("\u{e9}"), want);
    }
}
