//! `hangar._native`: the hangar library for Python. Scenes cross as plain dicts and lists holding
//! numpy arrays (the `hangar` package wraps them in classes); extras and reports cross as JSON text.
//! No format logic lives here: see [`calls`].

mod calls;

use hangar::model::{
    Animation, Camera, Channel, CustomAttribute, Interpolation, Light, LightKind, Material, Mesh,
    MorphTarget, Node, Primitive, Property, Role, Scene, Skin, Textures, Vertices,
};
use numpy::{PyArray1, PyArrayMethods, PyReadonlyArrayDyn, PyUntypedArrayMethods};
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use serde_json::{Map, Value};
use std::path::PathBuf;

pyo3::create_exception!(
    hangar,
    Error,
    PyException,
    "A file hangar cannot read or write; the message is the one the command line prints."
);

fn err(e: impl std::fmt::Display) -> PyErr {
    Error::new_err(e.to_string())
}

fn json_text(v: &impl serde::Serialize) -> PyResult<String> {
    serde_json::to_string(v).map_err(err)
}

/// `hangar info --json` of one file, as JSON text (notes left out, `file` added, as the CLI does).
#[pyfunction]
fn info(py: Python<'_>, path: PathBuf) -> PyResult<String> {
    let info = py.detach(|| calls::info(&path)).map_err(err)?;
    let mut info = info;
    info.warnings.retain(|w| !w.note);
    let mut v = serde_json::to_value(&info).map_err(err)?;
    v["file"] = path.display().to_string().into();
    json_text(&v)
}

/// `hangar validate --json` findings of one file, as JSON text.
#[pyfunction]
fn validate(py: Python<'_>, path: PathBuf) -> PyResult<String> {
    let findings = py.detach(|| calls::validate(&path));
    json_text(&findings)
}

/// `hangar convert`; returns the warnings as JSON text.
#[pyfunction]
#[pyo3(signature = (input, output, motions, quantize, compress, modl_version, textures, original=None))]
#[allow(clippy::too_many_arguments)]
fn convert(
    py: Python<'_>,
    input: PathBuf,
    output: PathBuf,
    motions: Vec<PathBuf>,
    quantize: bool,
    compress: bool,
    modl_version: Option<u32>,
    textures: &str,
    original: Option<PathBuf>,
) -> PyResult<String> {
    let mode = match textures {
        "embed" => hangar::TextureMode::Embed,
        "copy" => hangar::TextureMode::Copy,
        "link" => hangar::TextureMode::Link,
        "none" => hangar::TextureMode::None,
        "write" => hangar::TextureMode::Write,
        other => {
            return Err(err(format!(
                "textures={other:?}: use embed, copy, link, none or write"
            )))
        }
    };
    let warnings = py
        .detach(|| {
            let mut opts = calls::options(&input, mode, quantize, compress, modl_version)?;
            opts.original = original;
            calls::convert(&input, &output, &motions, &opts)
        })
        .map_err(err)?;
    json_text(&warnings)
}

/// The neutral scene of a file (with the clips of `motions`) as a dict of lists and numpy arrays,
/// and the warnings (JSON text). With `textures`, the dict's `pictures` holds the PNG bytes of
/// the materials' textures by the path they name.
#[pyfunction]
#[pyo3(signature = (path, motions=Vec::new(), textures=false, edges=false))]
fn open(
    py: Python<'_>,
    path: PathBuf,
    motions: Vec<PathBuf>,
    textures: bool,
    edges: bool,
) -> PyResult<(Py<PyDict>, String)> {
    let (scene, pictures, warnings, edges) = py
        .detach(|| -> hangar::Result<_> {
            let (scene, pictures, warnings) = calls::scene(&path, &motions, textures)?;
            let edges = if edges {
                calls::edges(&scene)
            } else {
                Vec::new()
            };
            Ok((scene, pictures, warnings, edges))
        })
        .map_err(err)?;
    let d = scene_to_py(py, scene, edges)?;
    let p = PyDict::new(py);
    for (k, v) in &pictures {
        p.set_item(k, pyo3::types::PyBytes::new(py, v))?;
    }
    d.set_item("pictures", p)?;
    Ok((d.unbind(), json_text(&warnings)?))
}

