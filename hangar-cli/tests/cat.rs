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
