//! X4 `<diff>` patches and conflicts on the corpus: real XML of the mods edited three ways, the
//! patch `diff_xml` writes applied by `patch_xml` and by an independent applier in this file
//! (every `sel` must select one node); components with a part moved written as a patch; the
//! visible mods plus a copy of one of them checked for conflicts.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

// ------------------------------------------------------------------ an independent model

/// An element as the game's merge sees it: name, attributes, text (trimmed), children.
#[derive(Debug, Clone, PartialEq)]
struct El {
    name: String,
    attrs: BTreeMap<String, String>,
    text: String,
    kids: Vec<El>,
}

fn el(n: roxmltree::Node) -> El {
    El {
        name: n.tag_name().name().to_string(),
        attrs: n
            .attributes()
            .map(|a| (a.name().to_string(), a.value().to_string()))
            .collect(),
        text: n
            .children()
            .filter(|c| c.is_text())
            .filter_map(|c| c.text())
            .collect::<String>()
            .trim()
            .to_string(),
        kids: n.children().filter(|c| c.is_element()).map(el).collect(),
    }
}

fn parse(text: &str) -> El {
    let text = text.trim_start_matches('\u{feff}');
    let opts = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    el(roxmltree::Document::parse_with_options(text, opts)
        .unwrap()
        .root_element())
}

/// The steps of a `sel`: `//` start or not, then each step's text (quotes respected).
fn steps(sel: &str) -> (bool, Vec<String>) {
    let (desc, rest) = match sel.strip_prefix("//") {
        Some(r) => (true, r),
        None => (false, sel.strip_prefix('/').unwrap_or(sel)),
    };
    let mut out = vec![String::new()];
    let mut quote = None;
    for c in rest.chars() {
        match (quote, c) {
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '/') => {
                out.push(String::new());
                continue;
            }
            _ => {}
        }
        out.last_mut().unwrap().push(c);
    }
    (desc, out)
}

/// Whether `e`, the `i`th (from 1) child of its name, matches step `s` (`name`, `name[n]`,
/// `name[@k='v']`).
fn matches(e: &El, i: usize, s: &str) -> bool {
    let (name, pred) = match s.find('[') {
        Some(p) => (&s[..p], Some(&s[p + 1..s.len() - 1])),
        None => (s, None),
    };
    if e.name != name {
        return false;
    }
    match pred {
        None => true,
        Some(p) if p.starts_with('@') => {
            let (k, v) = p[1..].split_once('=').unwrap();
            e.attrs.get(k).map(String::as_str) == Some(&v[1..v.len() - 1])
        }
        Some(p) => p.parse::<usize>().unwrap() == i,
    }
}

/// Where an element is: child indexes from the root.
type Addr = Vec<usize>;

fn at<'a>(root: &'a El, a: &[usize]) -> &'a El {
    a.iter().fold(root, |e, &i| &e.kids[i])
}

fn at_mut<'a>(root: &'a mut El, a: &[usize]) -> &'a mut El {
    a.iter().fold(root, |e, &i| &mut e.kids[i])
}

fn children_matching(e: &El, base: &Addr, s: &str) -> Vec<Addr> {
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    let mut out = Vec::new();
    for (i, k) in e.kids.iter().enumerate() {
        let n = seen.entry(k.name.as_str()).or_default();
        *n += 1;
        if matches(k, *n, s) {
            let mut a = base.clone();
            a.push(i);
            out.push(a);
        }
    }
    out
}

/// The elements a `sel` selects (the forms hangar writes), and its last `@attr` or `text()`.
fn select(root: &El, sel: &str) -> (Vec<Addr>, Option<String>) {
    let (desc, mut st) = steps(sel);
    let last = st.last().cloned().unwrap();
    let tail = (last.starts_with('@') || last == "text()").then(|| st.pop().unwrap());
    let mut cur: Vec<Addr> = Vec::new();
    for (n, s) in st.iter().enumerate() {
        cur = if n == 0 {
            if desc {
                let mut all = Vec::new();
                let mut todo = vec![(Vec::new(), root, 1)];
                while let Some((a, e, i)) = todo.pop() {
                    if matches(e, i, s) {
                        all.push(a.clone());
                    }
                    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
                    for (j, k) in e.kids.iter().enumerate() {
                        let c = seen.entry(k.name.as_str()).or_default();
                        *c += 1;
                        let mut b = a.clone();
                        b.push(j);
                        todo.push((b, k, *c));
                    }
                }
                // A positional predicate after `//` is not a form hangar writes.
                assert!(!s.ends_with(']') || s.contains('@'), "{sel}");
                all
            } else if matches(root, 1, s) {
                vec![Vec::new()]
            } else {
                Vec::new()
            }
        } else {
            cur.iter()
                .flat_map(|a| children_matching(at(root, a), a, s))
                .collect()
        };
    }
    (cur, tail)
}

