//! Materials as the games' shaders read them (issue 40), pixel for pixel on the corpus: SC2's DXT5nm
//! normal maps arrive as unit tangent-space normals that follow the file's alpha and green; an M3
//! claims no metal and carries its specular and occlusion layers; X4's metal and smooth maps are the
//! metallic-roughness texture's blue and inverted green. And back: a painted texture is written in
//! the original's compression, BC1's one-bit alpha kept, and a path out of the folder is refused.

mod common;

use hangar::formats::dds;
use std::path::{Path, PathBuf};

fn textures_root() -> Option<PathBuf> {
    Some(common::corpus_root()?.join("textures"))
}

/// `rel` under the texture corpus converted to a GLB under target/tmp/gltf; the document and blob.
fn glb(root: &Path, rel: &str, out: &str) -> (gltf::Document, Vec<u8>) {
    let path = root.join(rel);
    let bytes = std::fs::read(&path).unwrap();
    let opened = common::open(&bytes, &path).unwrap();
    let dest = common::gltf_out("materials").join(out);
    let (glb, warnings) = common::convert(&opened, &dest).unwrap();
    assert!(
        warnings.iter().all(|w| !w.message.contains("left out")),
        "{rel}: {warnings:?}"
    );
    std::fs::write(&dest, &glb).unwrap();
    common::load_glb(&glb)
}

/// The RGBA pixels of an embedded texture.
fn pixels(t: gltf::Texture<'_>, blob: &[u8]) -> dds::Image {
    let gltf::image::Source::View { view, .. } = t.source().source() else {
        panic!("not embedded")
    };
    dds::encode::read_png(&blob[view.offset()..view.offset() + view.length()]).unwrap()
}

fn texture(root: &Path, rel: &str) -> dds::Image {
    let bytes = std::fs::read(root.join(rel)).unwrap();
    dds::load(&bytes, Path::new(rel)).unwrap().0
}

fn pearson(a: &[f64], b: &[f64]) -> f64 {
    let (ma, mb) = (
        a.iter().sum::<f64>() / a.len() as f64,
        b.iter().sum::<f64>() / b.len() as f64,
    );
    let cov: f64 = a.iter().zip(b).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let va: f64 = a.iter().map(|x| (x - ma).powi(2)).sum();
    let vb: f64 = b.iter().map(|y| (y - mb).powi(2)).sum();
    cov / (va * vb).sqrt()
}

#[test]
fn an_sc2_model_shades_as_the_game_reads_its_layers() {
    let Some(root) = textures_root() else { return };
    let (doc, blob) = glb(
        &root,
        "ArtemKez__testMod/Base.SC2Data/Assets/Models/Capillary Tower.m3",
        "capillary.glb",
    );
    assert!(doc.extensions_used().any(|e| e == "KHR_materials_specular"));
    let mats: Vec<_> = doc.materials().collect();
    assert!(!mats.is_empty());
    for m in &mats {
        let pbr = m.pbr_metallic_roughness();
        assert_eq!(pbr.metallic_factor(), 0.0, "{:?} claims metal", m.name());
        assert!(pbr.metallic_roughness_texture().is_none());
    }
    let m = mats.iter().find(|m| m.normal_texture().is_some()).unwrap();
    assert!(m.occlusion_texture().is_some(), "ambientOcclusionLayer");
    let spec = m
        .extensions()
        .unwrap()
        .get("KHR_materials_specular")
        .unwrap();
    assert!(spec["specularColorTexture"]["index"].is_u64(), "{spec}");

    // The normal map: DXT5nm in the file (x in alpha, y in green), unit RGB normals in the glTF.
    let n = pixels(m.normal_texture().unwrap().texture(), &blob);
    let src = texture(
        &root,
        "ArtemKez__testMod/Base.SC2Data/Assets/Textures/Capillary Tower nrm.dds",
    );
    assert_eq!((n.width, n.height), (src.width, src.height));
    let (mut xs, mut ys, mut ax, mut gy) = (vec![], vec![], vec![], vec![]);
    for (k, (p, s)) in n
        .rgba
        .chunks_exact(4)
        .zip(src.rgba.chunks_exact(4))
        .enumerate()
    {
        let v = [0, 1, 2].map(|c| p[c] as f64 / 127.5 - 1.0);
        let len = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
        assert!((len - 1.0).abs() < 0.02, "pixel {k}: |n| {len:.3} ({p:?})");
        assert!(v[2] > 0.0, "pixel {k}: z {:.3}", v[2]);
        xs.push(v[0]);
        ys.push(v[1]);
        ax.push(s[3] as f64);
        gy.push(s[1] as f64);
    }
    let (rx, ry) = (pearson(&xs, &ax), pearson(&ys, &gy));
    assert!(
        rx > 0.99 && ry > 0.99,
        "x follows alpha r {rx:.3}, y follows green r {ry:.3}"
    );
}

