//! Whole mods checked (`hangar::check_mod`, `hangar validate DIR`): the corpus's X4 extensions
//! give no false alarm, faults injected into a copy are each found with their file and reference,
//! and hostile mods built here stay harmless (no read outside the mod, cycles end, deep XML is
//! refused).

mod common;
use hangar::{ModCheck, Severity, SharedSource};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A fresh folder under the target's tmp dir for one test.
fn scratch(test: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("modcheck")
        .join(test);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dst);
        } else {
            std::fs::copy(e.path(), &dst).unwrap();
        }
    }
}

/// The corpus mod `folder` copied to `T/extensions/<ext>` (the folder the game knows it by).
fn installed(test: &str, folder: &str, ext: &str) -> Option<PathBuf> {
    let src = common::corpus_root()?.join("x4-mods").join(folder);
    let dst = scratch(test).join("extensions").join(ext);
    copy_dir(&src, &dst);
    Some(dst)
}

fn errors(c: &ModCheck) -> Vec<&hangar::Finding> {
    c.findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .collect()
}

/// The error on `file` whose `missing` contains `token` (any case).
fn found<'a>(c: &'a ModCheck, file: &str, token: &str) -> Option<&'a hangar::Finding> {
    errors(c).into_iter().find(|f| {
        f.file.as_deref() == Some(file)
            && f.missing
                .as_deref()
                .is_some_and(|m| m.to_lowercase().contains(&token.to_lowercase()))
    })
}

use common::write_text as write;

#[test]
fn corpus_mods_have_no_false_alarm() {
    let Some(dir) = installed(
        "pristine",
        "UniTrader__ut_add_unavailable_modules",
        "ut_add_unavailable_modules",
    ) else {
        return;
    };
    let c = hangar::check_mod(&dir, None).unwrap();
    // 66 loose files (the catalog pair is read as a catalog) and the 5 textures of subst_01.cat.
    assert_eq!(c.files.len(), 71);
    assert!(c
        .files
        .contains(&"subst_01.cat::assets/fx/gui/textures/stationmodules/landmarks_tel_tradestation_01_center_ut01_macro.gz".to_string()));
    assert_eq!(errors(&c).len(), 0, "{:#?}", errors(&c));
    // Every reference into the base game is summed up once a file, none an error: 13 files
    // reference the game, 36 diff patches patch its files.
    assert_eq!(c.findings.len(), 49, "{:#?}", c.findings);
    assert!(c.findings.iter().all(|f| f.message.contains("not checked")));
    let patches = c
        .findings
        .iter()
        .filter(|f| f.message.contains("sel paths into the game's file"));
    assert_eq!(patches.count(), 36);
    assert_eq!(c.links.len(), 302 + 36);

    // UTFactionLogos: its snapshot lacks some faction folders; each error names a target that is
    // truly not in the mod.
    let dir = installed(
        "pristine-logos",
        "UniTrader__UTFactionLogos",
        "UTFactionLogos",
    )
    .unwrap();
    let t = std::time::Instant::now();
    let c = hangar::check_mod(&dir, None).unwrap();
    let took = t.elapsed();
    assert_eq!(c.files.len(), 518);
    assert_eq!(errors(&c).len(), 152);
    for e in errors(&c) {
        let m = e.missing.as_deref().unwrap();
        let rest = m
            .replace('\\', "/")
            .to_lowercase()
            .trim_start_matches("/extensions/utfactionlogos/")
            .to_string();
        for end in ["", ".xml", ".gz", ".dds"] {
            let p = dir.join(format!("{rest}{end}"));
            assert!(!p.exists(), "{} exists: {e}", p.display());
        }
    }
    assert!(took.as_secs_f64() < 1.0, "{took:?}");
}