/// Writes a scene dict (as [`open`] gives) as `output`; `original` is the file it was read from
/// (a component's other data files are carried from there). With `patch`, a component `.xml` is
/// written as an X4 `<diff>` patch against `original`. Returns the warnings as JSON text.
#[pyfunction]
#[pyo3(signature = (scene, output, original=None, patch=false))]
fn write(
    py: Python<'_>,
    scene: &Bound<'_, PyDict>,
    output: PathBuf,
    original: Option<PathBuf>,
    patch: bool,
) -> PyResult<String> {
    let scene = scene_from_py(scene)?;
    let warnings = py
        .detach(|| calls::write(&scene, &output, original.as_deref(), patch))
        .map_err(err)?;
    json_text(&warnings)
}

/// The files hangar shows in a game or mod folder (or one `.cat`): paths for `GAME::path`, sorted.
#[pyfunction]
fn models(py: Python<'_>, game: PathBuf) -> PyResult<Vec<String>> {
    py.detach(|| calls::models(&game)).map_err(err)
}

/// `hangar find`: what the game, extension or catalog folders `games` define whose id or
/// in-game name matches `query`, best first, as JSON text (a list of kind, id, name, file,
/// extension).
#[pyfunction]
#[pyo3(signature = (query, games, kind=None, lang=44))]
fn find(
    py: Python<'_>,
    query: &str,
    games: Vec<PathBuf>,
    kind: Option<&str>,
    lang: u32,
) -> PyResult<String> {
    let kind = kind
        .map(hangar::FoundKind::parse)
        .transpose()
        .map_err(err)?;
    let options = hangar::FindOptions {
        kind,
        lang,
        cache: true,
    };
    let found = py
        .detach(|| hangar::find(&games, query, &options))
        .map_err(err)?;
    json_text(&found)
}

/// The component XML a data folder belongs to (`ship_data/` -> `ship.xml` beside it), or None.
#[pyfunction]
fn component_of(folder: PathBuf) -> Option<PathBuf> {
    calls::component_of(&folder)
}

/// The fingerprint of byte arrays (numpy uint8, one dimension): each one's Adler-32 and length,
/// `xxxxxxxx:len` joined by `/`, as `zlib.adler32` gives them; computed without the GIL.
#[pyfunction]
fn digest(py: Python<'_>, arrays: Vec<numpy::PyReadonlyArray1<'_, u8>>) -> PyResult<String> {
    let slices = arrays
        .iter()
        .map(|a| a.as_slice().map_err(err))
        .collect::<PyResult<Vec<&[u8]>>>()?;
    Ok(py.detach(|| calls::digest(&slices)))
}

/// A texture edit as Python hands it: (material, slot, key, width, height, RGBA bytes with rows top
/// to bottom; an empty key: a new material's image).
type PyEdit<'py> = (
    String,
    String,
    String,
    u32,
    u32,
    numpy::PyReadonlyArray1<'py, u8>,
);

