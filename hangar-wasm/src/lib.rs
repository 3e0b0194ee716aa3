//! hangar in the browser: the page's Web Worker (web/worker.js) registers the files the user chose
//! and asks for one at a time to be shown, checked or converted. Files are read through the page
//! in slices (`hangarReadAt`), so a catalog's `.dat` is never read whole: only its index up front,
//! and an entry when it is shown. All format work is the library's: this crate calls only its door
//! (`hangar::open`, `Opened::{info, validate, write_as}`).

use hangar::{ByteSource, ConvertOptions, Format, GameView, Opened, SharedSource, Source};
use serde_json::{json, Value};
use std::rc::Rc;
use std::sync::Arc;
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// `len` bytes at `offset` of the file the worker registered as `id` (a `Blob.slice` read
    /// with `FileReaderSync`).
    #[wasm_bindgen(js_namespace = globalThis, js_name = hangarReadAt, catch)]
    fn read_at(id: u32, offset: f64, len: u32) -> Result<Vec<u8>, JsValue>;
}

#[cfg(target_arch = "wasm32")]
#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = performance, js_name = now)]
    fn performance_now() -> f64;
}

/// Milliseconds from some start, to time the steps of opening a folder.
fn now_ms() -> f64 {
    #[cfg(target_arch = "wasm32")]
    return performance_now();
    #[cfg(not(target_arch = "wasm32"))]
    {
        use std::sync::OnceLock;
        static START: OnceLock<std::time::Instant> = OnceLock::new();
        START
            .get_or_init(std::time::Instant::now)
            .elapsed()
            .as_secs_f64()
            * 1000.0
    }
}

/// A file of the page, read through [`read_at`].
struct PageFile {
    id: u32,
    len: u64,
    name: String,
}

impl ByteSource for PageFile {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_at(&self, offset: u64, len: usize) -> hangar::Result<Vec<u8>> {
        let len = u32::try_from(len).map_err(|_| page_error(&self.name, "a read over 4 GiB"))?;
        // f64 holds every offset below 2^53 bytes exactly.
        read_at(self.id, offset as f64, len).map_err(|e| {
            let why = e.as_string().unwrap_or_else(|| format!("{e:?}"));
            page_error(
                &self.name,
                &format!("reading {len} bytes at {offset}: {why}"),
            )
        })
    }
}

fn page_error(name: &str, message: &str) -> hangar::Error {
    hangar::Error::new(
        hangar::ErrorKind::Io,
        None,
        "",
        format!("{name}: {message}"),
    )
}

fn js_error(e: impl std::fmt::Display) -> JsError {
    JsError::new(&e.to_string())
}

/// The files the user opened (one or several files, or a folder), as one game view.
#[wasm_bindgen]
pub struct Workspace {
    label: String,
    files: Vec<(String, SharedSource)>,
    view: Option<Arc<GameView>>,
    /// The component last opened (its scene is built once for showing, checking, downloads).
    component: std::cell::RefCell<Option<(String, Rc<Opened>)>>,
}

/// What the page draws for a file: `meta` (JSON: kind, info, counts, outputs) and the bytes (a
/// GLB, a PNG, or the text of a .bgf's presentation XML or a .bgp's Graphviz drawing).
#[wasm_bindgen]
pub struct Shown {
    meta: String,
    bytes: Vec<u8>,
}

#[wasm_bindgen]
impl Shown {
    #[wasm_bindgen(getter)]
    pub fn meta(&self) -> String {
        self.meta.clone()
    }

    /// The bytes, handed over once.
    pub fn take_bytes(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.bytes)
    }
}

/// Extensions of the motion files that go with a model (`--motion`).
const MOTIONS: &[&str] = &["xsm", "xpm", "m3a"];

/// The extension of `path`'s file name (as written; compare with `eq_ignore_ascii_case`).
fn ext(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.').map_or("", |(_, e)| e)
}

/// What [`Workspace::index`] hands the page: `meta` (JSON: `{"models": N, "files": N,
/// "warnings": [..]}`) and the models' paths, one a line. One string, not a JSON array: a game
/// lists 300,000, and the page splits one string faster than it parses (and clones) an array.
#[wasm_bindgen]
pub struct Listed {
    meta: String,
    paths: String,
}

