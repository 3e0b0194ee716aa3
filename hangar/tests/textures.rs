//! Textures: every corpus DDS decodes to the pixels a second decoder (Pillow 11) gives, hand-built
//! DDS files check the edges (truncation, gzip bombs, unknown formats), and textured corpus models
//! embed their textures as PNG.

mod common;

use hangar::error::ErrorKind;
use hangar::formats::dds::{self, PngCompression};
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

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            walk(&p, out);
        } else {
            out.push(p);
        }
    }
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
    walk(&root, &mut files);
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
        let opened = hangar::any::open(&bytes, &path).unwrap();
        let dest = out.join(format!("{}.glb", common::name(&path)));
        let (glb, _) = hangar::any::convert(&opened, &path, &dest).unwrap();
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
        let opened = hangar::any::open(&bytes, &path).unwrap();
        let dest = out.join(format!("part{i}.glb"));
        let (glb, warnings) = hangar::any::convert(&opened, &path, &dest).unwrap();
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
