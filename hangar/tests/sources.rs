//! A component read through a game view built from byte sources (as the browser page builds one
//! from the files the user chose) gives what the same component read from disk gives: loose in
//! its folder, and packed in a catalog.

mod common;

use hangar::formats::catalog;
use hangar::{GameView, SharedSource as Source};
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn files_under(dir: &Path, root: &Path, out: &mut Vec<(String, Vec<u8>)>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files_under(&p, root, out);
        } else {
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            out.push((rel, std::fs::read(&p).unwrap()));
        }
    }
}

/// Info numbers and the GLB's node and animation counts.
fn numbers(opened: &hangar::Opened) -> (u64, u64, usize, usize) {
    let info = opened.info();
    let c = opened.write_as("x.glb", &Default::default()).unwrap();
    let g = gltf::Gltf::from_slice(&c.bytes).unwrap();
    (
        info.vertices,
        info.triangles,
        g.nodes().count(),
        g.animations().count(),
    )
}

#[test]
fn a_component_through_sources_equals_it_from_disk() {
    let Some(root) = common::corpus_root() else {
        return;
    };
    let xml: PathBuf = std::fs::read_dir(
        root.join("x4-components/xirsoi__dropships/dropships/assets/units/size_m"),
    )
    .unwrap()
    .map(|e| e.unwrap().path())
    .find(|p| p.file_name().unwrap() == "arg_dropship.xml")
    .unwrap();
    let dir = xml.parent().unwrap();
    let want = numbers(&hangar::open(&xml).unwrap());
    assert!(want.0 > 0 && want.2 > 78, "{want:?}");

    let mut files = Vec::new();
    files_under(dir, dir, &mut files);
    let sources: Vec<(String, Source)> = files
        .iter()
        .map(|(p, b)| (p.clone(), Arc::new(b.clone()) as Source))
        .collect();
    let (view, warnings) = GameView::from_sources("size_m", sources).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let opened = hangar::open(hangar::Source::InView(
        Arc::new(view),
        "arg_dropship.xml".into(),
    ))
    .unwrap();
    assert_eq!(numbers(&opened), want, "loose files");

    // The same files packed in a catalog below the game's folder.
    let mut text = String::new();
    let mut dat = Vec::new();
    for (p, b) in &files {
        text.push_str(&format!(
            "assets/units/size_m/{p} {} 0 {}\n",
            b.len(),
            catalog::md5_hex(b)
        ));
        dat.extend_from_slice(b);
    }
    let game: Vec<(String, Source)> = vec![
        ("ext_01.cat".into(), Arc::new(text.into_bytes())),
        ("ext_01.dat".into(), Arc::new(dat)),
    ];
    let (view, warnings) = GameView::from_sources("game", game).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let opened = hangar::open(hangar::Source::InView(
        Arc::new(view),
        "assets/units/size_m/arg_dropship.xml".into(),
    ))
    .unwrap();
    assert_eq!(numbers(&opened), want, "packed in a catalog");
}

/// Files by their path inside a folder.
type Files = Vec<(String, Vec<u8>)>;

/// The dropship's folder as a view of byte sources (the page's), and its files.
fn dropship_sources() -> Option<(GameView, Files)> {
    let root = common::corpus_root()?;
    let dir = root.join("x4-components/xirsoi__dropships/dropships/assets/units/size_m");
    let mut files = Vec::new();
    files_under(&dir, &dir, &mut files);
    files.sort();
    let sources: Vec<(String, Source)> = files
        .iter()
        .map(|(p, b)| (p.clone(), Arc::new(b.clone()) as Source))
        .collect();
    let (view, _) = GameView::from_sources("size_m", sources).unwrap();
    Some((view, files))
}

/// Written as `.xml`, a component shown from the page's files is its folder again, file for file
/// and byte for byte: untouched parts are their files (read through the view by its label), the
/// `.ani` and the data folder's files keep their letter case (`ARG_DROPSHIP_DATA.ANI`).
#[test]
fn a_component_in_a_view_writes_back_as_its_folder() {
    let Some((view, files)) = dropship_sources() else {
        eprintln!("HANGAR_CORPUS not set: skipped");
        return;
    };
    let view = Arc::new(view);
    let opened = hangar::open(hangar::Source::InView(
        Arc::clone(&view),
        "arg_dropship.xml".into(),
    ))
    .unwrap();
    let mut options = hangar::ConvertOptions::default();
    options.textures.views = vec![GameView::clone(&view)];
    let c = opened.write_as("arg_dropship.xml", &options).unwrap();
    let mut got: Vec<(String, Vec<u8>)> = c
        .files
        .into_iter()
        .map(|(p, b)| (p.to_string_lossy().replace('\\', "/"), b))
        .chain([("arg_dropship.xml".to_string(), c.bytes)])
        .collect();
    got.sort();
    let names = |f: &[(String, Vec<u8>)]| f.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>();
    assert_eq!(names(&got), names(&files));
    assert_eq!(got.len(), 49);
    assert!(names(&got).contains(&"ARG_DROPSHIP_DATA.ANI".to_string()));
    for ((p, a), (_, b)) in got.iter().zip(&files) {
        assert!(
            a == b,
            "{p}: {} bytes written, {} in the folder",
            a.len(),
            b.len()
        );
    }
}

/// What showing the component reads, as the page reads it ahead: the XML, every file of its data
/// folder, the .ani; a part file is read alone.
#[test]
fn files_read_lists_a_component_with_its_data_folder() {
    let Some((view, files)) = dropship_sources() else {
        eprintln!("HANGAR_CORPUS not set: skipped");
        return;
    };
    let mut read = hangar::files_read(&view, "arg_dropship.xml");
    assert_eq!(read[0], "arg_dropship.xml");
    read.sort();
    let mut want: Vec<String> = files.iter().map(|(p, _)| p.to_lowercase()).collect();
    want.sort();
    assert_eq!(read, want);
    assert_eq!(
        hangar::files_read(&view, "arg_dropship_data/anim_main-lod0.xmf"),
        ["arg_dropship_data/anim_main-lod0.xmf"]
    ); // An XML that is no component is read alone.
    let lib: Vec<(String, Source)> = vec![
        (
            "libraries/material_library.xml".into(),
            Arc::new(b"<materials/>".to_vec()),
        ),
        ("libraries/x_data/a.xmf".into(), Arc::new(b"x".to_vec())),
    ];
    let (lib, _) = GameView::from_sources("game", lib).unwrap();
    assert_eq!(
        hangar::files_read(&lib, "Libraries/Material_Library.xml"),
        ["libraries/material_library.xml"]
    );
}