#[test]
fn x4_metal_and_smooth_maps_are_the_metallic_roughness_texture() {
    let Some(root) = textures_root() else { return };
    let (doc, blob) = glb(
        &root,
        "DeadAirRT__deadairfactionamarr/assets/units/size_m/ship_dam_m_coercer_data/part_main-lod0.xmf",
        "coercer.glb",
    );
    let m = doc
        .materials()
        .find(|m| m.name() == Some("coercer.evemata"))
        .unwrap();
    let pbr = m.pbr_metallic_roughness();
    let mr = pixels(pbr.metallic_roughness_texture().unwrap().texture(), &blob);
    let dir = "DeadAirRT__deadairfactionamarr/assets/textures/coercer";
    let metal = texture(&root, &format!("{dir}/coercer_metallic.gz"));
    let smooth = texture(&root, &format!("{dir}/coercer_smoothness.gz"));
    assert_eq!((mr.width, mr.height), (1024, 1024));
    let luma =
        |p: &[u8]| ((299 * p[0] as u32 + 587 * p[1] as u32 + 114 * p[2] as u32 + 500) / 1000) as u8;
    for ((p, m), s) in mr
        .rgba
        .chunks_exact(4)
        .zip(metal.rgba.chunks_exact(4))
        .zip(smooth.rgba.chunks_exact(4))
    {
        assert_eq!(p[2], luma(m), "blue is the metal map");
        assert_eq!(p[1], 255 - luma(s), "green is 1 - the smooth map");
    }
    assert_eq!(pbr.metallic_factor(), 1.0, "Metallness 1.0");
    // color_glow_map at color_glowStr 0.1.
    assert!(m.emissive_texture().is_some());
    assert_eq!(m.emissive_factor(), [0.1, 0.1, 0.1]);
    // An RGB normal map stays RGB, made unit length and facing out (X4's has pixels with z < 0).
    let n = pixels(m.normal_texture().unwrap().texture(), &blob);
    let src = texture(&root, &format!("{dir}/coercer_normal.gz"));
    let (mut xs, mut rs) = (vec![], vec![]);
    for (p, s) in n.rgba.chunks_exact(4).zip(src.rgba.chunks_exact(4)) {
        let v = [0, 1, 2].map(|c| p[c] as f64 / 127.5 - 1.0);
        let len = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
        assert!((len - 1.0).abs() < 0.02 && v[2] > 0.0, "{p:?} from {s:?}");
        xs.push(v[0]);
        rs.push(s[0] as f64);
    }
    assert!(pearson(&xs, &rs) > 0.99);
}

fn edit(root: &Path, key: &str, file: &str) -> hangar::TextureEdit {
    let mut image = texture(root, file);
    // A 32x32 magenta square at (8, 8), as a painter's stroke.
    for y in 8..40 {
        for x in 8..40 {
            let o = (y * image.width as usize + x) * 4;
            image.rgba[o..o + 4].copy_from_slice(&[255, 0, 255, 255]);
        }
    }
    hangar::TextureEdit {
        material: "flame".into(),
        slot: hangar::Slot::BaseColor,
        key: key.into(),
        image,
    }
}

