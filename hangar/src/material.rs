//! One mapping from each game's materials to the neutral [`Material`]: which texture holds what
//! in which channel, the factors, the alpha. The glTF export, the Blender import (through the
//! Python module) and the page read what this gives; the facts and their sources are in
//! `docs/MATERIALS.md`.
//!
//! - [`m3`]: a StarCraft II / Heroes material (any of the twelve kinds a batch can use) from its
//!   layers and fields; no metal (SC2 shades with a specular colour, not metalness).
//! - [`x4`]: an X4 material from its `material_library.xml` properties.
//! - [`images`]: the glTF images a material needs and how each is made from the game's files;
//!   [`tangent_normals`] and [`metal_roughness`] make the two that are not the file as it is.

use crate::formats::rgba::Image;
use crate::model::{Alpha, Look, Material, Textures};
use serde_json::{json, Map, Value};

/// M3 blend modes (MAT_.blendMode): 0 opaque, 1 alpha blend, 2 add, 3 alpha add, 4 modulate,
/// 5 modulate 2x. Every mode but opaque draws over what is behind, which glTF can only blend.
const M3_OPAQUE: i64 = 0;
/// MAT_.flags bit: both faces are drawn.
const M3_TWO_SIDED: i64 = 0x8;

/// The M3 material `tag` (`MAT_`, `DIS_`, `CMP_`, ...) with its `fields` (name to number, as
/// the reader gives them) and its layers' images (`(slot, path)`: `diffuseLayer`, `normalLayer`,
/// ... ; a buffer material's `texturePaths` come as `texture`). A composite material is made from
/// its first standard section by [`m3_composite`].
pub fn m3(tag: &str, fields: &Map<String, Value>, layers: &[(&str, String)]) -> (Textures, Look) {
    let layer = |slot: &str| {
        layers
            .iter()
            .find(|(s, p)| *s == slot && !p.is_empty())
            .map(|(_, p)| p.replace('\\', "/"))
    };
    let int = |k: &str| fields.get(k).and_then(Value::as_i64).unwrap_or(0);
    let float = |k: &str| fields.get(k).and_then(Value::as_f64).unwrap_or(0.0) as f32;
    let mut t = Textures::default();
    let mut look = Look {
        metallic: 0.0,
        ..Look::default()
    };
    match tag {
        "MAT_" => {
            t.base_color = layer("diffuseLayer");
            t.normal = layer("normalLayer");
            t.emissive = layer("emissiveLayer").or_else(|| layer("emissive2Layer"));
            t.specular = layer("specularLayer");
            t.occlusion = layer("ambientOcclusionLayer");
            // Specularity is a Blinn-Phong exponent: roughness = (2 / (n + 2))^(1/4).
            let n = float("specularity");
            look.roughness = if n > 0.0 {
                (2.0 / (n + 2.0)).sqrt().sqrt()
            } else {
                1.0
            };
            let glow = float("emissiveMultiplier");
            look.emissive = [if glow > 0.0 { glow.min(1.0) } else { 1.0 }; 3];
            look.double_sided = int("flags") & M3_TWO_SIDED != 0;
            let threshold = int("alphaTestThreshold") & 0xFF; // a u8 and three unknown bytes
            look.alpha = if int("blendMode") != M3_OPAQUE {
                Alpha::Blend
            } else if threshold > 0 {
                Alpha::Mask(threshold.min(255) as f32 / 255.0)
            } else {
                Alpha::Opaque
            };
            // An opaque material's diffuse alpha is the team-colour mask, not coverage.
            look.team_colour = t.base_color.is_some() && look.alpha == Alpha::Opaque;
        }
        // Displacement bends what is behind by its normal layer: the nearest is a clear
        // surface with that normal map.
        "DIS_" => {
            t.normal = layer("normalLayer");
            look.base_color = [1.0, 1.0, 1.0, 0.0];
            look.alpha = Alpha::Blend;
        }
        // Volumes (fog, light shafts) are their colour layer blended in.
        "VOL_" | "VON_" => {
            t.base_color = layer("colorLayer");
            look.alpha = Alpha::Blend;
        }
        // Buffer materials (Heroes, MODL v30) name their textures in a list: the first is drawn.
        "MADD" => t.base_color = layer("texture"),
        "HAI_" => {
            t.base_color = layer("baseLayer");
            t.occlusion = layer("ambientOcclusionLayer");
        }
        "TER_" => t.base_color = layer("terrainLayer"),
        "CREP" => t.base_color = layer("creepLayer"),
        _ => {}
    }
    (t, look)
}

