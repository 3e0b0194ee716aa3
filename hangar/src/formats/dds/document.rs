//! Texture files in the registry: DDS (and X4's gzip'd `.gz`), PNG, and TGA (by its name).
//! `hangar info` tells their size, pixel format, mip levels, surfaces and colour space; `validate`
//! finds what is missing or broken; a `.png` or `.dds` output is made by
//! [`super::convert`], the code `hangar convert` uses for textures.

use super::{Content, Header};
use crate::detect::Format;
use crate::document::{Document, FileFormat, Info, Opened};
use crate::error::{Error, ErrorKind, Result, Warning};
use crate::model::Scene;
use crate::validate::Finding;
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};

pub struct TextureFormat;

/// A texture file as read, its name (which tells a TGA) and the facts `info` and `validate` give.
struct TextureDocument<'a> {
    bytes: &'a [u8],
    name: PathBuf,
    facts: Facts,
}

/// What a texture file holds, as its header says.
struct Facts {
    /// "DDS", "PNG", "TGA".
    container: &'static str,
    width: u32,
    height: u32,
    pixel_format: String,
    mip_levels: u32,
    /// Faces times array layers (a cube map has 6 faces).
    surfaces: u32,
    srgb: bool,
    details: Map<String, Value>,
    /// Found while reading the header and sizing the data (a DDS's missing mips).
    findings: Vec<Finding>,
}

impl FileFormat for TextureFormat {
    fn formats(&self) -> &'static [Format] {
        &[Format::Dds, Format::Png, Format::Tga]
    }

    fn detect(&self, bytes: &[u8], ext: &str) -> Option<Format> {
        if bytes.starts_with(b"DDS ") || (ext == "gz" && bytes.starts_with(&[0x1f, 0x8b])) {
            Some(Format::Dds)
        } else if bytes.starts_with(&super::PNG_MAGIC) {
            Some(Format::Png)
        } else {
            (ext == "tga").then_some(Format::Tga)
        }
    }

    fn open<'a>(&self, format: Format, bytes: &'a [u8], path: &Path) -> Result<Opened<'a>> {
        let (format, facts) = if format == Format::Tga {
            (format, tga_facts(bytes)?)
        } else {
            let gzip = !bytes.starts_with(b"DDS ") && !bytes.starts_with(&super::PNG_MAGIC);
            let (format, mut facts) = match super::unpack(bytes)? {
                Content::Dds(d) => (Format::Dds, dds_facts(&d)?),
                Content::Png(p) => (Format::Png, png_facts(&p)?),
            };
            facts.details.insert("gzip".into(), gzip.into());
            (format, facts)
        };
        let document = TextureDocument {
            bytes,
            name: path.to_path_buf(),
            facts,
        };
        Ok(Opened::new(format, document, Vec::new()))
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["png", "dds"]
    }
}