#[test]
fn injected_faults_are_each_found_with_file_and_reference() {
    let Some(dir) = installed(
        "faults",
        "UniTrader__ut_add_unavailable_modules",
        "ut_add_unavailable_modules",
    ) else {
        return;
    };
    let comp =
        "assets/structures/landmarks/landmarks_tel_tradestation_01_ring_inside_ut02_component.xml";
    let macro_file = "assets/structures/landmarks/macros/landmarks_tel_tradestation_01_ring_inside_ut02_macro.xml";
    // A part's mesh deleted.
    std::fs::remove_file(dir.join(
        "assets/structures/landmarks/landmarks_tel_tradestation_01_ring_rotation_data/anim_innerarea-lod0.xmf",
    ))
    .unwrap();
    // An index entry pointing nowhere.
    let index = std::fs::read_to_string(dir.join("index/macros.xml")).unwrap();
    std::fs::write(
        dir.join("index/macros.xml"),
        index.replace("ring_inside_ut02_macro\"", "ring_inside_ut02_macro_gone\""),
    )
    .unwrap();
    // A macro's component misspelt, a ware naming a missing macro.
    let m = std::fs::read_to_string(dir.join(macro_file)).unwrap();
    std::fs::write(
        dir.join(macro_file),
        m.replace(
            "ring_inside_ut02_component\"",
            "ring_inside_ut02_componnet\"",
        ),
    )
    .unwrap();
    let w = std::fs::read_to_string(dir.join("libraries/wares.xml")).unwrap();
    std::fs::write(
        dir.join("libraries/wares.xml"),
        w.replacen(
            "ref=\"landmarks_tel_tradestation_01_ring_inside_ut02_macro\"",
            "ref=\"landmarks_tel_tradestation_01_ring_inside_ut02_macr\"",
            1,
        ),
    )
    .unwrap();
    // A material the library does not define.
    write(
        &dir,
        "libraries/material_library.xml",
        r#"<diff><add sel="/materiallibrary"><collection name="ut"><material name="paint"><properties>
<property type="BitMap" name="diffuse_map" value="extensions\ut_add_unavailable_modules\assets\textures\paint_diff"/>
</properties></material></collection></add></diff>"#,
    );
    // content.xml malformed.
    let content = std::fs::read_to_string(dir.join("content.xml")).unwrap();
    std::fs::write(dir.join("content.xml"), content.replace("</content>", "")).unwrap();

    // A small game that knows the base-game names the mod uses (and nothing misspelt).
    let game = dir.parent().unwrap().parent().unwrap().join("game");
    write(&game, "index/components.xml", "<index/>");
    write(
        &game,
        "index/macros.xml",
        r#"<index><entry name="landmarks_tel_tradestation_01_ring_inside_02_macro" value="assets\x\m"/></index>"#,
    );
    write(
        &game,
        "libraries/material_library.xml",
        "<materiallibrary/>",
    );

    let c = hangar::check_mod(&dir, Some(&game)).unwrap();
    let part = found(&c, comp, "anim_innerarea-lod0").expect("the deleted mesh");
    assert!(part.line.is_some_and(|l| l > 0));
    assert!(found(&c, "index/macros.xml", "ring_inside_ut02_macro_gone").is_some());
    let f = found(&c, macro_file, "ring_inside_ut02_componnet").expect("the misspelt component");
    assert_eq!(
        f.missing.as_deref(),
        Some("landmarks_tel_tradestation_01_ring_inside_ut02_componnet")
    );
    assert!(found(&c, "libraries/wares.xml", "ring_inside_ut02_macr").is_some());
    // The game's library lacks the material the component's meshes name.
    let mat = found(&c, comp, "generic.generic_p1_hulltexture").expect("the material");
    assert_eq!(
        mat.message,
        "material \"generic.generic_p1_hulltexture\": not found"
    );
    let tex = found(&c, "libraries/material_library.xml", "paint_diff").expect("the texture");
    assert_eq!(tex.line, Some(2));
    let bad = errors(&c)
        .into_iter()
        .find(|f| f.file.as_deref() == Some("content.xml"))
        .expect("content.xml");
    assert!(bad.line.is_some() && bad.message.contains("well-formed"));
    // The game makes each base-game reference an error or a link: none is left unchecked.
    assert!(c
        .findings
        .iter()
        .all(|f| !f.message.contains("not checked")));
}