/// What glTF has no material for, said in the material's `extras.m3.note`.
pub fn m3_note(tag: &str) -> Option<&'static str> {
    Some(match tag {
        "DIS_" => "displacement material: drawn as a clear surface with its normal layer (glTF has no screen-space distortion)",
        "VOL_" | "VON_" => "volume material: drawn as its colour layer blended (glTF has no volumetric fog)",
        "CMP_" => "composite material: drawn as its first section's material (glTF draws one material a primitive)",
        "MADD" => "buffer material: drawn with the first of its texture paths",
        _ => return None,
    })
}

/// A composite material drawn as the material its first section points to (`section`, an index
/// into the same scene's materials, which follow the model's material map one for one).
pub fn m3_composite(materials: &mut [Material], composite: usize, section: usize) {
    if section == composite {
        return;
    }
    if let Some((t, look)) = materials.get(section).map(|s| (s.textures.clone(), s.look)) {
        if let Some(m) = materials.get_mut(composite) {
            m.textures = t;
            m.look = look;
        }
    }
}

/// An X4 material from its library properties (`(type, name, value)`, in file order). Returns
/// its textures, its look, and every property by name for `extras.x4` (detail, dirt and paint
/// maps and their tiling are there: glTF has no slot for them).
pub fn x4(properties: &[(&str, &str, &str)]) -> (Textures, Look, Map<String, Value>) {
    let mut t = Textures::default();
    let mut all = Map::new();
    let float = |name: &str| -> Option<f32> {
        properties
            .iter()
            .find(|(ty, n, _)| ty.eq_ignore_ascii_case("float") && n.eq_ignore_ascii_case(name))
            .and_then(|(_, _, v)| v.trim().parse::<f32>().ok())
            .filter(|v| v.is_finite())
    };
    for (ty, name, value) in properties {
        if ty.eq_ignore_ascii_case("bitmap") && !value.is_empty() {
            let slot = match name.to_ascii_lowercase().as_str() {
                "diffuse_map" => Some(&mut t.base_color),
                "normal_map" => Some(&mut t.normal),
                "color_glow_map" | "emissive_map" | "glow_map" => Some(&mut t.emissive),
                "metal_map" => Some(&mut t.metal),
                "smooth_map" => Some(&mut t.smooth),
                _ => None,
            };
            if let Some(slot) = slot.filter(|s| s.is_none()) {
                *slot = Some(value.replace('\\', "/"));
            }
        }
        all.entry(name.to_string()).or_insert_with(|| json!(value));
    }
    let strength = |v: Option<f32>| v.map_or(1.0, |v| v.clamp(0.0, 1.0));
    let metalness = float("Metallness").or_else(|| float("Metalness"));
    let glow = float("color_glowStr").filter(|&g| g > 0.0);
    let look = Look {
        // Without a metal map X4 surfaces are dielectric unless the library says otherwise.
        metallic: metalness.map_or(if t.metal.is_some() { 1.0 } else { 0.0 }, |m| {
            m.clamp(0.0, 1.0)
        }),
        // With a smooth map the roughness is the texture's (the `Smoothness` factor stays in
        // extras); without one the factor is the smoothness, and half rough when it is absent.
        roughness: match (&t.smooth, float("Smoothness")) {
            (Some(_), _) => 1.0,
            (None, Some(s)) => 1.0 - s.clamp(0.0, 1.0),
            (None, None) => 0.5,
        },
        emissive: [strength(glow); 3],
        ..Look::default()
    };
    (t, look, all)
}

