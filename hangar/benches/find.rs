//! `hangar find` on a synthetic game the size of X4's (made by the bench in a temp dir): about
//! 15,000 macro files with their index, 12,000 components, 3,000 wares and 40,000 texts in
//! catalogs, and two extensions patching texts and wares. Printed side by side in the same run:
//! the first query (index made: every macro file read and parsed), a later one (the index kept
//! in the cache folder), and a plain walk over the same catalogs (every XML file read and
//! searched for the name, as grep would). Size with HANGAR_BENCH_FIND_MACROS.
//! Run: `cargo bench -p hangar --bench find`.

use criterion::{black_box, criterion_group, Criterion};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

mod common;

fn macros() -> usize {
    std::env::var("HANGAR_BENCH_FIND_MACROS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(15_000)
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

const RACES: [&str; 5] = ["arg", "par", "tel", "spl", "ter"];
const WORDS: [&str; 8] = [
    "Cerberus", "Osprey", "Gorgon", "Cobra", "Nemesis", "Falcon", "Heron", "Drake",
];

/// The game folder: 01.cat (texts, index, libraries), 02.cat (macro files), two extensions.
fn synthetic() -> PathBuf {
    let n = macros();
    let dir = std::env::temp_dir().join(format!("hangar-bench-find-{n}"));
    let root = dir.join("game");
    if root.join("02.cat").exists() {
        return root;
    }
    let _ = std::fs::remove_dir_all(&dir);
    let stage = dir.join("stage1");
    let stage2 = dir.join("stage2");
    let mut t = String::from("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<language id=\"44\">\n");
    let mut index = String::from("<index>\n");
    let mut comps = String::from("<index>\n");
    let mut wares = String::from("<wares>\n");
    // Page 20101: one name a macro (some of them a reference to a base name with a comment).
    t.push_str("<page id=\"20101\">\n");
    for i in 0..n {
        let w = WORDS[i % WORDS.len()];
        if i % 3 == 0 {
            t.push_str(&format!(
                "<t id=\"{i}\">{{20102,{}}} Mk{i} (variant {i})</t>\n",
                i % WORDS.len()
            ));
        } else {
            t.push_str(&format!("<t id=\"{i}\">{w} Class {i}</t>\n"));
        }
    }
    t.push_str("</page>\n<page id=\"20102\">\n");
    for (i, w) in WORDS.iter().enumerate() {
        t.push_str(&format!("<t id=\"{i}\">{w}</t>\n"));
    }
    t.push_str("</page>\n<page id=\"30001\">\n");
    for i in 0..(40_000usize.saturating_sub(n)) {
        t.push_str(&format!("<t id=\"{i}\">Some other text number {i} of the game, long enough to look like one.</t>\n"));
    }
    t.push_str("</page>\n</language>\n");
    for i in 0..n {
        let race = RACES[i % RACES.len()];
        let id = format!("ship_{race}_m_bench_{i:05}");
        index.push_str(&format!(
            "<entry name=\"{id}_macro\" value=\"assets\\units\\size_m\\macros\\{id}_macro\"/>\n"
        ));
        comps.push_str(&format!(
            "<entry name=\"{id}\" value=\"assets\\units\\size_m\\{id}\"/>\n"
        ));
        // A macro file as large as the game's (connections and properties beside the name).
        let mut m = format!(
            "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<macros>\n  <macro name=\"{id}_macro\" class=\"ship_m\">\n    <component ref=\"{id}\"/>\n    <properties>\n      <identification name=\"{{20101,{i}}}\" basename=\"{{20102,{}}}\" makerrace=\"argon\" description=\"{{20101,{i}}}\"/>\n      <hull max=\"{}\"/>\n      <purpose primary=\"fight\"/>\n    </properties>\n    <connections>\n",
            i % WORDS.len(),
            1000 + i
        );
        for c in 0..20 {
            m.push_str(&format!("      <connection ref=\"con_weapon_{c:02}\"><macro ref=\"weapon_gen_m_laser_01_mk1_macro\" connection=\"ShipConnection\"/></connection>\n"));
        }
        m.push_str("    </connections>\n  </macro>\n</macros>\n");
        write(
            &stage2.join(format!("assets/units/size_m/macros/{id}_macro.xml")),
            &m,
        );
        if i % 5 == 0 {
            wares.push_str(&format!(
                "<ware id=\"{id}\" name=\"{{20101,{i}}}\" group=\"ships\"><price min=\"1\" average=\"2\" max=\"3\"/><component ref=\"{id}_macro\"/></ware>\n"
            ));
        }
    }
    // Components without macros (props, stations): the rest of the game's index.
    for i in 0..(12_000usize.saturating_sub(n)) {
        comps.push_str(&format!(
            "<entry name=\"props_bench_{i:05}\" value=\"assets\\props\\props_bench_{i:05}\"/>\n"
        ));
    }
    index.push_str("</index>\n");
    comps.push_str("</index>\n");
    wares.push_str("</wares>\n");
    write(&stage.join("t/0001-l044.xml"), &t);
    write(&stage.join("index/macros.xml"), &index);
    write(&stage.join("index/components.xml"), &comps);
    write(&stage.join("libraries/wares.xml"), &wares);
    std::fs::create_dir_all(&root).unwrap();
    hangar::catalogs::pack(&stage, &root.join("01.cat"), &|_| {}).unwrap();
    hangar::catalogs::pack(&stage2, &root.join("02.cat"), &|_| {}).unwrap();
    // Two extensions: one renames a game ship, one adds a ware and its text.
    for (name, tdiff, wdiff) in [
        (
            "ego_dlc_bench",
            "<diff><replace sel=\"/language/page[@id='20101']/t[@id='1']/text()\">Zephyr Bench Ship</replace></diff>",
            "<diff><add sel=\"/wares\"><ware id=\"bench_dlc_ware\" name=\"{20101,2}\"/></add></diff>",
        ),
        (
            "mod_bench",
            "<diff><add sel=\"/language\"><page id=\"90001\"><t id=\"1\">Quokka Boarding Craft</t></page></add></diff>",
            "<diff><add sel=\"/wares\"><ware id=\"quokka_ware\" name=\"{90001,1}\"/></add></diff>",
        ),
    ] {
        let e = root.join("extensions").join(name);
        write(
            &e.join("content.xml"),
            &format!("<content id=\"{name}\" name=\"{name}\"/>"),
        );
        write(&e.join("t/0001-l044.xml"), tdiff);
        write(&e.join("libraries/wares.xml"), wdiff);
    }
    let _ = std::fs::remove_dir_all(&stage);
    let _ = std::fs::remove_dir_all(&stage2);
    root
}

/// What a modder does without an index: every XML file of the catalogs read and searched for
/// the name (case-insensitive); the number of files holding it.
fn plain_walk(root: &Path, name: &str) -> usize {
    let needle = name.to_lowercase();
    let mut hits = 0;
    let mut cats: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "cat"))
        .collect();
    cats.sort();
    for cat in cats {
        let o = hangar::catalogs::open(&cat).unwrap();
        let dat = o.dat.bytes();
        for e in &o.catalog.entries {
            if e.path.ends_with(".xml") {
                let at = e.offset as usize;
                let text = String::from_utf8_lossy(&dat[at..at + e.size as usize]).to_lowercase();
                hits += usize::from(text.contains(&needle));
            }
        }
    }
    hits
}