/// A mod built in code: `files` (path, text) in `T/extensions/<name>`.
fn built(test: &str, name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = scratch(test).join("extensions").join(name);
    for (p, t) in files {
        write(&dir, p, t);
    }
    dir
}

#[test]
fn hostile_mods_stay_harmless() {
    let dir = built(
        "hostile",
        "evil",
        &[
            ("content.xml", r#"<content id="evil" version="1"/>"#),
            (
                "index/components.xml",
                r#"<index><entry name="a" value="..\..\..\secret"/><entry name="b" value="C:\Windows\win"/><entry name="c" value="\\server\share\x"/></index>"#,
            ),
            (
                "index/macros.xml",
                r#"<index><entry name="m1" value="extensions\evil\m"/></index>"#,
            ),
            (
                "m.xml",
                r#"<macros><macro name="m1"><connections><connection ref="c"><macro ref="m2"/></connection></connections></macro>
<macro name="m2"><connections><connection ref="c"><macro ref="m1"/></connection></connections></macro></macros>"#,
            ),
            (
                "libraries/material_library.xml",
                r#"<materiallibrary><collection name="x"><material name="y"><properties><property type="BitMap" name="diffuse_map" value="..\secret"/></properties></material></collection></materiallibrary>"#,
            ),
        ],
    );
    // A file beside the mod that the references above would reach if followed.
    write(dir.parent().unwrap(), "secret.xml", "<secret/>");
    write(
        &dir,
        "deep.xml",
        &format!("{}{}", "<a>".repeat(5000), "</a>".repeat(5000)),
    );
    let c = hangar::check_mod(&dir, None).unwrap();
    for (file, missing) in [
        ("index/components.xml", r"..\..\..\secret"),
        ("index/components.xml", r"C:\Windows\win"),
        ("index/components.xml", r"\\server\share\x"),
        ("libraries/material_library.xml", r"..\secret"),
    ] {
        let f = found(&c, file, missing).unwrap_or_else(|| panic!("{missing}: {:#?}", c.findings));
        assert!(f.message.contains("never read"), "{}", f.message);
        assert_eq!(f.missing.as_deref(), Some(missing));
    }
    // No link leads outside the mod.
    assert!(c
        .links
        .iter()
        .all(|l| l.target.is_none() || !l.target.as_deref().unwrap().contains("secret")));
    let ring = errors(&c)
        .into_iter()
        .find(|f| f.message.contains("holds itself"))
        .expect("the macro cycle");
    assert_eq!(ring.file.as_deref(), Some("m.xml"));
    let deep = errors(&c)
        .into_iter()
        .find(|f| f.file.as_deref() == Some("deep.xml"))
        .expect("the deep XML");
    assert!(deep.message.contains("nested deeper"));
}

#[test]
fn a_mod_given_as_bytes_is_checked_as_on_disk() {
    let src = |s: &str| -> SharedSource { Arc::new(s.as_bytes().to_vec()) };
    let index = r#"<index><entry name="m" value="extensions\mm\nowhere"/></index>"#;
    let cat = format!("index/macros.xml {} 0 {}\n", index.len(), "0".repeat(32));
    let c = hangar::check_mod_files(
        "mm",
        vec![
            (
                "content.xml".into(),
                src(r#"<content id="mm" version="2"/>"#),
            ),
            ("ext_01.cat".into(), src(&cat)),
            ("ext_01.dat".into(), src(index)),
        ],
        None,
    )
    .unwrap();
    assert_eq!(c.files, ["content.xml", "ext_01.cat::index/macros.xml"]);
    let f = found(&c, "ext_01.cat::index/macros.xml", "nowhere").expect("the entry");
    assert_eq!(f.line, Some(1));
    assert_eq!(errors(&c).len(), 1);
    let page = c.to_html();
    assert!(page.contains("ext_01.cat/") && page.contains("nowhere"));
}

#[test]
fn a_dependency_beside_the_mod_is_read() {
    let root = scratch("dependency").join("extensions");
    write(
        &root,
        "base/content.xml",
        r#"<content id="base" version="1"/>"#,
    );
    write(
        &root,
        "base/index/components.xml",
        r#"<index><entry name="hull" value="extensions\base\hull"/></index>"#,
    );
    write(&root, "base/hull.xml", "<components/>");
    let dir = root.join("addon");
    write(
        &dir,
        "content.xml",
        r#"<content id="addon" version="1"><dependency id="base"/></content>"#,
    );
    write(
        &dir,
        "index/macros.xml",
        r#"<index><entry name="ship_macro" value="extensions\addon\ship"/></index>"#,
    );
    write(
        &dir,
        "ship.xml",
        r#"<macros><macro name="ship_macro"><component ref="hull"/></macro><macro name="other"><component ref="gone"/></macro></macros>"#,
    );
    let c = hangar::check_mod(&dir, None).unwrap();
    assert!(errors(&c).is_empty(), "{:#?}", c.findings);
    let hull = c.links.iter().find(|l| l.written == "hull").unwrap();
    assert_eq!(hull.target.as_deref(), Some(r"extensions\base\hull"));
    // Not in the mod nor beside it, and no game: not checked, not an error.
    assert!(c
        .findings
        .iter()
        .any(|f| f.message.contains("gone (a base-game name")));
}

#[test]
fn a_dependency_is_found_by_content_id_not_folder_name() {
    let root = scratch("dependency_by_id").join("extensions");
    let main = r#"<content id="main" version="1">
  <dependency id="other_folder"/>
  <dependency id="OtherContentId"/>
  <dependency id="no_id"/>
</content>"#;
    for (folder, content) in [
        (
            "other_folder",
            r#"<content id="OtherContentId" version="1"/>"#,
        ),
        ("no_id", r#"<content version="1"/>"#),
        ("main", main),
    ] {
        write(&root.join(folder), "content.xml", content);
    }
    let dir = root.join("main");
    let c = hangar::check_mod(&dir, None).unwrap();
    // By folder name only: an error naming the folder's extension and its id (line 2).
    let e = errors(&c);
    assert_eq!(e.len(), 1, "{:#?}", c.findings);
    assert_eq!(e[0].file.as_deref(), Some("content.xml"));
    assert_eq!(e[0].line, Some(2));
    assert!(
        e[0].message.contains("\"other_folder\" is the folder name"),
        "{}",
        e[0].message
    );
    assert!(
        e[0].message.contains("<dependency id=\"OtherContentId\">"),
        "{}",
        e[0].message
    );
    // By id, and by folder for the extension without an id: found.
    let targets: Vec<_> = c
        .links
        .iter()
        .filter(|l| l.target.is_some())
        .map(|l| l.written.as_str())
        .collect();
    assert_eq!(targets, ["OtherContentId", "no_id"]);
    // An extension without an id: a warning saying what the id is for, not an error.
    let n = hangar::check_mod(&root.join("no_id"), None).unwrap();
    assert!(errors(&n).is_empty(), "{:#?}", n.findings);
    let w = n
        .findings
        .iter()
        .find(|f| f.message.starts_with("no id"))
        .unwrap();
    assert_eq!(w.severity, Severity::Warning);
    assert!(
        w.message.contains("folder name (no_id) stands in") && w.message.contains("save games")
    );
}

/// Two extensions `a` and `b` under `T/extensions`, each with `file` holding `text`.
fn two_extensions(test: &str, file: &str, text: &str) -> PathBuf {
    let root = scratch(test).join("extensions");
    for m in ["a", "b"] {
        let content = format!(r#"<content id="{m}" version="1"/>"#);
        write(&root, &format!("{m}/content.xml"), &content);
        write(&root, &format!("{m}/{file}"), text);
    }
    root
}

/// X4's own libraries begin with a DOCTYPE naming a DTD the game never reads.
const ICONS: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE icons SYSTEM \"icons.dtd\" >\n<icons>\n<icon name=\"x_*\" texture=\"extensions\\m\\x\\*.tga\" height=\"256\" width=\"256\"/>\n</icons>\n";

#[test]
fn a_library_with_a_doctype_validates_and_conflicts_whole() {
    let root = two_extensions("doctype", "libraries/icons.xml", ICONS);
    let c = hangar::check_mod(&root.join("a"), None).unwrap();
    let on_icons: Vec<_> = c
        .findings
        .iter()
        .filter(|f| f.file.as_deref() == Some("libraries/icons.xml"))
        .collect();
    assert!(on_icons.is_empty(), "{on_icons:#?}");
    assert!(errors(&c).is_empty(), "{:#?}", c.findings);
    let found = hangar::conflicts(&[root.join("a"), root.join("b")], None).unwrap();
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].kind, "file");
    assert_eq!(found[0].name, "libraries/icons.xml");
    assert_eq!(found[0].mods, ["a", "b"]);
}

#[test]
fn conflicts_name_a_file_that_does_not_read() {
    let wares = r#"<wares><ware id="w1" name="x"/></wares>"#;
    let root = two_extensions("unreadable", "libraries/wares.xml", wares);
    // A typo: an attribute value without quotes.
    write(
        &root,
        "b/libraries/wares.xml",
        "<wares>\n<ware id=w1 name=\"x\"/></wares>",
    );
    let found = hangar::conflicts(&[root.join("a"), root.join("b")], None).unwrap();
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].kind, "unreadable");
    assert_eq!(found[0].name, "libraries/wares.xml");
    assert_eq!(found[0].files, ["b/libraries/wares.xml"]);
    assert!(
        found[0].message.contains("line 2: not well-formed XML"),
        "{}",
        found[0].message
    );
}