/// How one glTF image of a material is made from the game's files.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Recipe {
    /// The file as it is (colour, occlusion, specular, emission).
    Plain(String),
    /// A normal map decoded to tangent-space RGB (`tangent_normals`).
    Normal(String),
    /// Metal and smoothness packed as glTF's metallic-roughness (`metal_roughness`).
    MetalRoughness {
        metal: Option<String>,
        smooth: Option<String>,
    },
}

impl Recipe {
    /// The name the image goes by (in the glTF, in the resolved images): a file's game path; for a
    /// packed image its two paths joined by `|`.
    pub fn key(&self) -> String {
        match self {
            Recipe::Plain(p) | Recipe::Normal(p) => p.clone(),
            Recipe::MetalRoughness { metal, smooth } => format!(
                "{}|{}",
                metal.as_deref().unwrap_or(""),
                smooth.as_deref().unwrap_or("")
            ),
        }
    }

    /// The game files it is made from.
    pub fn sources(&self) -> Vec<&str> {
        match self {
            Recipe::Plain(p) | Recipe::Normal(p) => vec![p.as_str()],
            Recipe::MetalRoughness { metal, smooth } => [metal, smooth]
                .into_iter()
                .flatten()
                .map(String::as_str)
                .collect(),
        }
    }
}

/// The glTF slots a material fills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    BaseColor,
    Normal,
    MetallicRoughness,
    Occlusion,
    Emissive,
    /// `KHR_materials_specular`'s specular colour.
    Specular,
}

impl Slot {
    /// The slot's name for faces (Python, the page): `base_color`, `metallic_roughness`, ...
    pub fn name(self) -> &'static str {
        match self {
            Slot::BaseColor => "base_color",
            Slot::Normal => "normal",
            Slot::MetallicRoughness => "metallic_roughness",
            Slot::Occlusion => "occlusion",
            Slot::Emissive => "emissive",
            Slot::Specular => "specular",
        }
    }

    /// The slot [`Slot::name`] names.
    pub fn from_name(name: &str) -> Option<Slot> {
        [
            Slot::BaseColor,
            Slot::Normal,
            Slot::MetallicRoughness,
            Slot::Occlusion,
            Slot::Emissive,
            Slot::Specular,
        ]
        .into_iter()
        .find(|s| s.name() == name)
    }
}

/// Every glTF image `m` needs, by slot.
pub fn images(m: &Material) -> Vec<(Slot, Recipe)> {
    let t = &m.textures;
    let plain = |p: &Option<String>| p.clone().map(Recipe::Plain);
    let mut out = Vec::new();
    for (slot, r) in [
        (Slot::BaseColor, plain(&t.base_color)),
        (Slot::Normal, t.normal.clone().map(Recipe::Normal)),
        (Slot::Occlusion, plain(&t.occlusion)),
        (Slot::Emissive, plain(&t.emissive)),
        (Slot::Specular, plain(&t.specular)),
    ] {
        if let Some(r) = r {
            out.push((slot, r));
        }
    }
    if t.metal.is_some() || t.smooth.is_some() {
        out.push((
            Slot::MetallicRoughness,
            Recipe::MetalRoughness {
                metal: t.metal.clone(),
                smooth: t.smooth.clone(),
            },
        ));
    }
    out
}

/// Empties the textures `slot` is made from (an image that could not be made).
pub fn clear(t: &mut Textures, slot: Slot) {
    match slot {
        Slot::BaseColor => t.base_color = None,
        Slot::Normal => t.normal = None,
        Slot::Occlusion => t.occlusion = None,
        Slot::Emissive => t.emissive = None,
        Slot::Specular => t.specular = None,
        Slot::MetallicRoughness => (t.metal, t.smooth) = (None, None),
    }
}

/// How a normal map stores its vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// x, y, z in red, green, blue (X4; a BC5 map once decoded, z rebuilt).
    Rgb,
    /// DXT5nm: x in alpha, y in green, z rebuilt (StarCraft II; red 1 and blue 0 as stored).
    Dxt5nm,
}