fn psnr_outside_square(a: &dds::Image, b: &dds::Image) -> f64 {
    let mut se = 0.0;
    let mut n = 0.0;
    for y in 0..a.height as usize {
        for x in 0..a.width as usize {
            if (8..40).contains(&x) && (8..40).contains(&y) {
                continue;
            }
            let o = (y * a.width as usize + x) * 4;
            for c in 0..4 {
                se += (a.rgba[o + c] as f64 - b.rgba[o + c] as f64).powi(2);
                n += 1.0;
            }
        }
    }
    10.0 * (255.0f64.powi(2) / (se / n).max(1e-9)).log10()
}

#[test]
fn a_painted_bc1_texture_goes_back_as_bc1_with_its_one_bit_alpha() {
    let Some(root) = textures_root() else { return };
    let model = root.join("vicboyv__thethingrevival.SC2Map/Flamethrowerbackpack.m3");
    let file = "vicboyv__thethingrevival.SC2Map/assets/textures/FlameBPTexture.dds";
    let key = "Assets/Textures/FlameBPTexture.dds";
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("materials-bc1");
    let _ = std::fs::remove_dir_all(&out);
    let e = edit(&root, key, file);
    let painted = e.image.clone();
    let (wrote, warnings) =
        hangar::write_textures(&model, &out.join("Flamethrowerbackpack.m3"), &[e]).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(wrote.len(), 1);
    let written = out.join(key);
    assert_eq!(wrote[0].file, written);
    assert_eq!(wrote[0].what, ", BC1, 9 mip levels");
    let bytes = std::fs::read(&written).unwrap();
    let h = dds::read_header(&bytes).unwrap();
    assert_eq!(
        (h.format, h.width, h.height, h.mips),
        (dds::Format::Bc1, 256, 256, 9)
    );
    let back = dds::decode(&bytes).unwrap().0;
    let orig = texture(&root, file);
    let clear = |i: &dds::Image| i.rgba.chunks_exact(4).filter(|p| p[3] == 0).count();
    // The transparent pixels (a third of them: the team-colour mask) are still there, but for
    // those the square painted over.
    assert!(clear(&painted) > 20_000, "{}", clear(&painted));
    assert!(clear(&painted) < clear(&orig));
    assert_eq!(clear(&back), clear(&painted));
    assert_eq!(&back.rgba[(20 * 256 + 20) * 4..][..4], &[255, 0, 255, 255]);
    let db = psnr_outside_square(&back, &orig);
    assert!(db >= 30.0, "PSNR {db:.1} dB");

    // The same pixels as the original: nothing to write.
    let same = hangar::TextureEdit {
        image: orig,
        ..edit(&root, key, file)
    };
    let again = out.join("again");
    assert!(hangar::write_textures(&model, &again.join("x.m3"), &[same])
        .unwrap()
        .0
        .is_empty());
    assert!(!again.exists());
}

#[test]
fn a_texture_path_out_of_the_export_folder_is_refused_naming_the_material() {
    let Some(root) = textures_root() else { return };
    let model = root.join("vicboyv__thethingrevival.SC2Map/Flamethrowerbackpack.m3");
    let file = "vicboyv__thethingrevival.SC2Map/assets/textures/FlameBPTexture.dds";
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("materials-refused");
    for key in [
        "../../evil.dds",
        r"C:\Windows\evil.dds",
        "/etc/evil.dds",
        r"\\server\share\x.dds",
    ] {
        let e = hangar::write_textures(&model, &out.join("m.m3"), &[edit(&root, key, file)])
            .unwrap_err();
        assert!(e.message.contains("\"flame\""), "{key}: {}", e.message);
        assert!(!out.exists(), "{key}: nothing written");
    }
}