/// Python's texture edits as the library's.
fn edits_from_py(edits: &[PyEdit<'_>]) -> PyResult<Vec<hangar::TextureEdit>> {
    let mut list = Vec::with_capacity(edits.len());
    for (material, slot, key, width, height, rgba) in edits {
        let slot = hangar::Slot::from_name(slot)
            .ok_or_else(|| err(format!("material {material:?}: no texture slot {slot:?}")))?;
        list.push(hangar::TextureEdit {
            material: material.clone(),
            slot,
            key: key.clone(),
            image: hangar::Image {
                width: *width,
                height: *height,
                rgba: rgba.as_slice().map_err(err)?.to_vec(),
            },
        });
    }
    Ok(list)
}

/// Writes textures changed outside the game back as the game reads them, below the folder a model
/// exported to `output` (from `source`) is the root of. `edits`: (material, slot, key, width,
/// height, RGBA bytes with rows top to bottom; an empty key: a new material's image). Returns
/// (file, what) of each file written, then (None, warning) of each image not written.
#[pyfunction]
fn write_textures(
    py: Python<'_>,
    source: PathBuf,
    output: PathBuf,
    edits: Vec<PyEdit<'_>>,
) -> PyResult<Vec<(Option<PathBuf>, String)>> {
    let list = edits_from_py(&edits)?;
    let (wrote, warnings) = py
        .detach(|| hangar::write_textures(&source, &output, &list))
        .map_err(err)?;
    let files = wrote.into_iter().map(|w| (Some(w.file), w.what));
    Ok(files
        .chain(warnings.into_iter().map(|w| (None, w.to_string())))
        .collect())
}

/// The name a material new in an export to `output` takes (`hangar::x4_material_name`).
#[pyfunction]
fn material_name(output: PathBuf, name: String) -> String {
    hangar::x4_material_name(&output, &name).unwrap_or(name)
}

/// Whether the X4 material `name` is a multimat one (its colour set `multimat` picks the layer).
#[pyfunction]
fn is_multimat(name: String) -> bool {
    hangar::is_multimat(&name)
}

/// `hangar new ship`: a ship built as meshes and empties (`scene`, a dict as [`open`] gives, or
/// `path`, a glTF) becomes an X4 extension written under `directory`, cloned from `template` (a
/// ship macro file, or a macro name found through `game`). `progress(done, total)` is called on
/// this thread as parts are made; after an exception it raises, nothing is
/// written. `textures`: materials the game lacks written with their `images` (texture edits as
/// [`write_textures`] takes them, by the scene's material names; a glTF `path`'s own when none).
/// Returns the paths written and the warnings as JSON text.
#[pyfunction]
/// `ship_only=false`: any class of template (`hangar new component`).
#[pyo3(signature = (scene, path, directory, template, ship_id, ship_name=None, description=None, lods=2, game=None, pack=false, force=false, progress=None, textures=true, images=None, ship_only=true))]
#[allow(clippy::too_many_arguments)]
fn new_ship(
    py: Python<'_>,
    scene: Option<&Bound<'_, PyDict>>,
    path: Option<PathBuf>,
    directory: PathBuf,
    template: String,
    ship_id: String,
    ship_name: Option<String>,
    description: Option<String>,
    lods: u32,
    game: Option<PathBuf>,
    pack: bool,
    force: bool,
    progress: Option<Py<PyAny>>,
    textures: bool,
    images: Option<Vec<PyEdit<'_>>>,
    ship_only: bool,
) -> PyResult<(Vec<PathBuf>, String)> {
    if lods > 3 {
        return Err(err(format!("lods={lods}: 0 to 3 LODs below lod0")));
    }
    let scene = scene.map(scene_from_py).transpose()?;
    let mut spec = hangar::NewComponent::new(template, ship_id);
    spec.name = ship_name;
    spec.description = description;
    spec.lods = lods;
    spec.pack = pack;
    spec.textures = textures;
    spec.images = edits_from_py(images.as_deref().unwrap_or_default())?;
    let args = calls::NewShipArgs {
        directory,
        spec,
        game,
        force,
        ship_only,
    };
    let mut report = |done: usize, total: usize| -> PyResult<()> {
        match &progress {
            Some(f) => Python::attach(|py| f.call1(py, (done, total)).map(drop)),
            None => Ok(()),
        }
    };
    let (written, warnings) = py
        .detach(|| calls::new_ship(scene, path.as_deref(), args, &mut report))
        .map_err(|e| match e {
            calls::NewShipError::Hangar(e) => err(e),
            calls::NewShipError::Stopped(e) => e,
        })?;
    Ok((written, json_text(&warnings)?))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("Error", m.py().get_type::<Error>())?;
    m.add_function(wrap_pyfunction!(info, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(convert, m)?)?;
    m.add_function(wrap_pyfunction!(open, m)?)?;
    m.add_function(wrap_pyfunction!(write, m)?)?;
    m.add_function(wrap_pyfunction!(digest, m)?)?;
    m.add_function(wrap_pyfunction!(models, m)?)?;
    m.add_function(wrap_pyfunction!(find, m)?)?;
    m.add_function(wrap_pyfunction!(component_of, m)?)?;
    m.add_function(wrap_pyfunction!(write_textures, m)?)?;
    m.add_function(wrap_pyfunction!(material_name, m)?)?;
    m.add_function(wrap_pyfunction!(is_multimat, m)?)?;
    m.add_function(wrap_pyfunction!(new_ship, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}

// ---- scene -> Python ----

/// `rows` of `N` values as an (len, N) array that takes over their memory.
fn owned_rows<'py, T: numpy::Element + bytemuck::Pod, const N: usize>(
    py: Python<'py>,
    rows: Vec<[T; N]>,
) -> PyResult<Bound<'py, PyAny>> {
    let len = rows.len();
    // [T; N] and T share their alignment, so the cast keeps the allocation; should it ever fail,
    // the values are copied.
    let flat: Vec<T> = bytemuck::allocation::try_cast_vec(rows)
        .unwrap_or_else(|(_, rows)| bytemuck::cast_slice::<[T; N], T>(&rows).to_vec());
    Ok(PyArray1::from_vec(py, flat).reshape([len, N])?.into_any())
}

fn owned_opt_rows<'py, T: numpy::Element + bytemuck::Pod, const N: usize>(
    py: Python<'py>,
    v: Option<Vec<[T; N]>>,
) -> PyResult<Bound<'py, PyAny>> {
    match v {
        Some(v) => owned_rows(py, v),
        None => Ok(py.None().into_bound(py)),
    }
}

