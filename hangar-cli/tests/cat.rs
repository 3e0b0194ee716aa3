//! `hangar cat ...` and the game view (`GAME::path`) as a user runs them.

use std::path::{Path, PathBuf};
use std::process::Command;

fn hangar(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_hangar"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn tmp(test: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("cat")
        .join(test);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A mod folder: one model, one broken model, one text file with CR LF line ends.
fn source(d: &Path) -> PathBuf {
    let src = d.join("src");
    std::fs::create_dir_all(src.join("Assets/Units")).unwrap();
    let wedge = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/wedge-lod0.xmf");
    std::fs::copy(&wedge, src.join("Assets/Units/wedge-lod0.xmf")).unwrap();
    let bytes = std::fs::read(&wedge).unwrap();
    std::fs::write(src.join("Assets/Units/zz_broken-lod0.xmf"), &bytes[..100]).unwrap();
    std::fs::write(src.join("index.xml"), "<a>\r\n<b/>\r\n</a>\r\n").unwrap();
    src
}

#[test]
fn pack_list_verify_extract_diff() {
    let d = tmp("roundtrip");
    let src = source(&d);
    let cat = d.join("game/01.cat");
    let (code, _, err) = hangar(&["cat", "pack", s(&src), "-o", s(&cat)]);
    assert_eq!(code, 0, "{err}");
    let (code, out, _) = hangar(&["cat", "list", s(&cat), "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let paths: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        [
            "Assets/Units/wedge-lod0.xmf",
            "Assets/Units/zz_broken-lod0.xmf",
            "index.xml"
        ]
    );
    let wedge_len = std::fs::metadata(src.join("Assets/Units/wedge-lod0.xmf"))
        .unwrap()
        .len();
    assert_eq!(v[1]["offset"], wedge_len);
    assert_eq!(v[2]["offset"], wedge_len + 100);
    assert_eq!(v[2]["size"], 17);
    let (code, out, _) = hangar(&["cat", "verify", s(&cat)]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("ok (3 entries"), "{out}");

    let x = d.join("x");
    let (code, _, err) = hangar(&["cat", "extract", s(&cat), "-o", s(&x), "*.XML"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        std::fs::read(x.join("index.xml")).unwrap(),
        b"<a>\r\n<b/>\r\n</a>\r\n"
    );
    assert!(!x.join("Assets").exists());

    // A second catalog with one file changed, one added and one gone.
    std::fs::remove_file(src.join("Assets/Units/zz_broken-lod0.xmf")).unwrap();
    std::fs::write(src.join("index.xml"), "<a/>").unwrap();
    std::fs::write(src.join("new.txt"), "new").unwrap();
    let (code, _, _) = hangar(&["cat", "pack", s(&src), "-o", s(&d.join("mod")), "--ext"]);
    assert_eq!(code, 0);
    let (code, out, _) = hangar(&["cat", "diff", s(&cat), s(&d.join("mod/ext_01.cat"))]);
    assert_eq!(code, 0);
    assert_eq!(
        out,
        "+ new.txt\n~ index.xml\n- assets/units/zz_broken-lod0.xmf\n1 added, 1 changed, 1 removed\n"
    );
}

#[test]
fn verify_recognises_git_line_ending_damage() {
    let d = tmp("crlf");
    let src = source(&d);
    let cat = d.join("ext_01.cat");
    assert_eq!(hangar(&["cat", "pack", s(&src), "-o", s(&cat)]).0, 0);
    // What `git checkout` does to a .dat not marked binary: CR LF -> LF.
    let dat = d.join("ext_01.dat");
    let bytes = std::fs::read(&dat).unwrap();
    let mut damaged = Vec::new();
    for (i, b) in bytes.iter().enumerate() {
        if !(*b == b'\r' && bytes.get(i + 1) == Some(&b'\n')) {
            damaged.push(*b);
        }
    }
    std::fs::write(&dat, &damaged).unwrap();
    let (code, out, _) = hangar(&["cat", "verify", s(&cat)]);
    assert_eq!(code, 1);
    assert!(out.contains("DAMAGED"), "{out}");
    assert!(
        out.contains("line 3: index.xml: runs past the end"),
        "{out}"
    );
    assert!(
        out.contains(&format!("-{}", bytes.len() - damaged.len())),
        "{out}"
    );
    assert!(out.contains("CR LF -> LF"), "{out}");
    assert!(
        out.contains("*.dat binary") && out.contains("*.cat binary"),
        "{out}"
    );
}

#[test]
fn game_view_in_info_and_a_batch_with_a_report() {
    let d = tmp("view");
    let src = source(&d);
    let game = d.join("game");
    assert_eq!(
        hangar(&["cat", "pack", s(&src), "-o", s(&game.join("01.cat"))]).0,
        0
    );
    let spec = format!("{}::ASSETS\\units/Wedge-LOD0.xmf", s(&game));
    let (code, out, err) = hangar(&["info", "--json", &spec]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["vertices"], 32);
    let (code, _, _) = hangar(&["validate", &spec]);
    assert_eq!(code, 0);
    let (code, out, _) = hangar(&["dump", &spec]);
    assert_eq!(code, 0);
    assert!(out.starts_with('{'));

    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("gltf/cat-batch");
    let _ = std::fs::remove_dir_all(&out);
    let (code, _, err) = hangar(&[
        "convert",
        &format!("{}::assets", s(&game)),
        s(&out),
        "--to",
        "glb",
    ]);
    assert_eq!(code, 1, "a broken model fails the batch: {err}");
    assert!(out.join("assets/units/wedge-lod0.glb").is_file());
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["models"], 2);
    assert_eq!(report["converted"], 1);
    assert_eq!(
        report["failed"][0]["path"],
        "assets/units/zz_broken-lod0.xmf"
    );
    assert!(!report["failed"][0]["error"].as_str().unwrap().is_empty());
}

#[test]
fn hostile_entries_never_leave_the_output_folder() {
    let d = tmp("hostile");
    let mut text = String::new();
    for p in [
        "../up.txt",
        "/tmp/abs.txt",
        r"C:\drive.txt",
        "a/../../twice.txt",
        "ok.txt",
    ] {
        text.push_str(&format!("{p} 1 0 0cc175b9c0f1b6a831c399e269772661\n"));
    }
    std::fs::write(d.join("ext_01.cat"), text).unwrap();
    std::fs::write(d.join("ext_01.dat"), "aaaaa").unwrap();
    let out = d.join("out/in");
    let (code, _, err) = hangar(&["cat", "extract", s(&d.join("ext_01.cat")), "-o", s(&out)]);
    assert_eq!(code, 1);
    for line in 1..=4 {
        assert!(err.contains(&format!("on line {line} ")), "{err}");
    }
    assert_eq!(std::fs::read(out.join("ok.txt")).unwrap(), b"a");
    assert!(!d.join("out/up.txt").exists() && !d.join("twice.txt").exists());
}

// MPQ archives as a new user meets them (issue 59): a map extracted, changed and packed again;
// `info` on it; an empty one; two compared; a model inside that is not there.

/// A map packed from a folder: a model, its texture, MapInfo.
fn map(d: &Path) -> PathBuf {
    let src = d.join("src");
    std::fs::create_dir_all(src.join("Assets/Units")).unwrap();
    let wedge = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/wedge-lod0.xmf");
    std::fs::copy(&wedge, src.join("Assets/Units/wedge-lod0.xmf")).unwrap();
    std::fs::write(src.join("MapInfo"), b"map info").unwrap();
    std::fs::write(src.join("Assets/Units/a.m3"), b"MD34 not a real model").unwrap();
    let a = d.join("Map.SC2Map");
    let (code, _, err) = hangar(&["cat", "pack", s(&src), "-o", s(&a)]);
    assert_eq!(code, 0, "{err}");
    a
}

#[test]
fn an_extracted_map_packs_with_the_files_added_to_it() {
    let d = tmp("repack");
    let a = map(&d);
    let x = d.join("x");
    let (code, _, err) = hangar(&["cat", "extract", s(&a), "-o", s(&x)]);
    assert_eq!(code, 0, "{err}");
    // The extraction leaves the archive's (listfile), which names three files.
    assert_eq!(
        std::fs::read(x.join("(listfile)")).unwrap(),
        b"Assets\\Units\\a.m3\r\nAssets\\Units\\wedge-lod0.xmf\r\nMapInfo\r\n"
    );
    std::fs::write(x.join("NewFile.txt"), b"hello\n").unwrap();
    std::fs::create_dir_all(x.join("Base.SC2Data/GameData")).unwrap();
    std::fs::write(x.join("Base.SC2Data/GameData/NewData.xml"), b"<Catalog/>").unwrap();

    let re = d.join("re.SC2Map");
    let (code, _, err) = hangar(&["cat", "pack", s(&x), "-o", s(&re)]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("(listfile) describe the archive"), "{err}");
    assert!(err.contains("(5 files,"), "{err}");
    let (code, out, err) = hangar(&["cat", "list", s(&re)]);
    assert_eq!(code, 0, "{err}");
    let names: Vec<&str> = out.lines().map(|l| l.split(' ').next().unwrap()).collect();
    assert_eq!(
        names,
        [
            "(listfile)",
            "Assets\\Units\\a.m3",
            "Assets\\Units\\wedge-lod0.xmf",
            "Base.SC2Data\\GameData\\NewData.xml",
            "MapInfo",
            "NewFile.txt"
        ]
    );
    assert!(!err.contains("no name"), "{err}");

    // --keep-listfile packs the stale one: the added files are then unnamed, and said so.
    let kept = d.join("kept.SC2Map");
    let (code, _, err) = hangar(&["cat", "pack", s(&x), "-o", s(&kept), "--keep-listfile"]);
    assert_eq!(code, 0, "{err}");
    let (_, out, err) = hangar(&["cat", "list", s(&kept)]);
    assert_eq!(out.lines().count(), 4, "{out}");
    assert!(err.contains("2 files have no name"), "{err}");
    // Not for a catalog.
    let (code, _, err) = hangar(&[
        "cat",
        "pack",
        s(&x),
        "-o",
        s(&d.join("c.cat")),
        "--keep-listfile",
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("--keep-listfile applies to an MPQ archive"),
        "{err}"
    );

    // Compared with the map it came from: the two files added, nothing else.
    let (code, out, err) = hangar(&["cat", "diff", s(&a), s(&re)]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "+ base.sc2data/gamedata/newdata.xml\n+ newfile.txt\n2 added, 0 changed, 0 removed\n"
    );
    let (code, out, _) = hangar(&["cat", "diff", s(&re), s(&a), "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["removed"].as_array().unwrap().len(), 2);
    // An archive against a catalog: said, never a .dat asked for.
    let (code, _, err) = hangar(&["cat", "diff", s(&a), s(&d.join("c.cat"))]);
    assert_eq!(code, 1);
    assert!(
        err.contains("is an MPQ archive and") && !err.contains(".dat"),
        "{err}"
    );
}

#[test]
fn info_describes_an_archive() {
    let d = tmp("info");
    let a = map(&d);
    let (code, out, err) = hangar(&["info", s(&a)]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with(&format!(
            "{}: MPQ archive, format 1 (StarCraft II map or mod)\n",
            a.display()
        )),
        "{out}"
    );
    assert!(out.contains("  files: 3\n"), "{out}");
    assert!(
        out.contains("  models:\n    Assets\\Units\\a.m3\n"),
        "{out}"
    );
    let (code, out, _) = hangar(&["info", "--json", s(&a)]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["files"], 3);
    assert_eq!(v["details"]["format_version"], 1);
    assert_eq!(v["details"]["kinds"]["xmf"], 1);
    assert_eq!(
        v["details"]["archive_bytes"],
        std::fs::metadata(&a).unwrap().len()
    );
}

#[test]
fn an_empty_map_is_called_empty_by_every_verb() {
    let d = tmp("empty");
    let x = d.join("x.SC2Map");
    std::fs::write(&x, b"").unwrap();
    let other = map(&d);
    let unused = d.join("unused");
    let runs: [Vec<&str>; 5] = [
        vec!["cat", "list", s(&x)],
        vec!["cat", "verify", s(&x)],
        vec!["cat", "extract", s(&x), "-o", s(&unused)],
        vec!["cat", "diff", s(&other), s(&x)],
        vec!["info", s(&x)],
    ];
    for args in runs {
        let (code, _, err) = hangar(&args);
        assert_eq!(code, 1, "{args:?}");
        assert!(err.contains("empty (0 bytes)"), "{args:?}: {err}");
        assert!(!err.contains("x.dat"), "{args:?}: {err}");
    }
    assert!(!unused.exists());
    // Cut short after its magic: a truncated archive.
    std::fs::write(&x, b"MPQ\x1a\x20\0\0\0").unwrap();
    let (code, _, err) = hangar(&["cat", "list", s(&x)]);
    assert_eq!(code, 1);
    assert!(
        err.contains("run past the end of the archive (8 bytes)"),
        "{err}"
    );
}

#[test]
fn the_help_names_mpq_archives() {
    let (_, out, _) = hangar(&["--help"]);
    assert!(
        out.contains("StarCraft II MPQ archives (.SC2Map, .SC2Mod"),
        "{out}"
    );
    let (_, out, _) = hangar(&["cat", "--help"]);
    assert!(out.contains("MPQ archives (.SC2Map, .SC2Mod"), "{out}");
    for verb in ["list", "verify", "extract", "pack", "diff"] {
        let (_, out, _) = hangar(&["cat", verb, "--help"]);
        assert!(out.contains("MPQ archive"), "cat {verb}: {out}");
    }
}

#[test]
fn a_failed_convert_leaves_nothing_at_the_output() {
    let d = tmp("convert");
    let a = map(&d);
    let spec = format!("{}::no/such/model.m3", a.display());
    let out = d.join("nosuch.glb");
    let (code, _, err) = hangar(&["convert", &spec, s(&out)]);
    assert_eq!(code, 1);
    assert!(err.contains("no such file or folder"), "{err}");
    assert!(!out.exists());
    // Missing folders above it go too; a folder that was there stays, as it was.
    let deep = d.join("made/deeper/out.glb");
    let (code, _, _) = hangar(&["convert", &spec, s(&deep)]);
    assert_eq!(code, 1);
    assert!(!d.join("made").exists());
    let there = d.join("there");
    std::fs::create_dir_all(&there).unwrap();
    std::fs::write(there.join("keep.txt"), b"x").unwrap();
    let (code, _, _) = hangar(&["convert", &spec, s(&there)]);
    assert_eq!(code, 1);
    assert_eq!(std::fs::read(there.join("keep.txt")).unwrap(), b"x");
}