#[wasm_bindgen]
impl Listed {
    #[wasm_bindgen(getter)]
    pub fn meta(&self) -> String {
        self.meta.clone()
    }

    /// The paths, handed over once.
    pub fn take_paths(&mut self) -> String {
        std::mem::take(&mut self.paths)
    }
}

/// Node and animation counts of a GLB (its JSON chunk).
fn glb_counts(glb: &[u8]) -> (usize, usize) {
    let len = glb
        .get(12..16)
        .and_then(|b| b.try_into().ok())
        .map_or(0, |b| u32::from_le_bytes(b) as usize);
    let json: Value = glb
        .get(20..20 + len)
        .and_then(|j| serde_json::from_slice(j).ok())
        .unwrap_or_default();
    let n = |k: &str| json.get(k).and_then(Value::as_array).map_or(0, Vec::len);
    (n("nodes"), n("animations"))
}

/// What the page draws for a file of `format` that is no picture, and the output that makes it:
/// a .bgf's presentation XML, a .bgp's Graphviz drawing, anything else's scene as a GLB.
fn shown_as(format: Format) -> (&'static str, &'static str) {
    match format {
        Format::AnarkBgf => ("bgf", "shown.xml"),
        Format::AnarkBgp => ("bgp", "shown.dot"),
        _ => ("glb", "shown.glb"),
    }
}

/// One mip level of one surface of a picture as a PNG, with what the pickers offer in `meta`.
fn picture(
    opened: &Opened,
    levels: hangar::formats::dds::Levels,
    mip: u32,
    surface: u32,
    mut opts: ConvertOptions,
) -> Result<Shown, JsError> {
    opts.textures.surfaces = hangar::formats::dds::Surfaces::One { mip, surface };
    let p = opened.write_as("shown.png", &opts).map_err(js_error)?;
    let (width, height) = hangar::formats::dds::png_size(&p.bytes).unwrap_or_default();
    let meta = json!({
        "kind": "image",
        "format": "texture",
        "info": opened.info(),
        "width": width,
        "height": height,
        "mips": levels.mips,
        "surfaces": levels.surfaces,
        "mip": mip,
        "surface": surface,
        "outputs": opened.outputs(),
        "warnings": p.warnings.iter().map(ToString::to_string).collect::<Vec<_>>(),
    });
    Ok(Shown {
        meta: meta.to_string(),
        bytes: p.bytes,
    })
}

#[wasm_bindgen]
impl Workspace {
    /// An empty workspace; `label` names it in messages (the folder's name, or "files").
    #[wasm_bindgen(constructor)]
    pub fn new(label: String) -> Workspace {
        Workspace {
            label,
            files: Vec::new(),
            view: None,
            component: Default::default(),
        }
    }

    /// A file of the page: its path inside what was opened, the worker's id for it, its size.
    pub fn add_file(&mut self, path: String, id: u32, len: f64) {
        let src = PageFile {
            id,
            len: len as u64,
            name: path.clone(),
        };
        self.files.push((path, Arc::new(src)));
    }

    /// A file given as bytes.
    pub fn add_bytes(&mut self, path: String, bytes: Vec<u8>) {
        self.files.push((path, Arc::new(bytes)));
    }

    /// Builds the game view (reads the catalogs' indexes) and lists what can be shown (see
    /// [`Listed`]).
    pub fn index(&mut self) -> Result<Listed, JsError> {
        let t0 = now_ms();
        let (view, warnings) =
            GameView::from_sources(&self.label, self.files.clone()).map_err(js_error)?;
        let t1 = now_ms();
        let all = view.files("").map_err(js_error)?;
        let t2 = now_ms();
        // Loose files keep their own spelling in the list (the view compares in lower case).
        let spelled: std::collections::HashMap<String, &String> = self
            .files
            .iter()
            .map(|(p, _)| (p.to_lowercase().replace('\\', "/"), p))
            .collect();
        let mut paths = String::with_capacity(all.iter().map(|p| p.len() + 1).sum());
        let mut models = 0usize;
        for p in GameView::models(&all) {
            let shown = spelled.get(p).map_or(p.as_str(), |s| s.as_str());
            // A line break in a path (a damaged .cat) would split it in two in the list.
            if !shown.contains('\n') {
                if models > 0 {
                    paths.push('\n');
                }
                paths.push_str(shown);
                models += 1;
            }
        }
        let warnings: Vec<String> = warnings.iter().map(ToString::to_string).collect();
        // Where the time went (ms): the view built (catalog indexes read), its files listed, the
        // models picked out.
        let ms = [t1 - t0, t2 - t1, now_ms() - t2].map(|t| (t * 10.0).round() / 10.0);
        let meta = json!({"models": models, "files": all.len(), "warnings": warnings,
            "ms": {"view": ms[0], "files": ms[1], "models": ms[2]}})
        .to_string();
        self.view = Some(Arc::new(view));
        self.component.replace(None);
        Ok(Listed { meta, paths })
    }