fn extras_text(m: &Map<String, Value>) -> PyResult<String> {
    json_text(m)
}

/// `edges`: each mesh's [`hangar::model::Edges`] when asked for (else empty).
fn scene_to_py<'py>(
    py: Python<'py>,
    mut s: Scene,
    edges: Vec<hangar::model::Edges>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("name", &s.name)?;
    let nodes = PyList::empty(py);
    for n in &s.nodes {
        let x = PyDict::new(py);
        x.set_item("name", &n.name)?;
        x.set_item("parent", n.parent)?;
        x.set_item("translation", n.translation.to_array())?;
        x.set_item("rotation", n.rotation.to_array())?;
        x.set_item("scale", n.scale.to_array())?;
        x.set_item("mesh", n.mesh)?;
        x.set_item("skin", n.skin)?;
        x.set_item("light", n.light)?;
        x.set_item("camera", n.camera)?;
        x.set_item("collision", n.role == Role::Collision)?;
        x.set_item("extras", extras_text(&n.extras)?)?;
        nodes.append(x)?;
    }
    d.set_item("nodes", nodes)?;
    let meshes = PyList::empty(py);
    // The meshes' arrays move into numpy as they are (no copy).
    for (m, e) in std::mem::take(&mut s.meshes).into_iter().zip(
        edges
            .into_iter()
            .map(Some)
            .chain(std::iter::repeat_with(|| None)),
    ) {
        let x = PyDict::new(py);
        let v = m.vertices;
        if let Some(e) = e {
            x.set_item("edges", owned_rows(py, e.verts)?)?;
            x.set_item("corner_edges", PyArray1::from_vec(py, e.of_corners))?;
        }
        x.set_item("name", &m.name)?;
        x.set_item("positions", owned_rows(py, v.positions)?)?;
        x.set_item("normals", owned_opt_rows(py, v.normals)?)?;
        x.set_item("tangents", owned_opt_rows(py, v.tangents)?)?;
        let uvs = PyList::empty(py);
        for u in v.uvs {
            uvs.append(owned_rows(py, u)?)?;
        }
        x.set_item("uvs", uvs)?;
        let colors = PyList::empty(py);
        for c in v.colors {
            colors.append(owned_rows(py, c)?)?;
        }
        x.set_item("colors", colors)?;
        x.set_item("color_names", v.color_names)?;
        let custom = PyList::empty(py);
        for c in v.custom {
            custom.append((c.name, owned_rows(py, c.values)?))?;
        }
        x.set_item("custom", custom)?;
        x.set_item("joints", owned_opt_rows(py, v.joints)?)?;
        x.set_item("weights", owned_opt_rows(py, v.weights)?)?;
        let prims = PyList::empty(py);
        for p in m.primitives {
            let q = PyDict::new(py);
            q.set_item("indices", PyArray1::from_vec(py, p.indices))?;
            q.set_item("material", p.material)?;
            prims.append(q)?;
        }
        x.set_item("primitives", prims)?;
        let targets = PyList::empty(py);
        for t in m.morph_targets {
            let q = PyDict::new(py);
            q.set_item("name", &t.name)?;
            q.set_item("positions", owned_rows(py, t.positions)?)?;
            q.set_item("normals", owned_opt_rows(py, t.normals)?)?;
            targets.append(q)?;
        }
        x.set_item("morph_targets", targets)?;
        x.set_item("extras", extras_text(&m.extras)?)?;
        meshes.append(x)?;
    }
    d.set_item("meshes", meshes)?;
    let materials = PyList::empty(py);
    for m in &s.materials {
        let x = PyDict::new(py);
        x.set_item("name", &m.name)?;
        let t = &m.textures;
        x.set_item("base_color", &t.base_color)?;
        x.set_item("normal", &t.normal)?;
        x.set_item("emissive", &t.emissive)?;
        x.set_item("occlusion", &t.occlusion)?;
        x.set_item("specular", &t.specular)?;
        x.set_item("metal", &t.metal)?;
        x.set_item("smooth", &t.smooth)?;
        x.set_item("look", json_text(&m.look)?)?;
        // The images the material is drawn with: (slot, key of the picture).
        let images: Vec<(&str, String)> = hangar::material_images(m)
            .into_iter()
            .map(|(slot, recipe)| (slot.name(), recipe.key()))
            .collect();
        x.set_item("images", images)?;
        x.set_item("extras", extras_text(&m.extras)?)?;
        materials.append(x)?;
    }
    d.set_item("materials", materials)?;
    let skins = PyList::empty(py);
    for k in std::mem::take(&mut s.skins) {
        let x = PyDict::new(py);
        x.set_item("name", &k.name)?;
        x.set_item("joints", &k.joints)?;
        x.set_item("inverse_bind", owned_rows(py, k.inverse_bind)?)?;
        skins.append(x)?;
    }
    d.set_item("skins", skins)?;
    let animations = PyList::empty(py);
    for a in &s.animations {
        let x = PyDict::new(py);
        x.set_item("name", &a.name)?;
        x.set_item("extras", extras_text(&a.extras)?)?;
        let channels = PyList::empty(py);
        for c in &a.channels {
            // Python takes step and linear keys: a cubic spline as its curve sampled.
            let c = c.sampled();
            let q = PyDict::new(py);
            q.set_item("node", c.node)?;
            q.set_item("property", property_name(c.property))?;
            q.set_item(
                "interpolation",
                match c.interpolation {
                    Interpolation::Step => "STEP",
                    Interpolation::Linear | Interpolation::CubicSpline => "LINEAR",
                },
            )?;
            q.set_item("times", PyArray1::from_slice(py, &c.times))?;
            let width = match c.property {
                Property::Rotation => 4,
                Property::Weights => (c.values.len() / c.times.len().max(1)).max(1),
                _ => 3,
            };
            let values = PyArray1::from_slice(py, &c.values);
            let values = if c.values.len() % width == 0 {
                values.reshape([c.values.len() / width, width])?.into_any()
            } else {
                values.into_any()
            };
            q.set_item("values", values)?;
            channels.append(q)?;
        }
        x.set_item("channels", channels)?;
        animations.append(x)?;
    }
    d.set_item("animations", animations)?;
    let lights = PyList::empty(py);
    for l in &s.lights {
        let x = PyDict::new(py);
        x.set_item("name", &l.name)?;
        let (kind, inner, outer) = match l.kind {
            LightKind::Directional => ("directional", None, None),
            LightKind::Point => ("point", None, None),
            LightKind::Spot { inner, outer } => ("spot", Some(inner), Some(outer)),
        };
        x.set_item("kind", kind)?;
        x.set_item("inner", inner)?;
        x.set_item("outer", outer)?;
        x.set_item("color", l.color)?;
        x.set_item("intensity", l.intensity)?;
        x.set_item("range", l.range)?;
        lights.append(x)?;
    }
    d.set_item("lights", lights)?;
    let cameras = PyList::empty(py);
    for c in &s.cameras {
        let x = PyDict::new(py);
        x.set_item("name", &c.name)?;
        x.set_item("yfov", c.yfov)?;
        x.set_item("znear", c.znear)?;
        x.set_item("zfar", c.zfar)?;
        cameras.append(x)?;
    }
    d.set_item("cameras", cameras)?;
    Ok(d)
}

