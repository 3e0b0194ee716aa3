//! Whole X4 components (corpus folder x4-components, and hand-built ones): XML -> scene -> glb with
//! parts where the XML puts them (checked by plain quaternion math on the XML values, not by
//! hangar's transform code), meshes, lights, markers and animations; glb -> XML + XMFs + .ani -> glb
//! keeps positions and vertices; an untouched XML comes back byte for byte.

mod common;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

type Q = [f64; 4];
type V = [f64; 3];

fn qmul(a: Q, b: Q) -> Q {
    let [ax, ay, az, aw] = a;
    let [bx, by, bz, bw] = b;
    [
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    ]
}

fn qrot(q: Q, v: V) -> V {
    let p = qmul(
        qmul(q, [v[0], v[1], v[2], 0.0]),
        [-q[0], -q[1], -q[2], q[3]],
    );
    [p[0], p[1], p[2]]
}

fn num(e: roxmltree::Node<'_, '_>, k: &str, d: f64) -> f64 {
    e.attribute(k).and_then(|v| v.parse().ok()).unwrap_or(d)
}

/// Every part's world position in the game's frame, from the XML alone.
fn xml_positions(xml: &str) -> HashMap<String, V> {
    let doc = roxmltree::Document::parse(xml).unwrap();
    let mut local: HashMap<String, (Option<String>, V, Q)> = HashMap::new();
    for c in doc.descendants().filter(|n| n.has_tag_name("connection")) {
        let off = c.children().find(|n| n.has_tag_name("offset"));
        let pos = off.and_then(|o| o.children().find(|n| n.has_tag_name("position")));
        let q = off.and_then(|o| o.children().find(|n| n.has_tag_name("quaternion")));
        let t = pos.map_or([0.0; 3], |p| {
            [num(p, "x", 0.0), num(p, "y", 0.0), num(p, "z", 0.0)]
        });
        let r = q.map_or([0.0, 0.0, 0.0, 1.0], |q| {
            [
                num(q, "qx", 0.0),
                num(q, "qy", 0.0),
                num(q, "qz", 0.0),
                num(q, "qw", 1.0),
            ]
        });
        for p in c.descendants().filter(|n| n.has_tag_name("part")) {
            local
                .entry(p.attribute("name").unwrap().to_string())
                .or_insert((c.attribute("parent").map(String::from), t, r));
        }
    }
    fn world(n: &str, l: &HashMap<String, (Option<String>, V, Q)>, d: usize) -> (V, Q) {
        let (p, t, r) = &l[n];
        match p.as_deref().filter(|p| l.contains_key(*p) && d < 64) {
            Some(p) => {
                let (pt, pr) = world(p, l, d + 1);
                let rt = qrot(pr, *t);
                ([pt[0] + rt[0], pt[1] + rt[1], pt[2] + rt[2]], qmul(pr, *r))
            }
            None => (*t, *r),
        }
    }
    local
        .keys()
        .map(|k| (k.clone(), world(k, &local, 0).0))
        .collect()
}

/// World positions of the glb's nodes by name (first of a name), from its TRS with plain math.
fn glb_positions(glb: &[u8]) -> (HashMap<String, V>, usize, usize, usize) {
    let (doc, _) = common::load_glb(glb);
    let nodes: Vec<_> = doc.nodes().collect();
    let mut parent = HashMap::new();
    for n in &nodes {
        for c in n.children() {
            parent.insert(c.index(), n.index());
        }
    }
    let world = |mut i: usize| -> V {
        let mut p: V = [0.0; 3];
        loop {
            let (t, r, s) = nodes[i].transform().decomposed();
            let scaled = [p[0] * s[0] as f64, p[1] * s[1] as f64, p[2] * s[2] as f64];
            let q = [r[0] as f64, r[1] as f64, r[2] as f64, r[3] as f64];
            let rt = qrot(q, scaled);
            p = [
                rt[0] + t[0] as f64,
                rt[1] + t[1] as f64,
                rt[2] + t[2] as f64,
            ];
            match parent.get(&i) {
                Some(&pi) => i = pi,
                None => return p,
            }
        }
    };
    let mut out = HashMap::new();
    for n in &nodes {
        out.entry(n.name().unwrap_or("").to_string())
            .or_insert_with(|| world(n.index()));
    }
    let vertices = doc
        .meshes()
        .flat_map(|m| m.primitives())
        .map(|p| p.get(&gltf::Semantic::Positions).unwrap().count())
        .sum();
    (
        out,
        doc.lights().map_or(0, |l| l.count()),
        doc.animations().count(),
        vertices,
    )
}