#[test]
fn diff_patches_select_in_the_game_they_patch() {
    let root = scratch("patches");
    let game = root.join("game");
    write(
        &game,
        "libraries/wares.xml",
        r#"<wares><ware id="hull"><production method="default"><primary/></production></ware></wares>"#,
    );
    let dir = root.join("extensions/patcher");
    write(
        &dir,
        "content.xml",
        r#"<content id="patcher" version="1"/>"#,
    );
    write(
        &dir,
        "libraries/wares.xml",
        "<diff>\n<replace sel=\"/wares/ware[@id='hul']/@tags\">x</replace>\n<add sel=\"//ware[@id='hull']/production[@method='default']/primary\"><ware ware=\"e\"/></add>\n<remove sel=\"//ware[@id='nothing']\"/>\n</diff>",
    );
    let c = hangar::check_mod(&dir, Some(&game)).unwrap();
    let e = errors(&c);
    assert_eq!(e.len(), 1, "{e:#?}");
    assert_eq!(
        e[0].missing.as_deref(),
        Some("/wares/ware[@id='hul']/@tags")
    );
    assert_eq!(e[0].line, Some(2));
    // After an operation that adds, a miss may be what it added: a warning.
    let later = c
        .findings
        .iter()
        .find(|f| f.missing.as_deref() == Some("//ware[@id='nothing']"))
        .unwrap();
    assert_eq!((later.severity, later.line), (Severity::Warning, Some(4)));
    // Without the game the patch is listed as not checked.
    let c = hangar::check_mod(&dir, None).unwrap();
    assert!(errors(&c).is_empty());
    assert!(
        c.findings[0].message.contains("3 sel paths"),
        "{:?}",
        c.findings
    );
}

