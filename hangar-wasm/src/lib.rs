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

/// Extensions listed in a folder's tree: what hangar shows.
const LISTED: &[&str] = &[
    "xml", "xmf", "m3", "m3a", "xac", "xsm", "xpm", "ani", "bgf", "bgp", "bsg", "dds", "tga", "gz",
    "glb", "gltf",
];

fn ext(path: &str) -> String {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default()
}

/// What [`Workspace::index`] hands the page.
#[derive(serde::Serialize)]
struct Listing<'a> {
    models: Vec<&'a String>,
    files: usize,
    warnings: Vec<String>,
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

    /// Builds the game view (reads the catalogs' indexes) and lists what can be shown:
    /// `{"models": [paths], "files": N, "warnings": [..]}`.
    pub fn index(&mut self) -> Result<String, JsError> {
        let (view, warnings) =
            GameView::from_sources(&self.label, self.files.clone()).map_err(js_error)?;
        let all = view.files("").map_err(js_error)?;
        // A game or mod keeps its models under assets/: its other XMLs (scripts, libraries) are
        // no models. A loose folder's XMLs may be components anywhere.
        let game = all.iter().any(|p| p.starts_with("assets/"));
        // Loose files keep their own spelling in the list (the view compares in lower case).
        let spelled: std::collections::HashMap<String, &String> = self
            .files
            .iter()
            .map(|(p, _)| (p.to_lowercase().replace('\\', "/"), p))
            .collect();
        let models: Vec<&String> = all
            .iter()
            .filter(|p| {
                let e = ext(p);
                LISTED.contains(&e.as_str())
                    && (e != "xml" || !game || p.starts_with("assets/") || p.contains("/assets/"))
            })
            .map(|p| spelled.get(p).copied().unwrap_or(p))
            .collect();
        // Written straight from the borrowed paths: a game lists hundreds of thousands.
        let warnings: Vec<String> = warnings.iter().map(ToString::to_string).collect();
        let out = serde_json::to_string(&Listing {
            models,
            files: all.len(),
            warnings,
        })
        .map_err(js_error)?;
        self.view = Some(Arc::new(view));
        self.component.replace(None);
        Ok(out)
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
        if matches!(format, Format::Dds | Format::Png | Format::Tga) {
            let p = opened.write_as("shown.png", &opts).map_err(js_error)?;
            let (width, height) = hangar::formats::dds::png_size(&p.bytes).unwrap_or_default();
            let meta = json!({
                "kind": "image",
                "format": "texture",
                "info": opened.info(),
                "width": width,
                "height": height,
                "outputs": opened.outputs(),
                "warnings": warnings(&p.warnings),
            });
            return Ok(Shown {
                meta: meta.to_string(),
                bytes: p.bytes,
            });
        }
        let (kind, out) = match format {
            Format::AnarkBgf => ("bgf", "shown.xml"),
            Format::AnarkBgp => ("bgp", "shown.dot"),
            _ => ("glb", "shown.glb"),
        };
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
        opened
            .write_as(&output, &self.options(quantize, compress))
            .map(|c| c.bytes)
            .map_err(js_error)
    }

    /// True when the file at `path` goes with a model as a motion (`--motion`) by its name.
    pub fn is_motion(path: String) -> bool {
        MOTIONS.contains(&ext(&path).as_str())
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
        let listing: Value = serde_json::from_str(&ws.index().unwrap_or_default()).unwrap();
        eprintln!("300,000 entries indexed and listed in {:?}", t.elapsed());
        assert_eq!(listing["models"].as_array().map(Vec::len), Some(300_000));
        assert_eq!(listing["files"], 300_002);
    }
}