fn xmls(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            xmls(&p, out);
        } else if p.extension().is_some_and(|e| e.eq_ignore_ascii_case("xml")) {
            out.push(p);
        }
    }
}

fn corpus_components() -> Option<Vec<PathBuf>> {
    common::corpus("x4-components", "tsv")?;
    let root = PathBuf::from(std::env::var_os("HANGAR_CORPUS").unwrap()).join("x4-components");
    let mut out = Vec::new();
    xmls(&root, &mut out);
    out.sort();
    assert_eq!(out.len(), 4, "the four corpus components");
    Some(out)
}

fn close(a: V, b: V) -> bool {
    let tol = 1e-3 * a.iter().chain(&b).fold(1.0f64, |m, v| m.max(v.abs()));
    a.iter().zip(&b).all(|(x, y)| (x - y).abs() <= tol)
}

fn write_all(files: &[(PathBuf, Vec<u8>)]) {
    for (p, b) in files {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, b).unwrap();
    }
}

/// The file `file` in a folder named `data` (any case) at or below `dir`.
fn walk_find(dir: &Path, data: &str, file: &str) -> Option<PathBuf> {
    let mut all = Vec::new();
    common::walk(dir, &["xmf"], &mut all);
    all.into_iter().find(|p| {
        p.file_name().unwrap().to_string_lossy().to_lowercase() == file
            && p.parent()
                .unwrap()
                .file_name()
                .unwrap()
                .to_string_lossy()
                .to_lowercase()
                == data
    })
}

