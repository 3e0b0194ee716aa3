//! Textures: every corpus DDS decodes to the pixels a second decoder (Pillow 11) gives, hand-built
//! DDS files check the edges (truncation, gzip bombs, unknown formats), and textured corpus models
//! embed their textures as PNG.

mod common;

use hangar::formats::dds::{self, PngCompression};
use hangar::ErrorKind;
use std::io::Write;
use std::path::{Path, PathBuf};

type Pixel = (u32, u32, [u8; 4]);

/// (file under textures/, family, width, height, pixels as Pillow decodes them).
const REFERENCE: &[(&str, &str, u32, u32, &[Pixel])] = &[
    ("ArtemKez__testMod/Base.SC2Data/Assets/Textures/Capillary Tower dif.dds", "BC3", 512, 512, &[(0, 0, [32, 37, 27, 255]), (256, 170, [62, 24, 18, 255]), (511, 511, [29, 38, 21, 255])]),
    ("ArtemKez__testMod/Base.SC2Data/Assets/Textures/Capillary Tower nrm.dds", "BC3", 512, 512, &[(0, 0, [255, 138, 0, 128]), (256, 170, [255, 137, 0, 136]), (511, 511, [255, 148, 0, 128])]),
    ("DeadAirRT__deadairfactionamarr/assets/fx/gui/textures/ships/ship_dam_l_omen_macro.gz", "BC3", 256, 256, &[(0, 0, [0, 0, 0, 0]), (128, 85, [107, 101, 90, 255]), (255, 255, [0, 0, 0, 0])]),
    ("DeadAirRT__deadairfactionamarr/assets/textures/coercer/coercer_diffuse.gz", "BC3", 1024, 1024, &[(0, 0, [66, 65, 66, 255]), (512, 341, [96, 91, 96, 255]), (1023, 1023, [66, 65, 66, 255])]),
    ("DeadAirRT__deadairfactionamarr/assets/textures/coercer/coercer_normal.gz", "BC3", 1024, 1024, &[(0, 0, [123, 130, 255, 255]), (512, 341, [123, 125, 255, 255]), (1023, 1023, [132, 130, 255, 255])]),
    ("SC2-Honkai-Mods__HonkaiUnitsMod/Base.SC2Data/Assets/Textures/HonkaiUnitStatus.dds", "BC3", 512, 256, &[(0, 0, [0, 0, 0, 0]), (256, 85, [255, 255, 255, 0]), (511, 255, [255, 255, 255, 0])]),
    ("UniTrader__UTFactionLogos/assets/markings/logos/faction_leddaindustrial/data/faction_leddaindustrial.dds", "BC3", 510, 512, &[(0, 0, [0, 0, 0, 0]), (255, 170, [60, 96, 132, 133]), (509, 511, [0, 0, 0, 0])]),
    ("UniTrader__UTPlayerLogos/Player Logos/player logo 8.dds", "BC3", 275, 275, &[(0, 0, [0, 0, 0, 0]), (137, 91, [38, 53, 65, 255]), (274, 274, [0, 0, 0, 0])]),
    ("X4Reemergence-Project__otas_shippack/assets/fx/gui/textures/shipicon/ship_m_bomber.gz", "RGBA", 128, 128, &[(0, 0, [0, 0, 0, 0]), (64, 42, [0, 0, 0, 255]), (127, 127, [0, 0, 0, 0])]),
    ("python-pillow__Pillow/Tests/images/argb-32bpp_MipMaps-1.dds", "RGBA8", 256, 256, &[(0, 0, [255, 255, 255, 0]), (128, 85, [242, 251, 3, 255]), (255, 255, [56, 60, 65, 255])]),
    ("python-pillow__Pillow/Tests/images/ati1.dds", "BC4", 64, 64, &[(0, 0, [0, 0, 0, 255]), (32, 21, [0, 0, 0, 255]), (63, 63, [128, 128, 128, 255])]),
    ("python-pillow__Pillow/Tests/images/ati2.dds", "BC5", 256, 256, &[(0, 0, [70, 104, 0, 255]), (128, 85, [72, 69, 0, 255]), (255, 255, [157, 128, 0, 255])]),
    ("python-pillow__Pillow/Tests/images/bc5_unorm.dds", "BC5", 256, 256, &[(0, 0, [70, 104, 0, 255]), (128, 85, [72, 69, 0, 255]), (255, 255, [157, 128, 0, 255])]),
    ("python-pillow__Pillow/Tests/images/bc7-argb-8bpp_MipMaps-1.dds", "BC7", 256, 256, &[(0, 0, [255, 255, 255, 0]), (128, 85, [242, 251, 3, 255]), (255, 255, [56, 60, 65, 255])]),
    ("python-pillow__Pillow/Tests/images/dxt3-argb-8bbp-explicitalpha_MipMaps-1.dds", "BC2", 256, 256, &[(0, 0, [0, 109, 255, 255]), (128, 85, [0, 65, 156, 153]), (255, 255, [255, 255, 255, 0])]),
    ("rodriguez404__mineralz-evolution/Assets/Textures/war3_blue_glow2.dds", "BC3", 32, 32, &[(0, 0, [0, 0, 0, 255]), (16, 10, [30, 28, 98, 255]), (31, 31, [0, 0, 0, 255])]),
    ("rodriguez404__mineralz-evolution/Assets/Textures/war3_teamglow00.dds", "BC1", 32, 32, &[(0, 0, [0, 0, 0, 255]), (16, 10, [52, 0, 0, 255]), (31, 31, [0, 0, 0, 255])]),
    ("rodriguez404__mineralz-evolution/Assets/Textures/Buttons/REDCrystal_Vespene_Spec2.dds", "RGB", 64, 64, &[(0, 0, [39, 75, 148, 255]), (32, 21, [25, 130, 33, 255]), (63, 63, [39, 75, 148, 255])]),
    ("vicboyv__thethingrevival.SC2Map/assets/textures/FlameBPTexture.dds", "BC1", 256, 256, &[(0, 0, [0, 0, 0, 0]), (128, 85, [30, 59, 60, 255]), (255, 255, [0, 0, 0, 0])]),
];

fn textures_root() -> Option<PathBuf> {
    let Some(root) = std::env::var_os("HANGAR_CORPUS") else {
        eprintln!("skipped: HANGAR_CORPUS is not set, so the corpus tests do not run");
        return None;
    };
    let dir = Path::new(&root).join("textures");
    assert!(
        dir.is_dir(),
        "HANGAR_CORPUS is set but {} is missing",
        dir.display()
    );
    Some(dir)
}

fn decode_file(bytes: &[u8]) -> dds::Image {
    match dds::unpack(bytes).unwrap() {
        dds::Content::Dds(d) => dds::decode(&d).unwrap().0,
        dds::Content::Png(_) => panic!("a PNG, not a DDS"),
    }
}

#[test]
fn corpus_textures_decode_to_the_reference_pixels() {
    let Some(root) = textures_root() else { return };
    for (file, family, w, h, pixels) in REFERENCE {
        let bytes = std::fs::read(root.join(file)).unwrap();
        let img = decode_file(&bytes);
        assert_eq!((img.width, img.height), (*w, *h), "{file}");
        // Pillow compares BC4 in red only and leaves BC5's blue at 0 (hangar rebuilds Z there).
        let channels = match *family {
            "BC4" => 1,
            "BC5" => 2,
            _ => 4,
        };
        for (x, y, want) in *pixels {
            let at = ((y * w + x) * 4) as usize;
            let got = &img.rgba[at..at + 4];
            for c in 0..channels {
                // Block decoders round the interpolated colours a little differently.
                let d = (i16::from(got[c]) - i16::from(want[c])).abs();
                assert!(
                    d <= 3,
                    "{file} ({family}) at {x},{y}: {got:?}, Pillow {want:?}"
                );
            }
        }
    }
}