/// Applies `patch` as the game does; an error names the operation whose `sel` does not select
/// exactly one node.
fn apply(root: &mut El, patch: &str) -> Result<usize, String> {
    let doc = roxmltree::Document::parse(patch).unwrap();
    let mut n = 0;
    for op in doc.root_element().children().filter(|c| c.is_element()) {
        n += 1;
        let sel = op.attribute("sel").unwrap();
        let (found, tail) = select(root, sel);
        let [a] = found.as_slice() else {
            return Err(format!("op {n} sel {sel} selects {} elements", found.len()));
        };
        let text: String = op
            .children()
            .filter(|c| c.is_text())
            .filter_map(|c| c.text())
            .collect();
        let new: Vec<El> = op.children().filter(|c| c.is_element()).map(el).collect();
        let e = at_mut(root, a);
        match (op.tag_name().name(), tail.as_deref()) {
            ("add", None) => match op.attribute("type") {
                Some(t) => {
                    e.attrs.insert(t[1..].to_string(), text);
                }
                None => {
                    let pos = op.attribute("pos").unwrap_or("append");
                    if pos == "append" || pos == "prepend" {
                        let at = if pos == "append" { e.kids.len() } else { 0 };
                        e.kids.splice(at..at, new);
                    } else {
                        let (i, p) = a.split_last().unwrap();
                        let at = if pos == "after" { i + 1 } else { *i };
                        at_mut(root, p).kids.splice(at..at, new);
                    }
                }
            },
            ("replace", Some("text()")) => e.text = text.trim().to_string(),
            ("replace", Some(attr)) => {
                let old = e
                    .attrs
                    .get_mut(&attr[1..])
                    .ok_or(format!("op {n}: no {attr}"))?;
                *old = text;
            }
            ("replace", None) => {
                let (i, p) = a.split_last().unwrap();
                at_mut(root, p).kids[*i] = new.into_iter().next().unwrap();
            }
            ("remove", Some(attr)) => {
                e.attrs
                    .remove(&attr[1..])
                    .ok_or(format!("op {n}: no {attr}"))?;
            }
            ("remove", None) => {
                let (i, p) = a.split_last().unwrap();
                at_mut(root, p).kids.remove(*i);
            }
            (o, t) => return Err(format!("op {n}: <{o}> on {t:?}")),
        }
    }
    Ok(n)
}

// ------------------------------------------------------------------ edits made on the text

/// The elements of `text` below the root, without a namespace prefix, in document order.
fn elements(doc: &roxmltree::Document) -> Vec<roxmltree::NodeId> {
    doc.root_element()
        .descendants()
        .skip(1)
        .filter(|n| n.is_element() && n.tag_name().namespace().is_none())
        .map(|n| n.id())
        .collect()
}

/// `text` edited one way (`kind` 0-3: an attribute changed, an attribute added, a leaf element
/// removed, an element inserted), at the element `pick` selects; `None` when it has no such place.
fn edit(text: &str, kind: usize, pick: usize) -> Option<String> {
    let doc = roxmltree::Document::parse_with_options(
        text,
        roxmltree::ParsingOptions {
            allow_dtd: true,
            ..Default::default()
        },
    )
    .ok()?;
    let els: Vec<roxmltree::Node> = elements(&doc)
        .into_iter()
        .map(|id| doc.get_node(id).unwrap())
        .filter(|n| match kind {
            0 => n.attributes().len() > 0,
            2 => !n.children().any(|c| c.is_element()),
            _ => true,
        })
        .collect();
    if els.is_empty() {
        return None;
    }
    let n = els[pick % els.len()];
    let mut s = text.to_string();
    let r = n.range();
    match kind {
        0 => {
            let a = n.attributes().next().unwrap();
            s.insert_str(a.range_value().end, "_hn");
        }
        1 => s.insert_str(
            r.start + 1 + n.tag_name().name().len(),
            &format!(" hangar_test=\"{pick}\""),
        ),
        2 => s.replace_range(r, ""),
        _ => s.insert_str(r.start, &format!("<hangar_test value=\"{pick}\"/>")),
    }
    Some(s)
}

