use super::*;

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hangar-cat-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Writes a catalog of `(path, bytes)` the way Egosoft's tool does.
fn make(dir: &Path, name: &str, files: &[(&str, &[u8])]) -> PathBuf {
    let mut cat = String::new();
    let mut dat = Vec::new();
    for (p, b) in files {
        let md5 = if b.is_empty() {
            "0".repeat(32)
        } else {
            md5_hex(b)
        };
        cat.push_str(&format!("{p} {} 1700000000 {md5}\n", b.len()));
        dat.extend_from_slice(b);
    }
    let c = dir.join(name);
    std::fs::write(&c, cat).unwrap();
    std::fs::write(dat_path(&c), dat).unwrap();
    c
}

#[test]
fn lines_split_from_the_right_with_running_offsets() {
    let text = b"assets/a b/x y.xml 5 1700000000 0123456789abcdef0123456789ABCDEF\r\n\r\nc.txt 3 -1 00000000000000000000000000000000\r\n";
    let (c, w) = read(text).unwrap();
    assert_eq!(c.entries.len(), 2);
    assert_eq!(c.entries[0].path, "assets/a b/x y.xml");
    assert_eq!(c.entries[0].md5, "0123456789abcdef0123456789abcdef");
    assert_eq!(
        (c.entries[1].offset, c.entries[1].size, c.entries[1].mtime),
        (5, 3, -1)
    );
    assert_eq!(c.entries[1].line, 3);
    assert!(c.crlf);
    assert_eq!(c.data_len(), 8);
    assert!(w.iter().any(|w| w.message.contains("CR LF")));
}

#[test]
fn bad_lines_and_duplicates_are_reported_with_their_number() {
    let text = b"a.txt 1 0 0cc175b9c0f1b6a831c399e269772661\nbroken line\nb.txt x 0 0cc175b9c0f1b6a831c399e269772661\nA.TXT 1 0 0cc175b9c0f1b6a831c399e269772661\n";
    let (c, w) = read(text).unwrap();
    assert_eq!(c.entries.len(), 2);
    assert_eq!(
        c.bad_lines.iter().map(|b| b.line).collect::<Vec<_>>(),
        vec![2, 3]
    );
    assert!(w
        .iter()
        .any(|w| w.path == "line 4" && w.message.contains("line 1")));
    assert_eq!(c.by_path()["a.txt"], 1);
}