#[test]
fn every_corpus_texture_converts_to_a_png_of_its_size() {
    let Some(root) = textures_root() else { return };
    let mut files = Vec::new();
    common::files_under(&root, &mut files);
    files.retain(|f| {
        let n = f.to_string_lossy().to_lowercase();
        n.ends_with(".dds") || n.ends_with(".gz")
    });
    assert_eq!(files.len(), 28, "the corpus's texture files");
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        let png = dds::to_png(&bytes, PngCompression::Fast)
            .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        assert_eq!(dds::png_size(&png.bytes), Some((png.width, png.height)));
        let h = match dds::unpack(&bytes).unwrap() {
            dds::Content::Dds(d) => dds::read_header(&d).unwrap(),
            dds::Content::Png(_) => continue,
        };
        assert_eq!(
            (png.width, png.height),
            (h.width, h.height),
            "{}",
            f.display()
        );
    }
}

#[test]
fn textured_corpus_models_embed_their_diffuse_textures() {
    let Some(root) = textures_root() else { return };
    let out = common::gltf_out("textures");
    // (model, material count with an embedded base colour, sizes of the first one)
    let models = [
        ("ArtemKez__testMod/Base.SC2Data/Assets/Models/Capillary Tower.m3", (512, 512)),
        ("SC2-Honkai-Mods__HonkaiUnitsMod/Base.SC2Data/Assets/Models/HonkaiUnitStatus/HonkaiUnitStatus_NoEnergy.m3", (512, 256)),
        ("rodriguez404__mineralz-evolution/Assets/Models/Personal_skins/War3_NetherDragon_Portrait.m3", (32, 32)),
        ("vicboyv__thethingrevival.SC2Map/Flamethrowerbackpack.m3", (256, 256)),
    ];
    for (rel, size) in models {
        let path = root.join(rel);
        let bytes = std::fs::read(&path).unwrap();
        let opened = common::open(&bytes, &path).unwrap();
        let dest = out.join(format!("{}.glb", common::name(&path)));
        let (glb, _) = common::convert(&opened, &dest).unwrap();
        std::fs::write(&dest, &glb).unwrap();
        let (doc, blob) = common::load_glb(&glb);
        let m = doc
            .materials()
            .find_map(|m| m.pbr_metallic_roughness().base_color_texture())
            .unwrap_or_else(|| panic!("{rel}: no base colour texture"));
        let gltf::image::Source::View { view, mime_type } = m.texture().source().source() else {
            panic!("{rel}: not embedded")
        };
        assert_eq!(mime_type, "image/png");
        let png = &blob[view.offset()..view.offset() + view.length()];
        assert_eq!(dds::png_size(png), Some(size), "{rel}");
        // The image keeps the game's path, so the way back points at the game's texture.
        let name = m.texture().source().name().unwrap().to_lowercase();
        assert!(
            name.contains("textures/") && name.ends_with(".dds"),
            "{name}"
        );
    }
}

/// A DDS header for `fourcc` (or masks when `fourcc` is None), then `data`.
fn dds_file(w: u32, h: u32, mips: u32, fourcc: Option<&[u8; 4]>, data: &[u8]) -> Vec<u8> {
    let mut b = vec![0u8; 128];
    b[..4].copy_from_slice(b"DDS ");
    let put = |b: &mut Vec<u8>, at: usize, v: u32| b[at..at + 4].copy_from_slice(&v.to_le_bytes());
    put(&mut b, 4, 124);
    put(&mut b, 8, 0x1007);
    put(&mut b, 12, h);
    put(&mut b, 16, w);
    put(&mut b, 28, mips);
    put(&mut b, 76, 32);
    match fourcc {
        Some(f) => {
            put(&mut b, 80, 0x4);
            b[84..88].copy_from_slice(f);
        }
        None => {
            put(&mut b, 80, 0x41);
            put(&mut b, 88, 32);
            put(&mut b, 92, 0xff_0000);
            put(&mut b, 96, 0xff00);
            put(&mut b, 100, 0xff);
            put(&mut b, 104, 0xff00_0000);
        }
    }
    b.extend_from_slice(data);
    b
}

fn gzip(b: &[u8]) -> Vec<u8> {
    let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    z.write_all(b).unwrap();
    z.finish().unwrap()
}

#[test]
fn uncompressed_bgra_and_a_solid_bc1_block_decode_exactly() {
    // Two BGRA pixels: (r 1, g 2, b 3, a 4) and (r 250, g 251, b 252, a 253).
    let f = dds_file(2, 1, 1, None, &[3, 2, 1, 4, 252, 251, 250, 253]);
    let (img, w) = dds::decode(&f).unwrap();
    assert!(w.is_empty(), "{w:?}");
    assert_eq!(img.rgba, [1, 2, 3, 4, 250, 251, 252, 253]);
    // A BC1 block whose both colours are pure red (0xf800) on a 3x3 texture (not a multiple of 4).
    let f = dds_file(3, 3, 1, Some(b"DXT1"), &[0, 0xf8, 0, 0xf8, 0, 0, 0, 0]);
    let (img, _) = dds::decode(&f).unwrap();
    assert_eq!(img.rgba.len(), 9 * 4);
    assert!(
        img.rgba.chunks(4).all(|p| p == [255, 0, 0, 255]),
        "{:?}",
        &img.rgba[..8]
    );
    // And through gzip, and to a PNG of the right size.
    let png = dds::to_png(&gzip(&f), PngCompression::Best).unwrap();
    assert_eq!((png.width, png.height), (3, 3));
    assert_eq!(dds::png_size(&png.bytes), Some((3, 3)));
}

#[test]
fn a_truncated_dds_is_an_error_naming_the_bytes_needed() {
    let f = dds_file(8, 8, 1, Some(b"DXT5"), &[0; 40]);
    let e = dds::decode(&f).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Truncated);
    assert!(e.message.contains("needs 64 bytes"), "{}", e.message);
    let e = dds::read_header(&f[..100]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Truncated);
}

#[test]
fn unknown_formats_and_absurd_sizes_are_refused() {
    let e = dds::decode(&dds_file(4, 4, 1, Some(b"ETC2"), &[0; 16])).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Unsupported);
    assert_eq!(e.path, "DDS.pixelFormat.fourCC");
    let e = dds::decode(&dds_file(1 << 20, 4, 1, Some(b"DXT1"), &[])).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Invalid);
    let e = dds::unpack(b"not a texture").err().unwrap();
    assert_eq!(e.kind, ErrorKind::Invalid);
}

#[test]
fn a_gzip_bomb_stops_at_the_size_its_header_allows() {
    // 4x4 DXT1 needs 8 bytes of pixels; the stream carries 64 MiB of zeros after them.
    let mut f = dds_file(4, 4, 1, Some(b"DXT1"), &[0; 8]);
    f.resize(f.len() + (64 << 20), 0);
    let z = gzip(&f);
    assert!(z.len() < 1 << 20);
    let e = dds::unpack(&z).err().unwrap();
    assert_eq!(e.kind, ErrorKind::Refused);
    assert!(e.message.contains("136 bytes"), "{}", e.message);
}