fn options(cache: bool) -> hangar::FindOptions {
    hangar::FindOptions {
        cache,
        ..Default::default()
    }
}

fn bench(c: &mut Criterion) {
    let root = synthetic();
    let cache = root.with_file_name("cache");
    std::env::set_var("HANGAR_CACHE_DIR", &cache);
    let games = [root.clone()];
    let mut g = c.benchmark_group("find");
    g.measurement_time(Duration::from_secs(10));
    g.sample_size(10);
    g.bench_function("first_query_index_made", |b| {
        b.iter(|| black_box(hangar::find(&games, "Zephyr Bench Ship", &options(false)).unwrap()))
    });
    hangar::find(&games, "warm", &options(true)).ok();
    g.bench_function("later_query_kept_index", |b| {
        b.iter(|| black_box(hangar::find(&games, "Zephyr Bench Ship", &options(true)).unwrap()))
    });
    g.bench_function("plain_walk_of_the_catalogs", |b| {
        b.iter(|| black_box(plain_walk(&root, "Zephyr Bench Ship")))
    });
    g.finish();
}

fn summary() {
    let root = synthetic();
    let cache = root.with_file_name("cache");
    let _ = std::fs::remove_dir_all(&cache);
    std::env::set_var("HANGAR_CACHE_DIR", &cache);
    let games = [root.clone()];
    let t = Instant::now();
    let first = hangar::find(&games, "Cerberus Class 8", &options(true)).unwrap();
    let made = t.elapsed().as_secs_f64();
    let index = hangar::FindIndex::open(
        &games,
        &hangar::FindOptions {
            kind: Some(hangar::FoundKind::Text),
            ..options(false)
        },
    )
    .unwrap();
    let [m, c, w, tx] = index.counts();
    let query = |q: &str| -> (f64, usize) {
        let t = Instant::now();
        let n = hangar::find(&games, q, &options(true)).unwrap().len();
        (t.elapsed().as_secs_f64(), n)
    };
    let (later, n_later) = query("Zephyr Bench Ship");
    let (later2, _) = query("quokka");
    let best = common::race(
        3,
        &[
            &|| {
                hangar::find(&games, "Zephyr Bench Ship", &options(false))
                    .unwrap()
                    .len()
            },
            &|| {
                hangar::find(&games, "Zephyr Bench Ship", &options(true))
                    .unwrap()
                    .len()
            },
            &|| plain_walk(&root, "Zephyr Bench Ship"),
        ],
    );
    println!(
        "\nfind summary ({m} macros, {c} components, {w} wares, {tx} texts; load {}):\n  \
         first query, index made and kept: {:.0} ms ({} found)\n  \
         later queries from the kept index: {:.0} ms and {:.0} ms ({n_later} found)\n  \
         best of 3: index made {:.0} ms, kept index {:.0} ms, plain walk of the catalogs {:.0} ms",
        common::load_average(),
        made * 1e3,
        first.len(),
        later * 1e3,
        later2 * 1e3,
        best[0] * 1e3,
        best[1] * 1e3,
        best[2] * 1e3,
    );
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    summary();
}