fn xml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            xml_files(&p, out);
        } else if p.extension().is_some_and(|e| e.eq_ignore_ascii_case("xml")) {
            out.push(p);
        }
    }
}

fn mods_root() -> Option<PathBuf> {
    common::corpus("x4-mods", "tsv")?;
    Some(PathBuf::from(std::env::var_os("HANGAR_CORPUS").unwrap()).join("x4-mods"))
}

fn mod_dirs(root: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    v.sort();
    v
}

#[test]
fn mod_xml_edited_three_ways_comes_back_from_its_patch() {
    let Some(root) = mods_root() else {
        eprintln!("skipped: HANGAR_CORPUS is not set");
        return;
    };
    let (mut cases, mut ops) = (0, 0);
    for m in mod_dirs(&root) {
        let mut files = Vec::new();
        xml_files(&m, &mut files);
        files.sort();
        let mut k = 0;
        for f in files {
            let text = String::from_utf8_lossy(&std::fs::read(&f).unwrap()).into_owned();
            if k >= 8 || text.len() > 1 << 20 {
                continue;
            }
            let Ok(doc) = roxmltree::Document::parse_with_options(
                text.trim_start_matches('\u{feff}'),
                roxmltree::ParsingOptions {
                    allow_dtd: true,
                    ..Default::default()
                },
            ) else {
                continue;
            };
            if doc.root_element().has_tag_name("diff") || elements(&doc).len() < 3 {
                continue;
            }
            k += 1;
            // Three of the four kinds, a different one left out each file.
            let mut edited = text.clone();
            for kind in (0..4).filter(|&x| x != cases % 4) {
                if let Some(e) = edit(&edited, kind, cases * 7 + kind * 13) {
                    edited = e;
                }
            }
            let patch = hangar::diff_xml(text.as_bytes(), edited.as_bytes())
                .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            let want = parse(&edited);
            // This file's applier.
            let mut mine = parse(&text);
            ops += apply(&mut mine, &patch)
                .unwrap_or_else(|e| panic!("{}: {e}\n{patch}", f.display()));
            assert_eq!(mine, want, "{}: independent applier\n{patch}", f.display());
            // hangar's.
            let done = hangar::patch_xml(text.as_bytes(), patch.as_bytes()).unwrap();
            assert!(
                done.failures.is_empty(),
                "{}: {:?}",
                f.display(),
                done.failures
            );
            assert_eq!(parse(&done.xml), want, "{}: hangar patch", f.display());
            cases += 1;
        }
    }
    eprintln!("{cases} files edited, {ops} operations, every one applied to the edited file");
    assert!(cases >= 20, "{cases} cases");
}

#[test]
fn a_moved_part_is_a_patch_of_its_offset() {
    let Some(_) = common::corpus("x4-components", "tsv") else {
        eprintln!("skipped: HANGAR_CORPUS is not set");
        return;
    };
    let root = PathBuf::from(std::env::var_os("HANGAR_CORPUS").unwrap()).join("x4-components");
    let mut files = Vec::new();
    xml_files(&root, &mut files);
    files.sort();
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("modtools-moved");
    let _ = std::fs::remove_dir_all(&tmp);
    let mut done = 0;
    for x in files {
        let text = std::fs::read_to_string(&x).unwrap();
        if !text.contains("<components") {
            continue;
        }
        let doc = roxmltree::Document::parse(&text).unwrap();
        let Some(part) = doc
            .descendants()
            .filter(|c| c.has_tag_name("connection") && c.attribute("parent").is_some())
            .find_map(|c| c.descendants().find(|p| p.has_tag_name("part")))
            .and_then(|p| p.attribute("name"))
        else {
            continue;
        };
        let dir = tmp.join(format!("c{done}"));
        std::fs::create_dir_all(dir.join("full")).unwrap();
        std::fs::create_dir_all(dir.join("patch")).unwrap();
        let (mut scene, _) = hangar::open(x.as_path()).unwrap().to_scene().unwrap();
        let node = scene.nodes.iter_mut().find(|n| n.name == part).unwrap();
        node.translation.y += 1.0;
        let glb = dir.join("m.glb");
        let c = hangar::write_scene(&scene, &glb, &Default::default()).unwrap();
        std::fs::write(&glb, &c.bytes).unwrap();
        let name = x.file_name().unwrap();
        let (full, patched) = (dir.join("full").join(name), dir.join("patch").join(name));
        let mut o = hangar::ConvertOptions {
            original: Some(x.clone()),
            ..Default::default()
        };
        hangar::convert(&glb, &full, &[], "glb", &o, &|_| {}).unwrap();
        o.write.patch = true;
        hangar::convert(&glb, &patched, &[], "glb", &o, &|_| {}).unwrap();
        let patch = std::fs::read_to_string(&patched).unwrap();
        let full = std::fs::read_to_string(&full).unwrap();
        let mut mine = parse(&text);
        let ops = apply(&mut mine, &patch).unwrap();
        assert_eq!(mine, parse(&full), "{}\n{patch}", x.display());
        let p = hangar::patch_xml(text.as_bytes(), patch.as_bytes()).unwrap();
        assert_eq!(parse(&p.xml), parse(&full));
        // The part moved up by one: only its offset's y changes.
        assert_eq!(ops, 1, "{}\n{patch}", x.display());
        assert!(patch.contains("/offset/position/@y"), "{patch}");
        done += 1;
    }
    assert_eq!(
        done, 2,
        "the two corpus components with a part below a parent"
    );
}