#[test]
fn x4_parts_get_their_textures_from_the_mods_material_library() {
    let Some(root) = textures_root() else { return };
    let out = common::gltf_out("textures_x4");
    // (part, material, base colour size, normal size)
    let parts = [
        ("DeadAirRT__deadairfactionamarr/assets/units/size_m/ship_dam_m_coercer_data/part_main-lod0.xmf", "coercer.evemata", (1024, 1024), Some((1024, 1024))),
        ("UniTrader__UTFactionLogos/assets/markings/logos/faction_argongovernment/data/10m/part_main-lod0.xmf", "logos.faction_argongovernment", (512, 512), None),
    ];
    for (i, (rel, name, base, normal)) in parts.into_iter().enumerate() {
        let path = root.join(rel);
        let bytes = std::fs::read(&path).unwrap();
        let opened = common::open(&bytes, &path).unwrap();
        let dest = out.join(format!("part{i}.glb"));
        let (glb, warnings) = common::convert(&opened, &dest).unwrap();
        assert!(
            warnings.iter().all(|w| !w.message.contains("left out")),
            "{warnings:?}"
        );
        std::fs::write(&dest, &glb).unwrap();
        let (doc, blob) = common::load_glb(&glb);
        let m = doc.materials().find(|m| m.name() == Some(name)).unwrap();
        let size = |t: gltf::Texture<'_>| {
            let gltf::image::Source::View { view, mime_type } = t.source().source() else {
                panic!("{rel}: not embedded")
            };
            assert_eq!(mime_type, "image/png");
            dds::png_size(&blob[view.offset()..view.offset() + view.length()]).unwrap()
        };
        let b = m.pbr_metallic_roughness().base_color_texture().unwrap();
        assert_eq!(size(b.texture()), base, "{rel}");
        assert_eq!(
            m.normal_texture().map(|n| size(n.texture())),
            normal,
            "{rel}"
        );
        // The library's other layers stay named in extras.
        let extras = m.extras().as_ref().unwrap().get();
        assert!(extras.contains("diffuse_map"), "{extras}");
    }
}

// ---- PNG -> DDS (issue 16): encoded by block_compression, read back by hangar's own decoder ----

use dds::encode::{Encoding, Mipmaps, Options as DdsOptions};

const RED: [u8; 4] = [255, 0, 0, 255];
const GREEN: [u8; 4] = [0, 255, 0, 255];
const BLUE: [u8; 4] = [0, 0, 255, 255];
const HALF_WHITE: [u8; 4] = [255, 255, 255, 128];

/// An 8x8 picture of four solid 4x4 blocks: red, green (top), blue, half-transparent white.
fn four_blocks() -> dds::Image {
    let mut rgba = Vec::new();
    for y in 0..8 {
        for x in 0..8 {
            rgba.extend_from_slice(&match (x < 4, y < 4) {
                (true, true) => RED,
                (false, true) => GREEN,
                (true, false) => BLUE,
                (false, false) => HALF_WHITE,
            });
        }
    }
    dds::Image {
        width: 8,
        height: 8,
        rgba,
    }
}

fn pixel(img: &dds::Image, x: u32, y: u32) -> [u8; 4] {
    let at = ((y * img.width + x) * 4) as usize;
    img.rgba[at..at + 4].try_into().unwrap()
}

fn close(got: [u8; 4], want: [u8; 4], channels: &[usize], tolerance: i16, what: &str) {
    for &c in channels {
        let d = (i16::from(got[c]) - i16::from(want[c])).abs();
        assert!(d <= tolerance, "{what}: got {got:?}, want {want:?}");
    }
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

/// An encoding, its FourCC, file size, channels compared and tolerance.
type Case = (Encoding, &'static [u8; 4], usize, &'static [usize], i16);

#[test]
fn a_png_encodes_to_each_bc_format_and_decodes_back() {
    let png = dds::encode_png(&four_blocks(), PngCompression::Fast).unwrap();
    // (format, FourCC, file size with 4 mips: header + 8x8, 4x4, 2x2, 1x1 blocks, channels
    // compared, tolerance)
    let cases: [Case; 5] = [
        (Encoding::Bc7, b"DX10", 148 + 7 * 16, &[0, 1, 2, 3], 2),
        (Encoding::Bc3, b"DXT5", 128 + 7 * 16, &[0, 1, 2, 3], 4),
        (Encoding::Bc1, b"DXT1", 128 + 7 * 8, &[0, 1, 2], 4),
        (Encoding::Bc4, b"ATI1", 128 + 7 * 8, &[0], 2),
        (Encoding::Bc5, b"ATI2", 128 + 7 * 16, &[0, 1], 2),
    ];
    for (encoding, fourcc, size, channels, tol) in cases {
        let opts = hangar::TextureOptions {
            dds: DdsOptions {
                encoding,
                mipmaps: Mipmaps::Full,
            },
            ..Default::default()
        };
        let picture = common::open(&png, Path::new("blocks.png"))
            .unwrap()
            .write_as("blocks.dds", &hangar::ConvertOptions::from(opts))
            .unwrap();
        let what = encoding.name();
        let f = picture.bytes;
        assert_eq!(f.len(), size, "{what}: file size");
        assert_eq!(&f[84..88], fourcc, "{what}");
        if encoding == Encoding::Bc7 {
            assert_eq!(u32_at(&f, 128), 98, "BC7_UNORM");
            assert_eq!(u32_at(&f, 140), 1, "array size");
        }
        let h = dds::read_header(&f).unwrap();
        assert_eq!((h.width, h.height, h.mips), (8, 8, 4), "{what}");
        assert_eq!(h.format, encoding.format(), "{what}");
        assert_eq!(h.file_bytes(), Some(size), "{what}");
        assert_eq!(picture.what, format!("8x8, {what}, 4 mip levels"));
        let (img, warnings) = dds::decode(&f).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!((img.width, img.height), (8, 8));
        let want: [[u8; 4]; 4] = match encoding {
            // One channel, as grey.
            Encoding::Bc4 => [[255; 4], [0, 0, 0, 255], [0, 0, 0, 255], [255; 4]],
            _ => [RED, GREEN, BLUE, HALF_WHITE],
        };
        for (k, (x, y)) in [(1, 1), (6, 2), (2, 5), (7, 7)].into_iter().enumerate() {
            close(
                pixel(&img, x, y),
                want[k],
                channels,
                tol,
                &format!("{what} at {x},{y}"),
            );
        }
        if encoding == Encoding::Bc1 {
            // BC1 keeps the opaque blocks opaque.
            assert_eq!(pixel(&img, 1, 1)[3], 255);
        }
    }
}

#[test]
fn the_mip_chain_holds_the_averages_down_to_one_pixel() {
    let f = dds::encode::encode(&four_blocks(), DdsOptions::default()).unwrap();
    assert_eq!(f.len(), 148 + 7 * 16);
    // The last 16 bytes are the 1x1 level: behind a 1x1 header it decodes to the average of the
    // four colours (127.5, 127.5, 127.5, 223.25).
    let mut one = f[..148].to_vec();
    one[12..16].copy_from_slice(&1u32.to_le_bytes());
    one[16..20].copy_from_slice(&1u32.to_le_bytes());
    one[28..32].copy_from_slice(&1u32.to_le_bytes());
    one.extend_from_slice(&f[f.len() - 16..]);
    let (img, _) = dds::decode(&one).unwrap();
    close(
        pixel(&img, 0, 0),
        [128, 128, 128, 223],
        &[0, 1, 2, 3],
        4,
        "1x1 mip",
    );
    // The 4x4 level (bytes 148 + 64 ..): each pixel is one block's colour.
    let mut four = f[..148].to_vec();
    four[12..16].copy_from_slice(&4u32.to_le_bytes());
    four[16..20].copy_from_slice(&4u32.to_le_bytes());
    four[28..32].copy_from_slice(&1u32.to_le_bytes());
    four.extend_from_slice(&f[148 + 64..148 + 80]);
    let (img, _) = dds::decode(&four).unwrap();
    // One BC7 block of four colours: a little further from each than a solid block. Its
    // half-transparent quarter keeps its colour but not its alpha: block_compression 0.11 leaves
    // the alpha error out of the opaque modes' score (its compute_opaque_err is never called), and
    // neither its thorough nor its alpha-only settings find this block's two-subset alpha fit.
    // Solid transparent blocks keep their alpha (the case above).
    close(
        pixel(&img, 0, 0),
        RED,
        &[0, 1, 2, 3],
        8,
        "4x4 mip, top left",
    );
    close(
        pixel(&img, 3, 3),
        HALF_WHITE,
        &[0, 1, 2],
        8,
        "4x4 mip, bottom right",
    );
}

#[test]
fn bc7_keeps_the_alpha_of_blocks_with_two_colours() {
    // Each block half opaque red, half white at alpha 64 (a mask's edge).
    let mut rgba = Vec::new();
    for _ in 0..8 {
        for x in 0..8 {
            rgba.extend_from_slice(if x % 4 < 2 {
                &RED
            } else {
                &[255, 255, 255, 64]
            });
        }
    }
    let img = dds::Image {
        width: 8,
        height: 8,
        rgba,
    };
    let f = dds::encode::encode(&img, DdsOptions::default()).unwrap();
    let (back, _) = dds::decode(&f).unwrap();
    for (x, want) in [
        (0, RED),
        (3, [255, 255, 255, 64]),
        (5, RED),
        (6, [255, 255, 255, 64]),
    ] {
        close(
            pixel(&back, x, 5),
            want,
            &[0, 1, 2, 3],
            4,
            &format!("pixel {x},5"),
        );
    }
}

#[test]
fn without_mipmaps_and_at_odd_sizes() {
    let f = dds::encode::encode(
        &four_blocks(),
        DdsOptions {
            encoding: Encoding::Bc7,
            mipmaps: Mipmaps::None,
        },
    )
    .unwrap();
    let h = dds::read_header(&f).unwrap();
    assert_eq!((h.mips, f.len()), (1, 148 + 4 * 16));
    // 5x3 opaque teal: 3 levels (5x3, 2x1, 1x1), 2 + 1 + 1 BC1 blocks.
    let teal = dds::Image {
        width: 5,
        height: 3,
        rgba: [0u8, 128, 128, 255].repeat(15),
    };
    let f = dds::encode::encode(
        &teal,
        DdsOptions {
            encoding: Encoding::Bc1,
            mipmaps: Mipmaps::Full,
        },
    )
    .unwrap();
    assert_eq!(f.len(), 128 + 4 * 8);
    assert_eq!(dds::read_header(&f).unwrap().mips, 3);
    let (img, _) = dds::decode(&f).unwrap();
    assert_eq!((img.width, img.height), (5, 3));
    close(
        pixel(&img, 4, 2),
        [0, 128, 128, 255],
        &[0, 1, 2, 3],
        4,
        "teal",
    );
    // One pixel.
    let dot = dds::Image {
        width: 1,
        height: 1,
        rgba: vec![10, 20, 30, 40],
    };
    let f = dds::encode::encode(&dot, DdsOptions::default()).unwrap();
    assert_eq!(f.len(), 148 + 16);
    close(
        pixel(&dds::decode(&f).unwrap().0, 0, 0),
        [10, 20, 30, 40],
        &[0, 1, 2, 3],
        2,
        "1x1",
    );
}

/// A PNG of `w` x `h` with the colour type, depth and (palette) chunk given.
fn png_of(w: u32, h: u32, color: png::ColorType, depth: png::BitDepth, data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut e = png::Encoder::new(&mut out, w, h);
        e.set_color(color);
        e.set_depth(depth);
        if color == png::ColorType::Indexed {
            e.set_palette(vec![255, 0, 0, 0, 0, 255]);
            e.set_trns(vec![255, 64]);
        }
        let mut wr = e.write_header().unwrap();
        wr.write_image_data(data).unwrap();
    }
    out
}