/// The vector a pixel stores under `layout`, each component in -1..=1.
fn vector(px: &[u8], layout: Layout) -> [f32; 3] {
    let unit = |b: u8| b as f32 / 127.5 - 1.0;
    match layout {
        Layout::Rgb => [unit(px[0]), unit(px[1]), unit(px[2])],
        Layout::Dxt5nm => {
            let (x, y) = (unit(px[3]), unit(px[1]));
            [x, y, (1.0 - x * x - y * y).max(0.0).sqrt()]
        }
    }
}

/// The layout `img` is a normal map in: the one whose vectors are near unit length and face out
/// (mean z at least 0.5), judged on up to 4096 pixels; RGB when neither or both are.
pub fn layout(img: &Image) -> Layout {
    let pixels = img.rgba.chunks_exact(4);
    let step = (pixels.len() / 4096).max(1);
    let fits = |layout: Layout| {
        let (mut z, mut unit, mut n) = (0.0f64, 0usize, 0usize);
        for px in img.rgba.chunks_exact(4).step_by(step) {
            let v = vector(px, layout);
            let len = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
            z += v[2] as f64;
            unit += usize::from((0.8..=1.2).contains(&len));
            n += 1;
        }
        n > 0 && z / n as f64 >= 0.5 && unit * 2 > n
    };
    if !fits(Layout::Rgb) && fits(Layout::Dxt5nm) {
        Layout::Dxt5nm
    } else {
        Layout::Rgb
    }
}

/// `img` (a normal map in any [`layout`]) as glTF reads a normal map: tangent-space x, y, z in
/// red, green, blue (n * 0.5 + 0.5), unit length, z rebuilt where the file keeps two channels;
/// alpha opaque.
pub fn tangent_normals(img: &Image) -> Image {
    let layout = layout(img);
    let byte = |v: f32| ((v * 0.5 + 0.5) * 255.0).round().clamp(0.0, 255.0) as u8;
    let mut rgba = Vec::with_capacity(img.rgba.len());
    for px in img.rgba.chunks_exact(4) {
        let [x, y, z] = vector(px, layout);
        // Outward and unit length, as the shader's normalize makes it.
        let z = z.max(0.0);
        let len = (x * x + y * y + z * z).sqrt();
        let [x, y, z] = if len > 1e-6 {
            [x / len, y / len, z / len]
        } else {
            [0.0, 0.0, 1.0]
        };
        rgba.extend_from_slice(&[byte(x), byte(y), byte(z), 255]);
    }
    Image {
        width: img.width,
        height: img.height,
        rgba,
    }
}

/// Rec. 601 luminance of a pixel: grey maps (R = G = B) give their grey.
fn luma(px: &[u8]) -> u8 {
    ((299 * px[0] as u32 + 587 * px[1] as u32 + 114 * px[2] as u32 + 500) / 1000) as u8
}

/// `img` as the grey a metallic-roughness image keeps of it (its luma, as [`metal_roughness`]
/// reads a map): what a map split back from one is compared with.
pub fn as_grey(img: &Image) -> Image {
    grey_by(img, luma)
}

/// A grey image, opaque, each pixel `f` of `img`'s.
fn grey_by(img: &Image, f: impl Fn(&[u8]) -> u8) -> Image {
    Image {
        width: img.width,
        height: img.height,
        rgba: img
            .rgba
            .chunks_exact(4)
            .flat_map(|p| {
                let v = f(p);
                [v, v, v, 255]
            })
            .collect(),
    }
}

/// A metallic-roughness image split back into the game's grey maps: metal (from blue) and
/// smoothness (1 - roughness, from green), the inverse of [`metal_roughness`].
pub fn metal_and_smooth(img: &Image) -> (Image, Image) {
    (grey_by(img, |p| p[2]), grey_by(img, |p| 255 - p[1]))
}