fn property_name(p: Property) -> &'static str {
    match p {
        Property::Translation => "translation",
        Property::Rotation => "rotation",
        Property::Scale => "scale",
        Property::Weights => "weights",
    }
}

// ---- Python -> scene ----

/// `d[key]`, an error naming the key when it is missing.
fn item<'py>(d: &Bound<'py, PyDict>, key: &str) -> PyResult<Bound<'py, PyAny>> {
    d.get_item(key)?
        .ok_or_else(|| err(format!("scene: missing {key:?}")))
}

/// `d[key]`, `None` when missing or None.
fn opt_item<'py>(d: &Bound<'py, PyDict>, key: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
    Ok(d.get_item(key)?.filter(|v| !v.is_none()))
}

fn get<'py, T: pyo3::conversion::FromPyObjectOwned<'py>>(
    d: &Bound<'py, PyDict>,
    key: &str,
) -> PyResult<T> {
    item(d, key)?
        .extract::<T>()
        .map_err(|e| err(format!("scene: {key}: {}", Into::<PyErr>::into(e))))
}

fn get_or<'py, T: pyo3::conversion::FromPyObjectOwned<'py>>(
    d: &Bound<'py, PyDict>,
    key: &str,
    default: T,
) -> PyResult<T> {
    match opt_item(d, key)? {
        Some(v) => v
            .extract::<T>()
            .map_err(|e| err(format!("scene: {key}: {}", Into::<PyErr>::into(e)))),
        None => Ok(default),
    }
}