#[test]
fn every_png_colour_type_reads_as_rgba() {
    use png::{BitDepth, ColorType};
    let grey = png_of(2, 1, ColorType::Grayscale, BitDepth::Eight, &[0, 200]);
    assert_eq!(
        dds::encode::read_png(&grey).unwrap().rgba,
        [0, 0, 0, 255, 200, 200, 200, 255]
    );
    let grey_alpha = png_of(1, 1, ColorType::GrayscaleAlpha, BitDepth::Eight, &[90, 30]);
    assert_eq!(
        dds::encode::read_png(&grey_alpha).unwrap().rgba,
        [90, 90, 90, 30]
    );
    let rgb = png_of(1, 1, ColorType::Rgb, BitDepth::Eight, &[1, 2, 3]);
    assert_eq!(dds::encode::read_png(&rgb).unwrap().rgba, [1, 2, 3, 255]);
    // 16-bit: the high byte of each value.
    let rgba16 = png_of(
        1,
        1,
        ColorType::Rgba,
        BitDepth::Sixteen,
        &[1, 0, 2, 0, 3, 0, 4, 0],
    );
    assert_eq!(dds::encode::read_png(&rgba16).unwrap().rgba, [1, 2, 3, 4]);
    // Palette with transparency: index 0 red (opaque), index 1 blue (alpha 64).
    let indexed = png_of(2, 1, ColorType::Indexed, BitDepth::Eight, &[1, 0]);
    assert_eq!(
        dds::encode::read_png(&indexed).unwrap().rgba,
        [0, 0, 255, 64, 255, 0, 0, 255]
    );
    // Broken files are errors with a place, never a panic.
    let mut cut = rgb.clone();
    cut.truncate(cut.len() - 20);
    let e = dds::encode::read_png(&cut).unwrap_err();
    assert!(e.path.starts_with("PNG"), "{e}");
    let e = dds::encode::read_png(b"\x89PNG\r\n\x1a\nnonsense").unwrap_err();
    assert_eq!(e.path, "PNG");
    let e = dds::encode::encode(
        &dds::Image {
            width: 2,
            height: 2,
            rgba: vec![0; 15],
        },
        DdsOptions::default(),
    )
    .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Invalid);
}

// ---- Cube maps and arrays to PNG: every surface side by side ----

const FACES: [[u8; 4]; 6] = [
    [255, 0, 0, 255],
    [0, 255, 0, 255],
    [0, 0, 255, 255],
    [255, 255, 0, 255],
    [0, 255, 255, 255],
    [255, 0, 255, 128],
];

/// An uncompressed RGBA (B, G, R, A in memory) cube map of 4x4 faces, one colour a face, with
/// `mips` levels a face (the smaller levels black, so a wrong stride shows).
fn cube_dds(mips: u32) -> Vec<u8> {
    let mut data = Vec::new();
    for [r, g, b, a] in FACES {
        data.extend([b, g, r, a].repeat(16));
        for level in 1..mips {
            let side = (4u32 >> level).max(1) as usize;
            data.extend([0, 0, 0, 255].repeat(side * side));
        }
    }
    let mut f = dds_file(4, 4, mips, None, &data);
    // caps2: CUBEMAP and all six faces.
    f[112..116].copy_from_slice(&0xfe00u32.to_le_bytes());
    f
}

#[test]
fn a_cube_map_becomes_a_strip_of_its_six_faces() {
    for mips in [1, 3] {
        let f = cube_dds(mips);
        let (img, warnings) = dds::decode_with(&f, dds::Surfaces::Strip).unwrap();
        assert_eq!((img.width, img.height), (24, 4), "mips {mips}");
        for (k, colour) in FACES.iter().enumerate() {
            for (x, y) in [(0, 0), (3, 3), (1, 2)] {
                assert_eq!(
                    pixel(&img, k as u32 * 4 + x, y),
                    *colour,
                    "face {k} at {x},{y}"
                );
            }
        }
        assert!(warnings.iter().all(|w| w.note), "{warnings:?}");
        assert!(warnings[0].message.contains("+X, -X"), "{warnings:?}");
        // The first surface alone, as a glTF gets it, with a warning.
        let (img, warnings) = dds::decode(&f).unwrap();
        assert_eq!((img.width, img.height), (4, 4));
        assert_eq!(pixel(&img, 2, 2), FACES[0]);
        assert!(warnings[0].message.contains("only the first surface"));
    }
    // Through the conversion a `hangar convert cube.dds out.png` does.
    let opts = hangar::TextureOptions {
        surfaces: dds::Surfaces::Strip,
        ..Default::default()
    };
    let picture = common::open(&cube_dds(1), Path::new("cube.dds"))
        .unwrap()
        .write_as("cube.png", &hangar::ConvertOptions::from(opts))
        .unwrap();
    let back = dds::encode::read_png(&picture.bytes).unwrap();
    assert_eq!((back.width, back.height), (24, 4));
    assert_eq!(pixel(&back, 21, 1), FACES[5]);
    // A face missing is an error naming it.
    let f = cube_dds(1);
    let e = dds::decode_with(&f[..f.len() - 10], dds::Surfaces::Strip).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Truncated);
    assert_eq!(e.path, "DDS.data.surfaces[5]");
}

