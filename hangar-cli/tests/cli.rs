//! The hangar binary as a user runs it: exit codes, JSON output, refusals, whole-file writes.

#[path = "../../hangar/tests/common/mod.rs"]
mod common;

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

fn sample(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../samples")
        .join(name)
        .display()
        .to_string()
}

fn tmp(test: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("cli")
        .join(test);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn info_json_has_the_counts_scripts_rely_on() {
    let (code, out, _) = hangar(&["info", "--json", &sample("wedge-lod0.xmf")]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["vertices"], 32);
    assert_eq!(v["triangles"], 14);
    assert_eq!(v["format"], "XMF v3");
    assert_eq!(
        v["details"]["materials"][1]["name"],
        "generic.generic_p1_fx"
    );
    let (code, out, _) = hangar(&[
        "info",
        "--json",
        &sample("wedge-lod0.xmf"),
        &sample("wedge-collision.xmf"),
    ]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v[1]["vertices"], 9);
    assert_eq!(v[1]["details"]["collision"], true);
}

#[test]
fn the_readme_round_trip_gives_back_the_same_file() {
    let d = tmp("round_trip");
    let glb = d.join("wedge.glb");
    let (code, _, err) = hangar(&["convert", &sample("wedge-lod0.xmf"), glb.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let back = d.join("wedge-lod0.xmf");
    let (code, _, err) = hangar(&["convert", glb.to_str().unwrap(), back.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        std::fs::read(&back).unwrap(),
        std::fs::read(sample("wedge-lod0.xmf")).unwrap()
    );
    let col = d.join("wedge-collision.xmf");
    let (code, _, err) = hangar(&["convert", glb.to_str().unwrap(), col.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        std::fs::read(&col).unwrap(),
        std::fs::read(sample("wedge-collision.xmf")).unwrap()
    );
    let (code, out, _) = hangar(&["validate", back.to_str().unwrap(), col.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("2 files, 0 with errors"), "{out}");
    // Other output types.
    for ext in ["gltf", "obj"] {
        let p = d.join(format!("wedge.{ext}"));
        let (code, _, err) = hangar(&["convert", &sample("wedge-lod0.xmf"), p.to_str().unwrap()]);
        assert_eq!(code, 0, "{err}");
    }
    let obj = std::fs::read_to_string(d.join("wedge.obj")).unwrap();
    assert_eq!(obj.lines().filter(|l| l.starts_with("v ")).count(), 32);
    assert_eq!(obj.lines().filter(|l| l.starts_with("f ")).count(), 14);
    let gltf_copy = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("gltf")
        .join("cli");
    std::fs::create_dir_all(&gltf_copy).unwrap();
    std::fs::copy(d.join("wedge.gltf"), gltf_copy.join("wedge.gltf")).unwrap();
    std::fs::copy(&glb, gltf_copy.join("wedge.glb")).unwrap();
}

#[test]
fn dump_then_convert_is_identical() {
    let d = tmp("dump");
    let (code, out, _) = hangar(&["dump", &sample("wedge-lod0.xmf")]);
    assert_eq!(code, 0);
    assert!(out.contains("\"hangar_dump\": 1") && out.contains("\"format\": \"xmf\""));
    let json = d.join("wedge.json");
    std::fs::write(&json, out.replace("generic.generic_p1_fx", "mymod.glow")).unwrap();
    let x = d.join("edited-lod0.xmf");
    let (code, _, err) = hangar(&["convert", json.to_str().unwrap(), x.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let (_, info, _) = hangar(&["info", "--json", x.to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_str(&info).unwrap();
    assert_eq!(v["details"]["materials"][1]["name"], "mymod.glow");
}

#[test]
fn validate_fails_with_exit_1_and_names_the_place() {
    let d = tmp("validate");
    let mut b = std::fs::read(sample("wedge-lod0.xmf")).unwrap();
    // materials[0].numIndices (at 0x40 + 2 * 0xBC + 4): 30 -> 31.
    let at = 0x40 + 2 * 0xBC + 4;
    b[at] = 31;
    let bad = d.join("bad-lod0.xmf");
    std::fs::write(&bad, &b).unwrap();
    let (code, out, _) = hangar(&[
        "validate",
        "--json",
        bad.to_str().unwrap(),
        &sample("wedge-lod0.xmf"),
    ]);
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v[0]["ok"], false);
    assert_eq!(v[1]["ok"], true);
    let paths: Vec<&str> = v[0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert!(
        paths.contains(&"XMF.materials[0]") && paths.contains(&"XMF.materials"),
        "{paths:?}"
    );
}

#[test]
fn refusals_write_nothing() {
    let d = tmp("refuse");
    let input = d.join("wedge-lod0.xmf");
    std::fs::copy(sample("wedge-lod0.xmf"), &input).unwrap();
    let (code, _, err) = hangar(&["convert", input.to_str().unwrap(), input.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(err.contains("refusing to write over the input"), "{err}");
    let col = d.join("wedge-collision.xmf");
    let (code, _, err) = hangar(&["convert", input.to_str().unwrap(), col.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(
        err.contains("collision mesh the game would crash on"),
        "{err}"
    );
    assert!(!col.exists());
    assert_eq!(
        std::fs::read_dir(&d).unwrap().count(),
        1,
        "no temporary file is left behind"
    );
    let m3 = d.join("unit.m3");
    std::fs::write(&m3, b"43DM\x00\x00\x00\x00\x00\x00\x00\x00").unwrap();
    let (code, _, err) = hangar(&["info", m3.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(
        err.contains("unit.m3: at byte 8 (0x8), MD34.indexCount: the index is empty"),
        "{err}"
    );
    let bgf = d.join("face.bgf");
    std::fs::write(&bgf, b"\x00\x04\x1a\x00\x00\x00AnarkBGF").unwrap();
    let (code, _, err) = hangar(&["info", bgf.to_str().unwrap()]);
    assert_eq!(code, 1);
    // Read now: a header that runs past the end is named with its place.
    assert!(
        err.contains("face.bgf: at byte 2 (0x2), BGF.headerSize"),
        "{err}"
    );
}

#[test]
fn a_folder_converts_in_one_go() {
    let d = tmp("folder");
    let src = d.join("in/sub");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::copy(sample("wedge-lod0.xmf"), src.join("wedge-lod0.xmf")).unwrap();
    std::fs::copy(
        sample("wedge-collision.xmf"),
        src.join("wedge-collision.xmf"),
    )
    .unwrap();
    std::fs::write(src.join("notes.txt"), "not a model").unwrap();
    let (code, _, err) = hangar(&[
        "convert",
        d.join("in").to_str().unwrap(),
        d.join("out").to_str().unwrap(),
        "--to",
        "glb",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("2 files converted, 0 failed"), "{err}");
    assert!(
        d.join("out/sub/wedge-lod0.glb").exists() && d.join("out/sub/wedge-collision.glb").exists()
    );
}

#[test]
fn help_teaches_by_example() {
    let (code, out, _) = hangar(&["--help"]);
    assert_eq!(code, 0);
    assert!(out.contains("hangar convert part_main.glb part_main-collision.xmf"));
    assert!(out.contains("validate"));
}

/// `hangar info --json` and `convert --motion` on the corpus M3 model and its .m3a (skipped without
/// HANGAR_CORPUS).
#[test]
fn m3_info_and_motion_from_the_command_line() {
    let Some(root) = common::corpus_root() else {
        return;
    };
    let dir = Path::new(&root).join("m3");
    let model = dir.join("rodriguez404_mineralz-evolution__storm_hero_tyrael_base.m3");
    let anims =
        dir.join("rodriguez404_mineralz-evolution__storm_hero_tyrael_requiredanims_compressed.m3a");
    let (code, out, _) = hangar(&["info", "--json", model.to_str().unwrap()]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["bones"], 124);
    assert_eq!(v["sequences"], 1);
    assert_eq!(v["details"]["modl_version"], 29);
    assert!(v["vertices"].as_u64().unwrap() > 1000);
    let d = tmp("m3motion");
    let glb = d.join("tyrael.glb");
    let (code, _, err) = hangar(&[
        "convert",
        model.to_str().unwrap(),
        "--motion",
        anims.to_str().unwrap(),
        glb.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let g = gltf::Gltf::open(&glb).unwrap();
    assert_eq!(g.animations().count(), 12);
    // Channels with the same key times share one input accessor.
    let samplers: Vec<usize> = g
        .animations()
        .flat_map(|a| a.samplers().map(|s| s.input().index()).collect::<Vec<_>>())
        .collect();
    let mut inputs = samplers.clone();
    inputs.sort_unstable();
    inputs.dedup();
    assert_eq!((samplers.len(), inputs.len()), (480, 234));
    let (code, _, err) = hangar(&[
        "convert",
        model.to_str().unwrap(),
        "--motion",
        anims.to_str().unwrap(),
        d.join("tyrael.json").to_str().unwrap(),
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("--motion adds animations to a glTF output"),
        "{err}"
    );
}

/// `hangar convert FOLDER out.glb` on a component folder (parts and their _data.ani) writes one
/// animated scene (skipped without HANGAR_CORPUS).
#[test]
fn a_component_folder_converts_to_one_glb() {
    let Some(root) = common::corpus_root() else {
        return;
    };
    let x4 = Path::new(&root).join("x4");
    let d = tmp("component");
    let part = d.join("superyard");
    std::fs::create_dir_all(&part).unwrap();
    for n in [
        "Cgettys__anim_to_ring-lod0.xmf",
        "Cgettys__anim_to_ring-collision.xmf",
        "Cgettys__struct_bt_ut_omicron_superyard_data.ani",
    ] {
        std::fs::copy(x4.join(n), part.join(n)).unwrap();
    }
    let out = d.join("superyard.glb");
    let (code, _, err) = hangar(&["convert", part.to_str().unwrap(), out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let g = gltf::Gltf::open(&out).unwrap();
    assert_eq!(
        g.animations()
            .map(|a| a.name().unwrap().to_string())
            .collect::<Vec<_>>(),
        ["loop"]
    );
    assert_eq!(g.meshes().count(), 2);
}

#[cfg(unix)]
#[test]
fn a_failed_write_to_standard_output_is_an_error() {
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full");
    let Ok(full) = full else {
        eprintln!("skipped: no /dev/full here");
        return;
    };
    let status = Command::new(env!("CARGO_BIN_EXE_hangar"))
        .args(["dump", &sample("wedge-lod0.xmf")])
        .stdout(full)
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(status.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&status.stderr).contains("standard output"));
}

#[test]
fn info_json_gives_one_entry_per_argument_in_order() {
    let d = tmp("info-multi");
    let missing = d.join("missing.xmf");
    let (code, out, _) = hangar(&[
        "info",
        "--json",
        &sample("wedge-lod0.xmf"),
        missing.to_str().unwrap(),
        &sample("wedge-collision.xmf"),
    ]);
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let a = v.as_array().unwrap();
    assert_eq!(a.len(), 3);
    assert_eq!(a[0]["vertices"], 32);
    assert!(a[1]["error"].as_str().unwrap().contains("missing.xmf"));
    assert_eq!(a[2]["vertices"], 9);
}

#[test]
fn a_folder_batch_never_collides_and_skips_its_own_output() {
    let d = tmp("batch");
    let src = d.join("game");
    std::fs::create_dir_all(src.join("sub")).unwrap();
    // Same stem twice in one folder, and the same name in a subfolder.
    std::fs::copy(sample("wedge-lod0.xmf"), src.join("part.xmf")).unwrap();
    std::fs::copy(sample("wedge-collision.xmf"), src.join("part.XMF")).unwrap();
    std::fs::copy(sample("wedge-lod0.xmf"), src.join("sub/part.xmf")).unwrap();
    let out = src.join("out");
    // A temporary file of a killed run is cleaned up.
    std::fs::create_dir_all(out.join("sub")).unwrap();
    let stale = out.join("sub/.part.glb.hangar-4000000000.tmp");
    std::fs::write(&stale, b"half").unwrap();
    let run = || hangar(&["convert", src.to_str().unwrap(), out.to_str().unwrap()]);
    let (code, _, err) = run();
    assert_eq!(code, 0, "{err}");
    assert!(!stale.exists());
    let mut glbs: Vec<String> = walk(&out)
        .into_iter()
        .filter(|p| p.ends_with(".glb"))
        .collect();
    glbs.sort();
    assert_eq!(glbs, ["part.XMF.glb", "part.xmf.glb", "sub/part.glb"]);
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["converted"], 3);
    assert_eq!(report["failed"].as_array().unwrap().len(), 0);
    // Again into the same folder inside the input: the same outputs, none of them converted.
    let (code, _, err) = run();
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("3 files converted, 0 failed"), "{err}");
    assert_eq!(walk(&out).iter().filter(|p| p.ends_with(".glb")).count(), 3);
}

#[test]
fn a_batch_output_that_cannot_be_put_in_place_fails_its_file_only() {
    // A folder has an output's name: that file fails, in the report and the exit code, with no
    // temporary file left behind; the other output is written.
    let d = tmp("batch-rename");
    let src = wedge_folder(&d);
    let out = d.join("out");
    std::fs::create_dir_all(out.join("wedge-lod0.glb")).unwrap();
    std::fs::write(out.join("wedge-lod0.glb/keep"), b"k").unwrap();
    let (code, _, err) = hangar(&["convert", src.to_str().unwrap(), out.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("1 files converted, 1 failed"), "{err}");
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    let failed = report["failed"].as_array().unwrap();
    assert_eq!(failed.len(), 1);
    assert!(failed[0]["file"]
        .as_str()
        .unwrap()
        .ends_with("wedge-lod0.xmf"));
    assert!(
        failed[0]["error"]
            .as_str()
            .unwrap()
            .contains("wedge-lod0.glb"),
        "{failed:?}"
    );
    let mut files = walk(&out);
    files.sort();
    assert_eq!(
        files,
        ["report.json", "wedge-collision.glb", "wedge-lod0.glb/keep"]
    );
    assert!(std::fs::read(out.join("wedge-collision.glb"))
        .unwrap()
        .starts_with(b"glTF"));
}

/// `dir/in`, holding the two wedge samples (the lod0 and its collision mesh).
fn wedge_folder(dir: &Path) -> PathBuf {
    let src = dir.join("in");
    std::fs::create_dir_all(&src).unwrap();
    for f in ["wedge-lod0.xmf", "wedge-collision.xmf"] {
        std::fs::copy(sample(f), src.join(f)).unwrap();
    }
    src
}

/// Files under `dir`, relative, `/`-separated.
fn walk(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                out.push(rel);
            }
        }
    }
    out
}

#[test]
fn a_folder_is_not_converted_into_a_file_name_and_an_empty_folder_is_an_error() {
    let d = tmp("folder-refusals");
    let src = d.join("in");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::copy(sample("wedge-lod0.xmf"), src.join("wedge-lod0.xmf")).unwrap();
    let target = d.join("x-lod0.xmf");
    let (code, _, err) = hangar(&["convert", src.to_str().unwrap(), target.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(err.contains("looks like a file"), "{err}");
    assert!(!target.exists());
    let empty = d.join("empty/a");
    std::fs::create_dir_all(&empty).unwrap();
    std::fs::write(empty.join("readme.txt"), "hi").unwrap();
    let glb = d.join("empty.glb");
    let (code, _, err) = hangar(&[
        "convert",
        d.join("empty").to_str().unwrap(),
        glb.to_str().unwrap(),
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("no model"), "{err}");
    assert!(!glb.exists());
    let (code, _, err) = hangar(&[
        "convert",
        d.join("empty").to_str().unwrap(),
        d.join("o").to_str().unwrap(),
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("no file hangar can convert"), "{err}");
}

#[test]
fn a_folder_of_actors_takes_each_motion_into_its_actor() {
    let Some(root) = common::corpus_root() else {
        return;
    };
    let e = Path::new(&root).join("emfx");
    let d = tmp("actors");
    let src = d.join("in");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::copy(e.join("vic2vl__Zulu_Infantry.xac"), src.join("zulu.xac")).unwrap();
    std::fs::copy(e.join("vic2vl__Zulu_Idle.xsm"), src.join("zulu.xsm")).unwrap();
    std::fs::copy(e.join("vic2vl__flag_anim.xsm"), src.join("flag_anim.xsm")).unwrap();
    let out = d.join("out");
    let (code, _, err) = hangar(&["convert", src.to_str().unwrap(), out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    let outputs = report["outputs"].as_array().unwrap();
    // The actor with its motion, and the flag's motion (no flag actor here) on its own.
    assert_eq!(outputs.len(), 2, "{report}");
    let zulu = outputs
        .iter()
        .find(|o| o["input"].as_str().unwrap().ends_with("zulu.xac"))
        .unwrap();
    assert!(zulu["motions"][0].as_str().unwrap().ends_with("zulu.xsm"));
    // Its motion has no output of its own, so nothing shares the stem.
    assert!(zulu["output"].as_str().unwrap().ends_with("zulu.glb"));
    assert!(out.join("flag_anim.glb").exists());
    // Warnings of a batch are kept in the report: sub-motions naming nodes the actor lacks.
    let warnings = report["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().contains("name no node of the actor")),
        "{report}"
    );
}

#[test]
fn an_output_folder_that_cannot_be_made_is_one_error() {
    let d = tmp("unwritable");
    let src = d.join("in");
    std::fs::create_dir_all(&src).unwrap();
    for i in 0..5 {
        std::fs::copy(sample("wedge-lod0.xmf"), src.join(format!("p{i}-lod0.xmf"))).unwrap();
    }
    // A file where a folder should be: no folder can be made below it, even by root.
    std::fs::write(d.join("blocker"), b"").unwrap();
    let out = d.join("blocker").join("out");
    let (code, _, err) = hangar(&["convert", src.to_str().unwrap(), out.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(&out.display().to_string()), "{err}");
}

/// `--jobs N` picks how many files convert at once; the outputs do not depend on it, and 0 is refused.
#[test]
fn jobs_change_the_pace_not_the_outputs() {
    let d = tmp("jobs");
    let src = wedge_folder(&d);
    let mut outs = Vec::new();
    for jobs in ["1", "2"] {
        let out = d.join(format!("out{jobs}"));
        let (code, _, err) = hangar(&[
            "convert",
            src.to_str().unwrap(),
            out.to_str().unwrap(),
            "--jobs",
            jobs,
        ]);
        assert_eq!(code, 0, "{err}");
        assert!(err.contains("2 files converted, 0 failed"), "{err}");
        // The report lists the inputs in file order, whichever ran first (largest first).
        let report: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
        let inputs: Vec<&str> = report["outputs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| {
                o["input"]
                    .as_str()
                    .unwrap()
                    .rsplit(['/', '\\'])
                    .next()
                    .unwrap()
            })
            .collect();
        assert_eq!(inputs, ["wedge-collision.xmf", "wedge-lod0.xmf"]);
        outs.push((
            std::fs::read(out.join("wedge-lod0.glb")).unwrap(),
            std::fs::read(out.join("wedge-collision.glb")).unwrap(),
        ));
    }
    assert!(outs[0].0.len() > 100 && outs[0].1.len() > 100);
    assert_eq!(outs[0], outs[1]);
    let (code, _, err) = hangar(&[
        "convert",
        src.to_str().unwrap(),
        d.join("out0").to_str().unwrap(),
        "--jobs",
        "0",
    ]);
    assert_ne!(code, 0);
    assert!(err.contains("--jobs"), "{err}");
    assert!(!d.join("out0").exists());
}

#[test]
fn png_to_dds_and_back_from_the_command_line() {
    use hangar::formats::dds;
    let d = tmp("png_dds");
    let img = dds::Image {
        width: 4,
        height: 4,
        rgba: [0u8, 0, 255, 255].repeat(16),
    };
    let png = d.join("blue.png");
    std::fs::write(
        &png,
        dds::encode_png(&img, dds::PngCompression::Fast).unwrap(),
    )
    .unwrap();
    let out = d.join("blue.dds");
    let s = |p: &Path| p.display().to_string();
    let (code, _, err) = hangar(&["convert", &s(&png), &s(&out), "--format", "bc1"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("(4x4, BC1, 3 mip levels, 152 bytes)"), "{err}");
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(&bytes[84..88], b"DXT1");
    let back = d.join("back.png");
    let (code, _, err) = hangar(&["convert", &s(&out), &s(&back)]);
    assert_eq!(code, 0, "{err}");
    let again = dds::encode::read_png(&std::fs::read(&back).unwrap()).unwrap();
    assert_eq!(again.rgba, img.rgba, "pure blue survives BC1 exactly");
    // Default BC7, no mips.
    let (code, _, err) = hangar(&["convert", &s(&png), &s(&out), "--mipmaps", "none"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("(4x4, BC7, 1 mip level, 164 bytes)"), "{err}");
    // A file that is no picture: exit 1 naming the file, nothing written.
    let junk = d.join("junk.png");
    std::fs::write(&junk, b"not a picture").unwrap();
    let (code, _, err) = hangar(&["convert", &s(&junk), &s(&d.join("junk.dds"))]);
    assert_eq!(code, 1);
    assert!(err.contains("junk.png"), "{err}");
    assert!(!d.join("junk.dds").exists());
    let (_, help, _) = hangar(&["convert", "--help"]);
    assert!(help.contains("--format <FORMAT>"), "{help}");
    assert!(
        help.contains("hangar convert hull_diff.png hull_diff.dds --format bc1"),
        "{help}"
    );
}

/// XMF -> glTF -> M3 from the command line at a chosen MODL version; a version hangar does not
/// write, or the option on a non-M3 output, is refused with the list and nothing is written.
#[test]
fn convert_writes_the_modl_version_asked_for() {
    let d = tmp("modl_version");
    let glb = d.join("wedge.glb");
    let (code, _, err) = hangar(&["convert", &sample("wedge-lod0.xmf"), glb.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    for v in [23, 26, 29] {
        let m3 = d.join(format!("wedge-v{v}.m3"));
        let (code, _, err) = hangar(&[
            "convert",
            glb.to_str().unwrap(),
            m3.to_str().unwrap(),
            "--modl-version",
            &v.to_string(),
        ]);
        assert_eq!(code, 0, "{err}");
        let (_, out, _) = hangar(&["info", "--json", m3.to_str().unwrap()]);
        let info: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(info["details"]["modl_version"], v);
        assert_eq!(
            (info["vertices"].as_u64(), info["triangles"].as_u64()),
            (Some(32), Some(14))
        );
        let bytes = std::fs::read(&m3).unwrap();
        common::write_m3_checked(
            &common::m3_out("cli_modl_version"),
            &format!("wedge-v{v}.m3"),
            &bytes,
        );
    }
    // Refused: a version hangar does not write, and the option on an output that is not an M3.
    for (out, version, why) in [
        (
            "wedge-v24.m3",
            "24",
            "MODL version 24 is not written; hangar writes MODL 23, 25, 26, 28, 29",
        ),
        ("again.glb", "26", "--modl-version applies to an M3 output"),
    ] {
        let out = d.join(out);
        let (code, _, err) = hangar(&[
            "convert",
            glb.to_str().unwrap(),
            out.to_str().unwrap(),
            "--modl-version",
            version,
        ]);
        assert_eq!(code, 1);
        assert!(err.contains(why), "{err}");
        assert!(!out.exists());
    }
}

/// `hangar info --json` and `validate` on textures made in the test: size, pixel format, mips,
/// surfaces and colour space as top-level keys; a cut mip chain fails validation with its place.
#[test]
fn info_and_validate_on_a_dds() {
    use hangar::formats::dds;
    let d = tmp("info_dds");
    let s = |p: &Path| p.display().to_string();
    let img = dds::Image {
        width: 8,
        height: 4,
        rgba: [255u8, 0, 0, 255].repeat(32),
    };
    let png = d.join("red.png");
    std::fs::write(
        &png,
        dds::encode_png(&img, dds::PngCompression::Fast).unwrap(),
    )
    .unwrap();
    let bc3 = d.join("red.dds");
    let (code, _, err) = hangar(&["convert", &s(&png), &s(&bc3), "--format", "bc3"]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = hangar(&["info", "--json", &s(&bc3), &s(&png)]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let dds = &v[0];
    assert_eq!(dds["format"], "DDS (BC3/DXT5)");
    assert_eq!(dds["pixel_format"], "BC3/DXT5");
    assert_eq!(
        (dds["width"].as_u64(), dds["height"].as_u64()),
        (Some(8), Some(4))
    );
    // 8x4, 4x2, 2x1, 1x1.
    assert_eq!(dds["mip_levels"], 4);
    assert_eq!(dds["surfaces"], 1);
    assert_eq!(dds["srgb"], false);
    assert_eq!(
        (dds["vertices"].as_u64(), dds["triangles"].as_u64()),
        (Some(0), Some(0))
    );
    assert_eq!(v[1]["format"], "PNG (RGBA8)");
    assert_eq!(v[1]["srgb"], true);
    // BC7 is written with the DX10 header.
    let bc7 = d.join("red7.dds");
    let (code, _, err) = hangar(&["convert", &s(&png), &s(&bc7), "--mipmaps", "none"]);
    assert_eq!(code, 0, "{err}");
    let (_, out, _) = hangar(&["info", "--json", &s(&bc7)]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (v["pixel_format"].as_str(), v["mip_levels"].as_u64()),
        (Some("BC7"), Some(1))
    );
    assert_eq!(v["details"]["dx10"], true);
    let (code, out, _) = hangar(&["validate", &s(&bc3)]);
    assert_eq!(code, 0, "{out}");
    // The last mip (1x1: 16 bytes) cut by one byte.
    let bytes = std::fs::read(&bc3).unwrap();
    let cut = d.join("cut.dds");
    std::fs::write(&cut, &bytes[..bytes.len() - 1]).unwrap();
    let (code, out, _) = hangar(&["validate", &s(&cut)]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("DDS.data.surfaces[0].mips[3]"), "{out}");
    assert!(out.contains("1 of the 4 mip levels"), "{out}");
}

// `hangar validate MOD`: a mod folder's findings as one JSON list, exit 1 on an error, --game
// and --report.

/// A mod whose macro names a component no index lists, and a game that does not have it either.
fn mod_and_game(test: &str) -> (PathBuf, PathBuf) {
    let root = tmp(test);
    let dir = root.join("extensions/mymod");
    common::write_text(
        &dir,
        "content.xml",
        r#"<content id="mymod" version="100"/>"#,
    );
    common::write_text(
        &dir,
        "index/macros.xml",
        r#"<index><entry name="ship_macro" value="extensions\mymod\ship_macro"/></index>"#,
    );
    common::write_text(
        &dir,
        "ship_macro.xml",
        "<macros>\n<macro name=\"ship_macro\">\n<component ref=\"ship_hull\"/>\n</macro>\n</macros>",
    );
    let game = root.join("game");
    common::write_text(&game, "index/components.xml", "<index/>");
    (dir, game)
}

#[test]
fn a_mod_folder_gives_one_list_of_findings() {
    let (dir, game) = mod_and_game("validate-mod");
    let d = dir.to_str().unwrap();
    // Without the game the component may be the game's: not checked, no error.
    let (code, out, _) = hangar(&["validate", d, "--json"]);
    assert_eq!(code, 0, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 1);
    assert_eq!(v[0]["severity"], "warning");
    assert_eq!(v[0]["file"], "ship_macro.xml");
    // With it, an error on the macro's line, naming the reference as written.
    let (code, out, _) = hangar(&["validate", d, "--game", game.to_str().unwrap(), "--json"]);
    assert_eq!(code, 1, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v[0]["severity"], "error");
    assert_eq!(v[0]["file"], "ship_macro.xml");
    assert_eq!(v[0]["line"], 3);
    assert_eq!(v[0]["missing"], "ship_hull");
    // Text: the summary line, then the finding with its place.
    let (code, out, _) = hangar(&["validate", d, "--game", game.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(
        out.contains("FAILED (x4 mod, 3 files, 2 references followed, 1 errors, 0 warnings)"),
        "{out}"
    );
    assert!(out
        .contains("error: ship_macro.xml:3: macro ship_macro: component \"ship_hull\": not found"));
}

#[test]
fn the_report_is_written_and_game_needs_a_mod() {
    let (dir, game) = mod_and_game("validate-mod-report");
    let page = dir.parent().unwrap().parent().unwrap().join("report.html");
    let d = dir.to_str().unwrap();
    let (code, _, err) = hangar(&[
        "validate",
        d,
        "--game",
        game.to_str().unwrap(),
        "--report",
        page.to_str().unwrap(),
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("wrote"), "{err}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("ship_macro.xml") && html.contains("line 3: macro ship_macro"));
    // A link from the index entry to the file it names.
    assert!(
        html.contains("<a href=\"#f2\">ship_macro.xml</a>"),
        "{html}"
    );
    // --game applies to a mod folder only.
    let (code, _, err) = hangar(&[
        "validate",
        game.join("index/components.xml").to_str().unwrap(),
        "--game",
        "x",
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("apply to a mod folder"));
}

#[test]
fn diff_says_as_many_operations_as_it_writes() {
    let d = tmp("diff");
    let base = d.join("wares.xml");
    std::fs::write(
        &base,
        r#"<wares><ware id="a"><price average="10"/><owner faction="argon"/></ware></wares>"#,
    )
    .unwrap();
    let edited = d.join("edited.xml");
    std::fs::write(
        &edited,
        r#"<wares><ware id="a"><price average="11"/><owner faction="argon"/><owner faction="hangar_test"/></ware></wares>"#,
    )
    .unwrap();
    let p = d.join("p.xml");
    let (code, _, err) = hangar(&[
        "diff",
        base.to_str().unwrap(),
        edited.to_str().unwrap(),
        "-o",
        p.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&p).unwrap();
    let written = ["<add ", "<replace ", "<remove "]
        .iter()
        .map(|t| text.matches(t).count())
        .sum::<usize>();
    assert_eq!(written, 2, "{text}");
    assert!(err.contains("(2 operations)"), "{err}");
}

#[test]
fn out_naming_a_file_is_said_so() {
    let d = tmp("newout");
    let file = d.join("taken.txt");
    std::fs::write(&file, b"mine").unwrap();
    let (code, _, err) = hangar(&[
        "new",
        "ship",
        "scene.glb",
        "--template",
        "t.xml",
        "--id",
        "ship_x",
        "--out",
        file.to_str().unwrap(),
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("--out names a file; it must be a folder"),
        "{err}"
    );
    assert_eq!(std::fs::read(&file).unwrap(), b"mine");
}

/// `hangar find` on the corpus dropships mod: a line a result, `--json`, exit 1 with `[]` when
/// nothing matches, refusals of an empty query and of a folder that holds no game.
#[test]
fn find_lists_by_in_game_name() {
    let Some(root) = common::corpus_root() else {
        return;
    };
    let m = Path::new(&root).join("x4-mods/xirsoi__dropships__dropships");
    let m = m.to_str().unwrap();
    let d = tmp("find");
    let (code, out, _) = hangar(&["find", "gorgon dropship", "--game", m, "--no-cache"]);
    assert_eq!(code, 0);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines,
        [
            "macro\tship_par_m_dropship_01_a_macro\tGorgon Dropship\tassets/units/size_m/macros/ship_par_m_dropship_01_a_macro.xml\txirsoi__dropships__dropships",
            "component\tpar_dropship\tGorgon Dropship\tassets/units/size_m/par_dropship.xml\txirsoi__dropships__dropships",
            "ware\tpar_dropship_ware\tGorgon Dropship\tlibraries/wares.xml\txirsoi__dropships__dropships"
        ]
    );
    let (code, out, _) = hangar(&[
        "find",
        "Cobra",
        "--game",
        m,
        "--kind",
        "ware",
        "--json",
        "--no-cache",
    ]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 1);
    assert_eq!(v[0]["id"], "spl_dropship_ware");
    assert_eq!(v[0]["kind"], "ware");
    let (code, out, _) = hangar(&["find", "zzqx 4711", "--game", m, "--json", "--no-cache"]);
    assert_eq!((code, out.trim()), (1, "[]"));
    let (code, _, err) = hangar(&["find", " ", "--game", m]);
    assert_eq!(code, 1);
    assert!(err.contains("empty query"), "{err}");
    std::fs::create_dir_all(&d).unwrap();
    let (code, _, err) = hangar(&["find", "x", "--game", d.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(err.contains("holds no game"), "{err}");
    let (code, out, _) = hangar(&["find", "--help"]);
    assert_eq!(code, 0);
    assert!(out.contains("hangar find \"osprey dropship\" --game extensions/dropships --json"));
}

/// `new ship --template "NAME"`: the macro the game shows as NAME, the very extension its id makes;
/// a name several macros share is refused with them listed, nothing written.
#[test]
fn a_template_named_as_the_game_shows_it() {
    let Some(root) = common::corpus_root() else {
        return;
    };
    let m = Path::new(&root).join("x4-mods/xirsoi__dropships__dropships");
    let m = m.to_str().unwrap();
    let d = tmp("template_by_name");
    let (a, b) = (d.join("by_name/ext"), d.join("by_id/ext"));
    let wedge = sample("wedge-lod0.xmf");
    for (template, out) in [
        ("Gorgon Dropship", &a),
        ("ship_par_m_dropship_01_a_macro", &b),
    ] {
        let (code, _, err) = hangar(&[
            "new",
            "ship",
            &wedge,
            "--template",
            template,
            "--game",
            m,
            "--id",
            "ship_t_m_01",
            "--lods",
            "0",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{err}");
    }
    let files = |dir: &Path| {
        let mut v: Vec<(String, Vec<u8>)> = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(p) = stack.pop() {
            for e in std::fs::read_dir(&p).unwrap() {
                let e = e.unwrap().path();
                if e.is_dir() {
                    stack.push(e);
                } else {
                    let rel = e.strip_prefix(dir).unwrap().display().to_string();
                    v.push((rel, std::fs::read(&e).unwrap()));
                }
            }
        }
        v.sort();
        v
    };
    let (fa, fb) = (files(&a), files(&b));
    assert_eq!(
        fa.len(),
        9,
        "{:?}",
        fa.iter().map(|f| &f.0).collect::<Vec<_>>()
    );
    assert!(
        fa == fb,
        "the extension made from the name differs from the id's"
    );
    let (code, _, err) = hangar(&[
        "new",
        "ship",
        &wedge,
        "--template",
        "Dropship",
        "--game",
        m,
        "--id",
        "ship_t_m_02",
        "--out",
        d.join("many").to_str().unwrap(),
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("Cobra Dropship") && err.contains("Gorgon Dropship"),
        "{err}"
    );
    assert!(!d.join("many").exists());
}