/// The texture corpus's StarCraft II folder `folder` copied to `T/<name>`.
fn sc2_copy(test: &str, folder: &str, name: &str) -> Option<PathBuf> {
    let src = common::corpus_root()?.join("textures").join(folder);
    let dst = scratch(test).join(name);
    copy_dir(&src, &dst);
    Some(dst)
}

#[test]
fn sc2_models_textures_and_letter_case_are_checked() {
    // A map whose M3 names its texture Assets/Textures/..., stored as assets/textures/...
    let Some(map) = sc2_copy(
        "sc2-map",
        "vicboyv__thethingrevival.SC2Map",
        "thethingrevival.SC2Map",
    ) else {
        return;
    };
    assert_eq!(hangar::mod_kind(&map), Some(hangar::ModKind::Sc2));
    let c = hangar::check_mod(&map, None).unwrap();
    assert_eq!(c.kind, "sc2");
    assert!(errors(&c).is_empty(), "{:#?}", c.findings);
    let case: Vec<_> = c
        .findings
        .iter()
        .filter(|f| f.message.contains("case-sensitive"))
        .collect();
    assert_eq!(case.len(), 1, "{:#?}", c.findings);
    assert_eq!(case[0].file.as_deref(), Some("Flamethrowerbackpack.m3"));
    assert_eq!(
        case[0].missing.as_deref(),
        Some("Assets/Textures/FlameBPTexture.dds")
    );
    assert!(case[0]
        .message
        .contains("assets/textures/FlameBPTexture.dds"));

    // A mod: its M3's 8 layers name one texture it has; data naming a model in another case,
    // one in the game, one outside.
    let dir = sc2_copy(
        "sc2-mod",
        "SC2-Honkai-Mods__HonkaiUnitsMod",
        "Honkai.SC2Mod",
    )
    .unwrap();
    write(
        &dir,
        "Base.SC2Data/GameData/ModelData.xml",
        r#"<Catalog>
<CModel id="Status"><Model value="Assets\Models\honkaiunitstatus\HonkaiUnitStatus_NoEnergy.m3"/></CModel>
<CModel id="Gone"><Model value="Assets\Units\Gone\Gone.m3"/></CModel>
<CModel id="Evil"><Model value="..\..\secret.m3"/></CModel>
</Catalog>"#,
    );
    let c = hangar::check_mod(&dir, None).unwrap();
    let layers: Vec<_> = c.links.iter().filter(|l| l.file.ends_with(".m3")).collect();
    assert_eq!(layers.len(), 8);
    assert!(layers
        .iter()
        .all(|l| l.target.as_deref() == Some("Base.SC2Data/Assets/Textures/HonkaiUnitStatus.dds")));
    let data = "Base.SC2Data/GameData/ModelData.xml";
    let case = c
        .findings
        .iter()
        .find(|f| f.message.contains("case-sensitive"))
        .unwrap();
    assert_eq!((case.file.as_deref(), case.line), (Some(data), Some(2)));
    let evil = found(&c, data, r"..\..\secret.m3").unwrap();
    assert!(evil.message.contains("never read"));
    assert_eq!(errors(&c).len(), 1, "{:#?}", c.findings);
    // With a game that lacks it, the missing model is an error on its line.
    let game = scratch("sc2-game");
    let c = hangar::check_mod(&dir, Some(&game)).unwrap();
    let gone = found(&c, data, "Gone.m3").unwrap();
    assert_eq!(gone.line, Some(3));
    assert_eq!(errors(&c).len(), 2);
}