#[test]
fn one_mip_of_one_face_is_picked() {
    let f = cube_dds(3);
    let levels = dds::levels(&f, Path::new("cube.dds")).unwrap();
    assert_eq!((levels.mips, levels.surfaces), (3, 6));
    for (k, colour) in FACES.iter().enumerate() {
        let one = dds::Surfaces::One {
            mip: 0,
            surface: k as u32,
        };
        let (img, warnings) = dds::decode_with(&f, one).unwrap();
        assert_eq!((img.width, img.height), (4, 4));
        assert_eq!(pixel(&img, 3, 3), *colour, "face {k}");
        assert!(warnings.is_empty(), "{warnings:?}");
    }
    // The smaller levels are black: picking them finds them after the face's first level.
    let one = |mip, surface| dds::decode_with(&f, dds::Surfaces::One { mip, surface });
    let (img, _) = one(1, 4).unwrap();
    assert_eq!(
        (img.width, img.height, pixel(&img, 1, 1)),
        (2, 2, [0, 0, 0, 255])
    );
    let (img, _) = one(2, 5).unwrap();
    assert_eq!((img.width, img.height), (1, 1));
    // Past what the file holds: refused, saying what it holds.
    let e = one(3, 0).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Refused);
    assert!(e.message.contains("3 mip levels and 6 surfaces"), "{e}");
    assert_eq!(one(0, 6).unwrap_err().kind, ErrorKind::Refused);
    // Through the door, as the page asks for it.
    let opened = common::open(&f, Path::new("cube.dds")).unwrap();
    assert_eq!(opened.levels().unwrap().unwrap(), levels);
    let opts = hangar::TextureOptions {
        surfaces: dds::Surfaces::One { mip: 0, surface: 2 },
        ..Default::default()
    };
    let picture = opened
        .write_as("face.png", &hangar::ConvertOptions::from(opts))
        .unwrap();
    let back = dds::encode::read_png(&picture.bytes).unwrap();
    assert_eq!(
        (back.width, back.height, pixel(&back, 0, 0)),
        (4, 4, FACES[2])
    );
}

#[test]
fn an_array_becomes_a_strip_of_its_layers() {
    // DX10, RGBA8 (DXGI 28), 3 layers of 2x2 with 2 mips each.
    let mut f = dds_file(2, 2, 2, Some(b"DX10"), &[]);
    for v in [28u32, 3, 0, 3, 0] {
        f.extend(v.to_le_bytes());
    }
    let layers = [[10u8, 20, 30, 255], [40, 50, 60, 255], [70, 80, 90, 255]];
    for l in layers {
        f.extend(l.repeat(4));
        f.extend([0, 0, 0, 255]); // the 1x1 level
    }
    let (img, _) = dds::decode_with(&f, dds::Surfaces::Strip).unwrap();
    assert_eq!((img.width, img.height), (6, 2));
    for (k, l) in layers.iter().enumerate() {
        assert_eq!(pixel(&img, k as u32 * 2 + 1, 1), *l, "layer {k}");
    }
}

// ---- TGA ----

/// A TGA header: image type, colour map (first, length, bits), size, bits a pixel, descriptor.
fn tga(ty: u8, map: (u16, u16, u8), w: u16, h: u16, bits: u8, desc: u8, rest: &[u8]) -> Vec<u8> {
    let mut b = vec![0u8, u8::from(map.1 > 0), ty];
    b.extend(map.0.to_le_bytes());
    b.extend(map.1.to_le_bytes());
    b.push(map.2);
    b.extend([0; 4]);
    b.extend(w.to_le_bytes());
    b.extend(h.to_le_bytes());
    b.extend([bits, desc]);
    b.extend_from_slice(rest);
    b
}

#[test]
fn tga_pictures_of_every_kind_read_top_row_first() {
    use hangar::formats::tga;
    // 24-bit (B, G, R), bottom-left origin: the file's first row (red, green) is the picture's
    // bottom row, its second (blue, grey) the top.
    let f = tga(
        2,
        (0, 0, 0),
        2,
        2,
        24,
        0,
        &[0, 0, 255, 0, 255, 0, 255, 0, 0, 9, 9, 9],
    );
    let img = tga::decode(&f).unwrap();
    assert_eq!(
        img.rgba,
        [[0, 0, 255, 255], [9, 9, 9, 255], RED, GREEN].concat()
    );
    // 32-bit run-length, top-left origin: a run of 3, then one raw pixel.
    let f = tga(
        10,
        (0, 0, 0),
        2,
        2,
        32,
        0x28,
        &[0x82, 1, 2, 3, 4, 0x00, 5, 6, 7, 8],
    );
    let img = tga::decode(&f).unwrap();
    assert_eq!(
        img.rgba,
        [[3, 2, 1, 4].repeat(3), vec![7, 6, 5, 8]].concat()
    );
    // Colour-mapped (24-bit entries from index 1), top-left, and grey.
    let f = tga(1, (1, 2, 24), 2, 1, 8, 0x20, &[0, 0, 200, 50, 60, 70, 2, 1]);
    let img = tga::decode(&f).unwrap();
    assert_eq!(img.rgba, [70, 60, 50, 255, 200, 0, 0, 255]);
    let f = tga(3, (0, 0, 0), 1, 1, 8, 0x20, &[77]);
    assert_eq!(tga::decode(&f).unwrap().rgba, [77, 77, 77, 255]);
    // 16-bit A1R5G5B5 with an alpha bit: pure red, opaque.
    let f = tga(2, (0, 0, 0), 1, 1, 16, 0x21, &0xfc00u16.to_le_bytes());
    assert_eq!(tga::decode(&f).unwrap().rgba, [255, 0, 0, 255]);
    // Through `convert tex.tga tex.png`.
    let f = tga(2, (0, 0, 0), 1, 1, 24, 0x20, &[1, 2, 3]);
    let picture = common::open(&f, Path::new("t.tga"))
        .unwrap()
        .write_as("t.png", &hangar::ConvertOptions::default())
        .unwrap();
    assert_eq!(
        dds::encode::read_png(&picture.bytes).unwrap().rgba,
        [3, 2, 1, 255]
    );
}

#[test]
fn broken_tga_files_are_errors_with_their_place() {
    use hangar::formats::tga;
    let e = tga::decode(&tga(2, (0, 0, 0), 4, 4, 24, 0, &[0; 40])).unwrap_err();
    assert_eq!(
        (e.kind, e.path.as_str()),
        (ErrorKind::Truncated, "TGA.imageData")
    );
    assert!(e.message.contains("needs 48 bytes"), "{e}");
    // A run-length stream that would need far more bytes than it has: refused before allocating.
    let e = tga::decode(&tga(
        10,
        (0, 0, 0),
        60000,
        60000,
        32,
        0,
        &[0xff, 0, 0, 0, 0],
    ))
    .unwrap_err();
    assert!(
        matches!(e.kind, ErrorKind::Refused | ErrorKind::Truncated),
        "{e}"
    );
    let e = tga::decode(&tga(10, (0, 0, 0), 300, 1, 32, 0, &[0xff, 1, 2, 3, 4])).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Truncated);
    // An index past the colour map.
    let e = tga::decode(&tga(1, (0, 1, 24), 1, 1, 8, 0, &[1, 2, 3, 5])).unwrap_err();
    assert!(e.message.contains("entry 5"), "{e}");
    let e = tga::decode(&tga(7, (0, 0, 0), 1, 1, 8, 0, &[0])).unwrap_err();
    assert_eq!(
        (e.kind, e.path.as_str()),
        (ErrorKind::Unsupported, "TGA.imageType")
    );
    let e = tga::decode(&[0; 10]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Truncated);
}