#[test]
fn corpus_components_place_parts_and_round_trip() {
    let Some(files) = corpus_components() else {
        return;
    };
    let out = common::gltf_out("component_corpus");
    let mut total_parts = 0;
    for xml in files {
        let name = common::name(&xml);
        let text = std::fs::read_to_string(&xml).unwrap();
        let want = xml_positions(&text);
        let lights = text.matches("<omni ").count()
            + text.matches("<arealight ").count()
            + text.matches("<box ").count()
            + text.matches("<spot ").count();
        let (scene, _) = common::component_scene(&xml).unwrap();
        let (glb, _) = common::to_glb(&scene).unwrap();
        std::fs::write(out.join(format!("{name}.glb")), &glb).unwrap();
        let (got, nlights, nanims, vertices) = glb_positions(&glb);
        for (part, p) in &want {
            let g = got
                .get(part)
                .unwrap_or_else(|| panic!("{name}: no node {part}"));
            assert!(
                close(*g, [-p[0], p[1], p[2]]),
                "{name}: {part} at {g:?}, XML says {p:?}"
            );
        }
        total_parts += want.len();
        assert_eq!(nlights, lights, "{name}: lights");
        let has_ani = std::fs::read_dir(xml.parent().unwrap()).unwrap().any(|e| {
            e.unwrap()
                .file_name()
                .to_string_lossy()
                .to_lowercase()
                .ends_with("_data.ani")
        });
        assert_eq!(nanims > 0, has_ani, "{name}: animations");

        // glb -> XML + data folder + .ani -> glb: same text, same places, same vertices.
        let back_dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join("component_back")
            .join(&name);
        let _ = std::fs::remove_dir_all(&back_dir);
        let imported = common::from_glb(&glb).unwrap();
        let back = back_dir.join(&name);
        let w = common::from_scene(&imported, &back).unwrap();
        write_all(&w.files);
        assert_eq!(
            std::fs::read(&back).unwrap(),
            text.as_bytes(),
            "{name}: untouched XML"
        );
        if has_ani {
            // Untouched animations: the .ani as it was, byte for byte.
            let original = std::fs::read_dir(xml.parent().unwrap())
                .unwrap()
                .map(|e| e.unwrap().path())
                .find(|p| {
                    p.to_string_lossy()
                        .to_lowercase()
                        .ends_with(&format!("{}_data.ani", name.to_lowercase()))
                })
                .or_else(|| {
                    std::fs::read_dir(xml.parent().unwrap())
                        .unwrap()
                        .map(|e| e.unwrap().path())
                        .find(|p| common::has_ext(p, "ani"))
                })
                .unwrap();
            let (_, bytes) = w
                .files
                .iter()
                .find(|(p, _)| common::has_ext(p, "ani"))
                .unwrap_or_else(|| panic!("{name}: no .ani written"));
            assert_eq!(
                bytes,
                &std::fs::read(&original).unwrap(),
                "{name}: untouched .ani"
            );
        }
        // Untouched parts: every XMF as it was, byte for byte.
        let mut same = 0;
        for (p, bytes) in w.files.iter().filter(|(p, _)| common::has_ext(p, "xmf")) {
            let file = p.file_name().unwrap().to_string_lossy().to_lowercase();
            let data = p
                .parent()
                .unwrap()
                .file_name()
                .unwrap()
                .to_string_lossy()
                .to_lowercase();
            let original = walk_find(xml.parent().unwrap(), &data, &file)
                .unwrap_or_else(|| panic!("{name}: no original for {}", p.display()));
            assert_eq!(
                bytes,
                &std::fs::read(&original).unwrap(),
                "{name}: {}",
                p.display()
            );
            same += 1;
        }
        assert!(same > 0, "{name}: no XMF written");
        // Every file of the data folder comes back from the glTF alone, as it is spelled on disk
        // and byte for byte: wrecks, `.jcs` collision shapes and XMFs no part names too.
        let data_out = w
            .files
            .iter()
            .find(|(p, _)| common::has_ext(p, "xmf"))
            .and_then(|(p, _)| p.parent())
            .unwrap()
            .to_path_buf();
        let data_name = data_out
            .file_name()
            .unwrap()
            .to_string_lossy()
            .to_lowercase();
        let data_src = std::fs::read_dir(xml.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| {
                p.is_dir() && p.file_name().unwrap().to_string_lossy().to_lowercase() == data_name
            })
            .unwrap();
        let mut source_files = Vec::new();
        for e in std::fs::read_dir(&data_src).unwrap() {
            let p = e.unwrap().path();
            if p.is_file() {
                source_files.push(p);
            }
        }
        for f in &source_files {
            let got = data_out.join(f.file_name().unwrap());
            assert_eq!(
                std::fs::read(&got).ok().as_deref(),
                Some(&std::fs::read(f).unwrap()[..]),
                "{name}: {} not back whole",
                got.display()
            );
        }
        assert_eq!(
            std::fs::read_dir(&data_out).unwrap().count(),
            source_files.len(),
            "{name}: files in the data folder"
        );
        let (scene2, _) = common::component_scene(&back).unwrap();
        let (glb2, _) = common::to_glb(&scene2).unwrap();
        let (got2, _, nanims2, vertices2) = glb_positions(&glb2);
        assert_eq!(vertices2, vertices, "{name}: vertices after the round trip");
        assert_eq!(nanims2, nanims, "{name}: animations after the round trip");
        for part in want.keys() {
            assert!(
                close(got[part], got2[part]),
                "{name}: {part} moved in the round trip"
            );
        }
    }
    assert_eq!(total_parts, 1 + 1 + 3 + 78);
}

#[test]
fn dropship_counts() {
    let Some(files) = corpus_components() else {
        return;
    };
    let xml = files
        .iter()
        .find(|p| p.ends_with("arg_dropship.xml"))
        .unwrap();
    let (scene, _) = common::component_scene(xml).unwrap();
    let parts = scene
        .nodes
        .iter()
        .filter(|n| n.extras.get("x4").and_then(|x| x.get("part")).is_some());
    assert_eq!(parts.count(), 78);
    // The upper-case ARG_DROPSHIP_DATA.ANI beside arg_dropship_data/ is found.
    assert!(!scene.animations.is_empty());
    // Hardpoint markers carry their tags.
    let markers: Vec<_> = scene
        .nodes
        .iter()
        .filter_map(|n| n.extras.get("x4")?.get("attributes")?.get("tags")?.as_str())
        .collect();
    assert!(
        markers.iter().any(|t| t.contains("position")),
        "{markers:?}"
    );
    // `<part name="anim_main" wreck="anim_main_wreck">`: the wreck under its part, its lod0 and
    // collision meshes under it (as hidden children, like LODs).
    let wreck = scene
        .nodes
        .iter()
        .position(|n| n.extras.get("x4").and_then(|x| x.get("wreck")).is_some())
        .unwrap();
    assert_eq!(scene.nodes[wreck].name, "anim_main_wreck");
    let of = scene.nodes[wreck].parent.unwrap();
    assert_eq!(scene.nodes[of].name, "anim_main");
    let mut pieces: Vec<&str> = scene
        .nodes
        .iter()
        .filter(|n| n.parent == Some(wreck) && n.mesh.is_some())
        .map(|n| n.extras["x4"]["file"].as_str().unwrap())
        .collect();
    pieces.sort_unstable();
    assert_eq!(
        pieces,
        ["anim_main_wreck-collision.xmf", "anim_main_wreck-lod0.xmf"]
    );
}