impl Document for TextureDocument<'_> {
    fn info(&self) -> Info {
        let f = &self.facts;
        let mut top = Map::new();
        top.insert("width".into(), f.width.into());
        top.insert("height".into(), f.height.into());
        top.insert("pixel_format".into(), f.pixel_format.clone().into());
        top.insert("mip_levels".into(), f.mip_levels.into());
        top.insert("surfaces".into(), f.surfaces.into());
        top.insert("srgb".into(), f.srgb.into());
        Info {
            format: format!("{} ({})", f.container, f.pixel_format),
            top,
            details: Value::Object(f.details.clone()),
            ..Default::default()
        }
    }

    /// The header's findings, and for a PNG or TGA whether its pixels decode (a DDS's sizes were
    /// all checked against the bytes when it was opened).
    fn validate(&self) -> Vec<Finding> {
        let mut v = self.facts.findings.clone();
        if self.facts.container != "DDS" {
            if let Err(e) = super::load(self.bytes, &self.name) {
                v.push(e.into());
            }
        } else {
            let (sc2, normal) = (in_sc2(&self.name), named_normal(&self.name));
            v.extend(game_findings(&self.facts, self.bytes, sc2, normal));
        }
        v
    }

    fn to_scene(
        &self,
        _name: &str,
        _motions: &[(String, &Opened<'_>)],
    ) -> Result<(Scene, Vec<Warning>)> {
        Err(Error::unsupported(format!(
            "a {} texture is a picture, not a model: it converts to .png or .dds",
            self.facts.container
        )))
    }

    /// A `.png` or `.dds`, made as `hangar convert` makes them (default options).
    fn write(&self, output: &Path) -> Option<Result<(Vec<u8>, Vec<Warning>)>> {
        super::convert(self.bytes, &self.name, output, Default::default())
            .map(|r| r.map(|p| (p.bytes, p.warnings)))
    }
}

/// What `validate` says of a DDS (or X4's `.gz`) a model uses, where the model tells what the
/// name cannot: whether StarCraft II reads it (`sc2`) and whether it is a normal map. The
/// header's findings first; nothing for a PNG (the modder's own picture).
pub fn texture_findings(bytes: &[u8], sc2: bool, normal: bool) -> Vec<Finding> {
    let facts = match super::unpack(bytes) {
        Ok(Content::Dds(d)) => dds_facts(&d),
        Ok(Content::Png(_)) => return Vec::new(),
        Err(e) => return vec![e.into()],
    };
    match facts {
        Ok(f) => {
            let mut v = f.findings.clone();
            v.extend(game_findings(&f, bytes, sc2, normal));
            v
        }
        Err(e) => vec![e.into()],
    }
}

/// Whether `name` lies in a StarCraft II data folder (`.SC2Data`, `.SC2Mod`, `.SC2Map`).
fn in_sc2(name: &Path) -> bool {
    name.components().any(|c| {
        let c = c.as_os_str().to_string_lossy().to_ascii_lowercase();
        [".sc2data", ".sc2mod", ".sc2map"]
            .iter()
            .any(|e| c.ends_with(e))
    })
}

/// Whether `name` says it is a normal map (`_normal`, `_nrm`, ` nrm`, `_n`, `_nm` at the end).
fn named_normal(name: &Path) -> bool {
    let stem = name
        .file_stem()
        .map(|s| s.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let stem = stem.strip_suffix(".dds").unwrap_or(&stem);
    ["normal", "nrm", "norm", "_n", "_nm", " n"]
        .iter()
        .any(|s| stem.ends_with(s))
}

/// Where a game would fail or look wrong with this DDS: a side that is not a power of two, no mip
/// chain, a format StarCraft II does not read (BC7), a normal map in another layout than its game
/// reads (SC2: DXT5nm, x in alpha; X4: RGB). See docs/MATERIALS.md.
fn game_findings(f: &Facts, bytes: &[u8], sc2: bool, normal: bool) -> Vec<Finding> {
    let mut out = Vec::new();
    if !f.width.is_power_of_two() || !f.height.is_power_of_two() {
        out.push(Finding::warning(
            "DDS.width",
            format!(
                "{}x{} is not a power of two on each side: engines of this age expect one (mips and blocks misalign)",
                f.width, f.height
            ),
        ));
    }
    if f.mip_levels <= 1 && f.width.max(f.height) > 1 {
        out.push(Finding::warning(
            "DDS.mipMapCount",
            "no mip levels: the game samples smaller levels at a distance (it shimmers or reads past the data); write a full chain",
        ));
    }
    if sc2 && f.pixel_format.contains("BC7") {
        out.push(Finding::warning(
            "DDS.pixelFormat",
            "BC7 in a StarCraft II folder: the game reads DXT1/DXT5 (BC1/BC3) and uncompressed DDS, not BC7",
        ));
    }
    if normal {
        let decoded = match super::unpack(bytes) {
            Ok(Content::Dds(d)) => super::decode(&d).ok(),
            _ => None,
        };
        if let Some((img, _)) = decoded {
            let layout = crate::material::layout(&img);
            let want = if sc2 {
                crate::material::Layout::Dxt5nm
            } else {
                crate::material::Layout::Rgb
            };
            if layout != want && !f.pixel_format.contains("BC5") {
                out.push(Finding::warning(
                    "DDS.data",
                    format!(
                        "a normal map stored as {layout:?}, but {} reads {want:?} ({})",
                        if sc2 { "StarCraft II" } else { "this game" },
                        if sc2 {
                            "x in alpha, y in green"
                        } else {
                            "x, y, z in red, green, blue"
                        }
                    ),
                ));
            }
        }
    }
    out
}

/// The facts of a DDS (inflated), with a finding for each part of the data that is missing.
fn dds_facts(data: &[u8]) -> Result<Facts> {
    let h = super::read_header(data)?;
    let mut details = Map::new();
    details.insert("container".into(), "DDS".into());
    details.insert("depth".into(), h.depth.into());
    details.insert("cube".into(), h.cube.into());
    details.insert("array_layers".into(), h.layers.into());
    details.insert("dx10".into(), (h.data_offset == 148).into());
    details.insert("file_bytes".into(), data.len().into());
    let described = h.file_bytes();
    details.insert("described_bytes".into(), described.into());
    let mut findings = Vec::new();
    let full = super::encode::full_chain(h.width, h.height.max(h.depth));
    if h.mips > full {
        findings.push(Finding::warning(
            "DDS.mipMapCount",
            format!(
                "{} mip levels: a {}x{} texture has {full} down to 1x1",
                h.mips, h.width, h.height
            ),
        ));
    }
    match described {
        None => findings.push(Finding::error(
            "DDS",
            "the sizes in the header overflow".to_string(),
        )),
        Some(total) if data.len() < total => findings.extend(missing_data(&h, data.len())),
        Some(total) if data.len() > total => findings.push(Finding::note(
            "DDS.data",
            format!(
                "{} bytes after the {total} bytes the header describes",
                data.len() - total
            ),
        )),
        Some(_) => {}
    }
    Ok(Facts {
        container: "DDS",
        width: h.width,
        height: h.height,
        pixel_format: dds_pixel_format(&h),
        mip_levels: h.mips,
        surfaces: surfaces(&h),
        srgb: h.srgb,
        details,
        findings,
    })
}

/// Faces (6 for a cube map) times array layers.
fn surfaces(h: &Header) -> u32 {
    if h.cube {
        6 * h.layers
    } else {
        h.layers
    }
}

/// The first piece of a DDS's data (one mip of one surface; of a volume, one mip of all its
/// slices) that the file's `len` bytes cut short, as an error naming it and what is missing.
fn missing_data(h: &Header, len: usize) -> Option<Finding> {
    // A volume's slices lie together in each mip; faces and layers each carry their own chain.
    let surfaces = if h.depth > 1 { 1 } else { surfaces(h) };
    let mut at = h.data_offset;
    for s in 0..surfaces {
        let (mut w, mut hh, mut d) = (h.width, h.height, h.depth);
        for m in 0..h.mips {
            let bytes = h.format.surface_bytes(w, hh)?.checked_mul(d as usize)?;
            let end = at.checked_add(bytes)?;
            if end > len {
                let which = if surfaces > 1 {
                    format!("mip {m} ({w}x{hh}) of surface {s}")
                } else {
                    format!("mip {m} ({w}x{hh})")
                };
                let pieces = u64::from(surfaces) * u64::from(h.mips);
                let done = u64::from(s) * u64::from(h.mips) + u64::from(m);
                let mut f = Finding::error(
                    format!("DDS.data.surfaces[{s}].mips[{m}]"),
                    format!(
                        "the file ends at byte {len}: {which} needs bytes {at}..{end}; {} of the {pieces} mip levels{} are missing or cut short",
                        pieces - done,
                        if surfaces > 1 { " of all surfaces" } else { "" },
                    ),
                );
                f.offset = Some(len as u64);
                return Some(f);
            }
            at = end;
            w = (w / 2).max(1);
            hh = (hh / 2).max(1);
            d = (d / 2).max(1);
        }
    }
    None
}

/// A DDS's pixel format as tools name it: "BC3/DXT5", "BC7", "RGBA8", "BGRX8", "B5G6R5", "L8".
fn dds_pixel_format(h: &Header) -> String {
    use super::Format as F;
    match h.format {
        F::Bc1 => "BC1/DXT1".into(),
        F::Bc2 => "BC2/DXT3".into(),
        F::Bc3 => "BC3/DXT5".into(),
        F::Bc4 => "BC4/ATI1".into(),
        F::Bc5 => "BC5/ATI2".into(),
        F::Bc6hUnsigned => "BC6H_UF16".into(),
        F::Bc6hSigned => "BC6H_SF16".into(),
        F::Bc7 => "BC7".into(),
        F::Rgba16F => "RGBA16F".into(),
        F::Rgba32F => "RGBA32F".into(),
        F::Masked {
            bits,
            masks,
            luminance,
        } => masked_name(bits, masks, luminance),
    }
}

/// Channels from the lowest bits up (DXGI's order: `B8G8R8A8` holds blue in the first byte),
/// unused bits as X; "BGRA8" when every channel has the same width.
fn masked_name(bits: u32, masks: [u32; 4], luminance: bool) -> String {
    let letters = if luminance {
        ['L', ' ', ' ', 'A']
    } else {
        ['R', 'G', 'B', 'A']
    };
    let mut channels: Vec<(u32, char, u32)> = masks
        .into_iter()
        .zip(letters)
        .filter(|&(m, l)| m != 0 && l != ' ')
        .map(|(m, l)| (m.trailing_zeros(), l, m.count_ones()))
        .collect();
    channels.sort();
    let used: u32 = channels.iter().map(|c| c.2).sum();
    if used < bits {
        channels.push((bits, 'X', bits - used));
    }
    let same = channels.windows(2).all(|w| w[0].2 == w[1].2);
    let mut name: String = channels
        .iter()
        .map(|&(_, l, n)| {
            if same {
                l.to_string()
            } else {
                format!("{l}{n}")
            }
        })
        .collect();
    if same {
        name.push_str(&channels.first().map_or(bits, |c| c.2).to_string());
    }
    name
}

/// The facts of a PNG's header (IHDR and the chunks before the image data).
fn png_facts(data: &[u8]) -> Result<Facts> {
    let broken = |e: png::DecodingError| {
        let kind = match e {
            png::DecodingError::IoError(_) => ErrorKind::Truncated,
            _ => ErrorKind::Invalid,
        };
        Error::new(kind, None, "PNG", format!("not a readable PNG header: {e}"))
    };
    let reader = png::Decoder::new(data).read_info().map_err(broken)?;
    let info = reader.info();
    let colour = match info.color_type {
        png::ColorType::Grayscale => "L",
        png::ColorType::GrayscaleAlpha => "LA",
        png::ColorType::Rgb => "RGB",
        png::ColorType::Rgba => "RGBA",
        png::ColorType::Indexed => "P",
    };
    // PNG's colours are sRGB unless a gamma other than sRGB's (1/2.2) or a profile says otherwise.
    let gamma = info.source_gamma.map(|g| g.into_scaled());
    let srgb = info.srgb.is_some()
        || match gamma {
            Some(g) => g.abs_diff(45455) < 500,
            None => info.icc_profile.is_none(),
        };
    let mut details = Map::new();
    details.insert("container".into(), "PNG".into());
    details.insert("file_bytes".into(), data.len().into());
    details.insert(
        "gamma".into(),
        json!(gamma.map(|g| f64::from(g) / 100_000.0)),
    );
    details.insert("icc_profile".into(), info.icc_profile.is_some().into());
    details.insert("animated".into(), info.animation_control.is_some().into());
    Ok(Facts {
        container: "PNG",
        width: info.width,
        height: info.height,
        pixel_format: format!("{colour}{}", info.bit_depth as u8),
        mip_levels: 1,
        surfaces: 1,
        srgb,
        details,
        findings: Vec::new(),
    })
}

/// The facts of a TGA's header.
fn tga_facts(data: &[u8]) -> Result<Facts> {
    let h = crate::formats::tga::read_header(data)?;
    let pixel_format = match (h.image_type, h.bits) {
        (1 | 9, b) => format!("P{b}"),
        (3 | 11, 8) => "L8".into(),
        (3 | 11, _) => "LA8".into(),
        (_, 32) => "BGRA8".into(),
        (_, 24) => "BGR8".into(),
        (_, 16) if h.descriptor & 0xf != 0 => "BGR5A1".into(),
        _ => "BGR5".into(),
    };
    let mut details = Map::new();
    details.insert("container".into(), "TGA".into());
    details.insert("file_bytes".into(), data.len().into());
    details.insert("image_type".into(), h.image_type.into());
    details.insert("run_length".into(), (h.image_type >= 9).into());
    details.insert("top_down".into(), (h.descriptor & 0x20 != 0).into());
    if h.map_type == 1 {
        details.insert("colour_map_entry_bits".into(), h.map_bits.into());
    }
    Ok(Facts {
        container: "TGA",
        width: u32::from(h.width),
        height: u32::from(h.height),
        pixel_format,
        mip_levels: 1,
        surfaces: 1,
        // TGA states no colour space; 8-bit colour pictures are sRGB to every tool that reads them.
        srgb: true,
        details,
        findings: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::masked_name;

    #[test]
    fn masked_formats_are_named_from_the_lowest_bits_up() {
        let bgra = [0xff_0000, 0xff00, 0xff, 0xff00_0000];
        assert_eq!(masked_name(32, bgra, false), "BGRA8");
        assert_eq!(
            masked_name(32, [0xff, 0xff00, 0xff_0000, 0xff00_0000], false),
            "RGBA8"
        );
        assert_eq!(
            masked_name(32, [0xff_0000, 0xff00, 0xff, 0], false),
            "BGRX8"
        );
        assert_eq!(masked_name(24, [0xff_0000, 0xff00, 0xff, 0], false), "BGR8");
        assert_eq!(masked_name(16, [0xf800, 0x7e0, 0x1f, 0], false), "B5G6R5");
        assert_eq!(masked_name(8, [0xff, 0, 0, 0], true), "L8");
        assert_eq!(masked_name(16, [0xff, 0, 0, 0xff00], true), "LA8");
        assert_eq!(masked_name(8, [0, 0, 0, 0xff], false), "A8");
    }
}