// ---- --textures copy|link: images as files beside the glTF ----

/// A textured triangle as a .gltf whose material names `base` and `normal` (image names, as
/// hangar's own glTFs carry the game's paths).
fn textured_gltf(base: &str, normal: &str) -> Vec<u8> {
    let (uri, len) = common::data_uri(
        &[0.0, 0., 0., 1., 0., 0., 0., 1., 0., 0., 0., 1., 0., 0., 1.],
        &[0, 1, 2, 0],
    );
    serde_json::json!({
        "asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}],
        "nodes": [{"name": "hull", "mesh": 0}],
        "meshes": [{"name": "hull", "primitives": [{"attributes": {"POSITION": 0, "TEXCOORD_0": 1}, "indices": 2, "material": 0}]}],
        "materials": [{"name": "hull", "pbrMetallicRoughness": {"baseColorTexture": {"index": 0}}, "normalTexture": {"index": 1}}],
        "textures": [{"source": 0}, {"source": 1}],
        "images": [{"uri": "a.png", "name": base}, {"uri": "b.png", "name": normal}],
        "buffers": [{"byteLength": len, "uri": uri}],
        "bufferViews": [{"buffer": 0, "byteOffset": 0, "byteLength": 36}, {"buffer": 0, "byteOffset": 36, "byteLength": 24},
                        {"buffer": 0, "byteOffset": 60, "byteLength": 6}],
        "accessors": [{"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3", "min": [0,0,0], "max": [1,1,0]},
                      {"bufferView": 1, "componentType": 5126, "count": 3, "type": "VEC2"},
                      {"bufferView": 2, "componentType": 5123, "count": 3, "type": "SCALAR"}]
    })
    .to_string()
    .into_bytes()
}

/// A mod folder with a DDS (BC3) and a loose PNG texture and a model naming both.
fn textured_mod(name: &str) -> (PathBuf, PathBuf, Vec<u8>) {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&root);
    let tex = root.join("assets/textures");
    std::fs::create_dir_all(&tex).unwrap();
    std::fs::create_dir_all(root.join("assets/units")).unwrap();
    let bc3 = DdsOptions {
        encoding: Encoding::Bc3,
        mipmaps: Mipmaps::Full,
    };
    std::fs::write(
        tex.join("hull.dds"),
        dds::encode::encode(&four_blocks(), bc3).unwrap(),
    )
    .unwrap();
    let plate = dds::encode_png(
        &dds::Image {
            width: 2,
            height: 1,
            rgba: vec![128, 128, 255, 255, 120, 130, 250, 255],
        },
        PngCompression::Fast,
    )
    .unwrap();
    std::fs::write(tex.join("plate.png"), &plate).unwrap();
    let model = root.join("assets/units/ship.gltf");
    std::fs::write(
        &model,
        textured_gltf(r"assets\textures\hull.dds", "assets/textures/plate.png"),
    )
    .unwrap();
    (root, model, plate)
}

