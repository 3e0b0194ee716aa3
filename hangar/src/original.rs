//! Writing a neutral scene that came from an editor (the Python package, the Blender extension) back
//! as a game file, next to the file it was read from: every output type by its extension, and for a
//! component XML every file of the original `_data/` folder that the scene does not rewrite,
//! carried byte for byte (wrecks, `.jcs` shapes, unreferenced XMFs, untouched meshes left out of the
//! scene).

use crate::error::{Error, Result, Warning};
use crate::formats::Remeshed;
use crate::model::Scene;
use std::path::{Path, PathBuf};

/// The files a scene makes: each path (the output last) and its bytes, and what was noticed.
#[derive(Debug, Default)]
pub struct Files {
    pub files: Vec<(PathBuf, Vec<u8>)>,
    pub warnings: Vec<Warning>,
}

impl Files {
    /// Writes every file as one output: all of them or none.
    pub fn write(&self) -> Result<()> {
        crate::io::write_files(&self.files)
    }
}

/// The files `output` names, made from `scene` as [`crate::write_scene`] makes them, by path (the
/// output last). `original` is the file the scene was read from: for a component (an `.xml`
/// output) the files of its data folder the scene does not write are added; an M3, XAC or XMF of
/// its format is its bytes while the scene still shows it, and a rebuilt actor keeps its LODs.
pub fn from_scene(scene: &Scene, output: &Path, original: Option<&Path>) -> Result<Files> {
    let mut out = if crate::io::has_ext(output, "xml") {
        // The component's files by absolute path, the XML last.
        let w = crate::assemble::from_scene(scene, output, &[])?;
        Files {
            files: w.files,
            warnings: w.warnings,
        }
    } else {
        // Over the file the scene was read from: its bytes while the scene still shows it, an
        // actor's LOD chunks carried when it does not.
        // Only an original of the output's own format has a say (`from_original`): no other is read.
        let own_format = |src: &&Path| {
            let ext = |p: &Path| p.extension().map(|e| e.to_ascii_lowercase());
            ext(src) == ext(output)
        };
        // Why the original's bytes were not used, said whichever way the file is made.
        let mut notes = Vec::new();
        if let Some(src) = original.filter(own_format) {
            let was = read(src)?;
            if let Some(made) = from_original(scene, output, src, &was, &mut notes) {
                let (bytes, w) = made?;
                return Ok(Files {
                    files: vec![(output.to_path_buf(), bytes)],
                    warnings: notes.into_iter().chain(w).collect(),
                });
            }
        }
        let mut made = crate::any::convert_scene(scene, output, &Default::default())?;
        made.warnings.splice(0..0, notes);
        let dir = output.parent().unwrap_or(Path::new(""));
        let mut files: Vec<(PathBuf, Vec<u8>)> = made
            .files
            .into_iter()
            .map(|(p, b)| (dir.join(p), b))
            .collect();
        files.push((output.to_path_buf(), made.bytes));
        Files {
            files,
            warnings: made.warnings,
        }
    };
    if let Some(src) = original.filter(|_| crate::io::has_ext(output, "xml")) {
        carry_data(scene, src, output, &mut out)?;
    }
    Ok(out)
}

