//! `hangar::find` on a game folder built from corpus files: the game's own files packed into a
//! catalog (texts, index, a macro, wares), the dropships mod of the corpus (HANGAR_CORPUS) as an
//! installed extension, and a second extension that renames through `<diff>` patches of the `t`
//! files. Skipped without the corpus.

use hangar::{FindOptions, FoundKind};
use std::path::{Path, PathBuf};

fn corpus() -> Option<PathBuf> {
    let c = PathBuf::from(std::env::var_os("HANGAR_CORPUS")?);
    let m = c.join("x4-mods/xirsoi__dropships__dropships");
    if m.is_dir() {
        Some(m)
    } else {
        eprintln!("skipped: no dropships mod in the corpus");
        None
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The mod's XML files (not its meshes) copied below `to`.
fn copy_xml(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let dest = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_xml(&p, &dest);
        } else if p.extension().is_some_and(|x| x == "xml") {
            std::fs::create_dir_all(to).unwrap();
            std::fs::copy(&p, &dest).unwrap();
        }
    }
}

const GAME_T: &str = r#"<?xml version="1.0" encoding="utf-8"?>
<language id="44">
  <page id="20101" title="Ships">
    <t id="10601">Cerberus</t>
    <t id="10603">{20101,10601} \(Vanguard\)(the standard hull)</t>
    <t id="20401">Osprey</t>
    <t id="30401">Gorgon</t>
    <t id="41401">Cobra</t>
  </page>
  <page id="20111"><t id="10601">Frigate</t><t id="8">FR</t></page>
  <page id="20201"><t id="701">Energy Cells</t></page>
  <page id="20206"><t id="101">Default</t></page>
</language>"#;

const GAME_MACRO: &str = r#"<?xml version="1.0" encoding="utf-8"?>
<macros>
  <macro name="ship_arg_m_frigate_01_a_macro" class="ship_m">
    <component ref="ship_arg_m_frigate_01"/>
    <properties><identification name="{20101,10603}" basename="{20101,10601}"/></properties>
  </macro>
</macros>"#;

/// A game folder: the game's files in 01.cat, the dropships mod and a renaming extension
/// installed below extensions/.
fn game(dir: &Path, mod_dir: &Path) -> PathBuf {
    let _ = std::fs::remove_dir_all(dir);
    let stage = dir.join("stage");
    write(&stage.join("t/0001-l044.xml"), GAME_T);
    write(
        &stage.join("index/macros.xml"),
        r#"<index><entry name="ship_arg_m_frigate_01_a_macro" value="assets\units\size_m\macros\ship_arg_m_frigate_01_a_macro"/></index>"#,
    );
    write(
        &stage.join("index/components.xml"),
        r#"<index><entry name="ship_arg_m_frigate_01" value="assets\units\size_m\ship_arg_m_frigate_01"/></index>"#,
    );
    write(
        &stage.join("assets/units/size_m/macros/ship_arg_m_frigate_01_a_macro.xml"),
        GAME_MACRO,
    );
    write(
        &stage.join("libraries/wares.xml"),
        r#"<wares><ware id="energycells" name="{20201,701}"/><ware id="ship_arg_m_frigate_01_a" name="{20101,10603}"><component ref="ship_arg_m_frigate_01_a_macro"/></ware></wares>"#,
    );
    let root = dir.join("game");
    std::fs::create_dir_all(&root).unwrap();
    hangar::catalogs::pack(&stage, &root.join("01.cat"), &|_| {}).unwrap();
    copy_xml(mod_dir, &root.join("extensions/dropships"));
    // Loaded after dropships (it depends on it): its texts win.
    let rename = root.join("extensions/ab_rename");
    write(
        &rename.join("content.xml"),
        r#"<content id="ab_rename" name="Rename"><dependency id="dropships"/></content>"#,
    );
    write(
        &rename.join("t/0001-l044.xml"),
        r#"<diff>
  <replace sel="/language/page[@id='20101']/t[@id='10601']/text()">Kerberos</replace>
  <replace sel="/language/page[@id='141132']/t[@id='2']">
    <t id="2">Osprey Boarding Craft</t>
  </replace>
</diff>"#,
    );
    // A third changes the game macro's basename by a <diff> of its file.
    write(
        &root.join("extensions/ac_basename/content.xml"),
        r#"<content id="ac_basename" name="Basename"/>"#,
    );
    write(
        &root.join(
            "extensions/ac_basename/assets/units/size_m/macros/ship_arg_m_frigate_01_a_macro.xml",
        ),
        r#"<diff><replace sel="//macro[@name='ship_arg_m_frigate_01_a_macro']/properties/identification/@basename">{20101,20401}</replace></diff>"#,
    );
    root
}