/// Metal and smoothness maps (grey, either may be missing) as glTF's metallic-roughness image:
/// metalness in blue, roughness = 1 - smoothness in green, red and alpha unused (255). The larger
/// map's size; the other is sampled nearest. (The library's `Smoothness` and `Metallness` factors
/// stay factors: see [`x4`].)
pub fn metal_roughness(metal: Option<&Image>, smooth: Option<&Image>) -> Image {
    let size = |i: Option<&Image>| i.map_or(0, |i| i.width as u64 * i.height as u64);
    let big = if size(metal) >= size(smooth) {
        metal
    } else {
        smooth
    };
    let (w, h) = big.map_or((1, 1), |i| (i.width.max(1), i.height.max(1)));
    let at = |img: Option<&Image>, x: u32, y: u32| -> Option<u8> {
        let i = img.filter(|i| i.width > 0 && i.height > 0)?;
        let (sx, sy) = (
            (x as u64 * i.width as u64 / w as u64) as usize,
            (y as u64 * i.height as u64 / h as u64) as usize,
        );
        let o = (sy * i.width as usize + sx) * 4;
        i.rgba.get(o..o + 4).map(luma)
    };
    let mut rgba = Vec::with_capacity(w as usize * h as usize * 4);
    for y in 0..h {
        for x in 0..w {
            let b = at(metal, x, y).unwrap_or(255);
            let g = at(smooth, x, y).map_or(255, |v| 255 - v);
            rgba.extend_from_slice(&[255, g, b, 255]);
        }
    }
    Image {
        width: w,
        height: h,
        rgba,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(w: u32, h: u32, f: impl Fn(u32, u32) -> [u8; 4]) -> Image {
        let mut rgba = Vec::new();
        for y in 0..h {
            for x in 0..w {
                rgba.extend_from_slice(&f(x, y));
            }
        }
        Image {
            width: w,
            height: h,
            rgba,
        }
    }

    fn normals(img: &Image) -> Vec<[f32; 3]> {
        img.rgba
            .chunks_exact(4)
            .map(|p| [0, 1, 2].map(|c| p[c] as f32 / 127.5 - 1.0))
            .collect()
    }

    /// A DXT5nm map (x in alpha, y in green, red 255, blue 0, as SC2 stores them) decodes to unit
    /// normals facing out whose x follows the alpha and y the green.
    #[test]
    fn dxt5nm_decodes_to_unit_tangent_space_normals() {
        let src = image(16, 16, |x, y| {
            [255, (96 + 4 * y) as u8, 0, (80 + 6 * x) as u8]
        });
        assert_eq!(layout(&src), Layout::Dxt5nm);
        let out = tangent_normals(&src);
        for (k, n) in normals(&out).iter().enumerate() {
            let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
            assert!((len - 1.0).abs() < 0.02, "pixel {k}: |n| {len}");
            assert!(n[2] > 0.0, "pixel {k}: z {}", n[2]);
            let (x, y) = (k as u32 % 16, k as u32 / 16);
            let want_x = (80 + 6 * x) as f32 / 127.5 - 1.0;
            let want_y = (96 + 4 * y) as f32 / 127.5 - 1.0;
            assert!((n[0] - want_x).abs() < 0.02, "x {} vs {want_x}", n[0]);
            assert!((n[1] - want_y).abs() < 0.02, "y {} vs {want_y}", n[1]);
        }
    }

    /// An RGB map (X4's: z in blue, alpha 255) stays RGB and comes out normalized.
    #[test]
    fn an_rgb_normal_map_keeps_its_layout() {
        let src = image(8, 8, |x, _| [(100 + 8 * x) as u8, 128, 250, 255]);
        assert_eq!(layout(&src), Layout::Rgb);
        let out = tangent_normals(&src);
        for n in normals(&out) {
            let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
            assert!((len - 1.0).abs() < 0.02 && n[2] > 0.8, "{n:?}");
        }
        assert!(out.rgba[0] < out.rgba[4 * 7], "x grows with the red");
    }

    /// Metal goes to blue as it is; green is 1 - smoothness.
    #[test]
    fn metal_and_smoothness_pack_into_blue_and_green() {
        let metal = image(4, 4, |x, _| [(x * 80) as u8; 4]);
        let smooth = image(2, 2, |_, y| {
            [(y * 200) as u8, (y * 200) as u8, (y * 200) as u8, 255]
        });
        let mr = metal_roughness(Some(&metal), Some(&smooth));
        assert_eq!((mr.width, mr.height), (4, 4));
        let px = |x: usize, y: usize| &mr.rgba[(y * 4 + x) * 4..(y * 4 + x) * 4 + 4];
        assert_eq!(px(3, 0), &[255, 255, 240, 255]);
        assert_eq!(px(1, 3), &[255, 55, 80, 255]);
        let no_metal = metal_roughness(None, Some(&smooth));
        assert_eq!((no_metal.width, no_metal.height), (2, 2));
        assert_eq!(&no_metal.rgba[8..12], &[255, 55, 255, 255]);
    }

    #[test]
    fn m3_materials_claim_no_metal_and_read_their_alpha() {
        let fields = |blend: i64, test: i64| {
            let mut f = Map::new();
            f.insert("blendMode".into(), json!(blend));
            f.insert("alphaTestThreshold".into(), json!(test));
            f.insert("specularity".into(), json!(20.0));
            f
        };
        let layers = [
            ("diffuseLayer", r"Assets\Textures\a_diff.dds".to_string()),
            ("specularLayer", "a_spec.dds".into()),
            ("ambientOcclusionLayer", "a_ao.dds".into()),
            ("normalLayer", String::new()),
        ];
        let (t, look) = m3("MAT_", &fields(0, 128), &layers);
        assert_eq!(t.base_color.as_deref(), Some("Assets/Textures/a_diff.dds"));
        assert_eq!(t.specular.as_deref(), Some("a_spec.dds"));
        assert_eq!(t.occlusion.as_deref(), Some("a_ao.dds"));
        assert_eq!(t.normal, None, "an empty layer is no texture");
        assert_eq!(look.metallic, 0.0);
        assert_eq!(look.alpha, Alpha::Mask(128.0 / 255.0));
        assert!((look.roughness - (2.0f32 / 22.0).sqrt().sqrt()).abs() < 1e-6);
        assert_eq!(m3("MAT_", &fields(1, 0), &layers).1.alpha, Alpha::Blend);
        assert_eq!(m3("MAT_", &fields(0, 0), &layers).1.alpha, Alpha::Opaque);
        let (t, look) = m3("DIS_", &Map::new(), &[("normalLayer", "n.dds".into())]);
        assert_eq!(
            (t.normal.as_deref(), look.alpha),
            (Some("n.dds"), Alpha::Blend)
        );
        assert_eq!(look.metallic, 0.0);
    }

    #[test]
    fn x4_maps_go_to_their_slots_and_the_rest_to_extras() {
        let props = [
            ("BitMap", "diffuse_map", r"assets\textures\hull_diff"),
            ("BitMap", "metal_map", r"assets\textures\hull_metal"),
            ("BitMap", "smooth_map", r"assets\textures\hull_smooth"),
            ("BitMap", "color_glow_map", r"assets\textures\hull_glow"),
            ("BitMap", "diffuse_detail_map", r"assets\textures\detail"),
            ("Float", "color_glowStr", "0.25"),
            ("Float", "Metallness", "1.0"),
        ];
        let (t, look, extras) = x4(&props);
        assert_eq!(t.metal.as_deref(), Some("assets/textures/hull_metal"));
        assert_eq!(t.smooth.as_deref(), Some("assets/textures/hull_smooth"));
        assert_eq!(t.emissive.as_deref(), Some("assets/textures/hull_glow"));
        assert_eq!((look.metallic, look.roughness), (1.0, 1.0));
        assert_eq!(look.emissive, [0.25; 3]);
        assert_eq!(
            extras["diffuse_detail_map"],
            json!(r"assets\textures\detail")
        );
        let m = Material {
            textures: t,
            ..Default::default()
        };
        let slots: Vec<Slot> = images(&m).into_iter().map(|(s, _)| s).collect();
        assert_eq!(
            slots,
            [Slot::BaseColor, Slot::Emissive, Slot::MetallicRoughness]
        );
    }
}
