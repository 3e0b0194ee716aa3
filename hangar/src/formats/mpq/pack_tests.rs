//! The archive's own files when packing ((listfile), (attributes), (signature)), the registry's
//! description of an archive, and two archives compared.

use super::*;
use std::path::PathBuf;

fn tmp(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hangar-mpq-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

fn file(a: &Archive, bytes: &[u8], name: &str) -> Vec<u8> {
    let e = a.entries.iter().find(|e| e.path == name).unwrap();
    a.read(&bytes, e).unwrap()
}

#[test]
fn attributes_hold_each_files_crc32_and_md5_as_the_editor_writes_them() {
    let files: Vec<(String, &[u8])> = vec![
        ("a.txt".into(), b"hello\n"),
        ("Assets\\Models\\a.m3".into(), b"MD34 a model"),
    ];
    let own = Own {
        listfile: None,
        attributes: true,
    };
    let bytes = build_with(&files, own).unwrap();
    let a = Archive::from_source(&bytes).unwrap();
    // Two files, the (listfile), the (attributes): four blocks.
    assert_eq!(a.blocks.len(), 4);
    let at = file(&a, &bytes, "(attributes)");
    assert_eq!(at.len(), 8 + 4 * 20);
    assert_eq!((le32(&at, 0), le32(&at, 4)), (100, 5));
    let crcs: Vec<u32> = (0..4).map(|i| le32(&at, 8 + 4 * i)).collect();
    assert_eq!(crcs, [0x363A_3020, 0x813D_170C, 0x5596_5AD1, 0]);
    let md5 = |i: usize| hex(&at[24 + 16 * i..40 + 16 * i]);
    assert_eq!(md5(0), "b1946ac92492d2347c6235b4d2611184");
    assert_eq!(md5(1), "ae708241dde72cedc0d793107558b711");
    // The (listfile)'s MD5 and the (attributes)' own entry are zero, as in the corpus maps.
    assert_eq!(md5(2), "0".repeat(32));
    assert_eq!(md5(3), "0".repeat(32));
    assert_eq!(
        file(&a, &bytes, "(listfile)"),
        b"a.txt\r\nAssets\\Models\\a.m3\r\n"
    );
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[test]
fn a_file_named_as_the_archives_own_is_refused() {
    for name in ["(listfile)", "(ATTRIBUTES)", "(signature)"] {
        let files: Vec<(String, &[u8])> = vec![(name.into(), b"x")];
        let e = build(&files).unwrap_err();
        assert!(e.message.contains("the writer makes it"), "{e}");
    }
}

#[test]
fn an_extracted_folder_packs_with_a_listfile_of_its_files_as_they_are() {
    let d = tmp("repack");
    let x = d.join("x");
    std::fs::create_dir_all(x.join("Base.SC2Data/GameData")).unwrap();
    // What an extraction left: the old archive's own files, naming only MapInfo.
    std::fs::write(x.join("(listfile)"), b"MapInfo\r\n").unwrap();
    std::fs::write(x.join("(attributes)"), [0u8; 28]).unwrap();
    std::fs::write(x.join("(signature)"), [0u8; 72]).unwrap();
    std::fs::write(x.join("MapInfo"), b"map").unwrap();
    // Added by hand.
    std::fs::write(x.join("NewFile.txt"), b"hello\n").unwrap();
    std::fs::write(x.join("Base.SC2Data/GameData/NewData.xml"), b"<Catalog/>").unwrap();

    let out = d.join("re.SC2Map");
    let p = pack(&x, &out).unwrap();
    assert_eq!(p.files, 3);
    assert_eq!(p.replaced, ["(attributes)", "(listfile)", "(signature)"]);
    assert!(p.attributes && !p.kept_listfile);
    let bytes = std::fs::read(&out).unwrap();
    let a = Archive::from_source(&bytes).unwrap();
    assert_eq!(
        file(&a, &bytes, "(listfile)"),
        b"Base.SC2Data\\GameData\\NewData.xml\r\nMapInfo\r\nNewFile.txt\r\n"
    );
    let names: Vec<&str> = a.entries.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(
        names,
        [
            "(attributes)",
            "(listfile)",
            "Base.SC2Data\\GameData\\NewData.xml",
            "MapInfo",
            "NewFile.txt"
        ]
    );
    // Three files, (listfile), (attributes): no (signature), no second (listfile).
    assert_eq!(a.blocks.len(), 5);
    assert_eq!(a.unnamed, 0);
    let at = file(&a, &bytes, "(attributes)");
    assert_eq!(at.len(), 8 + 5 * 20);
    // NewFile.txt is the third file packed.
    assert_eq!(le32(&at, 8 + 4 * 2), 0x363A_3020);

    // Kept: the folder's own (listfile) as it is; the added files are then unnamed.
    let kept = d.join("kept.SC2Map");
    let keep = PackOptions {
        keep_listfile: true,
    };
    let p = pack_with(&x, &kept, keep).unwrap();
    assert!(p.kept_listfile);
    assert_eq!(p.replaced, ["(attributes)", "(signature)"]);
    let bytes = std::fs::read(&kept).unwrap();
    let a = Archive::from_source(&bytes).unwrap();
    assert_eq!(file(&a, &bytes, "(listfile)"), b"MapInfo\r\n");
    assert_eq!(a.unnamed, 2);

    // A folder that never was an archive: no (attributes), and none to keep.
    std::fs::remove_file(x.join("(listfile)")).unwrap();
    std::fs::remove_file(x.join("(attributes)")).unwrap();
    let p = pack(&x, &d.join("plain.SC2Mod")).unwrap();
    assert!(!p.attributes);
    assert_eq!(p.replaced, ["(signature)"]);
    let e = pack_with(&x, &d.join("no.SC2Mod"), keep).unwrap_err();
    assert!(e.message.contains("no (listfile) to keep"), "{e}");
    assert!(!d.join("no.SC2Mod").exists());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn an_empty_file_is_called_empty() {
    let d = tmp("empty");
    let p = d.join("x.SC2Map");
    std::fs::write(&p, b"").unwrap();
    let e = open(&p).err().unwrap();
    assert_eq!(e.kind, ErrorKind::Truncated);
    assert!(
        e.to_string()
            .contains("empty (0 bytes): not an MPQ archive"),
        "{e}"
    );
    assert!(is_archive_path(&p) && !is_archive_file(&p));
    // Cut after the magic: the header runs past the end.
    std::fs::write(&p, b"MPQ\x1a\x20\0\0\0").unwrap();
    let e = open(&p).err().unwrap();
    assert_eq!(e.kind, ErrorKind::Truncated);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn info_describes_an_archive_and_its_models() {
    let files: Vec<(String, &[u8])> = vec![
        ("Assets\\Models\\a.m3".into(), b"MD34 a model"),
        ("Assets\\Textures\\a.dds".into(), b"DDS "),
        ("MapInfo".into(), b"map"),
    ];
    let bytes = build(&files).unwrap();
    let o = crate::open(crate::Source::bytes("x.SC2Map", bytes.clone())).unwrap();
    assert_eq!(o.format(), crate::detect::Format::Mpq);
    let info = o.info();
    assert_eq!(
        info.format,
        "MPQ archive, format 1 (StarCraft II map or mod)"
    );
    assert_eq!(info.top["files"], 3);
    assert_eq!(
        info.top["models"],
        serde_json::json!(["Assets\\Models\\a.m3"])
    );
    assert_eq!(info.details["format_version"], 1);
    assert_eq!(info.details["bytes"], 12 + 4 + 3);
    assert_eq!(info.details["archive_bytes"], bytes.len());
    assert_eq!(info.details["listfile"], true);
    assert_eq!(info.details["attributes"], false);
    assert_eq!(
        info.details["kinds"],
        serde_json::json!({"": 1, "dds": 1, "m3": 1})
    );
    assert!(o.outputs().is_empty());
    let e = o.to_scene().err().unwrap();
    assert!(e.message.contains("ARCHIVE::path"), "{e}");
}

#[test]
fn two_archives_compare_by_path_and_bytes() {
    let d = tmp("diff");
    let a: Vec<(String, &[u8])> = vec![
        ("Same.txt".into(), b"same"),
        ("Grown.txt".into(), b"one"),
        ("Edited.txt".into(), b"abc"),
        ("Gone.txt".into(), b"x"),
    ];
    let b: Vec<(String, &[u8])> = vec![
        ("SAME.TXT".into(), b"same"),
        ("Grown.txt".into(), b"one two"),
        ("Edited.txt".into(), b"abd"),
        ("sub/New.txt".into(), b"y"),
    ];
    let (pa, pb) = (d.join("a.SC2Map"), d.join("b.SC2Map"));
    std::fs::write(&pa, build(&a).unwrap()).unwrap();
    let own = Own {
        listfile: None,
        attributes: true,
    };
    std::fs::write(&pb, build_with(&b, own).unwrap()).unwrap();
    let r = diff(&open(&pa).unwrap(), &open(&pb).unwrap()).unwrap();
    assert_eq!(r.added, ["sub/new.txt"]);
    assert_eq!(r.changed, ["edited.txt", "grown.txt"]);
    assert_eq!(r.removed, ["gone.txt"]);
    let _ = std::fs::remove_dir_all(&d);
}