#[test]
fn verify_accepts_intact_and_zero_md5_for_empty() {
    let d = tmp("intact");
    let c = make(
        &d,
        "ext_01.cat",
        &[("a.txt", b"hello"), ("empty", b""), ("b.bin", &[0, 1, 2])],
    );
    let v = verify(&open(&c).unwrap(), &|_| {});
    assert!(v.ok(), "{v:?}");
    assert_eq!((v.entries, v.expected_len, v.dat_len), (3, 8, 8));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn verify_names_git_line_ending_damage() {
    let d = tmp("crlf");
    let text: &[u8] = b"<a>\r\n<b/>\r\n</a>\r\n";
    let c = make(&d, "01.cat", &[("x.xml", text), ("y.bin", b"\r\n\x00bin")]);
    // What git does to the text entry on a checkout with LF line ends.
    let mut dat = b"<a>\n<b/>\n</a>\n".to_vec();
    dat.extend_from_slice(b"\r\n\x00bin");
    std::fs::write(dat_path(&c), &dat).unwrap();
    let v = verify(&open(&c).unwrap(), &|_| {});
    assert!(!v.ok());
    assert_eq!((v.expected_len, v.dat_len), (23, 20));
    assert!(v
        .damage
        .iter()
        .any(|d| d.line == Some(1) && d.message.contains("md5")));
    let le = v.line_endings.unwrap();
    assert_eq!(le.conversion, "CR LF -> LF");
    assert_eq!(le.entries, vec!["x.xml"]);
    assert_eq!(le.line_breaks, 3);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn truncated_dat_reports_entries_past_the_end() {
    let d = tmp("trunc");
    let c = make(&d, "01.cat", &[("a", b"aaaa"), ("b", b"bbbb")]);
    std::fs::write(dat_path(&c), b"aaaabb").unwrap();
    let o = open(&c).unwrap();
    let v = verify(&o, &|_| {});
    assert!(v
        .damage
        .iter()
        .any(|d| d.line == Some(2) && d.message.contains("past the end")));
    let out = d.join("out");
    let x = extract(&o, &out, &[], &|_| {});
    assert_eq!(x.written, 1);
    assert_eq!(x.failed.len(), 1);
    assert_eq!(std::fs::read(out.join("a")).unwrap(), b"aaaa");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn extract_refuses_escapes_with_line_numbers() {
    let d = tmp("escape");
    let c = make(
        &d,
        "01.cat",
        &[
            ("../e1", b"x"),
            ("/tmp/e2", b"x"),
            (r"C:\e3", b"x"),
            ("a/../../e4", b"x"),
            (r"ok\Fine.txt", b"fine"),
        ],
    );
    let out = d.join("in");
    let x = extract(&open(&c).unwrap(), &out, &[], &|_| {});
    assert_eq!(x.written, 1);
    assert_eq!(std::fs::read(out.join("ok/Fine.txt")).unwrap(), b"fine");
    let mut lines: Vec<String> = x.failed.iter().map(|e| e.path.clone()).collect();
    lines.sort();
    assert_eq!(lines, vec!["line 1", "line 2", "line 3", "line 4"]);
    assert!(!d.join("e1").exists() && !d.join("e4").exists());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn pack_then_read_back_with_patterns_and_mtimes() {
    let d = tmp("pack");
    let src = d.join("src");
    std::fs::create_dir_all(src.join("Assets/b c")).unwrap();
    std::fs::write(src.join("Assets/b c/m-lod0.xmf"), b"model").unwrap();
    std::fs::write(src.join("Assets/a.txt"), b"").unwrap();
    std::fs::write(src.join("z.xml"), b"<z/>").unwrap();
    let cat_file = d.join("out/ext_01.cat");
    std::fs::create_dir_all(d.join("out")).unwrap();
    let c = pack(&src, &cat_file, &|_| {}).unwrap();
    let names: Vec<&str> = c.entries.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(
        names,
        vec!["Assets/a.txt", "Assets/b c/m-lod0.xmf", "z.xml"]
    );
    let o = open(&cat_file).unwrap();
    assert_eq!(o.catalog.entries, c.entries);
    assert!(verify(&o, &|_| {}).ok());
    assert_eq!(o.dat.bytes(), b"model<z/>");
    let out = d.join("x");
    let x = extract(&o, &out, &["assets/*.XMF".to_string()], &|_| {});
    assert_eq!(x.written, 1);
    let f = out.join("Assets/b c/m-lod0.xmf");
    assert_eq!(std::fs::read(&f).unwrap(), b"model");
    let mt = std::fs::metadata(&f).unwrap().modified().unwrap();
    let secs = mt.duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    assert_eq!(secs as i64, o.catalog.entries[1].mtime);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn globs() {
    assert!(glob_matches("*.xmf", "assets/a/b-lod0.XMF"));
    assert!(glob_matches("assets/units", r"Assets\Units\x.xml"));
    assert!(!glob_matches("assets/unit", "assets/units/x.xml"));
    assert!(glob_matches("a?c*", "abcdef"));
    assert!(!glob_matches("*.xml", "a.xmf"));
}

#[test]
fn diff_by_path_size_and_md5() {
    let (a, _) = read(b"A.txt 1 0 0cc175b9c0f1b6a831c399e269772661\nb.txt 1 0 0cc175b9c0f1b6a831c399e269772661\nc.txt 1 0 0cc175b9c0f1b6a831c399e269772661\n").unwrap();
    let (b, _) = read(b"a.TXT 1 9 0cc175b9c0f1b6a831c399e269772661\nb.txt 1 0 92eb5ffee6ae2fec3ad71c777531578f\nd.txt 1 0 0cc175b9c0f1b6a831c399e269772661\n").unwrap();
    let d = diff(&a, &b);
    assert_eq!(d.added, vec!["d.txt"]);
    assert_eq!(d.changed, vec!["b.txt"]);
    assert_eq!(d.removed, vec!["c.txt"]);
}

proptest::proptest! {
    /// Any bytes: reading never panics, the line-ending diagnosis against any .dat neither, and the
    /// index written back reads as the same entries.
    #[test]
    fn any_bytes_read_and_rewrite(data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400)) {
        let (c, _) = read(&data).unwrap();
        let _ = diagnose_line_endings(&c, &data);
        for e in &c.entries {
            let _ = safe_destination(Path::new("out"), e);
        }
        let again = read(&write_index(&c)).unwrap().0;
        proptest::prop_assert_eq!(again.entries.len(), c.entries.len());
        for (a, b) in again.entries.iter().zip(&c.entries) {
            proptest::prop_assert_eq!((&a.path, a.size, a.offset), (&b.path, b.size, b.offset));
        }
    }
}

/// Found by fuzzing (catalog): an entry declaring about a terabyte made the line-ending diagnosis
/// reserve that much before looking at the .dat. It now gives up at once: no conversion of these
/// few bytes can make a terabyte.
#[test]
fn a_huge_entry_size_does_not_allocate_in_the_line_ending_diagnosis() {
    let index = format!("big.txt {} 1 {}\n", 1u64 << 40, "0".repeat(31) + "1");
    let (cat, _) = read(index.as_bytes()).unwrap();
    assert_eq!(cat.entries[0].size, 1 << 40);
    assert!(diagnose_line_endings(&cat, b"one\ntwo\n").is_none());
}

#[test]
fn duplicates_are_reported_in_line_order_and_the_later_wins() {
    let z = "0".repeat(32);
    let text = format!(
        "b.xml 1 0 {z}\nAssets\\A.xml 2 0 {z}\nbad line\n../up.xml 1 0 {z}\nassets/a.xml 3 0 {z}\n../UP.xml 1 0 {z}\nassets/a.xml 4 0 {z}\n"
    );
    let (cat, index, warnings) = read_indexed(text.as_bytes()).unwrap();
    let said: Vec<(Option<u64>, &str)> = warnings
        .iter()
        .map(|w| (w.offset, w.message.as_str()))
        .collect();
    let bad = text.find("bad line").unwrap() as u64;
    let first = text.find("assets/a.xml").unwrap() as u64;
    let up = text.find("../UP").unwrap() as u64;
    let last = text.rfind("assets/a.xml").unwrap() as u64;
    assert_eq!(
        said,
        vec![
            (
                Some(bad),
                "expected `path size mtime md5`, found \"bad line\""
            ),
            (
                Some(first),
                "assets/a.xml is listed again (first on line 2); the later one wins"
            ),
            (
                Some(up),
                "../UP.xml is listed again (first on line 4); the later one wins"
            ),
            (
                Some(last),
                "assets/a.xml is listed again (first on line 5); the later one wins"
            ),
        ]
    );
    // The index holds each game path once (the last entry of it), sorted; `..` paths not at all.
    let paths: Vec<&str> = index.paths(&cat.entries).collect();
    assert_eq!(paths, ["assets/a.xml", "b.xml"]);
    let i = index.get(&cat.entries, "assets/a.xml").unwrap();
    assert_eq!(cat.entries[i].size, 4);
    assert_eq!(index.get(&cat.entries, "assets/b.xml"), None);
}