const TINY: &str = r#"<?xml version="1.0"?>
<components>
	<component name="tiny" class="ship_s">
		<source geometry="Extensions\Mod\Assets\Tiny_Data"/>
		<connections>
			<connection name="c1" tags="part">
				<offset>
					<position x="1" y="2" z="3"/>
					<quaternion qx="0" qy="0" qz="0.7071068" qw="0.7071068"/>
				</offset>
				<parts><part name="body"/></parts>
			</connection>
			<connection name="c2" tags="part" parent="body">
				<offset><position x="0" y="1" z="0"/></offset>
				<parts><part name="body"/></parts>
			</connection>
			<connection name="weapon_01" tags="weapon medium" parent="body">
				<offset><position x="5" y="0" z="0"/></offset>
			</connection>
		</connections>
	</component>
</components>
"#;

#[test]
fn tiny_component_duplicates_markers_and_a_moved_part() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("component_tiny");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let xml = dir.join("tiny.xml");
    std::fs::write(&xml, TINY).unwrap();
    let (mut scene, warnings) = common::component_scene(&xml).unwrap();
    // The duplicate part name is reported and kept distinct.
    assert!(
        warnings
            .iter()
            .any(|w| w.to_string().contains("used 2 times")),
        "{warnings:?}"
    );
    assert!(scene.nodes.iter().any(|n| n.name == "body#2"));
    // The marker: (5,0,0) rotated 90 degrees about Z from (1,2,3) is (1,7,3) in the game; x mirrored.
    let m = scene
        .nodes
        .iter()
        .position(|n| n.name == "weapon_01")
        .unwrap();
    let p = scene.world_matrix(m).w_axis;
    assert!(
        (p.x + 1.0).abs() < 1e-5 && (p.y - 7.0).abs() < 1e-5 && (p.z - 3.0).abs() < 1e-5,
        "{p:?}"
    );
    assert_eq!(
        scene.nodes[m].extras["x4"]["attributes"]["tags"],
        "weapon medium"
    );

    // Untouched: same XML text. A part moved: only its <offset> changes.
    let back = dir.join("out").join("tiny.xml");
    let w = common::from_scene(&scene, &back).unwrap();
    assert_eq!(w.files.len(), 1, "no meshes: the XML alone");
    assert_eq!(w.files[0].1, TINY.as_bytes());
    let body = scene.nodes.iter().position(|n| n.name == "body").unwrap();
    scene.nodes[body].translation.z = 10.0;
    let w = {
        // No meshes in this component: the XML alone is written.
        common::from_scene(&scene, &back).unwrap()
    };
    let (_, text) = w.files.iter().find(|(p, _)| p == &back).unwrap();
    let text = String::from_utf8(text.clone()).unwrap();
    assert!(text.contains(r#"<position x="1" y="2" z="10"/>"#), "{text}");
    let changed: Vec<(&str, &str)> = TINY
        .lines()
        .zip(text.lines())
        .filter(|(a, b)| a != b)
        .collect();
    assert_eq!(changed.len(), 1, "{changed:?}");
}

#[test]
fn foreign_gltf_without_parts_is_refused_naming_the_problem() {
    let scene = hangar::model::Scene {
        nodes: vec![hangar::model::Node::new("empty")],
        ..Default::default()
    };
    let out = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("component_none")
        .join("x.xml");
    let err = common::from_scene(&scene, &out).unwrap_err();
    assert_eq!(err.kind, hangar::ErrorKind::Refused);
    assert!(err.message.contains("no node looks like a part"), "{err}");
}

#[test]
fn a_new_mesh_node_becomes_a_part_with_a_connection() {
    let Some(files) = corpus_components() else {
        return;
    };
    let xml = files
        .iter()
        .find(|p| p.ends_with("weapon_otas_l_aquilo.xml"))
        .unwrap();
    let (scene, _) = common::component_scene(xml).unwrap();
    let (glb, _) = common::to_glb(&scene).unwrap();
    let mut s = common::from_glb(&glb).unwrap();
    // A copy of part_socket's lod0 mesh as a new node under part_socket, 2 m up.
    let socket = s
        .nodes
        .iter()
        .position(|n| n.name == "part_socket")
        .unwrap();
    let lod0 = s
        .nodes
        .iter()
        .position(|n| n.name == "part_socket-lod0")
        .unwrap();
    let mut n = hangar::model::Node::new("new_fin");
    n.mesh = s.nodes[lod0].mesh;
    n.parent = Some(socket);
    n.translation.y = 2.0;
    s.nodes.push(n);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("component_added");
    let _ = std::fs::remove_dir_all(&dir);
    let back = dir.join("weapon_otas_l_aquilo.xml");
    let w = common::from_scene(&s, &back).unwrap();
    write_all(&w.files);
    let text = std::fs::read_to_string(&back).unwrap();
    assert!(
        text.contains(r#"tags="part" parent="part_socket">"#),
        "{text}"
    );
    assert!(w.files.iter().any(|(p, _)| p.ends_with("new_fin-lod0.xmf")));
    let (again, _) = common::component_scene(&back).unwrap();
    let fin = again
        .nodes
        .iter()
        .position(|n| n.name == "new_fin")
        .unwrap();
    let sock = again
        .nodes
        .iter()
        .position(|n| n.name == "part_socket")
        .unwrap();
    let d = again.world_matrix(fin).w_axis - again.world_matrix(sock).w_axis;
    let up = again.world_matrix(sock).y_axis * 2.0;
    assert!((d - up).length() < 1e-4, "{d:?} vs {up:?}");
    assert!(again
        .nodes
        .iter()
        .any(|n| n.parent == Some(fin) && n.mesh.is_some()));
}

/// A component read through a catalog, its `<source geometry>` naming the install path under
/// `extensions\`: the parts load from the data folder the path names inside the mod, and their
/// warnings name the part's file.
/// A component of one part, `part_main`, `y` up, its geometry where `geometry` says.
fn logo_xml(name: &str, geometry: &str, y: f32) -> String {
    format!(
        r#"<?xml version="1.0"?>
<components>
  <component name="{name}">
    <source geometry="{geometry}"/>
    <connections>
      <connection name="c1" tags="part">
        <parts><part name="part_main"/></parts>
        <offset><position x="0" y="{y}" z="0"/></offset>
      </connection>
    </connections>
  </component>
</components>
"#
    )
}

#[test]
fn a_component_read_from_a_catalog_is_written_back_with_its_data_folder() {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("component_from_catalog");
    let _ = std::fs::remove_dir_all(&root);
    let data = root.join("src/assets/props/logo/logo_data");
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::copy(
        samples.join("wedge-lod0.xmf"),
        data.join("part_main-lod0.xmf"),
    )
    .unwrap();
    std::fs::copy(
        samples.join("wedge-collision.xmf"),
        data.join("part_main-collision.xmf"),
    )
    .unwrap();
    // A file of the data folder no part names: carried as it is.
    std::fs::write(data.join("shape.jcs"), b"not a mesh").unwrap();
    std::fs::write(
        root.join("src/assets/props/logo/logo.xml"),
        logo_xml("logo", r"assets\props\logo\logo_data", 0.0),
    )
    .unwrap();
    let cat = root.join("01.cat");
    hangar::formats::catalog::pack(&root.join("src"), &cat, &|_| {}).unwrap();
    let spec = PathBuf::from(format!("{}::assets/props/logo/logo.xml", cat.display()));
    let (mut scene, _) = hangar::open(spec.as_path()).unwrap().to_scene().unwrap();
    // As an editor hands it back with nothing edited: no mesh (each is carried as its file).
    scene.meshes.clear();
    scene.nodes.iter_mut().for_each(|n| n.mesh = None);
    let out = root.join("out/logo.xml");
    hangar::write_scene_to(&scene, &out, Some(&spec)).unwrap();
    for f in ["part_main-lod0.xmf", "part_main-collision.xmf", "shape.jcs"] {
        assert_eq!(
            std::fs::read(root.join("out/logo_data").join(f)).unwrap(),
            std::fs::read(data.join(f)).unwrap(),
            "{f}"
        );
    }
}

#[test]
fn a_packed_component_finds_its_geometry_through_the_catalog() {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("component_packed");
    let _ = std::fs::remove_dir_all(&root);
    let src = root.join("src");
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples");
    std::fs::create_dir_all(src.join("assets/props/logo/data/10m")).unwrap();
    for (from, to) in [
        ("wedge-lod0.xmf", "part_main-lod0.xmf"),
        ("wedge-collision.xmf", "part_main-collision.xmf"),
    ] {
        std::fs::copy(
            samples.join(from),
            src.join("assets/props/logo/data/10m").join(to),
        )
        .unwrap();
    }
    std::fs::write(
        src.join("assets/props/logo/logo_10m.xml"),
        logo_xml(
            "logo_10m",
            r"\Extensions\MyMod\assets\props\logo\data\10m",
            5.0,
        ),
    )
    .unwrap();
    let cat = root.join("ext_01.cat");
    hangar::formats::catalog::pack(&src, &cat, &|_| {}).unwrap();
    let spec = PathBuf::from(format!("{}::Assets/Props/Logo/LOGO_10m.xml", cat.display()));
    let (scene, _) = common::component_scene(&spec).unwrap();
    let wedge = std::fs::read(samples.join("wedge-lod0.xmf")).unwrap();
    let part = scene
        .nodes
        .iter()
        .position(|n| n.name == "part_main")
        .unwrap();
    assert_eq!(scene.nodes[part].translation.y, 5.0);
    // The LOD0 mesh and the collision mesh hang below the part.
    let meshes: Vec<usize> = scene
        .nodes
        .iter()
        .filter(|n| n.parent == Some(part))
        .filter_map(|n| n.mesh)
        .collect();
    assert_eq!(meshes.len(), 2);
    let lod0 = scene
        .nodes
        .iter()
        .find(|n| n.parent == Some(part) && n.extras["x4"]["lod"] == 0)
        .and_then(|n| n.mesh)
        .unwrap();
    assert_eq!(
        scene.meshes[lod0].vertices.len() as u64,
        common::open(&wedge, Path::new("w.xmf"))
            .unwrap()
            .info()
            .vertices
    );

    // Through glTF and a tool that reorders vertices and triangle corners (as Blender does): the
    // untouched parts are the packed files again, byte for byte.
    let (glb, _) = common::to_glb(&scene).unwrap();
    let mut scene = common::from_glb(&glb).unwrap();
    let m = &mut scene.meshes[lod0];
    let n = m.vertices.positions.len() as u32;
    m.vertices.positions.reverse();
    for uv in &mut m.vertices.uvs {
        uv.reverse();
    }
    if let Some(n) = &mut m.vertices.normals {
        n.reverse();
    }
    if let Some(t) = &mut m.vertices.tangents {
        t.reverse();
    }
    for p in &mut m.primitives {
        for t in p.indices.chunks_exact_mut(3) {
            let [a, b, c] = [t[0], t[1], t[2]].map(|i| n - 1 - i);
            t.copy_from_slice(&[b, c, a]);
        }
        // Triangles in the other order, each with its winding kept.
        p.indices.reverse();
        for t in p.indices.chunks_exact_mut(3) {
            t.swap(0, 2);
        }
    }
    let out = root.join("out").join("logo_10m.xml");
    let w = common::from_scene(&scene, &out).unwrap();
    let written = |w: &common::Written, f: &str| {
        w.files
            .iter()
            .find(|(p, _)| p.ends_with(f))
            .map(|(_, b)| b.clone())
            .unwrap()
    };
    assert_eq!(written(&w, "part_main-lod0.xmf"), wedge);
    assert_eq!(
        written(&w, "part_main-collision.xmf"),
        std::fs::read(samples.join("wedge-collision.xmf")).unwrap()
    );
    // A vertex moved: that part is written anew, with the move.
    scene.meshes[lod0].vertices.positions[0][1] += 0.5;
    let moved = scene.meshes[lod0].vertices.positions[0];
    let w = common::from_scene(&scene, &out).unwrap();
    let bytes = written(&w, "part_main-lod0.xmf");
    assert_ne!(bytes, wedge);
    let (file, _) = hangar::formats::xmf::read::read(&bytes).unwrap();
    let (s2, _) =
        hangar::formats::xmf::mesh::to_scene(&file, "p", hangar::model::Role::Visual).unwrap();
    assert!(s2.meshes[0]
        .vertices
        .positions
        .iter()
        .any(|p| (p[0] - moved[0]).abs() < 1e-5
            && (p[1] - moved[1]).abs() < 1e-5
            && (p[2] - moved[2]).abs() < 1e-5));
}

/// Animations made in Blender come back as .ani keys: one key a glTF key, in the game's frame, and
/// reading that .ani gives the same glTF channels again. An edited key of a read animation changes
/// only that state's keys.
#[test]
fn gltf_animations_are_written_as_ani_keys() {
    use hangar::model::{Animation, Channel, Interpolation, Property};
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("component_anim");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let xml = dir.join("tiny.xml");
    std::fs::write(&xml, TINY).unwrap();
    let (mut scene, _) = common::component_scene(&xml).unwrap();
    let body = scene.nodes.iter().position(|n| n.name == "body").unwrap();
    let quarter = glam::Quat::from_rotation_y(std::f32::consts::FRAC_PI_2);
    let new = Animation {
        name: "open".into(),
        channels: vec![
            Channel {
                node: body,
                property: Property::Translation,
                interpolation: Interpolation::Linear,
                times: vec![0.0, 1.5].into(),
                values: vec![0.0, 0.0, 0.0, -1.0, 2.0, 3.0].into(),
            },
            Channel {
                node: body,
                property: Property::Rotation,
                interpolation: Interpolation::Step,
                times: vec![0.0, 1.5].into(),
                values: [glam::Quat::IDENTITY, quarter]
                    .iter()
                    .flat_map(|q| q.to_array())
                    .collect(),
            },
        ],
        extras: Default::default(),
    };
    scene.animations.push(new.clone());
    let back = dir.join("out").join("tiny.xml");
    let w = common::from_scene(&scene, &back).unwrap();
    let (path, bytes) = w
        .files
        .iter()
        .find(|(p, _)| common::has_ext(p, "ani"))
        .unwrap();
    assert_eq!(path, &dir.join("out").join("Tiny_Data.ani"));
    let (ani, _) = hangar::formats::ani::read(bytes).unwrap();
    let f = &ani.fields;
    assert_eq!(f["count"], 1);
    assert_eq!(f["animations"][0]["part"], "body");
    assert_eq!(f["animations"][0]["state"], "open");
    assert_eq!(f["animations"][0]["numPosition"], 2);
    assert_eq!(f["animations"][0]["numRotation"], 2);
    assert_eq!(f["animations"][0]["duration"], 1.5);
    // The game's frame: X mirrored.
    assert_eq!(f["keys"][1]["value"], serde_json::json!([1.0, 2.0, 3.0]));
    assert_eq!(f["keys"][1]["interpolationX"], 2);
    assert_eq!(f["keys"][3]["interpolationX"], 1);
    let (anims, _) = hangar::formats::ani::animations(&ani, &mut |p| (p == "body").then_some(body));
    assert_eq!(anims.len(), 1);
    for (got, want) in anims[0].channels.iter().zip(&new.channels) {
        assert_eq!(got.property, want.property);
        assert_eq!(got.times, want.times);
        for (a, b) in got.values.iter().zip(&want.values) {
            assert!(
                (a - b).abs() < 1e-5,
                "{:?} != {:?}",
                got.values,
                want.values
            );
        }
    }

    // Read back, one key moved: that state is rebuilt, and the written file reads with the move.
    let mut again = scene.clone();
    again.animations = anims;
    again.animations[0].channels[0].values[3] = -4.0;
    let w = common::from_scene(&again, &back).unwrap();
    let (_, bytes) = w
        .files
        .iter()
        .find(|(p, _)| common::has_ext(p, "ani"))
        .unwrap();
    let (ani, _) = hangar::formats::ani::read(bytes).unwrap();
    assert_eq!(
        ani.fields["keys"][1]["value"],
        serde_json::json!([4.0, 2.0, 3.0])
    );
}

/// `<part ref="component.part">` reuses another component's part: found through the game's
/// `index/components.xml` in the view, shown as meshes under the part, and never written into this
/// component's data folder. Without the index it stays a reference, with a note.
#[test]
fn a_reused_part_is_found_through_the_game_index() {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("component_ref");
    let _ = std::fs::remove_dir_all(&root);
    let game = root.join("game");
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples");
    let body_data = game.join("assets/interiors/body_data");
    std::fs::create_dir_all(&body_data).unwrap();
    std::fs::copy(
        samples.join("wedge-lod0.xmf"),
        body_data.join("door_left-lod0.xmf"),
    )
    .unwrap();
    std::fs::write(
        game.join("assets/interiors/body.xml"),
        r#"<components><component name="interior_body"><source geometry="assets\interiors\body_data"/></component></components>"#,
    )
    .unwrap();
    std::fs::create_dir_all(game.join("index")).unwrap();
    std::fs::write(
        game.join("index/components.xml"),
        r#"<?xml version="1.0"?><index><entry name="Interior_Body" value="assets\interiors\body"/></index>"#,
    )
    .unwrap();
    let ship = r#"<components>
  <component name="ship">
    <source geometry="assets\units\ship_data"/>
    <connections>
      <connection name="c1" tags="part">
        <parts><part name="door" ref="interior_body.door_left"/></parts>
      </connection>
    </connections>
  </component>
</components>
"#;
    std::fs::create_dir_all(game.join("assets/units")).unwrap();
    std::fs::write(game.join("assets/units/ship.xml"), ship).unwrap();

    let spec = PathBuf::from(format!("{}::assets/units/ship.xml", game.display()));
    let (scene, warnings) = common::component_scene(&spec).unwrap();
    let door = scene.nodes.iter().position(|n| n.name == "door").unwrap();
    let mesh_node = scene
        .nodes
        .iter()
        .find(|n| n.parent == Some(door) && n.mesh.is_some())
        .unwrap_or_else(|| panic!("no mesh under the reused part: {warnings:?}"));
    let wedge = std::fs::read(samples.join("wedge-lod0.xmf")).unwrap();
    let info = common::open(&wedge, Path::new("w.xmf")).unwrap().info();
    assert_eq!(info.vertices, 32);
    assert_eq!(scene.meshes[mesh_node.mesh.unwrap()].vertices.len(), 32);
    assert!(mesh_node.extras["x4"]["reused"]
        .as_str()
        .unwrap()
        .ends_with("assets/interiors/body_data/door_left-lod0.xmf"));
    // Written back: the XML as it was, and no XMF copied from the other component.
    let w = common::from_scene(&scene, &root.join("out/ship.xml")).unwrap();
    assert_eq!(
        w.files.len(),
        1,
        "{:?}",
        w.files.iter().map(|f| &f.0).collect::<Vec<_>>()
    );
    assert_eq!(w.files[0].1, ship.as_bytes());

    // The XML alone, without the game: a note says how to resolve it.
    let alone = root.join("alone");
    std::fs::create_dir_all(&alone).unwrap();
    std::fs::write(alone.join("ship.xml"), ship).unwrap();
    let (scene, warnings) = common::component_scene(&alone.join("ship.xml")).unwrap();
    let w = warnings
        .iter()
        .find(|w| w.message.contains("interior_body.door_left"))
        .unwrap();
    assert!(w.note && w.message.contains("--game"), "{w:?}");
    assert!(scene.meshes.is_empty());
}

/// A part whose name holds "collision" (`anim_ladder_collision`, as ships have) is a part: its
/// `-lod0.xmf` comes back through a glTF as itself, next to its own collision mesh, not as a
/// second collision mesh (it was lost on glb -> xml).
#[test]
fn a_part_named_collision_keeps_its_lod_through_gltf() {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("component_named_collision");
    let _ = std::fs::remove_dir_all(&root);
    let data = root.join("src/assets/props/ladder/ladder_data");
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples");
    std::fs::create_dir_all(&data).unwrap();
    for (from, to) in [
        ("wedge-lod0.xmf", "anim_ladder_collision-lod0.xmf"),
        ("wedge-collision.xmf", "anim_ladder_collision-collision.xmf"),
    ] {
        std::fs::copy(samples.join(from), data.join(to)).unwrap();
    }
    let xml = logo_xml("ladder", r"assets\props\ladder\ladder_data", 0.0)
        .replace("part_main", "anim_ladder_collision");
    std::fs::write(root.join("src/assets/props/ladder/ladder.xml"), xml).unwrap();
    let cat = root.join("01.cat");
    hangar::formats::catalog::pack(&root.join("src"), &cat, &|_| {}).unwrap();
    let spec = PathBuf::from(format!("{}::assets/props/ladder/ladder.xml", cat.display()));
    let (scene, _) = common::component_scene(&spec).unwrap();
    let (glb, _) = common::to_glb(&scene).unwrap();
    let again = common::from_glb(&glb).unwrap();
    let w = common::from_scene(&again, &root.join("out/ladder.xml")).unwrap();
    let mut xmfs: Vec<String> = w
        .files
        .iter()
        .filter_map(|(p, _)| p.file_name()?.to_str().map(str::to_string))
        .filter(|n| n.ends_with(".xmf"))
        .collect();
    xmfs.sort();
    assert_eq!(
        xmfs,
        [
            "anim_ladder_collision-collision.xmf",
            "anim_ladder_collision-lod0.xmf"
        ]
    );
}