/// `hangar convert model.gltf Model.m3 --textures write`: the glTF's painted image goes back as the
/// game's BC1 .dds at the layer's path; the images left as they were are not written.
#[test]
fn a_gltf_with_a_painted_image_writes_it_back_beside_the_m3() {
    let Some(root) = textures_root() else { return };
    let model = root.join("vicboyv__thethingrevival.SC2Map/Flamethrowerbackpack.m3");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("materials-write");
    let _ = std::fs::remove_dir_all(&dir);
    // Paint the copied base colour PNG (the glTF names it by its game path).
    let gltf = painted_gltf(&model, "flame", "FlameBPTexture.png", |img| {
        for y in 8..40 {
            for x in 8..40 {
                let o = (y * img.width as usize + x) * 4;
                img.rgba[o..o + 4].copy_from_slice(&[255, 0, 255, 255]);
            }
        }
    });
    // The originals (their compression, what is unchanged) come from the game named with --game.
    written_back(
        &gltf,
        model.parent().unwrap(),
        &dir.join("Flamethrowerbackpack.m3"),
    );
    let written: Vec<_> = walk(&dir);
    assert_eq!(written.len(), 2, "the model and one texture: {written:?}");
    let dds_file = dir.join("Assets/Textures/FlameBPTexture.dds");
    let bytes = std::fs::read(&dds_file).unwrap_or_else(|e| panic!("{written:?}: {e}"));
    let h = dds::read_header(&bytes).unwrap();
    assert_eq!((h.format, h.mips), (dds::Format::Bc1, 9));
    let back = dds::decode(&bytes).unwrap().0;
    assert_eq!(&back.rgba[(20 * 256 + 20) * 4..][..4], &[255, 0, 255, 255]);
    let orig = texture(
        &root,
        "vicboyv__thethingrevival.SC2Map/assets/textures/FlameBPTexture.dds",
    );
    assert!(psnr_outside_square(&back, &orig) >= 30.0);
}

/// `model` as `NAME.gltf` with its textures copied beside it as PNG, the one called `png` painted.
fn painted_gltf(
    model: &Path,
    name: &str,
    png: &str,
    paint: impl FnOnce(&mut dds::Image),
) -> PathBuf {
    let gltf = common::gltf_out("materials").join(format!("{name}.gltf"));
    let mut copy = hangar::ConvertOptions::default();
    copy.textures.mode = hangar::TextureMode::Copy;
    hangar::open(model).unwrap().write_to(&gltf, &copy).unwrap();
    let png = gltf
        .parent()
        .unwrap()
        .join(format!("{name}_textures/{png}"));
    let mut img = dds::encode::read_png(&std::fs::read(&png).unwrap()).unwrap();
    paint(&mut img);
    std::fs::write(
        &png,
        dds::encode_png(&img, dds::PngCompression::Fast).unwrap(),
    )
    .unwrap();
    gltf
}

