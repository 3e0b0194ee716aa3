//! Every MPQ archive of the corpus (StarCraft II maps and mods from public repositories): it lists
//! the files MANIFEST.tsv counts, every file reads whole at its size, every model inside converts
//! to its own bytes and to a glTF the `gltf` crate loads; packed again, it reads back the same.
//! The folder-form maps and mods of the texture corpus pack and read back file for file.

mod common;
use hangar::archives;
use hangar::{GameView, Source};
use std::path::Path;
use std::sync::Arc;

#[test]
fn every_corpus_archive_lists_reads_and_converts() {
    let Some(root) = common::corpus_root() else {
        eprintln!("skipped: HANGAR_CORPUS is not set, so the corpus tests do not run");
        return;
    };
    let dir = root.join("sc2-archives");
    let manifest = std::fs::read_to_string(dir.join("MANIFEST.tsv")).unwrap();
    let (mut archives_seen, mut models, mut files) = (0, 0, 0);
    for line in manifest.lines().skip(1).filter(|l| !l.trim().is_empty()) {
        let f: Vec<&str> = line.split('\t').collect();
        let (name, bytes, entries, m3) = (f[0], f[2], f[6], f[7]);
        let path = dir.join(name);
        let o = archives::open(&path).unwrap();
        assert_eq!(o.bytes.len(), bytes.parse::<usize>().unwrap(), "{name}");
        assert!(
            o.archive.warnings.is_empty(),
            "{name}: {:?}",
            o.archive.warnings
        );
        let (read, bad) = archives::verify(&o, &|_| {});
        assert!(bad.is_empty(), "{name}: {bad:?}");
        let view = Arc::new(GameView::open(&path).unwrap());
        let inside = view.files("").unwrap();
        assert_eq!(inside.len(), entries.parse::<usize>().unwrap(), "{name}");
        assert!(read >= inside.len(), "{name}");
        files += inside.len();

        // Packed again, the archive holds the same files.
        let all: Vec<(String, Vec<u8>)> = o
            .archive
            .entries
            .iter()
            .filter(|e| !e.path.starts_with('('))
            .map(|e| (e.path.clone(), o.read(e).unwrap()))
            .collect();
        let given: Vec<(String, &[u8])> = all.iter().map(|(n, b)| (n.clone(), &b[..])).collect();
        let again = archives::build(&given).unwrap();
        let back = GameView::archive_source(Arc::new(again), "again").unwrap();
        for (n, b) in &all {
            assert_eq!(&*back.read(n).unwrap(), &b[..], "{name}: {n} packed again");
        }

        let mut in_this = 0;
        for m in inside.iter().filter(|p| p.ends_with(".m3")) {
            let opened = hangar::open(Source::InView(Arc::clone(&view), m.clone())).unwrap();
            let own = view.read(m).unwrap();
            let (m3, _) = common::convert(&opened, Path::new("x.m3")).unwrap();
            assert_eq!(m3, &*own, "{name}: {m} is not its own bytes");
            let (glb, _) = common::convert(&opened, Path::new("x.glb")).unwrap();
            let (doc, _) = common::load_glb(&glb);
            assert!(doc.meshes().count() > 0, "{name}: {m} has no mesh");
            in_this += 1;
        }
        assert_eq!(in_this, m3.parse::<usize>().unwrap(), "{name}");
        models += in_this;
        archives_seen += 1;
    }
    assert_eq!(archives_seen, 5);
    assert_eq!(models, 15);
    eprintln!("{archives_seen} archives, {files} files, {models} models");
}

