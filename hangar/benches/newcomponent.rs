//! `hangar::new_component` on the dropship its author would hold (78 parts' meshes, hardpoints, its 13
//! states as actions and its 50 lights: the component read by hangar, its hangar records dropped)
//! against `hangar convert` of the same scene to a component XML (the baseline, measured in the same
//! run): both written to disk, each the median of five runs. The issue asks for under 2x. Prints both
//! figures and the ratio, with the LODs made as `new component`'s default (2) and without (`--lods 0`).
//!
//! Run: `HANGAR_CORPUS=../shared/corpus cargo bench -p hangar --bench newcomponent`.

use hangar::model::{Node, Scene};
use serde_json::{Map, Value};
use std::path::Path;
use std::time::{Duration, Instant};

/// The scene an author would hold: a node a part (its lod0 mesh on it), a node a hardpoint and a
/// node a light, their game attributes as string extras; animations on the part nodes.
fn authored(read: &Scene) -> Scene {
    let x4 = |n: &Node| n.extras.get("x4").and_then(Value::as_object).cloned();
    let strings = |m: Option<&Value>| -> Map<String, Value> {
        m.and_then(Value::as_object)
            .map(|a| {
                a.iter()
                    .filter(|(k, v)| v.is_string() && !matches!(k.as_str(), "name" | "parent"))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut out = Scene {
        meshes: read.meshes.clone(),
        materials: read.materials.clone(),
        lights: read.lights.clone(),
        ..Default::default()
    };
    let mut kept = vec![None; read.nodes.len()];
    for (i, n) in read.nodes.iter().enumerate() {
        let Some(m) = x4(n) else { continue };
        let mut node = Node::new(n.name.clone());
        (node.translation, node.rotation, node.scale) = (n.translation, n.rotation, n.scale);
        if m.contains_key("part") {
            node.extras.insert("tags".into(), "part".into());
            node.mesh = read.nodes.iter().find_map(|c| {
                let lod0 = x4(c).and_then(|x| x.get("lod").and_then(Value::as_u64)) == Some(0);
                (c.parent == Some(i) && lod0).then_some(c.mesh).flatten()
            });
        } else if let Some(kind) = m.get("light").and_then(Value::as_str) {
            node.light = n.light;
            node.extras = strings(m.get("attributes"));
            node.extras.insert("light".into(), kind.into());
        } else if m.contains_key("connection") {
            node.extras = strings(m.get("attributes"));
            if !node.extras.contains_key("tags") {
                continue;
            }
        } else {
            continue;
        }
        kept[i] = Some(out.nodes.len());
        out.nodes.push(node);
    }
    for (i, n) in read.nodes.iter().enumerate() {
        if let Some(k) = kept[i] {
            out.nodes[k].parent = n.parent.and_then(|p| kept.get(p).copied().flatten());
        }
    }
    for a in &read.animations {
        let mut a = a.clone();
        a.extras = Map::new();
        a.channels
            .retain_mut(|c| match kept.get(c.node).copied().flatten() {
                Some(k) => {
                    c.node = k;
                    true
                }
                None => false,
            });
        out.animations.push(a);
    }
    out
}

fn median(mut v: Vec<Duration>) -> f64 {
    v.sort();
    v[v.len() / 2].as_secs_f64()
}

fn main() {
    let Some(corpus) = std::env::var_os("HANGAR_CORPUS") else {
        println!("newcomponent: skipped (HANGAR_CORPUS is not set)");
        return;
    };
    let ship = Path::new(&corpus).join("x4-mods/xirsoi__dropships__dropships/assets/units/size_m");
    let (read, _) = hangar::open(ship.join("arg_dropship.xml"))
        .unwrap()
        .to_scene()
        .unwrap();
    let scene = authored(&read);
    let dir =
        std::env::temp_dir().join(format!("hangar-bench-newcomponent-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let template = ship.join("macros/arg_dropship_macro.xml");
    let runs = |lods: u32| {
        let (mut new, mut convert) = (Vec::new(), Vec::new());
        for k in 0..5 {
            let t = Instant::now();
            let out = dir.join(format!("convert{lods}_{k}/arg_new.xml"));
            hangar::write_scene_to(&scene, &out, None).unwrap();
            convert.push(t.elapsed());
            let t = Instant::now();
            let mut spec = hangar::NewComponent::new(template.to_string_lossy(), "ship_bench_new");
            spec.lods = lods;
            let ext = hangar::new_component(&scene, &spec, None).unwrap();
            ext.write_to(&dir.join(format!("new{lods}_{k}")), false)
                .unwrap();
            new.push(t.elapsed());
        }
        (median(new), median(convert))
    };
    let states = scene.animations.len();
    let lights = scene.nodes.iter().filter(|n| n.light.is_some()).count();
    for lods in [2, 0] {
        let (new, convert) = runs(lods);
        println!(
            "newcomponent: dropship ({} parts, {states} states, {lights} lights), --lods {lods}: new component {new:.3} s, convert {convert:.3} s, ratio {:.2} (goal under 2)",
            scene.nodes.iter().filter(|n| n.mesh.is_some()).count(),
            new / convert.max(1e-9)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
