//! Which format a file is, from its leading bytes; the extension is only a hint for formats without
//! a magic number.

use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Xmf,
    Xac,
    Xsm,
    Xpm,
    Ani,
    M3Md34,
    M3Md33,
    AnarkBgf,
    AnarkBgp,
    AnarkBsg,
    Catalog,
    Glb,
    GltfText,
    /// A `hangar dump` JSON file.
    HangarJson,
    Unknown,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Xmf => "XMF",
            Format::Xac => "XAC (Emotion FX actor)",
            Format::Xsm => "XSM (Emotion FX skeletal motion)",
            Format::Xpm => "XPM (Emotion FX morph motion)",
            Format::Ani => "X4 part animation (.ani)",
            Format::M3Md34 => "M3 (MD34)",
            Format::M3Md33 => "M3 (MD33)",
            Format::AnarkBgf => "Anark BGF",
            Format::AnarkBgp => "Anark BGP",
            Format::AnarkBsg => "Anark BSG",
            Format::Catalog => "X4 catalog (.cat)",
            Format::Glb => "glTF binary (.glb)",
            Format::GltfText => "glTF (.gltf)",
            Format::HangarJson => "hangar JSON dump",
            Format::Unknown => "unknown",
        }
    }

    /// True when hangar can read this format today.
    pub fn supported(self) -> bool {
        matches!(
            self,
            Format::Xmf
                | Format::M3Md34
                | Format::M3Md33
                | Format::Xac
                | Format::Xsm
                | Format::Xpm
                | Format::Ani
                | Format::Glb
                | Format::GltfText
                | Format::HangarJson
        )
    }
}

fn looks_like_ani(b: &[u8]) -> bool {
    // Header: i32 count, i32 key data offset (= 16 + 160 * count), i32 version, i32 zero.
    if b.len() < 16 {
        return false;
    }
    let w = |i: usize| i32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    let count = w(0) as i64;
    (0..=1_000_000).contains(&count) && w(4) as i64 == 16 + 160 * count && w(8) >= 1 && w(8) <= 16
}

/// True when `bytes` is an X4 component XML: a `<components` root within the first KiB.
pub fn is_component_xml(bytes: &[u8]) -> bool {
    let head = bytes.get(..bytes.len().min(1024)).unwrap_or(bytes);
    String::from_utf8_lossy(head).contains("<components")
}

/// Detects the format of `bytes`; `path` (its extension) decides only between formats without a magic.
pub fn detect(bytes: &[u8], path: Option<&Path>) -> Format {
    let ext = path
        .and_then(|p| p.extension())
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let head = |m: &[u8]| bytes.starts_with(m);
    if head(b"XUMF") {
        return Format::Xmf;
    }
    if head(b"XAC ") {
        return Format::Xac;
    }
    if head(b"XSM ") {
        return Format::Xsm;
    }
    if head(b"XPM ") {
        return Format::Xpm;
    }
    // M3 tags are stored byte-reversed.
    if head(b"43DM") {
        return Format::M3Md34;
    }
    if head(b"33DM") {
        return Format::M3Md33;
    }
    if head(b"glTF") {
        return Format::Glb;
    }
    if bytes.len() >= 14 {
        match &bytes[6..14] {
            b"AnarkBGF" => return Format::AnarkBgf,
            b"AnarkBGP" => return Format::AnarkBgp,
            b"AnarkBSG" => return Format::AnarkBsg,
            _ => {}
        }
    }
    if looks_like_ani(bytes) && (ext == "ani" || ext.is_empty() || bytes.len() >= 16) {
        return Format::Ani;
    }
    let text = bytes
        .iter()
        .take(4096)
        .position(|b| !b.is_ascii_whitespace())
        .map(|i| bytes[i]);
    if text == Some(b'{') {
        // Both are JSON objects: a dump says which format it holds, glTF has an asset.
        let probe = &bytes[..bytes.len().min(4096)];
        let s = String::from_utf8_lossy(probe);
        if s.contains("\"hangar_dump\"") {
            return Format::HangarJson;
        }
        if ext == "gltf" || s.contains("\"asset\"") {
            return Format::GltfText;
        }
        return Format::HangarJson;
    }
    if ext == "cat" {
        return Format::Catalog;
    }
    Format::Unknown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_wins_over_extension() {
        assert_eq!(
            detect(b"XUMF\x03\x00\x40\x00", Some(Path::new("a.m3"))),
            Format::Xmf
        );
        assert_eq!(
            detect(b"43DM\x00\x00\x00\x00", Some(Path::new("a.xmf"))),
            Format::M3Md34
        );
        assert_eq!(detect(b"XAC \x01\x00\x00\x00", None), Format::Xac);
        assert_eq!(
            detect(b"\x00\x04\x1a\x00\x00\x00AnarkBGF", None),
            Format::AnarkBgf
        );
        assert_eq!(detect(b"glTF\x02\x00\x00\x00", None), Format::Glb);
        assert_eq!(detect(b"hello", Some(Path::new("a.xmf"))), Format::Unknown);
    }

    #[test]
    fn ani_is_recognised_by_its_header() {
        let mut b = vec![0u8; 16];
        b[4..8].copy_from_slice(&16i32.to_le_bytes());
        b[8..12].copy_from_slice(&1i32.to_le_bytes());
        assert_eq!(detect(&b, Some(Path::new("x_data.ANI"))), Format::Ani);
    }

    #[test]
    fn json_is_a_dump_or_gltf() {
        assert_eq!(
            detect(b" {\"hangar_dump\": 1, \"format\": \"xmf\"}", None),
            Format::HangarJson
        );
        assert_eq!(
            detect(b"{\"asset\": {\"version\": \"2.0\"}}", None),
            Format::GltfText
        );
    }
}