fn options() -> FindOptions {
    FindOptions {
        cache: false,
        ..Default::default()
    }
}

#[test]
fn names_come_from_the_game_and_the_extensions_patches() {
    let Some(mod_dir) = corpus() else { return };
    let dir = std::env::temp_dir().join(format!("hangar-find-game-{}", std::process::id()));
    let root = game(&dir, &mod_dir);
    let games = [root.clone()];

    // A game name patched by an extension: the extension's text, with comments dropped,
    // escapes undone and references followed.
    let found = hangar::find(&games, "kerberos vanguard", &options()).unwrap();
    let ids: Vec<(&str, &str, &str)> = found
        .iter()
        .map(|f| (f.kind.name(), f.id.as_str(), f.name.as_str()))
        .collect();
    assert_eq!(
        ids,
        [
            (
                "macro",
                "ship_arg_m_frigate_01_a_macro",
                "Kerberos (Vanguard)"
            ),
            // The component is shown by the name of the macro that builds it.
            ("component", "ship_arg_m_frigate_01", "Kerberos (Vanguard)"),
            ("ware", "ship_arg_m_frigate_01_a", "Kerberos (Vanguard)"),
        ]
    );
    assert_eq!(
        found[0].file,
        "assets/units/size_m/macros/ship_arg_m_frigate_01_a_macro.xml"
    );
    assert_eq!(found[0].extension, None);
    // The basename the third extension's patch of the macro file gives it.
    let by_base = hangar::find(
        &games,
        "frigate_01 osprey",
        &FindOptions {
            kind: Some(FoundKind::Macro),
            ..options()
        },
    )
    .unwrap();
    assert_eq!(by_base.len(), 1);
    assert_eq!(by_base[0].id, "ship_arg_m_frigate_01_a_macro");
    // The game's own name is gone.
    assert!(hangar::find(&games, "Cerberus Vanguard", &options())
        .unwrap()
        .is_empty());

    // The mod's text patched by the extension loaded after it.
    let osprey = hangar::find(&games, "Osprey Boarding Craft", &options()).unwrap();
    let kinds: Vec<(&str, &str)> = osprey
        .iter()
        .map(|f| (f.kind.name(), f.id.as_str()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("macro", "ship_tel_m_dropship_01_a_macro"),
            ("ware", "tel_dropship_ware")
        ]
    );
    assert_eq!(
        osprey[0].file,
        "extensions/dropships/assets/units/size_m/macros/ship_tel_m_dropship_01_a_macro.xml"
    );
    assert_eq!(osprey[0].extension.as_deref(), Some("dropships"));
    assert_eq!(osprey[1].file, "extensions/dropships/libraries/wares.xml");

    // The mod's own names, the whole name first.
    let cerberus = hangar::find(&games, "cerberus dropship", &options()).unwrap();
    let ids: Vec<&str> = cerberus.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(
        ids,
        ["arg_dropship_macro", "arg_dropship", "arg_dropship_ware"]
    );
    assert_eq!(cerberus[1].name, "Cerberus Dropship");
    assert_eq!(
        cerberus[1].file,
        "extensions/dropships/assets/units/size_m/arg_dropship.xml"
    );

    // Kinds, ids and components.
    let comps = hangar::find(
        &games,
        "dropship",
        &FindOptions {
            kind: Some(FoundKind::Component),
            ..options()
        },
    )
    .unwrap();
    let comp_ids: Vec<&str> = comps.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(
        comp_ids,
        [
            "arg_dropship",
            "par_dropship",
            "spl_dropship",
            "tel_dropship"
        ]
    );
    let text = hangar::find(
        &games,
        "boarding craft",
        &FindOptions {
            kind: Some(FoundKind::Text),
            ..options()
        },
    )
    .unwrap();
    assert_eq!(text.len(), 1);
    assert_eq!(text[0].id, "{141132,2}");
    assert_eq!(text[0].extension.as_deref(), Some("ab_rename"));
    assert_eq!(text[0].file, "extensions/ab_rename/t/0001-l044.xml");

    // The lead's `--template "NAME"`: one macro, or the candidates named.
    let view = hangar::open_game(&root).unwrap();
    assert_eq!(
        hangar::macro_by_name(&view, "Gorgon Dropship").unwrap(),
        "ship_par_m_dropship_01_a_macro"
    );
    let many = hangar::macro_by_name(&view, "dropship").unwrap_err();
    assert!(
        many.message.contains("4 macros") && many.message.contains("arg_dropship_macro"),
        "{}",
        many.message
    );
    assert!(hangar::macro_by_name(&view, "no such ship").is_err());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_extension_alone_resolves_its_own_texts() {
    let Some(mod_dir) = corpus() else { return };
    let mods = [mod_dir.clone()];
    let found = hangar::find(&mods, "Gorgon Dropship", &options()).unwrap();
    let got: Vec<(&str, &str, Option<&str>)> = found
        .iter()
        .map(|f| (f.id.as_str(), f.file.as_str(), f.extension.as_deref()))
        .collect();
    // The mod has no content id: its folder name stands for it.
    let ext = mod_dir.file_name().unwrap().to_str().unwrap();
    assert_eq!(
        got,
        [
            (
                "ship_par_m_dropship_01_a_macro",
                "assets/units/size_m/macros/ship_par_m_dropship_01_a_macro.xml",
                Some(ext)
            ),
            (
                "par_dropship",
                "assets/units/size_m/par_dropship.xml",
                Some(ext)
            ),
            ("par_dropship_ware", "libraries/wares.xml", Some(ext)),
        ]
    );
    assert!(hangar::find(&mods, "zzqx no such name 4711", &options())
        .unwrap()
        .is_empty());
    assert!(hangar::find(&mods, "  ", &options()).is_err());
    let empty = std::env::temp_dir().join(format!("hangar-find-empty-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let refused = hangar::find(std::slice::from_ref(&empty), "x", &options()).unwrap_err();
    assert!(
        refused.message.contains("holds no game"),
        "{}",
        refused.message
    );
    let _ = std::fs::remove_dir_all(&empty);
}

#[test]
fn a_kept_index_answers_until_a_file_changes() {
    let Some(mod_dir) = corpus() else { return };
    let dir = std::env::temp_dir().join(format!("hangar-find-cache-{}", std::process::id()));
    let root = game(&dir, &mod_dir);
    std::env::set_var("HANGAR_CACHE_DIR", dir.join("cache"));
    let cached = FindOptions::default();
    let games = [root.clone()];
    let first = hangar::find(&games, "Cobra Dropship", &cached).unwrap();
    assert_eq!(first[0].id, "ship_spl_m_dropship_01_a_macro");
    let kept: Vec<_> = std::fs::read_dir(dir.join("cache/find")).unwrap().collect();
    assert_eq!(kept.len(), 1);
    // Read back from the kept index: the same answer.
    assert_eq!(
        hangar::find(&games, "Cobra Dropship", &cached).unwrap(),
        first
    );
    // An extension's text changed: the index is made again.
    let t = root.join("extensions/dropships/t/0001-l044.xml");
    let text = std::fs::read_to_string(&t)
        .unwrap()
        .replace("Cobra Dropship", "Viper Dropship");
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(&t, text).unwrap();
    // (The game's basename "Cobra" and the id's "dropship" still answer "Cobra Dropship".)
    let again = hangar::find(&games, "Cobra Dropship", &cached).unwrap();
    assert!(again.iter().all(|f| f.name != "Cobra Dropship"));
    let viper = hangar::find(&games, "Viper Dropship", &cached).unwrap();
    assert_eq!(
        (viper[0].id.as_str(), viper[0].name.as_str()),
        ("ship_spl_m_dropship_01_a_macro", "Viper Dropship")
    );
    let _ = std::fs::remove_dir_all(&dir);
}