/// Every file under `dir` (recursively), as paths relative to it, sorted; at most `limit`.
fn files_under(dir: &Path, limit: usize) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut todo = vec![PathBuf::new()];
    while let Some(rel) = todo.pop() {
        let here = dir.join(&rel);
        let entries = std::fs::read_dir(&here).map_err(|e| Error::io(&here, e))?;
        for e in entries {
            let e = e.map_err(|e| Error::io(&here, e))?;
            let kind = e.file_type().map_err(|x| Error::io(&e.path(), x))?;
            let r = rel.join(e.file_name());
            if kind.is_dir() {
                todo.push(r);
            } else if kind.is_file() {
                out.push(r);
            }
            if out.len() > limit {
                return Err(Error::refused(
                    "data",
                    format!("more than {limit} files in the data folder"),
                )
                .in_file(dir));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Adds to `out` every file of the original component's data folder that it does not write yet, in
/// the original's letter case, byte for byte.
fn carry_data(scene: &Scene, original: &Path, output: &Path, out: &mut Files) -> Result<()> {
    let data = scene
        .nodes
        .iter()
        .find_map(|n| n.extras.get("x4component"))
        .and_then(|c| c.get("data"))
        .and_then(serde_json::Value::as_str);
    let Some(data) = data else {
        return Ok(());
    };
    let out_data = output.parent().unwrap_or(Path::new("")).join(data);
    let lower = |p: &Path| p.to_string_lossy().to_lowercase();
    let written: Vec<String> = out
        .files
        .iter()
        .filter_map(|(p, _)| p.strip_prefix(&out_data).ok().map(lower))
        .collect();
    let mut carried = Vec::new();
    if let Some((game, xml)) = crate::vfs::split_spec(&original.to_string_lossy()) {
        // Read from a game's catalogs (`GAME::path`): the data folder's entries beside the XML.
        let view = crate::GameView::open(&game)?;
        let here = crate::vfs::normalize(xml)?;
        let dir = here.rsplit_once('/').map_or("", |(d, _)| d);
        let prefix = crate::vfs::normalize(&format!("{dir}/{data}"))?;
        let inside = format!("{prefix}/");
        for p in view.files(&prefix)? {
            let Some(rel) = p.strip_prefix(&inside).map(PathBuf::from) else {
                continue; // a sibling whose name starts the same (`..._data.ani`)
            };
            if !written.contains(&lower(&rel)) {
                carried.push((out_data.join(&rel), view.read(&p)?.to_vec()));
            }
        }
    } else {
        let src_dir = original.parent().unwrap_or(Path::new("."));
        let Some(src_data) = crate::assemble::read::find_in(src_dir, data).filter(|d| d.is_dir())
        else {
            return Ok(());
        };
        for rel in files_under(&src_data, 100_000)? {
            if written.contains(&lower(&rel)) {
                continue;
            }
            let from = src_data.join(&rel);
            let bytes = std::fs::read(&from).map_err(|e| Error::io(&from, e))?;
            carried.push((out_data.join(&rel), bytes));
        }
    }
    // The XML stays last: it names the others.
    let at = out.files.len().saturating_sub(1);
    out.files.splice(at..at, carried);
    Ok(())
}

/// A neutral scene made or edited elsewhere (the Python package, the Blender extension) written as
/// `output`, whose extension picks the type (`.xml` a whole component, `.glb`, `.gltf`, or a game
/// format written from a scene). `original`, for a component, is the XML the scene was read from:
/// the files of its data folder the scene does not rewrite are carried byte for byte. Every file
/// is written whole, all of them or none.
pub fn write_scene_to(
    scene: &Scene,
    output: &Path,
    original: Option<&Path>,
) -> Result<crate::any::Wrote> {
    write_scene_to_with(scene, output, original, false)
}

/// [`write_scene_to`], and with `patch` a component `.xml` written as an X4 `<diff>` patch
/// against `original` (the game's XML; its XMFs and `.ani` are written as files).
pub fn write_scene_to_with(
    scene: &Scene,
    output: &Path,
    original: Option<&Path>,
    patch: bool,
) -> Result<crate::any::Wrote> {
    let mut files = from_scene(scene, output, original)?;
    match original {
        Some(o) if patch && crate::io::has_ext(output, "xml") => {
            crate::xmlpatch::into_patch(&mut files.files, o)?
        }
        _ if patch => {
            return Err(crate::error::Error::unsupported(
                "a patch is written for a component .xml with its original (the game's XML)",
            ))
        }
        _ => {}
    }
    files.write()?;
    Ok(crate::any::Wrote {
        bytes: files.files.iter().map(|(_, b)| b.len()).sum(),
        files: files.files.len().saturating_sub(1),
        warnings: files.warnings,
        what: String::new(),
    })
}

/// The game file a scene was made from, opened, and its scene: none for a motion, which names the
/// nodes or morph targets it moves (kept by the scene; its writer reads the motion itself). The
/// original's own warnings are about it, not about the writing: dropped.
pub(crate) fn read(original: &Path) -> Result<(crate::Opened, Option<Scene>)> {
    let opened = crate::open(original)?;
    let motion = matches!(opened.format(), crate::Format::Xsm | crate::Format::Xpm);
    let was = if motion {
        None
    } else {
        Some(opened.to_scene()?.0)
    };
    Ok((opened, was))
}

/// A tool's glTF scene (`edited`) with what the tool's export dropped taken back from `was`, the
/// scene of `original`, the game file the glTF was made from (`hangar convert edited.glb out.xml --original src.xml`).
/// Nodes, materials and animations are matched by name (a tool's `.001` suffixes and names cut at
/// 63 bytes matched too); the edited scene keeps its own transforms, meshes and keys, and gets the
/// original's extras where it has none: the component, its part roles and connection names, the
/// source of every mesh (an untouched one is written back as its file), the .ani's stored keys.
pub(crate) fn restore(mut edited: Scene, was: &Scene, original: &Path) -> Result<Scene> {
    let mut matched = 0;
    for (from, to) in was
        .nodes
        .iter()
        .zip(crate::model::match_nodes(&was.nodes, &edited.nodes))
    {
        let Some(to) = to.and_then(|j| edited.nodes.get_mut(j)) else {
            continue;
        };
        if !from.extras.is_empty() {
            matched += 1;
            add_missing(&from.extras, &mut to.extras);
        }
    }
    take_extras(&was.materials, &mut edited.materials);
    take_extras(&was.animations, &mut edited.animations);
    if matched == 0 && was.nodes.iter().any(|n| !n.extras.is_empty()) {
        return Err(Error::refused(
            "nodes",
            format!(
                "no node of the glTF has the name of a node of {}: is it the file the glTF was made from?",
                original.display()
            ),
        ));
    }
    Ok(edited)
}

type Extras = serde_json::Map<String, serde_json::Value>;

/// What a scene names and keeps extras on.
trait Named {
    fn name(&self) -> &str;
    fn extras(&mut self) -> &mut Extras;
    fn kept(&self) -> &Extras;
}

macro_rules! named {
    ($($t:ty),*) => {$(
        impl Named for $t {
            fn name(&self) -> &str {
                &self.name
            }
            fn extras(&mut self) -> &mut Extras {
                &mut self.extras
            }
            fn kept(&self) -> &Extras {
                &self.extras
            }
        }
    )*};
}
named!(crate::model::Material, crate::model::Animation);

/// Each item of `into` named as one of `from` gets that one's extras it has no key for; returns
/// how many items with extras found their match.
fn take_extras<T: Named>(from: &[T], into: &mut [T]) -> usize {
    let mut taken = vec![false; into.len()];
    let mut matched = 0;
    for item in from.iter().filter(|i| !i.kept().is_empty()) {
        let Some(i) = crate::model::find_named(into, &taken, item.name(), |x| x.name()) else {
            continue;
        };
        taken[i] = true;
        matched += 1;
        if let Some(e) = into.get_mut(i) {
            add_missing(item.kept(), e.extras());
        }
    }
    matched
}

/// Each key of `from` that `into` lacks.
fn add_missing(from: &Extras, into: &mut Extras) {
    for (k, v) in from {
        into.entry(k.clone()).or_insert_with(|| v.clone());
    }
}

/// The output made with the original's help, or `None` to write the scene as any scene: the
/// original's bytes (`was`, as [`read`] gives it) when the scene still shows what
/// it shows (an XMF's mesh, an M3 or XAC's nodes, meshes, skins and clips, see
/// [`crate::model::unchanged`]); an XSM or XPM of the clip named as the original, on its
/// sub-motions or tracks. Why a model is rebuilt goes to `notes`.
pub(crate) fn from_original(
    scene: &Scene,
    output: &Path,
    original: &Path,
    (was_opened, was): &(crate::Opened, Option<Scene>),
    notes: &mut Vec<Warning>,
) -> Option<Result<(Vec<u8>, Vec<Warning>)>> {
    let (was, bytes) = (was.as_ref(), was_opened.source_bytes());
    // The originals' formats hold linear keys, as the scene read from them does.
    let scene = &*scene.cubic_sampled();
    let same_ext = |e: &str| crate::io::has_ext(output, e) && crate::io::has_ext(original, e);
    if same_ext("xmf") {
        return was
            .filter(|was| same_single_mesh(scene, was))
            .map(|_| Ok((bytes.to_vec(), Vec::new())));
    }
    if same_ext("m3") || same_ext("xac") {
        let was = was?;
        let Some(why) = unchanged_model(scene, was, original) else {
            return Some(Ok((bytes.to_vec(), Vec::new())));
        };
        if same_ext("m3") {
            use crate::formats::m3::edit::{remesh, retrack};
            // Clips alone edited leave the mesh as stored.
            let mesh_edited = crate::model::unchanged::difference(scene, was, false).is_some();
            let mesh = |b: &[u8]| match mesh_edited {
                true => remesh(b, scene, was).map(Some),
                false => Ok(None),
            };
            let clips = |b: &[u8]| retrack(b, scene, was);
            let steps: [Step<'_>; 2] =
                [("the meshes", &mesh), ("the edited clips' tracks", &clips)];
            let lost = "effects, physics, hit tests and sequence data";
            return into_original(bytes, &steps, (&why, lost), notes);
        }
        if crate::model::unchanged::difference_but_meshes(scene, was).is_none() {
            let mesh = |b: &[u8]| crate::formats::emfx::edit::remesh(b, scene, was).map(Some);
            let lost = "node groups, limits, morph targets and material settings";
            if let Some(made) = into_original(bytes, &[("the meshes", &mesh)], (&why, lost), notes)
            {
                return Some(made);
            }
        } else {
            notes.push(Warning::note(
                None,
                "--original",
                format!("rebuilt from the glTF, not the original's bytes: {why}"),
            ));
        }
        return Some(actor_with_lods(scene, original, bytes));
    }
    if same_ext("xsm") || same_ext("xpm") {
        return Some(motion(scene, output, original, bytes));
    }
    None
}

/// Whether a scene of one mesh still draws what the original's one mesh (`was`) draws: an XMF
/// written back as the original's bytes.
pub(crate) fn same_single_mesh(scene: &Scene, was: &Scene) -> bool {
    match (&scene.meshes[..], &was.meshes[..]) {
        ([mesh], [before]) => {
            crate::model::same_shape(mesh, &scene.materials, before, &was.materials)
        }
        _ => false,
    }
}

/// Why an M3 or XAC scene no longer shows what the original (`was`) shows; `None` when it does,
/// and the original's bytes are written (an actor's LODs and every chunk hangar does not make
/// included). An actor's clips come from its motions, not from it: they are not compared.
fn unchanged_model(scene: &Scene, was: &Scene, original: &Path) -> Option<String> {
    // An actor read alone has no clips: the glTF's come from its motions and are not compared.
    let actor_alone = crate::io::has_ext(original, "xac") && was.animations.is_empty();
    crate::model::unchanged::difference(scene, was, !actor_alone)
}

/// One step of putting an edit into the original's bytes: what it writes (for the note) and the
/// bytes with it put in (`None`: nothing of its kind changed).
type Step<'a> = (&'a str, &'a dyn Fn(&[u8]) -> Result<Option<Remeshed>>);

/// The original's bytes with each step's edit put in ([`crate::formats::m3::edit`],
/// [`crate::formats::emfx::edit`]), every other part kept; `None` (the scene written whole, with
/// a warning saying the original's `lost` are not kept) when a step cannot put its edit in.
fn into_original(
    bytes: &[u8],
    steps: &[Step<'_>],
    (why, lost): (&str, &str),
    notes: &mut Vec<Warning>,
) -> Option<Result<(Vec<u8>, Vec<Warning>)>> {
    let (mut out, mut warnings, mut done) = (bytes.to_vec(), Vec::new(), Vec::new());
    for (what, step) in steps {
        match step(&out) {
            Ok(Some(Remeshed::Done(o, w))) => {
                (out, done) = (o, [done, vec![*what]].concat());
                warnings.extend(w);
            }
            Ok(Some(Remeshed::Cannot(cannot))) => {
                notes.push(Warning::new(
                    None,
                    "--original",
                    format!("rebuilt whole from the glTF ({why}), so the original's {lost} are not kept: {cannot}"),
                ));
                return None;
            }
            Ok(None) => {}
            Err(e) => return Some(Err(e)),
        }
    }
    notes.push(Warning::note(
        None,
        "--original",
        format!(
            "{} rebuilt from the glTF, every other part kept from the original: {why}",
            done.join(" and ")
        ),
    ));
    Some(Ok((out, warnings)))
}

/// The actor of `scene` with the original actor's LOD chunks (each a whole actor of its own, which
/// the glTF shows only as hidden nodes), carried as stored.
fn actor_with_lods(
    scene: &Scene,
    original: &Path,
    bytes: &[u8],
) -> Result<(Vec<u8>, Vec<Warning>)> {
    use crate::formats::emfx;
    let (was, _) = emfx::read(bytes).map_err(|e| e.in_file(original))?;
    let lods: Vec<emfx::Chunk> = was
        .chunks
        .iter()
        .filter(|c| c.name(emfx::Kind::Xac) == "meshLod")
        .cloned()
        .collect();
    let mut file = emfx::build::actor(scene)?;
    let mut warnings = Vec::new();
    if !lods.is_empty() {
        warnings.push(Warning::note(
            None,
            "--original",
            format!(
                "{} LOD chunks carried from the original as stored",
                lods.len()
            ),
        ));
    }
    file.chunks.extend(lods);
    Ok((emfx::write(&file)?, warnings))
}

/// An XSM or XPM of the scene's clip named as the original's file, on the original's sub-motions
/// (tracks): see [`crate::formats::emfx::motion`].
fn motion(
    scene: &Scene,
    output: &Path,
    original: &Path,
    bytes: &[u8],
) -> Result<(Vec<u8>, Vec<Warning>)> {
    use crate::formats::emfx;
    let (file, _) = emfx::read(bytes).map_err(|e| e.in_file(original))?;
    let stem = original
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned());
    let (made, warnings) = if crate::io::has_ext(output, "xsm") {
        emfx::motion::skeletal(scene, stem.as_deref(), Some(&file))?
    } else {
        emfx::motion::morph(scene, stem.as_deref(), Some(&file))?
    };
    Ok((emfx::write(&made)?, warnings))
}