    /// The conversion options of the page: textures looked up in the opened files.
    fn options(&self, quantize: bool, compress: bool) -> ConvertOptions {
        let mut o = ConvertOptions::default();
        o.textures.views = self.view.iter().map(|v| GameView::clone(v)).collect();
        o.gltf.quantize = quantize;
        o.gltf.compress = compress;
        o
    }

    /// The file at `path` opened through the view, fresh (motions may be added to it).
    fn open(&self, path: &str) -> hangar::Result<Opened> {
        let view = self
            .view
            .as_ref()
            .ok_or_else(|| page_error(path, "no files opened (index first)"))?;
        hangar::open(Source::InView(Arc::clone(view), path.to_string()))
    }

    /// The file at `path` with `motions` added; a component is opened once while it is the one
    /// shown (its scene serves showing, checking and downloads).
    fn opened(&self, path: &str, motions: &[String]) -> hangar::Result<Rc<Opened>> {
        if let Some((p, o)) = self.component.borrow().as_ref() {
            if p == path && motions.is_empty() {
                return Ok(Rc::clone(o));
            }
        }
        let mut opened = self.open(path)?;
        for m in motions {
            opened.add_motion(self.open(m)?);
        }
        let opened = Rc::new(opened);
        if opened.format() == Format::ComponentXml && motions.is_empty() {
            self.component
                .replace(Some((path.to_string(), Rc::clone(&opened))));
        }
        Ok(opened)
    }

    /// The file at `path` with the motions `motions` applied, as what the page draws (see
    /// [`Shown`]).
    pub fn show(&self, path: String, motions: Vec<String>) -> Result<Shown, JsError> {
        let opened = self.opened(&path, &motions).map_err(js_error)?;
        let format = opened.format();
        let opts = self.options(false, false);
        let warnings =
            |w: &[hangar::Warning]| w.iter().map(ToString::to_string).collect::<Vec<_>>();
        if let Some(levels) = opened.levels() {
            return picture(&opened, levels.map_err(js_error)?, 0, 0, opts);
        }
        let (kind, out) = shown_as(format);
        let c = opened.write_as(out, &opts).map_err(js_error)?;
        let (nodes, animations) = if kind == "glb" {
            glb_counts(&c.bytes)
        } else {
            (0, 0)
        };
        let mut all = warnings(opened.warnings());
        all.extend(warnings(&c.warnings));
        let meta = json!({
            "kind": kind,
            "format": format.name(),
            "info": opened.info(),
            "nodes": nodes,
            "animations": animations,
            "outputs": opened.outputs(),
            "warnings": all,
        });
        Ok(Shown {
            meta: meta.to_string(),
            bytes: c.bytes,
        })
    }

    /// Mip level `mip` of surface `surface` (cube face, array layer or volume slice) of the
    /// picture at `path`, as [`Workspace::show`] shows a picture.
    pub fn show_level(&self, path: String, mip: u32, surface: u32) -> Result<Shown, JsError> {
        let opened = self.opened(&path, &[]).map_err(js_error)?;
        let levels = opened
            .levels()
            .ok_or_else(|| JsError::new(&format!("{path}: not a picture")))?
            .map_err(js_error)?;
        picture(&opened, levels, mip, surface, self.options(false, false))
    }