/// `gltf` written as `out` with `--textures write`, the originals found in the folder `game`.
fn written_back(gltf: &Path, game: &Path, out: &Path) {
    let game = hangar::GameView::folder(game).unwrap();
    let mut write = hangar::ConvertOptions::for_input(gltf, vec![game]).unwrap();
    write.textures.mode = hangar::TextureMode::Write;
    hangar::open(gltf).unwrap().write_to(out, &write).unwrap();
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// `hangar validate` on a texture warns where the game would fail or look wrong.
#[test]
fn validate_warns_where_the_game_would_fail_on_a_texture() {
    let Some(root) = textures_root() else { return };
    let warned = |p: &Path| -> Vec<String> {
        let v = hangar::open(p).unwrap().validate();
        v.iter().map(|f| f.message.clone()).collect()
    };
    // A 510x512 logo, and SC2's own DXT5nm normal map (no warning about its layout).
    let odd = warned(&root.join("UniTrader__UTFactionLogos/assets/markings/logos/faction_leddaindustrial/data/faction_leddaindustrial.dds"));
    assert!(
        odd.iter()
            .any(|m| m.contains("510x512 is not a power of two")),
        "{odd:?}"
    );
    let nrm = warned(
        &root.join("ArtemKez__testMod/Base.SC2Data/Assets/Textures/Capillary Tower nrm.dds"),
    );
    assert!(nrm.iter().all(|m| !m.contains("normal map")), "{nrm:?}");

    // Made here: a BC7 normal map in RGB layout without mips, in an SC2 mod.
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join("materials-validate/My.SC2Mod/Assets/Textures");
    std::fs::create_dir_all(&dir).unwrap();
    let img = dds::Image {
        width: 64,
        height: 64,
        rgba: [128, 128, 255, 255].repeat(64 * 64),
    };
    let opts = dds::encode::Options {
        encoding: dds::encode::Encoding::Bc7,
        mipmaps: dds::encode::Mipmaps::None,
    };
    let file = dir.join("hull_nrm.dds");
    std::fs::write(&file, dds::encode::encode(&img, opts).unwrap()).unwrap();
    let w = warned(&file);
    for want in [
        "no mip levels",
        "BC7 in a StarCraft II folder",
        "a normal map stored as Rgb, but StarCraft II reads Dxt5nm",
    ] {
        assert!(w.iter().any(|m| m.contains(want)), "{want}: {w:?}");
    }
    assert_eq!(w.len(), 3, "{w:?}");

    // On a model: the textures it names, each warning naming the texture and its material; a
    // model whose textures are as the game reads them gets none.
    let flame = warned(&root.join("vicboyv__thethingrevival.SC2Map/Flamethrowerbackpack.m3"));
    let about_textures: Vec<&String> = flame.iter().filter(|m| m.starts_with("texture ")).collect();
    assert_eq!(about_textures.len(), 1, "{flame:?}");
    assert!(
        about_textures[0].contains("FlameBPTexture.dds")
            && about_textures[0].contains("no mip levels"),
        "{flame:?}"
    );
    let tower =
        warned(&root.join("ArtemKez__testMod/Base.SC2Data/Assets/Models/Capillary Tower.m3"));
    assert!(
        tower.iter().all(|m| !m.starts_with("texture ")),
        "{tower:?}"
    );
}

/// A material new in the export of an X4 ship (Blender's new material with a painted image): its
/// image goes to `assets/textures/<collection>/<material>_diffuse.gz` below the mod's root, BC3
/// gzip'd with a full mip chain, and the material into the mod's own library (a `<diff>` patch),
/// named as the game finds the mod's files; the patch's other materials are kept. A new material
/// of an M3 has no layer to name its image: a warning, nothing written.
#[test]
fn a_new_x4_material_goes_into_the_mods_library_with_its_texture() {
    let Some(root) = textures_root() else { return };
    let mod_dir = root.join("DeadAirRT__deadairfactionamarr");
    let model = mod_dir.join("assets/units/size_m/ship_dam_m_coercer.xml");
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("materials-new/deadair");
    let _ = std::fs::remove_dir_all(&out);
    let output = out.join("assets/units/size_m/ship_dam_m_coercer.xml");
    let name = hangar::x4_material_name(&output, "Red Paint").unwrap();
    assert_eq!(name, "ship_dam_m_coercer.red_paint");
    let red = dds::Image {
        width: 64,
        height: 64,
        rgba: [255, 0, 0, 255].repeat(64 * 64),
    };
    let edit = hangar::TextureEdit {
        material: name.clone(),
        slot: hangar::Slot::BaseColor,
        key: String::new(),
        image: red,
    };
    let (wrote, warnings) =
        hangar::write_textures(&model, &output, std::slice::from_ref(&edit)).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let files: Vec<PathBuf> = wrote.iter().map(|w| w.file.clone()).collect();
    let texture = out.join("assets/textures/ship_dam_m_coercer/red_paint_diffuse.gz");
    let library = out.join("libraries/material_library.xml");
    assert_eq!(files, [texture.clone(), library.clone()]);
    let png = dds::to_png(&std::fs::read(&texture).unwrap(), dds::PngCompression::Fast).unwrap();
    assert_eq!((png.width, png.height), (64, 64));
    let dds_bytes = {
        use std::io::Read;
        let mut d = Vec::new();
        flate2::read::GzDecoder::new(&std::fs::read(&texture).unwrap()[..])
            .read_to_end(&mut d)
            .unwrap();
        d
    };
    let h = dds::read_header(&dds_bytes).unwrap();
    assert_eq!((h.format, h.mips), (dds::Format::Bc3, 7));
    let back = dds::decode(&dds_bytes).unwrap().0;
    assert_eq!(&back.rgba[..4], &[255, 0, 0, 255][..], "red, exact in BC3");

    // The mod's patch, with the new material added and everything before it kept.
    let orig = std::fs::read_to_string(mod_dir.join("libraries/material_library.xml")).unwrap();
    let text = std::fs::read_to_string(&library).unwrap();
    let cut = orig.rfind("</diff>").unwrap();
    let kept = orig[..cut].trim_end();
    assert!(text.starts_with(kept), "the patch is kept");
    let entry = r#"<property type="BitMap" name="diffuse_map" value="extensions\deadairfactionamarr\assets\textures\ship_dam_m_coercer\red_paint_diffuse"/>"#;
    assert_eq!(
        text.matches(entry).count(),
        1,
        "{}",
        &text[cut.saturating_sub(10)..]
    );
    assert!(text.contains(r#"<collection name="ship_dam_m_coercer">"#));
    assert_eq!(
        text.matches("<material ").count(),
        orig.matches("<material ").count() + 1
    );

    // Written again (the export repeated): still one entry.
    let (_, _) = hangar::write_textures(&model, &output, std::slice::from_ref(&edit)).unwrap();
    let again = std::fs::read_to_string(&library).unwrap();
    assert_eq!(again.matches(entry).count(), 1);

    // An M3's new material: said, not written.
    let flame = root.join("vicboyv__thethingrevival.SC2Map/Flamethrowerbackpack.m3");
    let m3_out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("materials-new/m3");
    let _ = std::fs::remove_dir_all(&m3_out);
    let (wrote, warnings) =
        hangar::write_textures(&flame, &m3_out.join("Flamethrowerbackpack.m3"), &[edit]).unwrap();
    assert!(wrote.is_empty());
    assert_eq!(warnings.len(), 1);
    assert!(warnings[0].message.contains("is new"), "{:?}", warnings[0]);
    assert!(!m3_out.exists());
}

/// `hangar convert ship.gltf ship.xml --textures write`: a whole X4 component from a glTF takes its
/// painted diffuse back as the game's gzip'd DDS at the path the library names, below the mod's
/// root; the images left as they were are not written.
#[test]
fn a_gltf_of_a_component_writes_its_painted_image_back_beside_the_xml() {
    let Some(root) = textures_root() else { return };
    let mod_dir = root.join("DeadAirRT__deadairfactionamarr");
    let model = mod_dir.join("assets/units/size_m/ship_dam_m_coercer.xml");
    let gltf = painted_gltf(&model, "coercer", "coercer_diffuse.png", |img| {
        for px in img.rgba.chunks_exact_mut(4).take(64) {
            px.copy_from_slice(&[255, 0, 0, 255]);
        }
    });
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("materials-component/deadair");
    let _ = std::fs::remove_dir_all(&out);
    let xml = out.join("assets/units/size_m/ship_dam_m_coercer.xml");
    written_back(&gltf, &mod_dir, &xml);
    let textures: Vec<PathBuf> = walk(&out)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "gz"))
        .collect();
    assert_eq!(
        textures,
        [out.join("assets/textures/coercer/coercer_diffuse.gz")]
    );
    assert!(xml.is_file());
}