/// The floats (or integers) of a numpy array, checked to come in rows of `N`.
fn flat<'py, T: numpy::Element + Copy>(
    v: &Bound<'py, PyAny>,
    what: &str,
    n: usize,
) -> PyResult<Vec<T>> {
    let a: PyReadonlyArrayDyn<'py, T> = v
        .extract()
        .map_err(|e| err(format!("scene: {what}: {e}")))?;
    let data = a.as_array().iter().copied().collect::<Vec<T>>();
    if n > 0 && data.len() % n != 0 {
        return Err(err(format!(
            "scene: {what}: {} values are not rows of {n} (shape {:?})",
            data.len(),
            a.shape()
        )));
    }
    Ok(data)
}

fn to_rows<'py, T: numpy::Element + Copy + Default, const N: usize>(
    v: &Bound<'py, PyAny>,
    what: &str,
) -> PyResult<Vec<[T; N]>> {
    let data = flat::<T>(v, what, N)?;
    Ok(data
        .chunks_exact(N)
        .map(|c| {
            let mut r = [T::default(); N];
            r.copy_from_slice(c);
            r
        })
        .collect())
}

fn opt_rows_from<'py, T: numpy::Element + Copy + Default, const N: usize>(
    d: &Bound<'py, PyDict>,
    key: &str,
    what: &str,
) -> PyResult<Option<Vec<[T; N]>>> {
    opt_item(d, key)?
        .map(|v| to_rows::<T, N>(&v, &format!("{what}.{key}")))
        .transpose()
}

fn extras_from(d: &Bound<'_, PyDict>, what: &str) -> PyResult<Map<String, Value>> {
    let text: Option<String> = get_or(d, "extras", None)?;
    match text.as_deref() {
        None | Some("") => Ok(Map::new()),
        Some(t) => serde_json::from_str(t).map_err(|e| err(format!("scene: {what}.extras: {e}"))),
    }
}

fn look_from(d: &Bound<'_, PyDict>, what: &str) -> PyResult<hangar::model::Look> {
    let text: Option<String> = get_or(d, "look", None)?;
    match text.as_deref() {
        None | Some("") => Ok(Default::default()),
        Some(t) => serde_json::from_str(t).map_err(|e| err(format!("scene: {what}.look: {e}"))),
    }
}

fn dicts<'py>(d: &Bound<'py, PyDict>, key: &str) -> PyResult<Vec<Bound<'py, PyDict>>> {
    match opt_item(d, key)? {
        None => Ok(Vec::new()),
        Some(v) => v
            .try_iter()?
            .map(|x| {
                x?.cast_into::<PyDict>()
                    .map_err(|e| err(format!("scene: {key}: {e}")))
            })
            .collect(),
    }
}