#[test]
fn folder_form_maps_and_mods_pack_and_read_back() {
    let Some(root) = common::corpus_root() else {
        eprintln!("skipped: HANGAR_CORPUS is not set, so the corpus tests do not run");
        return;
    };
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mpq-pack");
    std::fs::create_dir_all(&out).unwrap();
    let mut packed = 0;
    let mut dirs: Vec<_> = std::fs::read_dir(root.join("textures"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|d| d.is_dir())
        .collect();
    dirs.sort();
    for d in dirs {
        if hangar::mod_kind(&d) != Some(hangar::ModKind::Sc2) {
            continue;
        }
        let a = out.join(format!("{packed}.SC2Mod"));
        let p = archives::pack(&d, &a).unwrap();
        let mut loose = Vec::new();
        common::files_under(&d, &mut loose);
        assert_eq!(p.files, loose.len(), "{}", d.display());
        let view = GameView::open(&a).unwrap();
        for f in &loose {
            let rel = f.strip_prefix(&d).unwrap().to_string_lossy().into_owned();
            assert_eq!(
                &*view.read(&rel).unwrap(),
                &std::fs::read(f).unwrap()[..],
                "{rel}"
            );
        }
        // Same folder, same bytes.
        let b = out.join("again.SC2Mod");
        archives::pack(&d, &b).unwrap();
        assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
        packed += 1;
    }
    assert!(packed >= 2, "{packed} folder-form mods packed");
    eprintln!("{packed} folder-form mods packed and read back");
}

/// CRC32 and MD5 of block `i` in an `(attributes)` of `blocks` blocks (flags 5, as every corpus
/// archive's).
fn attribute(at: &[u8], blocks: usize, i: usize) -> (u32, &[u8]) {
    let crc = u32::from_le_bytes(at[8 + 4 * i..12 + 4 * i].try_into().unwrap());
    let md5 = 8 + 4 * blocks + 16 * i;
    (crc, &at[md5..md5 + 16])
}

#[test]
fn an_extracted_corpus_archive_packs_with_its_own_files_made_anew() {
    let Some(root) = common::corpus_root() else {
        eprintln!("skipped: HANGAR_CORPUS is not set, so the corpus tests do not run");
        return;
    };
    let dir = root.join("sc2-archives");
    let manifest = std::fs::read_to_string(dir.join("MANIFEST.tsv")).unwrap();
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mpq-repack");
    let mut checked = 0;
    for (n, line) in manifest.lines().skip(1).enumerate() {
        let Some(name) = line.split('\t').next().filter(|n| !n.is_empty()) else {
            continue;
        };
        let o = archives::open(&dir.join(name)).unwrap();
        let x = out.join(format!("x{n}"));
        let _ = std::fs::remove_dir_all(&x);
        let done = archives::extract(&o, &x, &[], &|_| {});
        assert!(done.failed.is_empty(), "{name}");
        let a = out.join(format!("{n}.SC2Map"));
        let p = archives::pack(&x, &a).unwrap();
        assert_eq!(p.replaced, ["(attributes)", "(listfile)"], "{name}");
        let again = archives::open(&a).unwrap();
        assert_eq!(again.archive.unnamed, 0, "{name}");
        assert_eq!(
            again.archive.entries.len(),
            o.archive.entries.len(),
            "{name}"
        );
        // Every file's CRC32 and MD5 in the new (attributes) are the editor's in the original.
        let attrs = |o: &archives::Opened| {
            let e = o.archive.entries.iter().find(|e| e.path == "(attributes)");
            (o.read(e.unwrap()).unwrap(), o.archive.blocks.len())
        };
        let ((old, old_n), (new, new_n)) = (attrs(&o), attrs(&again));
        assert_eq!(new.len(), 8 + 20 * new_n, "{name}");
        assert_eq!(old[..8], new[..8], "{name}");
        for e in o
            .archive
            .entries
            .iter()
            .filter(|e| !e.path.starts_with('('))
        {
            let b = again.archive.entries.iter().find(|f| f.path == e.path);
            let b = b.unwrap().block as usize;
            assert_eq!(
                attribute(&old, old_n, e.block as usize),
                attribute(&new, new_n, b),
                "{name}: {}",
                e.path
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 191);
}
