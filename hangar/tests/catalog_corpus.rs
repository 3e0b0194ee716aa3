//! Every catalog pair of the corpus: entry count and verdict as MANIFEST.tsv says, extraction of
//! intact ones byte-exact, and the damaged-by-git one diagnosed as such.

use hangar::formats::catalog;
use std::path::Path;

#[test]
fn every_corpus_catalog_lists_verifies_and_extracts() {
    let Some(root) = std::env::var_os("HANGAR_CORPUS") else {
        eprintln!("skipped: HANGAR_CORPUS is not set, so the corpus tests do not run");
        return;
    };
    let dir = Path::new(&root).join("catalogs");
    let manifest = std::fs::read_to_string(dir.join("MANIFEST.tsv")).unwrap();
    let mut seen = 0;
    let mut diagnosed = 0;
    for line in manifest.lines().skip(1).filter(|l| !l.trim().is_empty()) {
        let f: Vec<&str> = line.split('\t').collect();
        let (name, entries, dat_bytes, state) = (f[0], f[4], f[5], f[6]);
        let cat = dir.join(name);
        let o = catalog::open(&cat).unwrap();
        assert_eq!(
            o.catalog.entries.len(),
            entries.parse::<usize>().unwrap(),
            "{name}"
        );
        assert_eq!(
            o.dat.bytes().len(),
            dat_bytes.parse::<usize>().unwrap(),
            "{name}"
        );
        let v = catalog::verify(&o, &|_| {});
        assert_eq!(v.ok(), state == "intact", "{name}: {v:?}");
        if state == "intact" {
            // Reading back and rewriting the index gives the same bytes.
            let text = std::fs::read(&cat).unwrap();
            assert_eq!(catalog::write_index(&o.catalog), text, "{name}");
            let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cat-corpus-{seen}"));
            let _ = std::fs::remove_dir_all(&out);
            let x = catalog::extract(&o, &out, &[], &|_| {});
            assert!(x.failed.is_empty(), "{name}: {:?}", x.failed);
            assert_eq!(x.written, o.catalog.by_path().len());
            for e in &o.catalog.entries {
                let b = std::fs::read(catalog::safe_destination(&out, e).unwrap()).unwrap();
                assert_eq!(b.len() as u64, e.size);
                assert!(catalog::md5_matches(&b, &e.md5), "{name}: {}", e.path);
            }
            let _ = std::fs::remove_dir_all(&out);
        } else if let Some(le) = &v.line_endings {
            assert!(le.line_breaks > 0);
            assert_eq!(
                i128::from(v.expected_len) - i128::from(v.dat_len),
                i128::from(le.line_breaks)
                    * if le.conversion == "CR LF -> LF" {
                        1
                    } else {
                        -1
                    }
            );
            diagnosed += 1;
        }
        seen += 1;
    }
    assert_eq!(seen, 4);
    eprintln!("{seen} catalogs, {diagnosed} damaged by line-ending conversion");
    assert!(diagnosed >= 1, "the git-damaged pair was not recognised");
}