/// Pieces of the XML mods are made of, for the property below to assemble.
const PIECES: &[&str] = &[
    "<macros><macro name=\"a\"><component ref=\"b\"/><connections><connection ref=\"c\"><macro ref=\"a\"/></connection></connections></macro></macros>",
    "<components><component name=\"b\"><source geometry=\"extensions\\fuzz\\d\"/><connections><connection><parts><part name=\"p\"><lods><lod index=\"0\"><materials><material ref=\"x.y\"/></materials></lod></lods></part></parts></connection></connections></component></components>",
    "<index><entry name=\"a\" value=\"extensions\\fuzz\\m\"/><entry name=\"*\" value=\"..\\..\\x\"/></index>",
    "<diff><add sel=\"//ware[@id='a']\"><ware id=\"b\"><component ref=\"a\"/></ware></add></diff>",
    "<materiallibrary><collection name=\"x\"><material name=\"y\"><properties><property type=\"BitMap\" value=\"C:\\t\"/></properties></material></collection></materiallibrary>",
    "<content id=\"fuzz\" version=\"x\"><dependency id=\"other\"/></content>",
    "<language><page id=\"1\"><t id=\"2\">{1,2}</t></page></language>",
    "<a><b><c>",
    "",
];

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]
    /// Any mix of those pieces and bytes, under any of a mod's file names, ends in findings.
    #[test]
    fn any_mod_ends_in_findings(
        picks in proptest::collection::vec((0usize..12, 0usize..PIECES.len(), proptest::collection::vec(proptest::prelude::any::<u8>(), 0..40)), 0..12)
    ) {
        const NAMES: &[&str] = &[
            "content.xml", "index/macros.xml", "index/components.xml", "m.xml", "c.xml",
            "d/p-lod0.xmf", "d.ani", "libraries/wares.xml", "libraries/material_library.xml",
            "t/0001-l044.xml", "ext_01.cat", "ext_01.dat",
        ];
        let files: Vec<(String, SharedSource)> = picks
            .into_iter()
            .map(|(n, p, noise)| {
                let mut b = PIECES[p].as_bytes().to_vec();
                b.extend(noise);
                (NAMES[n].to_string(), Arc::new(b) as SharedSource)
            })
            .collect();
        if let Ok(c) = hangar::check_mod_files("fuzz", files, None) {
            let _ = c.to_html();
        }
    }
}