fn image_uris(gltf: &[u8]) -> Vec<(String, String)> {
    let v: serde_json::Value = if gltf.starts_with(b"glTF") {
        let n = u32::from_le_bytes(gltf[12..16].try_into().unwrap()) as usize;
        serde_json::from_slice(&gltf[20..20 + n]).unwrap()
    } else {
        serde_json::from_slice(gltf).unwrap()
    };
    v["images"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            assert!(i.get("bufferView").is_none(), "{i}");
            assert_eq!(i["mimeType"], "image/png");
            (
                i["name"].as_str().unwrap().to_string(),
                i["uri"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn copy_writes_png_files_beside_the_gltf_and_names_them_by_uri() {
    let (_root, model, plate) = textured_mod("textures_copy_mod");
    let bytes = std::fs::read(&model).unwrap();
    let opened = common::open(&bytes, &model).unwrap();
    let out = common::gltf_out("textures_copy");
    let opts: hangar::ConvertOptions = hangar::TextureOptions {
        mode: hangar::TextureMode::Copy,
        ..Default::default()
    }
    .into();
    for name in ["ship.gltf", "ship_glb.glb"] {
        let dest = out.join(name);
        let stem = name.split('.').next().unwrap();
        let _ = std::fs::remove_dir_all(out.join(format!("{stem}_textures")));
        let c = opened.write_as(&dest, &opts).unwrap();
        let mut files: Vec<String> = c
            .files
            .iter()
            .map(|(p, _)| p.to_string_lossy().replace('\\', "/"))
            .collect();
        files.sort();
        assert_eq!(
            files,
            [
                format!("{stem}_textures/hull.png"),
                format!("{stem}_textures/plate.png")
            ]
        );
        c.write(&dest).unwrap();
        let mut uris = image_uris(&std::fs::read(&dest).unwrap());
        uris.sort_by(|a, b| a.1.cmp(&b.1));
        assert_eq!(
            uris,
            [
                (
                    r"assets\textures\hull.dds".to_string(),
                    format!("{stem}_textures/hull.png")
                ),
                (
                    "assets/textures/plate.png".to_string(),
                    format!("{stem}_textures/plate.png")
                )
            ]
        );
        // The DDS became a PNG of its pixels; the PNG is copied as it was.
        let hull = dds::encode::read_png(
            &std::fs::read(out.join(format!("{stem}_textures/hull.png"))).unwrap(),
        )
        .unwrap();
        assert_eq!((hull.width, hull.height), (8, 8));
        close(pixel(&hull, 1, 1), RED, &[0, 1, 2, 3], 4, "hull.png");
        close(pixel(&hull, 6, 6), HALF_WHITE, &[0, 1, 2, 3], 4, "hull.png");
        assert_eq!(
            std::fs::read(out.join(format!("{stem}_textures/plate.png"))).unwrap(),
            plate
        );
    }
    // Back from glTF, the materials name the game's textures again, not the copies.
    let gltf = std::fs::read(out.join("ship.gltf")).unwrap();
    let back = common::import(&gltf, &out.join("ship.gltf")).unwrap();
    let t = &back.scene.materials[0].textures;
    assert_eq!(t.base_color.as_deref(), Some(r"assets\textures\hull.dds"));
    assert_eq!(t.normal.as_deref(), Some("assets/textures/plate.png"));
}

#[test]
fn link_names_a_loose_png_where_it_lies_and_copies_the_rest() {
    let (root, model, _) = textured_mod("textures_link_mod");
    let bytes = std::fs::read(&model).unwrap();
    let opened = common::open(&bytes, &model).unwrap();
    let out = common::gltf_out("textures_link");
    let _ = std::fs::remove_dir_all(out.join("ship_textures"));
    let dest = out.join("ship.gltf");
    let opts = hangar::TextureOptions {
        mode: hangar::TextureMode::Link,
        ..Default::default()
    };
    let c = opened.write_as(&dest, &opts.into()).unwrap();
    assert_eq!(c.files.len(), 1, "only the DDS is written as a PNG");
    assert!(
        c.warnings
            .iter()
            .any(|w| w.note && w.message.starts_with("1 textures are not loose PNG")),
        "{:?}",
        c.warnings
    );
    c.write(&dest).unwrap();
    let mut uris = image_uris(&std::fs::read(&dest).unwrap());
    uris.sort_by(|a, b| a.1.cmp(&b.1));
    assert_eq!(uris[1].1, "ship_textures/hull.png");
    assert_eq!(
        uris[0].1,
        "../../textures_link_mod/assets/textures/plate.png"
    );
    assert_eq!(
        out.join(&uris[0].1).canonicalize().unwrap(),
        root.join("assets/textures/plate.png")
            .canonicalize()
            .unwrap()
    );
    assert!(out.join("ship_textures/hull.png").is_file());
}

#[test]
fn a_gltf_and_its_texture_files_are_written_all_or_none() {
    let (_root, model, _) = textured_mod("textures_blocked_mod");
    let bytes = std::fs::read(&model).unwrap();
    let opened = common::open(&bytes, &model).unwrap();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("textures_blocked");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // A file where the texture folder should go: the copies cannot be written.
    std::fs::write(dir.join("ship_textures"), b"in the way").unwrap();
    let dest = dir.join("ship.gltf");
    let opts = hangar::TextureOptions {
        mode: hangar::TextureMode::Copy,
        ..Default::default()
    };
    let c = opened.write_as(&dest, &opts.into()).unwrap();
    let e = c.write(&dest).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Io);
    let left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        left,
        ["ship_textures"],
        "nothing written, no temporary file left"
    );
}

#[test]
fn a_real_texture_survives_bc7_and_bc1_reencoding() {
    let Some(root) = textures_root() else { return };
    let file = root.join("ArtemKez__testMod/Base.SC2Data/Assets/Textures/Capillary Tower dif.dds");
    let original = decode_file(&std::fs::read(file).unwrap());
    // (encoding, largest mean difference a channel, file size with 10 mips)
    for (encoding, mean_limit, size) in [
        (Encoding::Bc7, 1.5, 148 + 349_552),
        (Encoding::Bc1, 4.0, 128 + 174_776),
    ] {
        let opts = DdsOptions {
            encoding,
            mipmaps: Mipmaps::Full,
        };
        let f = dds::encode::encode(&original, opts).unwrap();
        assert_eq!(f.len(), size, "{}", encoding.name());
        assert_eq!(dds::read_header(&f).unwrap().mips, 10);
        let (back, _) = dds::decode(&f).unwrap();
        let channels = if encoding == Encoding::Bc1 { 3 } else { 4 };
        let mut total = 0u64;
        for (a, b) in original.rgba.chunks(4).zip(back.rgba.chunks(4)) {
            for c in 0..channels {
                total += u64::from(a[c].abs_diff(b[c]));
            }
        }
        let mean = total as f64 / (512.0 * 512.0 * channels as f64);
        assert!(
            mean < mean_limit,
            "{}: mean difference {mean}",
            encoding.name()
        );
    }
}

#[test]
fn every_small_size_encodes_to_the_size_its_header_describes() {
    for w in 1..=9u32 {
        for h in [1u32, 2, 3, 5, 8, 13] {
            let img = dds::Image {
                width: w,
                height: h,
                rgba: [200u8, 100, 50, 255].repeat((w * h) as usize),
            };
            for encoding in [Encoding::Bc1, Encoding::Bc4, Encoding::Bc7] {
                let f = dds::encode::encode(
                    &img,
                    DdsOptions {
                        encoding,
                        mipmaps: Mipmaps::Full,
                    },
                )
                .unwrap_or_else(|e| panic!("{w}x{h} {}: {e}", encoding.name()));
                let head = dds::read_header(&f).unwrap();
                assert_eq!(head.mips, dds::encode::full_chain(w, h));
                assert_eq!(head.file_bytes(), Some(f.len()));
            }
        }
    }
}

/// The first 4x4 block of Pillow's `Tests/images/dxt5-colorblock-alpha-issue-4142.dds` (Pillow,
/// HPND licence): its colour half has c0 (0xc421) < c1 (0xc441).
const PILLOW_4142_BLOCK: [u8; 16] = [
    98, 90, 173, 13, 141, 18, 169, 166, 33, 196, 65, 196, 95, 235, 224, 104,
];

/// Rows of 4x4 RGB values, top row first.
fn rgb_of(img: &dds::Image) -> Vec<[u8; 3]> {
    img.rgba.chunks(4).map(|p| [p[0], p[1], p[2]]).collect()
}

#[test]
fn bc2_and_bc3_colour_blocks_always_use_four_colours() {
    // Pillow 13's decode of the block as DXT5 (the whole 4x4 file gives the same 16 pixels).
    let green = [
        136, 136, 138, 138, 136, 135, 135, 136, 134, 134, 135, 136, 134, 135, 135, 138,
    ];
    let alpha = [
        93, 93, 92, 92, 98, 96, 95, 94, 96, 96, 94, 94, 96, 93, 90, 93,
    ];
    let want_rgb: Vec<[u8; 3]> = green.iter().map(|&g| [198, g, 8]).collect();
    let (img, w) = dds::decode(&dds_file(4, 4, 1, Some(b"DXT5"), &PILLOW_4142_BLOCK)).unwrap();
    assert!(w.is_empty(), "{w:?}");
    assert_eq!(rgb_of(&img), want_rgb);
    assert_eq!(img.rgba.chunks(4).map(|p| p[3]).collect::<Vec<_>>(), alpha);

    // The same colour half as DXT3 with explicit alpha 0, 17, ... 255 (Pillow: the same colours).
    let mut bc2 = vec![0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe];
    bc2.extend_from_slice(&PILLOW_4142_BLOCK[8..]);
    let (img, _) = dds::decode(&dds_file(4, 4, 1, Some(b"DXT3"), &bc2)).unwrap();
    assert_eq!(rgb_of(&img), want_rgb);
    let alphas: Vec<u8> = img.rgba.chunks(4).map(|p| p[3]).collect();
    assert_eq!(alphas, (0..16).map(|i| i * 17).collect::<Vec<u8>>());

    // c0 == c1: every index is that colour (index 3 is not transparent black).
    let mut same = PILLOW_4142_BLOCK;
    same[8..16].copy_from_slice(&[0x21, 0xc4, 0x21, 0xc4, 0xe4, 0xe4, 0xe4, 0xe4]);
    let (img, _) = dds::decode(&dds_file(4, 4, 1, Some(b"DXT5"), &same)).unwrap();
    assert_eq!(rgb_of(&img), vec![[198, 134, 8]; 16]);
    assert_eq!(img.rgba.chunks(4).map(|p| p[3]).collect::<Vec<_>>(), alpha);

    // BC1 keeps its three-colour mode: index 3 is transparent black (as Pillow decodes it).
    let (img, _) = dds::decode(&dds_file(4, 4, 1, Some(b"DXT1"), &PILLOW_4142_BLOCK[8..])).unwrap();
    let clear = [0, 0, 0, 0];
    let (a, b, c) = ([198, 138, 8, 255], [198, 136, 8, 255], [198, 134, 8, 255]);
    let want: Vec<[u8; 4]> = vec![
        clear, clear, a, a, clear, b, b, clear, c, c, b, clear, c, b, b, a,
    ];
    let got: Vec<[u8; 4]> = img
        .rgba
        .chunks(4)
        .map(|p| [p[0], p[1], p[2], p[3]])
        .collect();
    assert_eq!(got, want);
}

/// A DX10 DDS header for the DXGI format `code` (`misc` 4: a cube map), then `data`.
fn dx10_file(w: u32, h: u32, mips: u32, code: u32, misc: u32, layers: u32, data: &[u8]) -> Vec<u8> {
    let mut f = dds_file(w, h, mips, Some(b"DX10"), &[]);
    for v in [code, 3, misc, layers, 0] {
        f.extend(v.to_le_bytes());
    }
    f.extend_from_slice(data);
    f
}

/// `hangar info --json`'s object for a file named `name`.
fn info_json(bytes: &[u8], name: &str) -> serde_json::Value {
    let opened = open_named(bytes, name).unwrap();
    serde_json::to_value(opened.info()).unwrap()
}

/// The top-level keys a texture's info gives: format, width, height, pixel format, mip levels,
/// surfaces, sRGB.
fn texture_keys(v: &serde_json::Value) -> (String, u64, u64, String, u64, u64, bool) {
    (
        v["format"].as_str().unwrap().to_string(),
        v["width"].as_u64().unwrap(),
        v["height"].as_u64().unwrap(),
        v["pixel_format"].as_str().unwrap().to_string(),
        v["mip_levels"].as_u64().unwrap(),
        v["surfaces"].as_u64().unwrap(),
        v["srgb"].as_bool().unwrap(),
    )
}

#[test]
fn texture_files_are_a_format_with_their_size_pixels_mips_surfaces_and_colour_space() {
    // 8x8 BC3 with its whole chain: 64 + 16 + 16 + 16 bytes.
    let bc3 = dds_file(8, 8, 4, Some(b"DXT5"), &[0; 112]);
    let v = info_json(&bc3, "hull_d.dds");
    let s = |x: &str| x.to_string();
    assert_eq!(
        texture_keys(&v),
        (s("DDS (BC3/DXT5)"), 8, 8, s("BC3/DXT5"), 4, 1, false)
    );
    assert_eq!(
        (v["vertices"].as_u64(), v["triangles"].as_u64()),
        (Some(0), Some(0))
    );
    assert_eq!(v["details"]["described_bytes"], 240);
    assert_eq!(v["details"]["gzip"], false);
    // X4's gzip'd DDS, by its .gz name.
    let v = info_json(&gzip(&bc3), "hull_d.gz");
    assert_eq!(texture_keys(&v).0, "DDS (BC3/DXT5)");
    assert_eq!(v["details"]["gzip"], true);
    // A DX10 cube map of BC7 in sRGB, one mip: six 16-byte faces.
    let v = info_json(&dx10_file(4, 4, 1, 99, 4, 1, &[0; 96]), "sky.dds");
    assert_eq!(
        texture_keys(&v),
        (s("DDS (BC7)"), 4, 4, s("BC7"), 1, 6, true)
    );
    assert_eq!(v["details"]["cube"], true);
    // An array of 3 layers of RGBA8 (UNORM, not sRGB), 2x2 with 2 mips: (16 + 4) bytes a layer.
    let v = info_json(&dx10_file(2, 2, 2, 28, 0, 3, &[0; 60]), "layers.dds");
    assert_eq!(
        texture_keys(&v),
        (s("DDS (RGBA8)"), 2, 2, s("RGBA8"), 2, 3, false)
    );
    // A legacy B8G8R8A8 DDS.
    let v = info_json(&dds_file(1, 1, 1, None, &[0; 4]), "px.dds");
    assert_eq!(texture_keys(&v).3, "BGRA8");
    // PNG (sRGB unless it says otherwise) and TGA (by its name).
    let png = png_of(3, 2, png::ColorType::Rgb, png::BitDepth::Eight, &[0; 18]);
    let v = info_json(&png, "x.png");
    assert_eq!(
        texture_keys(&v),
        (s("PNG (RGB8)"), 3, 2, s("RGB8"), 1, 1, true)
    );
    let t = tga(2, (0, 0, 0), 2, 1, 32, 8, &[0; 8]);
    let v = info_json(&t, "x.TGA");
    assert_eq!(
        texture_keys(&v),
        (s("TGA (BGRA8)"), 2, 1, s("BGRA8"), 1, 1, true)
    );
    // Without the name a TGA is not recognised: it has no magic.
    assert!(open_named(&t, "x.bin").is_err());
}

#[test]
fn validate_names_a_broken_header_and_the_first_missing_mip() {
    use hangar::Severity;
    let whole = dds_file(8, 8, 4, Some(b"DXT5"), &[0; 112]);
    let findings = open_named(&whole, "a.dds").unwrap().validate();
    assert!(findings.is_empty(), "{findings:?}");
    // Mips 0 and 1 (64 + 16 bytes) are there, mip 2 is not.
    let cut = &whole[..128 + 80];
    let findings = open_named(cut, "a.dds").unwrap().validate();
    assert_eq!(findings.len(), 1, "{findings:?}");
    let f = &findings[0];
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(f.path, "DDS.data.surfaces[0].mips[2]");
    assert_eq!(f.offset, Some(208));
    assert_eq!(
        f.message,
        "the file ends at byte 208: mip 2 (2x2) needs bytes 208..224; 2 of the 4 mip levels are missing or cut short"
    );
    // A cube map whose last face is cut: named by its surface.
    let cube = cube_dds(3);
    let findings = open_named(&cube[..cube.len() - 1], "c.dds")
        .unwrap()
        .validate();
    assert_eq!(findings[0].path, "DDS.data.surfaces[5].mips[2]");
    // More mips than the size has: a warning.
    let many = dds_file(4, 4, 5, Some(b"DXT1"), &[0; 40]);
    let findings = open_named(&many, "m.dds").unwrap().validate();
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0].severity, Severity::Warning);
    assert_eq!(findings[0].path, "DDS.mipMapCount");
    // A broken header does not open: its error names the field.
    let mut bad = whole.clone();
    bad[4] = 100;
    let e = open_named(&bad, "a.dds").err().unwrap();
    assert_eq!((e.path.as_str(), e.offset), ("DDS.size", Some(4)));
    // A PNG whose image data is cut short opens (its header is whole) and fails validation.
    let png = png_of(
        16,
        16,
        png::ColorType::Rgba,
        png::BitDepth::Eight,
        &[7; 1024],
    );
    let cut = &png[..png.len() - 20];
    let findings = open_named(cut, "p.png").unwrap().validate();
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0].severity, Severity::Error);
}

