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

mod modtools;

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
    /// The worker's id of each file it registered, by its path.
    ids: Vec<(String, u32)>,
    view: Option<Arc<GameView>>,
    /// The component last opened (its scene is built once for showing, checking, downloads).
    component: std::cell::RefCell<Option<(String, Rc<Opened>)>>,
    /// The names the view defines (`hangar find`), gathered at the first search.
    names: std::cell::RefCell<Option<Rc<hangar::FindIndex>>>,
}

/// Grows the wasm's memory to `mib` MiB (at most 1024) and writes every byte once, then frees it
/// to the allocator (which keeps it): the page's warm-up does so, since growing and first touching
/// the 46 MiB a 78-part ship's conversion takes cost the first conversion about a third of its time.
#[wasm_bindgen]
pub fn reserve_heap(mib: u32) -> u32 {
    let heap = vec![1u8; (mib.min(1024) as usize) << 20];
    // Read back, so the writing is not optimized away.
    heap.get(heap.len() / 2).copied().map_or(0, u32::from)
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

/// A path of the page as the view lists it (lower case, `/`), to find the file the user chose.
fn game_key(path: &str) -> String {
    path.to_lowercase().replace('\\', "/")
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

/// A download: the file's name (a `.zip` when it is several files) and its bytes.
#[wasm_bindgen]
pub struct Download {
    name: String,
    bytes: Vec<u8>,
}

#[wasm_bindgen]
impl Download {
    #[wasm_bindgen(getter)]
    pub fn name(&self) -> String {
        self.name.clone()
    }

    /// The bytes, handed over once.
    pub fn take_bytes(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.bytes)
    }
}

/// `output` and the files that go with it (paths relative to its folder) as one zip archive, the
/// way they lie on disk.
fn zipped(output: &str, c: hangar::Converted) -> zip::result::ZipResult<Vec<u8>> {
    let name = output.rsplit('/').next().unwrap_or(output).to_string();
    let others = c
        .files
        .iter()
        .map(|(p, b)| (p.to_string_lossy().replace('\\', "/"), &b[..]));
    zip_files(others.chain([(name, &c.bytes[..])]))
}

/// Files (path in the archive, bytes) as one zip archive, deflated.
fn zip_files<'a>(
    files: impl IntoIterator<Item = (String, &'a [u8])>,
) -> zip::result::ZipResult<Vec<u8>> {
    use std::io::Write;
    let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .compression_level(Some(1));
    for (path, bytes) in files {
        z.start_file(path, opts)?;
        z.write_all(bytes)?;
    }
    Ok(z.finish()?.into_inner())
}

/// Node, animation and image counts of a GLB's JSON chunk.
fn glb_counts(json: &Value) -> (usize, usize, usize) {
    let n = |k: &str| json.get(k).and_then(Value::as_array).map_or(0, Vec::len);
    (n("nodes"), n("animations"), n("images"))
}

/// The JSON chunk of a GLB (null when there is none).
fn glb_json(glb: &[u8]) -> Value {
    let len = glb
        .get(12..16)
        .and_then(|b| b.try_into().ok())
        .map_or(0, |b| u32::from_le_bytes(b) as usize);
    glb.get(20..20 + len)
        .and_then(|j| serde_json::from_slice(j).ok())
        .unwrap_or_default()
}

/// The glTF's materials (by index) that X4 draws with its multimat shader (the library says which
/// by name, as for Blender): the page picks each vertex's layer, smoothness, metalness and dirt
/// from its `_X4_MULTIMAT` set.
fn multimat_materials(json: &Value) -> Vec<usize> {
    let materials = json.get("materials").and_then(Value::as_array);
    (materials.into_iter().flatten().enumerate())
        .filter(|(_, m)| {
            let name = m.get("name").and_then(Value::as_str).unwrap_or("");
            hangar::is_multimat(name)
        })
        .map(|(i, _)| i)
        .collect()
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
    levels: hangar::pictures::Levels,
    mip: u32,
    surface: u32,
    mut opts: ConvertOptions,
) -> Result<Shown, JsError> {
    opts.textures.surfaces = hangar::pictures::Surfaces::One { mip, surface };
    let p = opened.write_as("shown.png", &opts).map_err(js_error)?;
    let (width, height) = hangar::pictures::png_size(&p.bytes).unwrap_or_default();
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
            ids: Vec::new(),
            view: None,
            component: Default::default(),
            names: Default::default(),
        }
    }

    /// A file of the page: its path inside what was opened, the worker's id for it, its size.
    pub fn add_file(&mut self, path: String, id: u32, len: f64) {
        let src = PageFile {
            id,
            len: len as u64,
            name: path.clone(),
        };
        self.ids.push((path.clone(), id));
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
        let spelled: std::collections::HashMap<String, &String> =
            self.files.iter().map(|(p, _)| (game_key(p), p)).collect();
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
        self.names.replace(None);
        Ok(Listed { meta, paths })
    }

    /// The conversion options of the page for the file at `path`: textures looked up in the
    /// opened files, and in the game root above it among them (a mod's `Base.SC2Data/`, which
    /// its models' texture paths start from).
    fn options(&self, path: &str, quantize: bool, compress: bool) -> ConvertOptions {
        let mut o = ConvertOptions::default();
        o.textures.views = self.view.iter().map(|v| GameView::clone(v)).collect();
        if let Some(root) = hangar::game_root_in(self.files.iter().map(|(p, _)| p.as_str()), path) {
            let inside: Vec<(String, SharedSource)> = (self.files.iter())
                .filter_map(|(p, s)| {
                    let rest = p.get(root.len()..)?;
                    (game_key(p.get(..root.len())?) == root).then(|| (rest.to_string(), s.clone()))
                })
                .collect();
            if let Ok((v, _)) = GameView::from_sources(&self.label, inside) {
                o.textures.views.push(v);
            }
        }
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
        let opts = self.options(&path, false, false);
        let warnings =
            |w: &[hangar::Warning]| w.iter().map(ToString::to_string).collect::<Vec<_>>();
        if let Some(levels) = opened.levels() {
            return picture(&opened, levels.map_err(js_error)?, 0, 0, opts);
        }
        let (kind, out) = shown_as(format);
        let c = opened.write_as(out, &opts).map_err(js_error)?;
        let json = if kind == "glb" {
            glb_json(&c.bytes)
        } else {
            Value::Null
        };
        let (nodes, animations, images) = glb_counts(&json);
        // The glTF's materials (by index: the scene's, in order) that show StarCraft II's team
        // colour where their diffuse's alpha is 0; asked only where there are textures to show.
        let team: Vec<usize> = if images > 0 {
            opened.to_scene().map_or_else(
                |_| Vec::new(),
                |(scene, _)| {
                    (scene.materials.iter().enumerate())
                        .filter(|(_, m)| m.look.team_colour)
                        .map(|(i, _)| i)
                        .collect()
                },
            )
        } else {
            Vec::new()
        };
        let mut all = warnings(opened.warnings());
        all.extend(warnings(&c.warnings));
        let meta = json!({
            "kind": kind,
            "format": format.name(),
            "info": opened.info(),
            "nodes": nodes,
            "animations": animations,
            "teamColour": team,
            "multimat": multimat_materials(&json),
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
        picture(
            &opened,
            levels,
            mip,
            surface,
            self.options(&path, false, false),
        )
    }

    /// Which of the outputs hangar names for the file at `path` (with `motions`) it writes from
    /// it, as a JSON array of extensions: the download buttons. A file shown as a GLB has a scene,
    /// so its glTF forms are written; every other output is tried (the bytes are dropped), since
    /// a format's family names forms a given file cannot become (an .xac is no .xsm), and kept
    /// when it is written (one with more files downloads as a `.zip`).
    pub fn writable(&self, path: String, motions: Vec<String>) -> Result<String, JsError> {
        let opened = self.opened(&path, &motions).map_err(js_error)?;
        let scene = opened.levels().is_none() && shown_as(opened.format()).0 == "glb";
        let opts = self.options(&path, false, false);
        let ok: Vec<&str> = opened
            .outputs()
            .into_iter()
            .filter(|e| match *e {
                "glb" | "gltf" => scene,
                "obj" => scene && motions.is_empty(),
                e => opened.write_as(format!("download.{e}"), &opts).is_ok(),
            })
            .collect();
        Ok(json!(ok).to_string())
    }

    /// `hangar find QUERY --json` over the opened folder (a game, an extension, a game with its
    /// extensions): what it defines whose id or in-game name (English) matches `query`, best
    /// first, as `[{"kind", "id", "name", "file", "extension"}...]`. The names are gathered at
    /// the first search and kept until other files are opened.
    pub fn find(&self, query: String, kind: Option<String>) -> Result<String, JsError> {
        let view = self
            .view
            .as_ref()
            .ok_or_else(|| js_error(page_error(&self.label, "no files opened")))?;
        let kind = kind
            .filter(|k| !k.is_empty())
            .map(|k| hangar::FoundKind::parse(&k))
            .transpose()
            .map_err(js_error)?;
        let options = hangar::FindOptions {
            kind,
            cache: false,
            ..Default::default()
        };
        let make = || {
            Rc::new(hangar::FindIndex::of_views(
                std::slice::from_ref(&**view),
                &options,
            ))
        };
        // Texts are gathered only for a text search: that index is not kept.
        let index = match kind {
            Some(hangar::FoundKind::Text) => make(),
            _ => Rc::clone(self.names.borrow_mut().get_or_insert_with(make)),
        };
        let found = index.find(&query, kind).map_err(js_error)?;
        serde_json::to_string(&found).map_err(js_error)
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

    /// What kind of mod the opened folder is (`"x4"`, `"sc2"`), or none when it is no mod (see
    /// [`hangar::mod_kind_of_files`]).
    pub fn mod_kind(&self) -> Option<String> {
        let kind =
            hangar::mod_kind_of_files(&self.label, self.files.iter().map(|(p, _)| p.as_str()))?;
        Some(
            match kind {
                hangar::ModKind::X4 => "x4",
                hangar::ModKind::Sc2 => "sc2",
            }
            .into(),
        )
    }

    /// The opened folder checked as a mod (`hangar validate DIR`, [`hangar::check_mod_files`]):
    /// `meta` (JSON: kind, files, references, errors, warnings and the findings as `validate
    /// DIR --json` lists them) and, as the bytes, the report page (`--report`) in UTF-8.
    pub fn check_mod(&self) -> Result<Shown, JsError> {
        let checked =
            hangar::check_mod_files(&self.label, self.files.clone(), None).map_err(js_error)?;
        let errors = checked
            .findings
            .iter()
            .filter(|f| f.severity == hangar::Severity::Error)
            .count();
        let meta = json!({
            "kind": checked.kind,
            "files": checked.files.len(),
            "references": checked.links.len(),
            "errors": errors,
            "warnings": checked.findings.len() - errors,
            "findings": checked.findings,
        });
        Ok(Shown {
            meta: meta.to_string(),
            bytes: checked.to_html().into_bytes(),
        })
    }

    /// The file at `path` (with `motions`) converted to `output` (a name whose extension picks
    /// the type: .glb, .gltf, .obj, .json, .png, or a game format), a glTF encoded as asked. An
    /// output that goes with more files (a component's XML, its `_data/` folder and .ani) comes
    /// as one `.zip` of them all, in their folders.
    pub fn convert(
        &self,
        path: String,
        motions: Vec<String>,
        output: String,
        quantize: bool,
        compress: bool,
    ) -> Result<Download, JsError> {
        let c = self.converted(&path, &motions, &output, quantize, compress)?;
        if c.files.is_empty() {
            return Ok(Download {
                name: output,
                bytes: c.bytes,
            });
        }
        let stem = output.rsplit_once('.').map_or(output.as_str(), |(s, _)| s);
        Ok(Download {
            name: format!("{stem}.zip"),
            bytes: zipped(&output, c)
                .map_err(|e| js_error(format!("{output}: packing the zip: {e}")))?,
        })
    }

    fn converted(
        &self,
        path: &str,
        motions: &[String],
        output: &str,
        quantize: bool,
        compress: bool,
    ) -> Result<hangar::Converted, JsError> {
        let opened = self.opened(path, motions).map_err(js_error)?;
        opened
            .write_as(output, &self.options(path, quantize, compress))
            .map_err(js_error)
    }

    /// The file at `path` converted to `output` (see [`Workspace::convert`]), added to the
    /// workspace with the files that go with it, by their paths beside `output` (index again
    /// to show them). The page's warm-up makes its files so.
    pub fn add_converted(&mut self, path: String, output: String) -> Result<(), JsError> {
        let c = self.converted(&path, &[], &output, false, false)?;
        self.add_written(&output, c);
        Ok(())
    }

    /// A made-up model for the page's warm-up, added as `output` (a game format, written as
    /// hangar writes it from a scene: an XMF's buffers are zlib streams): a grid of `n` x `n`
    /// vertices with normals and UVs, so the readers' and writers' loops run long enough for the
    /// browser to optimize them, as a ship's parts make them run. At most 512 x 512.
    pub fn add_warm_up_model(&mut self, output: String, n: u32) -> Result<(), JsError> {
        let n = n.clamp(2, 512);
        let mut vertices = hangar::model::Vertices::default();
        let (mut normals, mut uvs) = (Vec::new(), Vec::new());
        for i in 0..n * n {
            let (x, z) = ((i % n) as f32 / n as f32, (i / n) as f32 / n as f32);
            let y = (x * 12.0).sin() * (z * 9.0).cos() * 0.1;
            vertices.positions.push([x, y, z]);
            normals.push([0.0, 1.0, 0.0]);
            uvs.push([x, z]);
        }
        vertices.normals = Some(normals);
        vertices.uvs = vec![uvs];
        let mut indices = Vec::new();
        for r in 0..n - 1 {
            for c in 0..n - 1 {
                let v = r * n + c;
                indices.extend([v, v + n, v + 1, v + 1, v + n, v + n + 1]);
            }
        }
        let mut scene = hangar::model::Scene::default();
        scene.meshes.push(hangar::model::Mesh {
            name: "grid".into(),
            vertices,
            primitives: vec![hangar::model::Primitive {
                indices,
                material: None,
            }],
            ..Default::default()
        });
        let mut node = hangar::model::Node::new("grid");
        node.mesh = Some(0);
        scene.nodes.push(node);
        let c =
            hangar::write_scene(&scene, &output, &ConvertOptions::default()).map_err(js_error)?;
        self.add_written(&output, c);
        Ok(())
    }

    /// `output` as written (`c`) and the files beside it, added by their paths.
    fn add_written(&mut self, output: &str, c: hangar::Converted) {
        let dir = output.rsplit_once('/').map_or("", |(d, _)| d);
        for (p, bytes) in c.files {
            let p = p.to_string_lossy().replace('\\', "/");
            let p = if dir.is_empty() {
                p
            } else {
                format!("{dir}/{p}")
            };
            self.add_bytes(p, bytes);
        }
        self.add_bytes(output.to_string(), c.bytes);
    }

    /// The worker's ids of the opened files that showing the file at `path` reads (see
    /// [`hangar::files_read`]): the page reads them together before asking, since one read at a
    /// time costs the browser about a millisecond each. Files inside a catalog are left out (their
    /// `.dat` is never read whole).
    pub fn reads(&self, path: String) -> Vec<u32> {
        let Some(view) = self.view.as_ref() else {
            return Vec::new();
        };
        let ids: std::collections::HashMap<String, u32> =
            self.ids.iter().map(|(p, id)| (game_key(p), *id)).collect();
        hangar::files_read(view, &path)
            .iter()
            .filter_map(|f| ids.get(f).copied())
            .collect()
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

    /// A GLB of only a JSON chunk.
    fn glb_of(json: &[u8]) -> Vec<u8> {
        let mut glb = b"glTF".to_vec();
        glb.extend(2u32.to_le_bytes());
        glb.extend(((20 + json.len()) as u32).to_le_bytes());
        glb.extend((json.len() as u32).to_le_bytes());
        glb.extend(b"JSON");
        glb.extend(json);
        glb
    }

    #[test]
    fn glb_counts_read_the_json_chunk() {
        let json = br#"{"nodes":[{},{},{}],"animations":[{}],"images":[{},{}]}"#;
        let glb = glb_of(json);
        assert_eq!(glb_counts(&glb_json(&glb)), (3, 1, 2));
        assert_eq!(glb_counts(&glb_json(b"glTF")), (0, 0, 0));
    }

    #[test]
    fn multimat_materials_are_named_by_the_library() {
        let json = br#"{"materials":[{"name":"generic.generic_p1_hulltexture"},{"name":"p1.multimat"},{},{"name":"p2multimat.p2_multimat_01"}]}"#;
        let glb = glb_of(json);
        assert_eq!(multimat_materials(&glb_json(&glb)), [1, 3]);
        assert!(multimat_materials(&glb_json(b"glTF")).is_empty());
    }
}

#[cfg(test)]
mod downloads {
    use super::*;

    fn sample() -> Workspace {
        let mut ws = Workspace::new("files".into());
        let xmf = std::fs::read("../samples/wedge-lod0.xmf").unwrap();
        ws.add_bytes("wedge-lod0.xmf".into(), xmf);
        assert!(ws.index().is_ok());
        ws
    }

    /// A model downloaded as a component: one .zip of the XML and its data folder, as written.
    #[test]
    fn a_component_download_is_a_zip_of_its_files() {
        let ws = sample();
        let Ok(mut d) = ws.convert(
            "wedge-lod0.xmf".into(),
            vec![],
            "wedge.xml".into(),
            false,
            false,
        ) else {
            panic!("not converted")
        };
        assert_eq!(d.name(), "wedge.zip");
        let bytes = d.take_bytes();
        let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
        let names: Vec<String> = zip.file_names().map(str::to_string).collect();
        assert_eq!(names, ["wedge_data/wedge-lod0-lod0.xmf", "wedge.xml"]);
        let Ok(want) = ws.converted("wedge-lod0.xmf", &[], "wedge.xml", false, false) else {
            panic!("not converted")
        };
        let mut xml = Vec::new();
        std::io::Read::read_to_end(&mut zip.by_name("wedge.xml").unwrap(), &mut xml).unwrap();
        assert_eq!(xml, want.bytes);
        let mut xmf = Vec::new();
        std::io::Read::read_to_end(
            &mut zip.by_name("wedge_data/wedge-lod0-lod0.xmf").unwrap(),
            &mut xmf,
        )
        .unwrap();
        assert_eq!(xmf, want.files[0].1);
        // One file stays itself.
        let Ok(mut one) = ws.convert(
            "wedge-lod0.xmf".into(),
            vec![],
            "w.xmf".into(),
            false,
            false,
        ) else {
            panic!("not converted")
        };
        assert_eq!(one.name(), "w.xmf");
        assert_eq!(
            one.take_bytes(),
            std::fs::read("../samples/wedge-lod0.xmf").unwrap()
        );
    }

    /// The warm-up's made-up grid: n x n vertices and 2 (n-1)^2 triangles, written as a
    /// compressed XMF that reads back as such.
    #[test]
    fn the_warm_up_grid_is_a_real_model() {
        let mut ws = Workspace::new("warm-up".into());
        assert!(ws.add_warm_up_model("grid.xmf".into(), 96).is_ok());
        assert!(ws.index().is_ok());
        let Ok(s) = ws.show("grid.xmf".into(), vec![]) else {
            panic!("not shown")
        };
        let meta: Value = serde_json::from_str(&s.meta()).unwrap();
        assert_eq!(meta["info"]["vertices"], 96 * 96);
        assert_eq!(meta["info"]["triangles"], 2 * 95 * 95);
        assert_eq!(reserve_heap(1), 1);
    }

    /// The warm-up's component: converted into the workspace, shown from it; what showing it
    /// reads is its XML and its part (the page's ids; files given as bytes have none).
    #[test]
    fn a_converted_component_is_added_and_shown() {
        let mut ws = sample();
        assert!(ws
            .add_converted("wedge-lod0.xmf".into(), "ship/wedge.xml".into())
            .is_ok());
        assert!(ws.index().is_ok());
        let Ok(s) = ws.show("ship/wedge.xml".into(), vec![]) else {
            panic!("not shown")
        };
        let meta: Value = serde_json::from_str(&s.meta()).unwrap();
        assert_eq!(meta["format"], "X4 component XML");
        assert_eq!(meta["info"]["vertices"], 32);
        let mut page = Workspace::new("folder".into());
        page.add_file("ship/wedge.xml".into(), 7, 10.0);
        page.add_file("ship/wedge_data/wedge-lod0-lod0.xmf".into(), 8, 10.0);
        page.add_file("other.xmf".into(), 9, 10.0);
        page.view = Some(Arc::new(
            GameView::from_sources("folder", ws.files.clone())
                .unwrap()
                .0,
        ));
        let mut ids = page.reads("ship/wedge.xml".into());
        ids.sort();
        assert_eq!(ids, [7, 8]);
        assert_eq!(page.reads("other.xmf".into()), [9]);
    }
}

#[cfg(test)]
mod mods {
    use super::*;

    /// A dropped folder with a `content.xml` at its root is an X4 mod, checked whole as the
    /// library checks it; one without is none.
    #[test]
    fn a_mod_folder_is_checked_whole() {
        let mut ws = Workspace::new("my_mod".into());
        ws.add_bytes(
            "content.xml".into(),
            br#"<content id="my_mod" version="100" name="m"/>"#.to_vec(),
        );
        ws.add_bytes("libraries/wares.xml".into(), b"<diff><add sel=".to_vec());
        assert_eq!(ws.mod_kind().as_deref(), Some("x4"));
        let want = hangar::check_mod_files("my_mod", ws.files.clone(), None).unwrap();
        let Ok(mut shown) = ws.check_mod() else {
            panic!("not checked")
        };
        let meta: Value = serde_json::from_str(&shown.meta()).unwrap();
        assert_eq!(meta["kind"], "x4");
        assert_eq!(meta["files"], 2);
        assert!(meta["errors"].as_u64().unwrap() >= 1);
        assert_eq!(
            meta["findings"].as_array().unwrap().len(),
            want.findings.len()
        );
        assert_eq!(shown.take_bytes(), want.to_html().into_bytes());
        let mut ships = Workspace::new("ships".into());
        ships.add_bytes("a/content.xml".into(), Vec::new());
        assert_eq!(ships.mod_kind(), None);
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

#[cfg(test)]
mod archives {
    use super::*;

    /// A StarCraft II map dropped as one MPQ archive: listed like a folder (its tables read, no
    /// file), a model inside shown, and the map checked whole as an SC2 mod.
    #[test]
    fn a_dropped_map_archive_is_listed_shown_and_checked() {
        let xmf = std::fs::read("../samples/wedge-lod0.xmf").unwrap();
        let files: Vec<(String, &[u8])> = vec![
            ("Assets\\Models\\Wedge-lod0.xmf".into(), &xmf),
            (
                "Base.SC2Data\\GameData\\ActorData.xml".into(),
                b"<Catalog><CActorUnit id=\"W\" Model=\"Assets\\Models\\Wedge-lod0.xmf\"/></Catalog>",
            ),
        ];
        let map = hangar::archives::build(&files).unwrap();
        let mut ws = Workspace::new("Wedge.SC2Map".into());
        ws.add_bytes("Wedge.SC2Map".into(), map);
        let Ok(mut listed) = ws.index() else {
            panic!("the archive was not indexed")
        };
        assert_eq!(listed.take_paths(), "assets/models/wedge-lod0.xmf");
        let Ok(s) = ws.show("assets/models/wedge-lod0.xmf".into(), vec![]) else {
            panic!("not shown")
        };
        let meta: Value = serde_json::from_str(&s.meta()).unwrap();
        assert_eq!(meta["info"]["vertices"], 32);
        assert_eq!(ws.mod_kind().as_deref(), Some("sc2"));
        let Ok(shown) = ws.check_mod() else {
            panic!("not checked")
        };
        let meta: Value = serde_json::from_str(&shown.meta()).unwrap();
        assert_eq!(meta["kind"], "sc2");
        assert_eq!(meta["files"], 2, "{meta}");
    }
}