#[test]
fn a_placement_names_connections_its_components_have() {
    let dir = built(
        "connections",
        "station",
        &[
            ("content.xml", r#"<content id="station" version="1"/>"#),
            (
                "index/macros.xml",
                r#"<index><entry name="st_macro" value="extensions\station\m"/><entry name="dock_macro" value="extensions\station\m"/></index>"#,
            ),
            (
                "index/components.xml",
                r#"<index><entry name="st" value="extensions\station\c"/><entry name="dock" value="extensions\station\c"/></index>"#,
            ),
            (
                "c.xml",
                r#"<components><component name="st"><connections><connection name="con_dock"/></connections></component>
<component name="dock"><connections><connection name="space"/></connections></component></components>"#,
            ),
            (
                "m.xml",
                "<macros><macro name=\"st_macro\"><component ref=\"st\"/><connections>\n<connection ref=\"con_dock\"><macro ref=\"dock_macro\" connection=\"space\"/></connection>\n<connection ref=\"con_gone\"><macro ref=\"dock_macro\" connection=\"spaec\"/></connection>\n</connections></macro>\n<macro name=\"dock_macro\"><component ref=\"dock\"/></macro></macros>",
            ),
        ],
    );
    let c = hangar::check_mod(&dir, None).unwrap();
    // The macro's own connection its component lacks is an error naming both (a ship without its
    // cockpit's seat); a placed macro's connection its component lacks stays a warning.
    let bad: Vec<(hangar::Severity, Option<&str>, Option<u32>)> = c
        .findings
        .iter()
        .map(|f| (f.severity, f.missing.as_deref(), f.line))
        .collect();
    assert_eq!(
        bad,
        [
            (hangar::Severity::Error, Some("con_gone"), Some(3)),
            (hangar::Severity::Warning, Some("spaec"), Some(3))
        ]
    );
    let e = &errors(&c)[0].message;
    assert!(e.contains("st_macro") && e.contains("component st"), "{e}");
}