/// What a mod folder defines, read here on its own: index entries, wares, whole XML files.
fn defined(m: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let read = |rel: &str| std::fs::read_to_string(m.join(rel)).ok();
    for (rel, kind, tag, attr) in [
        ("index/components.xml", "component", "entry", "name"),
        ("index/macros.xml", "macro", "entry", "name"),
        ("libraries/wares.xml", "ware", "ware", "id"),
    ] {
        if let Some(t) = read(rel) {
            let d = roxmltree::Document::parse(&t).unwrap();
            for n in d.descendants().filter(|n| n.has_tag_name(tag)) {
                if let Some(v) = n.attribute(attr) {
                    out.push(format!("{kind}:{}", v.to_lowercase()));
                }
            }
        }
    }
    let mut files = Vec::new();
    xml_files(m, &mut files);
    for f in files {
        let rel = f
            .strip_prefix(m)
            .unwrap()
            .to_string_lossy()
            .to_lowercase()
            .replace('\\', "/");
        if rel == "content.xml" || rel.starts_with("index/") || rel.starts_with("t/") {
            continue;
        }
        let t = std::fs::read_to_string(&f).unwrap_or_default();
        match roxmltree::Document::parse(t.trim_start_matches('\u{feff}')) {
            Ok(d) if !d.root_element().has_tag_name("diff") => out.push(format!("file:{rel}")),
            _ => {}
        }
    }
    out.sort();
    out.dedup();
    out
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let t = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_dir(&p, &t);
        } else {
            std::fs::copy(&p, &t).unwrap();
        }
    }
}

#[test]
fn two_versions_of_one_mod_conflict_on_everything_they_define() {
    let Some(root) = mods_root() else {
        eprintln!("skipped: HANGAR_CORPUS is not set");
        return;
    };
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("modtools-conflicts");
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    let mut dirs = Vec::new();
    for m in mod_dirs(&root) {
        let link = tmp.join(m.file_name().unwrap());
        #[cfg(unix)]
        std::os::unix::fs::symlink(&m, &link).unwrap();
        #[cfg(not(unix))]
        copy_dir(&m, &link);
        dirs.push(link);
    }
    // The visible mods alone define nothing twice.
    assert_eq!(hangar::conflicts(&dirs, None).unwrap(), vec![]);
    let original = root.join("xirsoi__dropships__dropships");
    copy_dir(&original, &tmp.join("dropships_copy"));
    dirs.push(tmp.join("dropships_copy"));
    let found = hangar::conflicts(&dirs, None).unwrap();
    let mut got: Vec<String> = found
        .iter()
        .map(|c| format!("{}:{}", c.kind, c.name))
        .collect();
    got.sort();
    assert_eq!(got, defined(&original));
    for c in &found {
        assert_eq!(c.mods, ["dropships_copy", "xirsoi__dropships__dropships"]);
        assert!(c
            .message
            .contains("the game uses xirsoi__dropships__dropships's"));
    }
    let kinds = |k: &str| found.iter().filter(|c| c.kind == k).count();
    eprintln!(
        "{} conflicts: {} components, {} macros, {} wares, {} files",
        found.len(),
        kinds("component"),
        kinds("macro"),
        kinds("ware"),
        kinds("file")
    );
    assert_eq!(found.len(), 20);
}