#[test]
fn a_texture_document_writes_png_and_dds_and_is_no_model() {
    let bc3 = dds_file(4, 4, 1, Some(b"DXT5"), &PILLOW_4142_BLOCK);
    let opened = open_named(&bc3, "tex.dds").unwrap();
    let opts = hangar::ConvertOptions::default();
    let png = opened.write_as("tex.png", &opts).unwrap().bytes;
    assert_eq!(dds::png_size(&png), Some((4, 4)));
    let again = opened.write_as("tex.dds", &opts).unwrap().bytes;
    assert_eq!(&again[..4], b"DDS ");
    let e = opened.write_as("tex.glb", &opts).unwrap_err();
    assert!(e.message.contains("not a model"), "{}", e.message);
}

#[test]
fn a_folder_conversion_leaves_textures_alone() {
    let dir = std::env::temp_dir().join(format!("hangar-batch-tex-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/wedge-lod0.xmf");
    std::fs::copy(&model, dir.join("wedge-lod0.xmf")).unwrap();
    std::fs::write(dir.join("a.dds"), dds_file(4, 4, 1, Some(b"DXT1"), &[0; 8])).unwrap();
    std::fs::write(
        dir.join("b.gz"),
        gzip(&dds_file(4, 4, 1, Some(b"DXT1"), &[0; 8])),
    )
    .unwrap();
    std::fs::write(
        dir.join("c.png"),
        png_of(1, 1, png::ColorType::Rgba, png::BitDepth::Eight, &[0; 4]),
    )
    .unwrap();
    std::fs::write(dir.join("d.tga"), tga(2, (0, 0, 0), 1, 1, 32, 8, &[0; 4])).unwrap();
    let view = hangar::GameView::folder(&dir).unwrap();
    let out = dir.join("out");
    let report = hangar::batch::run(&view, "", &out, "glb", &Default::default(), &|_| {}).unwrap();
    assert_eq!(report.models, 1);
    let inputs: Vec<&str> = report.outputs.iter().map(|j| j.input.as_str()).collect();
    assert_eq!(inputs.len(), 1);
    assert!(inputs[0].ends_with("wedge-lod0.xmf"), "{inputs:?}");
    assert!(out.join("wedge-lod0.glb").is_file());
    let _ = std::fs::remove_dir_all(&dir);
}

/// `bytes` opened through the door under the name `name`.
fn open_named(bytes: &[u8], name: &str) -> hangar::Result<hangar::Opened> {
    hangar::open(hangar::Source::bytes(name, bytes.to_vec()))
}