fn scene_from_py(d: &Bound<'_, PyDict>) -> PyResult<Scene> {
    let mut s = Scene {
        name: get_or(d, "name", String::new())?,
        ..Default::default()
    };
    for (i, n) in dicts(d, "nodes")?.iter().enumerate() {
        let what = format!("nodes[{i}]");
        let t: [f32; 3] = get_or(n, "translation", [0.0; 3])?;
        let r: [f32; 4] = get_or(n, "rotation", [0.0, 0.0, 0.0, 1.0])?;
        let sc: [f32; 3] = get_or(n, "scale", [1.0; 3])?;
        s.nodes.push(Node {
            name: get_or(n, "name", String::new())?,
            parent: get_or(n, "parent", None)?,
            translation: glam::Vec3::from_array(t),
            rotation: glam::Quat::from_array(r),
            scale: glam::Vec3::from_array(sc),
            mesh: get_or(n, "mesh", None)?,
            skin: get_or(n, "skin", None)?,
            light: get_or(n, "light", None)?,
            camera: get_or(n, "camera", None)?,
            role: if get_or(n, "collision", false)? {
                Role::Collision
            } else {
                Role::Visual
            },
            extras: extras_from(n, &what)?,
        });
    }
    for (i, m) in dicts(d, "meshes")?.iter().enumerate() {
        let what = format!("meshes[{i}]");
        let mut v = Vertices {
            positions: to_rows::<f32, 3>(&item(m, "positions")?, &format!("{what}.positions"))?,
            normals: opt_rows_from::<f32, 3>(m, "normals", &what)?,
            tangents: opt_rows_from::<f32, 4>(m, "tangents", &what)?,
            joints: opt_rows_from::<u16, 4>(m, "joints", &what)?,
            weights: opt_rows_from::<f32, 4>(m, "weights", &what)?,
            ..Default::default()
        };
        if let Some(uvs) = opt_item(m, "uvs")? {
            for (k, u) in uvs.try_iter()?.enumerate() {
                v.uvs
                    .push(to_rows::<f32, 2>(&u?, &format!("{what}.uvs[{k}]"))?);
            }
        }
        if let Some(cs) = opt_item(m, "colors")? {
            for (k, c) in cs.try_iter()?.enumerate() {
                v.colors
                    .push(to_rows::<f32, 4>(&c?, &format!("{what}.colors[{k}]"))?);
            }
        }
        if let Some(ns) = opt_item(m, "color_names")? {
            v.color_names = ns.extract()?;
        }
        if let Some(cs) = opt_item(m, "custom")? {
            for (k, c) in cs.try_iter()?.enumerate() {
                let (name, values): (String, Bound<'_, PyAny>) = c?.extract()?;
                v.custom.push(CustomAttribute {
                    name,
                    values: to_rows::<f32, 4>(&values, &format!("{what}.custom[{k}]"))?,
                });
            }
        }
        let mut primitives = Vec::new();
        for (k, p) in dicts(m, "primitives")?.iter().enumerate() {
            primitives.push(Primitive {
                indices: flat::<u32>(&item(p, "indices")?, &format!("{what}.primitives[{k}]"), 3)?,
                material: get_or(p, "material", None)?,
            });
        }
        let mut morph_targets = Vec::new();
        for (k, t) in dicts(m, "morph_targets")?.iter().enumerate() {
            let tw = format!("{what}.morph_targets[{k}]");
            morph_targets.push(MorphTarget {
                name: get_or(t, "name", String::new())?,
                positions: to_rows::<f32, 3>(&item(t, "positions")?, &tw)?,
                normals: opt_rows_from::<f32, 3>(t, "normals", &tw)?,
            });
        }
        s.meshes.push(Mesh {
            name: get_or(m, "name", String::new())?,
            vertices: v,
            primitives,
            morph_targets,
            extras: extras_from(m, &what)?,
        });
    }
    for (i, m) in dicts(d, "materials")?.iter().enumerate() {
        s.materials.push(Material {
            name: get_or(m, "name", String::new())?,
            textures: Textures {
                base_color: get_or(m, "base_color", None)?,
                normal: get_or(m, "normal", None)?,
                emissive: get_or(m, "emissive", None)?,
                occlusion: get_or(m, "occlusion", None)?,
                specular: get_or(m, "specular", None)?,
                metal: get_or(m, "metal", None)?,
                smooth: get_or(m, "smooth", None)?,
            },
            look: look_from(m, &format!("materials[{i}]"))?,
            extras: extras_from(m, &format!("materials[{i}]"))?,
        });
    }
    for (i, k) in dicts(d, "skins")?.iter().enumerate() {
        s.skins.push(Skin {
            name: get_or(k, "name", String::new())?,
            joints: get(k, "joints")?,
            inverse_bind: to_rows::<f32, 16>(
                &item(k, "inverse_bind")?,
                &format!("skins[{i}].inverse_bind"),
            )?,
        });
    }
    for (i, a) in dicts(d, "animations")?.iter().enumerate() {
        let what = format!("animations[{i}]");
        let mut channels = Vec::new();
        for (k, c) in dicts(a, "channels")?.iter().enumerate() {
            let cw = format!("{what}.channels[{k}]");
            let property = match get::<String>(c, "property")?.as_str() {
                "translation" => Property::Translation,
                "rotation" => Property::Rotation,
                "scale" => Property::Scale,
                "weights" => Property::Weights,
                other => return Err(err(format!("scene: {cw}.property {other:?}"))),
            };
            let interpolation = match get_or(c, "interpolation", "LINEAR".to_string())?.as_str() {
                "STEP" => Interpolation::Step,
                "LINEAR" => Interpolation::Linear,
                other => return Err(err(format!("scene: {cw}.interpolation {other:?}"))),
            };
            channels.push(Channel {
                node: get(c, "node")?,
                property,
                interpolation,
                times: flat::<f32>(&item(c, "times")?, &format!("{cw}.times"), 0)?.into(),
                values: flat::<f32>(&item(c, "values")?, &format!("{cw}.values"), 0)?.into(),
            });
        }
        s.animations.push(Animation {
            name: get_or(a, "name", String::new())?,
            channels,
            extras: extras_from(a, &what)?,
        });
    }
    for l in dicts(d, "lights")? {
        let kind = match get_or(&l, "kind", "point".to_string())?.as_str() {
            "directional" => LightKind::Directional,
            "spot" => LightKind::Spot {
                inner: get_or(&l, "inner", 0.0)?,
                outer: get_or(&l, "outer", std::f32::consts::FRAC_PI_4)?,
            },
            _ => LightKind::Point,
        };
        s.lights.push(Light {
            name: get_or(&l, "name", String::new())?,
            kind,
            color: get_or(&l, "color", [1.0; 3])?,
            intensity: get_or(&l, "intensity", 1.0)?,
            range: get_or(&l, "range", None)?,
        });
    }
    for c in dicts(d, "cameras")? {
        s.cameras.push(Camera {
            name: get_or(&c, "name", String::new())?,
            yfov: get_or(&c, "yfov", 0.8)?,
            znear: get_or(&c, "znear", 0.1)?,
            zfar: get_or(&c, "zfar", None)?,
        });
    }
    check_indices(&s)?;
    Ok(s)
}

/// Indices that name nodes, meshes, materials, skins, lights and cameras that exist: the library's
/// writers index the scene directly.
fn check_indices(s: &Scene) -> PyResult<()> {
    let bad = |what: String, i: usize, n: usize| -> PyResult<()> {
        if i >= n {
            Err(err(format!("scene: {what} = {i}, but there are {n}")))
        } else {
            Ok(())
        }
    };
    for (i, n) in s.nodes.iter().enumerate() {
        if let Some(p) = n.parent {
            bad(format!("nodes[{i}].parent"), p, s.nodes.len())?;
        }
        if let Some(m) = n.mesh {
            bad(format!("nodes[{i}].mesh"), m, s.meshes.len())?;
        }
        if let Some(m) = n.skin {
            bad(format!("nodes[{i}].skin"), m, s.skins.len())?;
        }
        if let Some(m) = n.light {
            bad(format!("nodes[{i}].light"), m, s.lights.len())?;
        }
        if let Some(m) = n.camera {
            bad(format!("nodes[{i}].camera"), m, s.cameras.len())?;
        }
    }
    for (i, m) in s.meshes.iter().enumerate() {
        let nv = m.vertices.positions.len();
        for (k, p) in m.primitives.iter().enumerate() {
            if let Some(x) = p.material {
                bad(
                    format!("meshes[{i}].primitives[{k}].material"),
                    x,
                    s.materials.len(),
                )?;
            }
            if let Some(&x) = p.indices.iter().max() {
                bad(
                    format!("meshes[{i}].primitives[{k}].indices"),
                    x as usize,
                    nv,
                )?;
            }
        }
    }
    for (i, k) in s.skins.iter().enumerate() {
        for &j in &k.joints {
            bad(format!("skins[{i}].joints"), j, s.nodes.len())?;
        }
    }
    for (i, a) in s.animations.iter().enumerate() {
        for (k, c) in a.channels.iter().enumerate() {
            bad(
                format!("animations[{i}].channels[{k}].node"),
                c.node,
                s.nodes.len(),
            )?;
        }
    }
    Ok(())
}