#[test]
fn a_broken_loose_content_xml_is_reported_beside_a_catalog_one() {
    let cat = b"content.xml 10 0 00000000000000000000000000000000\n".to_vec();
    let files: Vec<(String, hangar::SharedSource)> = vec![
        (
            "Content.XML".into(),
            std::sync::Arc::new(b"<content id=\"x\"".to_vec()),
        ),
        ("ext_01.cat".into(), std::sync::Arc::new(cat)),
        (
            "ext_01.dat".into(),
            std::sync::Arc::new(b"<content/>".to_vec()),
        ),
    ];
    let checked = hangar::check_mod_files("mymod", files, None).unwrap();
    assert!(checked.failed(), "{:?}", checked.findings);
    let f = checked
        .findings
        .iter()
        .find(|f| f.severity == hangar::Severity::Error)
        .unwrap();
    assert!(
        f.to_string().contains("Content.XML"),
        "{f} ({:?})",
        checked.findings
    );
}

/// `conflicts --game`: three extensions installed in a game folder (built here from the corpus's
/// dropship component as the game's file) patch it. Two patches that change the same node, or a
/// node and its ancestor, conflict; an `<add>` into a node another one removes does not (only
/// `replace` and `remove` are compared), nor do the extensions' own files.
#[test]
fn patches_of_one_game_node_conflict() {
    let Some(root) = mods_root() else {
        eprintln!("skipped: HANGAR_CORPUS is not set");
        return;
    };
    let src = root
        .parent()
        .unwrap()
        .join("x4-components/xirsoi__dropships/dropships/assets/units/size_m/arg_dropship.xml");
    let game = Path::new(env!("CARGO_TARGET_TMPDIR")).join("modtools-game-patches");
    let _ = std::fs::remove_dir_all(&game);
    let rel = "assets/units/size_m/arg_dropship.xml";
    std::fs::create_dir_all(game.join(rel).parent().unwrap()).unwrap();
    std::fs::copy(&src, game.join(rel)).unwrap();
    let ext = |name: &str, patch: &str| {
        let dir = game.join("extensions").join(name);
        std::fs::create_dir_all(dir.join(rel).parent().unwrap()).unwrap();
        std::fs::write(
            dir.join("content.xml"),
            format!("<content id=\"{name}\" name=\"{name}\" version=\"100\"/>"),
        )
        .unwrap();
        std::fs::write(
            dir.join(rel),
            format!("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<diff>\n{patch}\n</diff>\n"),
        )
        .unwrap();
    };
    let c1 = "//connection[@name='Connection01']";
    let c2 = "//connection[@name='Connection02']";
    ext(
        "mod_a",
        &format!(
            "<replace sel=\"{c2}/offset/position/@y\">-18</replace>\n\
             <replace sel=\"{c1}/offset/position/@x\">0.2</replace>"
        ),
    );
    ext("mod_b", &format!("<remove sel=\"{c2}\"/>"));
    ext(
        "mod_c",
        &format!(
            "<replace sel=\"{c1}/offset/position/@x\">0.3</replace>\n\
             <add sel=\"{c2}/parts\"><part name=\"extra\"/></add>"
        ),
    );
    // Every extension installed in the game (no folders named).
    let found = hangar::conflicts(&[], Some(&game)).unwrap();
    let got: Vec<(&str, &str, Vec<&str>)> = found
        .iter()
        .map(|c| {
            (
                c.kind.as_str(),
                c.name.as_str(),
                c.mods.iter().map(String::as_str).collect(),
            )
        })
        .collect();
    eprintln!("{got:#?}");
    assert_eq!(
        got,
        vec![
            ("patch", &*format!("{rel} {c2}"), vec!["mod_a", "mod_b"]),
            (
                "patch",
                &*format!("{rel} {c1}/offset/position"),
                vec!["mod_a", "mod_c"]
            ),
        ]
    );
    for c in &found {
        assert_eq!(
            c.files,
            c.mods
                .iter()
                .map(|m| format!("{m}/{rel}"))
                .collect::<Vec<_>>()
        );
        assert!(c.message.contains("applied last"), "{}", c.message);
    }
    // The same extensions named one by one, without the game: nothing (no patch is compared).
    let dirs: Vec<PathBuf> = ["mod_a", "mod_b", "mod_c"]
        .iter()
        .map(|m| game.join("extensions").join(m))
        .collect();
    assert_eq!(hangar::conflicts(&dirs, None).unwrap(), vec![]);
    // Named with the game: the same two.
    assert_eq!(hangar::conflicts(&dirs, Some(&game)).unwrap(), found);
}
