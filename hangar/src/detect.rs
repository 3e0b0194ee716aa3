//! The formats hangar knows by name. Which one a file is, is asked of the registered formats
//! ([`crate::any::detect`]): its leading bytes, the extension only a hint for formats without a magic.

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
    /// An MPQ archive (a StarCraft II map or mod saved as one file).
    Mpq,
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
            Format::Mpq => "MPQ archive (StarCraft II map or mod)",
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

/// Formats hangar knows but does not open as a document, so the message can name them.
pub(crate) fn recognised_only(_bytes: &[u8], ext: &str) -> Option<Format> {
    (ext == "cat").then_some(Format::Catalog)
}

/// The first 4 KiB of `bytes` as text when they hold a JSON object (a glTF or a hangar dump).
pub fn json_head(bytes: &[u8]) -> Option<std::borrow::Cow<'_, str>> {
    let probe = bytes.get(..bytes.len().min(4096))?;
    let first = probe.iter().find(|b| !b.is_ascii_whitespace())?;
    (*first == b'{').then(|| String::from_utf8_lossy(probe))
}
