//! A warning means a real problem (issue 14 item 12): the corpus files, which the games and other
//! tools read fine, give notes at most when hangar opens, validates and converts them to glTF.
//! docs/WARNINGS.md lists every warning and note.

mod common;

use std::path::PathBuf;

#[test]
fn corpus_files_give_notes_but_no_warnings() {
    // Gate on the corpus and fail on a missing folder, as every corpus test does.
    for (sub, ext) in [("x4", "xmf"), ("emfx", "xac"), ("m3", "m3")] {
        if common::corpus(sub, ext).is_none() {
            return;
        }
    }
    let root = PathBuf::from(std::env::var_os("HANGAR_CORPUS").unwrap());
    let mut files = Vec::new();
    for sub in ["x4", "x4-components", "textures", "emfx", "m3"] {
        common::walk(
            &root.join(sub),
            &["xmf", "xac", "xsm", "m3", "m3a", "ani"],
            &mut files,
        );
    }
    files.sort();
    let out = common::gltf_out("warnings").join("out.glb");
    let (mut notes, mut with_notes) = (0usize, 0usize);
    let mut problems = Vec::new();
    let mut texture_findings = Vec::new();
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        let opened = common::open(&bytes, f).unwrap();
        let (_, converted) = common::convert(&opened, &out).unwrap();
        let findings = opened.validate();
        let before = notes;
        for w in opened.warnings().iter().chain(&converted) {
            if w.note {
                notes += 1;
            } else {
                problems.push(format!("{}: warning: {w}", common::name(f)));
            }
        }
        for x in findings.iter().filter(|x| !x.note) {
            // A model's textures that the game would draw wrong are real problems of those files,
            // which real mods ship (docs/MATERIALS.md); counted, not this test's concern.
            if x.message.starts_with("texture ") && x.path.starts_with("DDS.") {
                texture_findings.push(format!("{}: {x}", common::name(f)));
                continue;
            }
            problems.push(format!("{}: {x}", common::name(f)));
        }
        notes += findings.iter().filter(|x| x.note).count();
        with_notes += usize::from(notes > before);
    }
    println!(
        "{} files: {} with notes ({notes} notes), no warning",
        files.len(),
        with_notes
    );
    assert!(files.len() >= 248, "{}", files.len());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // Two corpus models name a texture without mips (a logo and a backpack): said of the model.
    assert_eq!(texture_findings.len(), 2, "{}", texture_findings.join("\n"));
    assert!(texture_findings.iter().all(|x| x.contains("no mip levels")));
    // The notes are there for -v: declared lengths, header counts, missing textures...
    assert!(with_notes >= 150, "{with_notes}");
}
