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
    /// The readable XML form of a .bgf (`<presentation>`).
    AnarkXml,
    /// An X4 component XML (`<components>`): parts, connections, lights.
    ComponentXml,
    Catalog,
    Glb,
    GltfText,
    /// A `hangar dump` JSON file.
    HangarJson,
    /// A DDS texture (also X4's gzip'd `.gz`).
    Dds,
    Png,
    /// A TGA picture (told by its name: TGA has no magic).
    Tga,
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
            Format::AnarkXml => "Anark presentation XML",
            Format::ComponentXml => "X4 component XML",
            Format::Catalog => "X4 catalog (.cat)",
            Format::Glb => "glTF binary (.glb)",
            Format::GltfText => "glTF (.gltf)",
            Format::HangarJson => "hangar JSON dump",
            Format::Dds => "DDS texture",
            Format::Png => "PNG image",
            Format::Tga => "TGA image",
            Format::Unknown => "unknown",
        }
    }

    /// True when hangar reads this format as a model or motion (what a folder conversion takes).
    /// Textures are opened too (`info`, `validate`, `convert` to .png/.dds) but are not models.
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
                | Format::AnarkBgf
                | Format::AnarkBgp
                | Format::AnarkBsg
                | Format::AnarkXml
                | Format::ComponentXml
        )
    }
}

/// Detects the format of `bytes`: each registered format ([`crate::any::formats`]) looks at the
/// leading bytes; `path` (its extension) decides only between formats without a magic.
pub fn detect(bytes: &[u8], path: Option<&Path>) -> Format {
    let ext = path
        .and_then(|p| p.extension())
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    crate::any::formats()
        .iter()
        .find_map(|f| f.detect(bytes, &ext))
        .or_else(|| recognised_only(bytes, &ext))
        .unwrap_or(Format::Unknown)
}

/// Formats hangar knows but does not open as a document, so the message can name them.
fn recognised_only(_bytes: &[u8], ext: &str) -> Option<Format> {
    (ext == "cat").then_some(Format::Catalog)
}

/// The first 4 KiB of `bytes` as text when they hold a JSON object (a glTF or a hangar dump).
pub fn json_head(bytes: &[u8]) -> Option<std::borrow::Cow<'_, str>> {
    let probe = bytes.get(..bytes.len().min(4096))?;
    let first = probe.iter().find(|b| !b.is_ascii_whitespace())?;
    (*first == b'{').then(|| String::from_utf8_lossy(probe))
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
    fn textures_by_magic_and_tga_and_gz_by_name() {
        assert_eq!(detect(b"DDS |\x00\x00\x00", None), Format::Dds);
        assert_eq!(
            detect(b"\x89PNG\r\n\x1a\n", Some(Path::new("a.dds"))),
            Format::Png
        );
        assert_eq!(
            detect(b"\x1f\x8b\x08\x00", Some(Path::new("a.GZ"))),
            Format::Dds
        );
        assert_eq!(
            detect(b"\x1f\x8b\x08\x00", Some(Path::new("a.bin"))),
            Format::Unknown
        );
        assert_eq!(
            detect(b"\x00\x00\x02\x00", Some(Path::new("a.tga"))),
            Format::Tga
        );
        assert!(!Format::Dds.supported() && !Format::Png.supported() && !Format::Tga.supported());
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