    /// Which of the outputs hangar names for the file at `path` (with `motions`) it writes from
    /// it, as a JSON array of extensions: the download buttons. A file shown as a GLB has a scene,
    /// so its glTF forms are written; every other output is tried (the bytes are dropped), since
    /// a format's family names forms a given file cannot become (an .xac is no .xsm), and kept
    /// when it is one file.
    pub fn writable(&self, path: String, motions: Vec<String>) -> Result<String, JsError> {
        let opened = self.opened(&path, &motions).map_err(js_error)?;
        let scene = opened.levels().is_none() && shown_as(opened.format()).0 == "glb";
        let opts = self.options(false, false);
        let ok: Vec<&str> = opened
            .outputs()
            .into_iter()
            .filter(|e| match *e {
                "glb" | "gltf" => scene,
                "obj" => scene && motions.is_empty(),
                e => opened
                    .write_as(format!("download.{e}"), &opts)
                    .is_ok_and(|c| c.files.is_empty()),
            })
            .collect();
        Ok(json!(ok).to_string())
    }

    /// `hangar validate --json` of the file at `path`: `{"ok": bool, "findings": [...]}`.
    pub fn validate(&self, path: String) -> String {
        let findings: Vec<hangar::Finding> = match self.opened(&path, &[]) {
            Ok(o) => o.validate(),
            Err(e) => vec![e.into()],
        };
        let failed = findings
            .iter()
            .any(|f| f.severity == hangar::Severity::Error);
        json!({"ok": !failed, "findings": findings}).to_string()
    }

    /// The file at `path` (with `motions`) converted to `output` (a name whose extension picks
    /// the type: .glb, .gltf, .obj, .json, .png, or a game format), a glTF encoded as asked.
    pub fn convert(
        &self,
        path: String,
        motions: Vec<String>,
        output: String,
        quantize: bool,
        compress: bool,
    ) -> Result<Vec<u8>, JsError> {
        let opened = self.opened(&path, &motions).map_err(js_error)?;
        let c = opened
            .write_as(&output, &self.options(quantize, compress))
            .map_err(js_error)?;
        // A download is one file: an output that needs others beside it would arrive broken.
        if !c.files.is_empty() {
            return Err(JsError::new(&format!(
                "{output} goes with {} more files: convert it with the command line",
                c.files.len()
            )));
        }
        Ok(c.bytes)
    }

    /// True when the file at `path` goes with a model as a motion (`--motion`) by its name.
    pub fn is_motion(path: String) -> bool {
        let e = ext(&path);
        MOTIONS.iter().any(|m| m.eq_ignore_ascii_case(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glb_counts_read_the_json_chunk() {
        let json = br#"{"nodes":[{},{},{}],"animations":[{}]}"#;
        let mut glb = b"glTF".to_vec();
        glb.extend(2u32.to_le_bytes());
        glb.extend(((20 + json.len()) as u32).to_le_bytes());
        glb.extend((json.len() as u32).to_le_bytes());
        glb.extend(b"JSON");
        glb.extend(json);
        assert_eq!(glb_counts(&glb), (3, 1));
        assert_eq!(glb_counts(b"glTF"), (0, 0));
    }
}

#[cfg(test)]
mod listing {
    use super::*;

    /// A catalog of 300,000 entries (a game's size) is indexed and listed; the time is printed.
    #[test]
    fn a_large_catalog_lists_every_model() {
        let mut text = String::new();
        for i in 0..300_000 {
            text.push_str(&format!(
                "assets/units/size_{}/ship_{}_data/part_{i}-lod0.xmf 0 1700000000 00000000000000000000000000000000\n",
                i % 7,
                i >> 6
            ));
        }
        let mut ws = Workspace::new("game".into());
        ws.add_bytes("01.cat".into(), text.into_bytes());
        ws.add_bytes("01.dat".into(), Vec::new());
        let t = std::time::Instant::now();
        let Ok(mut listed) = ws.index() else {
            panic!("the catalog was not indexed")
        };
        let paths = listed.take_paths();
        let meta: Value = serde_json::from_str(&listed.meta()).unwrap();
        eprintln!(
            "300,000 entries indexed and listed in {:?} (ms: {})",
            t.elapsed(),
            meta["ms"]
        );
        assert_eq!(meta["models"], 300_000);
        assert_eq!(meta["files"], 300_002);
        let lines: Vec<&str> = paths.split('\n').collect();
        assert_eq!(lines.len(), 300_000);
        // Sorted by game path.
        assert_eq!(lines[0], "assets/units/size_0/ship_0_data/part_0-lod0.xmf");
        assert!(lines.windows(2).all(|w| w[0] < w[1]));
    }
}
