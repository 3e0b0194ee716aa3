//! Making new game content from a scene: a ship built as meshes and empties (in Blender or any
//! tool) becomes a whole X4 extension, cloned from a template ship's macro, component and ware.
//!
//! The authoring convention is read once ([`scene`]); the template is found through a game view
//! ([`template`]); LODs and collision meshes come from meshoptimizer's simplifier ([`lod`]); the
//! files are written by the existing writers (XMF, catalog) and the XML of [`xml`].

mod lod;
mod materials;
mod scene;
mod template;
mod xml;

use crate::assemble::part::PartMeshes;
use crate::error::{Error, Result, Warning};
use crate::formats::xmf;
use crate::model::{Material, Mesh, Scene};
use crate::vfs::GameView;
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// What [`new_component`] (and [`new_ship`]) makes: the template, the new component's id and
/// texts, how many LODs.
#[derive(Debug, Clone)]
pub struct NewComponent {
    /// A macro of any class (a ship's for [`new_ship`]): a macro file, or a macro's name found
    /// through the game view.
    pub template: String,
    /// The component's name; its macro is `<id>_macro`, its ware `<id>`.
    pub id: String,
    /// The name in the game (default: the id).
    pub name: Option<String>,
    pub description: Option<String>,
    /// LODs made below lod0 where the scene gives none (0 to 3; default 2).
    pub lods: u32,
    /// The extension's folder name, which is its id in content.xml and in the index paths
    /// (default: the ship's id).
    pub folder: Option<String>,
    /// Everything but content.xml in `ext_01.cat`/`.dat`.
    pub pack: bool,
    /// Materials the game lacks written as `--textures write` writes them: an entry each in a
    /// `libraries/material_library.xml` patch, named `<id>.<material>`, and their [`images`]
    /// as gzip'd DDS textures (default: on).
    ///
    /// [`images`]: NewComponent::images
    pub textures: bool,
    /// The images the scene's materials are drawn with, by material name (a glTF's:
    /// [`crate::Opened::images`]).
    pub images: Vec<crate::textures::Edit>,
}

/// [`NewComponent`] by the name `hangar new ship` gave it.
pub type NewShip = NewComponent;

impl NewComponent {
    /// A spec with the defaults: the name is the id, two LODs, the folder named as the id.
    pub fn new(template: impl Into<String>, id: impl Into<String>) -> NewComponent {
        NewComponent {
            template: template.into(),
            id: id.into(),
            name: None,
            description: None,
            lods: 2,
            folder: None,
            pack: false,
            textures: true,
            images: Vec::new(),
        }
    }
}

/// A new extension: every file by its path inside the extension's folder.
#[derive(Debug, Default)]
pub struct NewExtension {
    files: Vec<(PathBuf, Vec<u8>)>,
    pub warnings: Vec<Warning>,
    /// Parts written, connections (hardpoints) written, LOD files made, collision meshes made.
    pub parts: usize,
    pub connections: usize,
    pub lods_made: usize,
    pub collisions_made: usize,
}

impl NewExtension {
    /// The files, `/`-separated paths inside the extension's folder, content.xml last.
    pub fn files(&self) -> &[(PathBuf, Vec<u8>)] {
        &self.files
    }

    /// Writes every file under `dir`, whole or not at all. A `dir` that exists and holds anything
    /// is refused unless `force` (then files of the same names are replaced).
    pub fn write_to(&self, dir: &Path, force: bool) -> Result<Vec<PathBuf>> {
        let busy = dir.exists()
            && std::fs::read_dir(dir)
                .map_err(|e| Error::io(dir, e))?
                .next()
                .is_some();
        if busy && !force {
            return Err(Error::refused(
                "",
                "the output folder exists and is not empty: name another, or pass --force to write into it",
            )
            .in_file(dir));
        }
        let files: Vec<(PathBuf, Vec<u8>)> = self
            .files
            .iter()
            .map(|(p, b)| (dir.join(p), b.clone()))
            .collect();
        crate::io::write_files(&files)?;
        Ok(files.into_iter().map(|(p, _)| p).collect())
    }
}

/// A valid id for the game: letters, digits and `_`.
fn valid_id(s: &str) -> bool {
    !s.is_empty() && s.len() <= 200 && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The size letters of a ship class (`ship_m` -> `m`) and the size word of its slots.
fn size_of(class: &str) -> (String, &'static str) {
    let s = class
        .strip_prefix("ship_")
        .unwrap_or("m")
        .to_ascii_lowercase();
    let word = match s.as_str() {
        "xs" | "s" => "small",
        "l" => "large",
        "xl" => "extralarge",
        _ => "medium",
    };
    (s, word)
}

/// A text page no file in view uses: from the extension's id, moved on while taken.
fn free_page(folder: &str, used: &std::collections::HashSet<u64>) -> u64 {
    let hash = folder.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    });
    let mut page = 9_100_000 + hash % 800_000;
    while used.contains(&page) {
        page += 1;
    }
    page
}

/// The folder the game keeps the template's class in: the template macro's own (the folder above its
/// `macros/`: `assets/props/weaponsystems/guided`, `assets/structures/dock`...), else the base game's
/// folder for the class.
fn asset_folder(macro_path: &str, class: &str) -> String {
    let lower = macro_path.replace('\\', "/").to_ascii_lowercase();
    let inside = lower
        .find("assets/")
        .filter(|&i| i == 0 || lower[..i].ends_with('/'))
        .and_then(|i| lower[i..].rsplit_once('/'))
        .map(|(dir, _)| dir.strip_suffix("/macros").unwrap_or(dir).to_string())
        .filter(|d| d.len() > "assets/".len());
    if let Some(dir) = inside {
        return dir;
    }
    let (size, _) = size_of(class);
    match class {
        c if c.starts_with("ship_") => format!("assets/units/size_{size}"),
        "weapon" | "missilelauncher" | "turret" | "missileturret" => {
            "assets/props/weaponsystems".into()
        }
        "bullet" | "missile" | "mine" | "countermeasure" => "assets/fx/weaponfx".into(),
        "effectobject" => "assets/fx".into(),
        "engine" => "assets/props/engines".into(),
        "shieldgenerator" => "assets/props/surfaceelements".into(),
        "dockarea" | "dockingbay" | "pier" => "assets/structures/dock".into(),
        c => format!("assets/structures/{c}"),
    }
}

/// A state name the game reads: letters, digits and `_`, as long as an .ani name holds.
fn valid_state(s: &str) -> bool {
    valid_id(s) && s.len() <= 63
}

/// The scene's animations as the new component's states: the .ani and which states move each part.
struct Moving {
    bytes: Vec<u8>,
    /// (part, state, first frame, last frame) at 30 frames a second, states in the scene's order.
    played: Vec<(String, xml::Played)>,
    warnings: Vec<Warning>,
}

impl Moving {
    fn played_by(&self, part: &str) -> Vec<xml::Played> {
        self.played
            .iter()
            .filter(|(p, _)| p.eq_ignore_ascii_case(part))
            .map(|(_, p)| xml::Played {
                state: p.state.clone(),
                start: p.start,
                end: p.end,
            })
            .collect()
    }
}

/// Each glTF animation (a Blender action, named after its state) as that state of the .ani: a
/// track for every part it moves, with the keys it has (step and linear as keys), in the frame
/// of the part's parent. Parts it moves get the `animation` tag the game moves them by. A channel
/// on a node that is no part is named in a warning and left out; a state name the game cannot
/// read is refused.
fn states(scene: &Scene, authored: &mut scene::Authored) -> Result<Option<Moving>> {
    use crate::model::Property;
    use std::collections::HashMap;
    if scene.animations.is_empty() {
        return Ok(None);
    }
    let mut warnings = Vec::new();
    let part_of: HashMap<usize, usize> = authored
        .parts
        .iter()
        .enumerate()
        .map(|(k, p)| (p.node, k))
        .collect();
    let mut animations = Vec::with_capacity(scene.animations.len());
    for (ai, a) in scene.animations.iter().enumerate() {
        if !valid_state(&a.name) {
            return Err(Error::refused(
                format!("animations[{ai}]"),
                format!(
                    "action {:?} is not a state name the game reads (letters, digits and _, at most 63): name it after its state (landinggears_activating, gun_firing, loop...)",
                    a.name
                ),
            ));
        }
        let mut channels = Vec::with_capacity(a.channels.len());
        let mut strays: Vec<&str> = Vec::new();
        for c in &a.channels {
            if c.property == Property::Weights {
                continue;
            }
            let Some(part) = part_of.get(&c.node).and_then(|&k| authored.parts.get(k)) else {
                let name = scene.nodes.get(c.node).map_or("?", |n| n.name.as_str());
                if !strays.contains(&name) {
                    strays.push(name);
                }
                continue;
            };
            // Only translation and scale keep a cubic spline (the .ani's bezier keys); a curve
            // of another track is its samples.
            let mut c = match c.property {
                Property::Translation | Property::Scale => c.clone(),
                _ => c.sampled().into_owned(),
            };
            let w = c.width();
            // A cubic spline's keys are (in-tangent, value, out-tangent): tangents are directions.
            let cubic = c.interpolation == crate::model::Interpolation::CubicSpline;
            let is_value = |k: usize| !cubic || k % 3 == 1;
            let mut values: Vec<f32> = c.values.to_vec();
            match c.property {
                Property::Translation => {
                    if let Some(m) = part.frame {
                        for (k, v) in values.chunks_exact_mut(w).enumerate() {
                            let x = glam::Vec3::new(v[0], v[1], v[2]);
                            let p = match is_value(k) {
                                true => m.transform_point3(x),
                                false => m.transform_vector3(x),
                            };
                            v.copy_from_slice(&p.to_array());
                        }
                    }
                }
                Property::Rotation => {
                    if let Some(m) = part.frame {
                        let (_, r, _) = m.to_scale_rotation_translation();
                        for v in values.chunks_exact_mut(w) {
                            let q = (r * glam::Quat::from_xyzw(v[0], v[1], v[2], v[3])).normalize();
                            v.copy_from_slice(&q.to_array());
                        }
                    }
                }
                // The part's own scale is in its meshes: the states scale relative to it.
                Property::Scale => {
                    let s = part.scale.to_array();
                    for v in values.chunks_exact_mut(w) {
                        for (x, by) in v.iter_mut().zip(s) {
                            if by.abs() > 1e-12 {
                                *x /= by;
                            }
                        }
                    }
                }
                Property::Weights => {}
            }
            c.values = values.into();
            channels.push(c);
        }
        if !strays.is_empty() {
            warnings.push(Warning::new(
                None,
                format!("animations[{ai}]"),
                format!(
                    "action {:?} moves {}, which {} no part: left out (a state moves parts: mesh objects, or empties tagged part)",
                    a.name,
                    strays.iter().map(|n| format!("{n:?}")).collect::<Vec<_>>().join(", "),
                    if strays.len() == 1 { "is" } else { "are" }
                ),
            ));
        }
        animations.push(crate::model::Animation {
            name: a.name.clone(),
            channels,
            extras: Default::default(),
        });
    }
    let names: HashMap<usize, String> = authored
        .parts
        .iter()
        .map(|p| (p.node, p.name.clone()))
        .collect();
    let (mut built, w) =
        crate::formats::ani::from_animations(&animations, &mut |n| names.get(&n).cloned())?;
    warnings.extend(w);
    // Every part of a state lasts as long as the state (the action's length).
    let spans = crate::formats::ani::spans(&built.ani);
    let mut length: HashMap<String, f32> = HashMap::new();
    for (_, state, _, d) in &spans {
        let l = length.entry(state.clone()).or_insert(0.0);
        *l = l.max(*d);
    }
    if let Some(list) = built.ani.fields["animations"].as_array_mut() {
        for d in list {
            let state = d["state"].as_str().map(str::to_string);
            if let Some(l) = state.and_then(|s| length.get(&s)) {
                d["duration"] = serde_json::json!(l);
            }
        }
    }
    if spans.is_empty() {
        return Ok(None);
    }
    let frame = |t: f32| (t.max(0.0) * 30.0).round().min(u32::MAX as f32) as u32;
    let mut played = Vec::new();
    for a in &animations {
        for (part, state, first, _) in spans.iter().filter(|s| s.1 == a.name) {
            let end = length.get(state).copied().unwrap_or(0.0);
            played.push((
                part.clone(),
                xml::Played {
                    state: state.clone(),
                    start: frame(*first),
                    end: frame(end),
                },
            ));
        }
    }
    for p in &mut authored.parts {
        if !played.iter().any(|(n, _)| n.eq_ignore_ascii_case(&p.name)) {
            continue;
        }
        if let Some((_, tags)) = p.attributes.first_mut().filter(|(k, _)| k == "tags") {
            if !tags
                .split_whitespace()
                .any(|w| w.eq_ignore_ascii_case("animation"))
            {
                tags.push_str(" animation");
            }
        }
    }
    Ok(Some(Moving {
        bytes: crate::formats::ani::write(&built.ani)?,
        played,
        warnings,
    }))
}

/// One part's XMF files: lod0, its LODs (given, else made) and its collision mesh.
struct PartFiles {
    files: Vec<(String, Vec<u8>)>,
    /// The lods written and lod0's size, for the part's `<part>` element.
    meshes: PartMeshes,
    warnings: Vec<Warning>,
    lods_made: usize,
    collision_made: bool,
}

fn xmf_bytes(
    mesh: &Mesh,
    materials: &[Material],
    target: xmf::write::Target,
    what: &str,
) -> Result<Vec<u8>> {
    let (x, _) = xmf::mesh::from_mesh(mesh, materials, target)
        .map_err(|e| Error::new(e.kind, e.offset, format!("{what}.{}", e.path), e.message))?;
    xmf::write::write(&x)
}

fn part_files(part: &scene::Part, materials: &[Material], lods: u32) -> Result<PartFiles> {
    let mut out = PartFiles {
        files: Vec::new(),
        meshes: PartMeshes::default(),
        warnings: Vec::new(),
        lods_made: 0,
        collision_made: false,
    };
    let Some(lod0) = &part.lod0 else {
        return Ok(out);
    };
    let name = &part.name;
    let visual = xmf::write::Target::Visual;
    out.files.push((
        format!("{name}-lod0.xmf"),
        xmf_bytes(lod0, materials, visual, &format!("part {name:?} lod0"))?,
    ));
    out.meshes.add_lod(0, lod0, materials);
    // LODs: those the scene gives, else each made from the level before.
    let mut before = lod0.clone();
    for level in 1..=lods.min(3) {
        let given = part
            .lods
            .iter()
            .find(|(l, _)| *l == level)
            .map(|(_, m)| m.clone());
        let made = match given {
            Some(m) => Some(m),
            None => {
                let next = lod::next_lod(&before);
                if next.is_some() {
                    out.lods_made += 1;
                }
                next
            }
        };
        let Some(m) = made else {
            out.warnings.push(Warning::note(
                None,
                format!("part {name:?}"),
                format!(
                    "lod{level} not made: {} triangles do not simplify to {}% (lod{} is the last)",
                    before.triangle_count(),
                    (lod::LOD_RATIO * 100.0) as u32,
                    level - 1
                ),
            ));
            break;
        };
        out.files.push((
            format!("{name}-lod{level}.xmf"),
            xmf_bytes(&m, materials, visual, &format!("part {name:?} lod{level}"))?,
        ));
        out.meshes.add_lod(level, &m, materials);
        before = m;
    }
    // Given LODs past the count asked for are written too.
    for (level, m) in part.lods.iter().filter(|(l, _)| *l > lods.min(3)) {
        out.files.push((
            format!("{name}-lod{level}.xmf"),
            xmf_bytes(m, materials, visual, &format!("part {name:?} lod{level}"))?,
        ));
        out.meshes.add_lod(*level, m, materials);
    }
    let nocollision = part.attributes.first().is_some_and(|(_, t)| {
        t.split_whitespace()
            .any(|w| w.eq_ignore_ascii_case("nocollision"))
    });
    let collision = match (&part.collision, nocollision) {
        (Some(c), _) => Some(c.clone()),
        (None, true) => None,
        (None, false) => {
            out.collision_made = true;
            Some(lod::collision(lod0)?)
        }
    };
    if let Some(c) = collision {
        out.files.push((
            format!("{name}-collision.xmf"),
            xmf_bytes(
                &c,
                materials,
                xmf::write::Target::Collision,
                &format!("part {name:?} collision"),
            )?,
        ));
    }
    Ok(out)
}

/// The new ship as an X4 extension; see [`new_ship`]. `progress(done, total)` is called as parts
/// are written.
pub fn new_ship_with_progress(
    scene: &Scene,
    spec: &NewComponent,
    game: Option<&GameView>,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<NewExtension> {
    new_content(scene, spec, game, progress, true)
}

/// The new component as an X4 extension; see [`new_component`]. `progress(done, total)` is called
/// as parts are written.
pub fn new_component_with_progress(
    scene: &Scene,
    spec: &NewComponent,
    game: Option<&GameView>,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<NewExtension> {
    new_content(scene, spec, game, progress, false)
}

fn new_content(
    scene: &Scene,
    spec: &NewComponent,
    game: Option<&GameView>,
    progress: &(dyn Fn(usize, usize) + Sync),
    ship_only: bool,
) -> Result<NewExtension> {
    let id = spec.id.trim();
    if !valid_id(id) {
        return Err(Error::refused(
            "id",
            format!("{id:?} is not an id the game takes (letters, digits and _)"),
        ));
    }
    let folder = spec.folder.clone().unwrap_or_else(|| id.to_string());
    if !valid_id(&folder.replace(['-', '.'], "_")) {
        return Err(Error::refused(
            "folder",
            format!("{folder:?} is not an extension folder name (letters, digits, _ - .)"),
        ));
    }
    let t = template::find(&spec.template, game)?;
    let macro_name = format!("{id}_macro");
    for taken in [id.to_lowercase(), macro_name.to_lowercase()] {
        if t.used.contains(&taken) {
            return Err(Error::refused(
                "id",
                format!(
                    "{taken:?} is already used in the template's {} (an index entry or a ware): pick another id",
                    t.extension.as_deref().map_or("game".to_string(), |e| format!("extension {e:?}"))
                ),
            ));
        }
    }
    if ship_only && !t.class.starts_with("ship_") {
        return Err(Error::refused(
            "template",
            format!(
                "macro {:?} is of class {:?}, not a ship macro (ship_s, ship_m, ship_l, ship_xl): make it with `new component`",
                t.macro_name, t.class
            ),
        ));
    }
    let (_, size_word) = size_of(&t.class);
    let mut authored = scene::read(scene, size_word)?;
    // Bullets and effects may be parts without geometry; a ship is seen.
    if t.class.starts_with("ship_") && !authored.parts.iter().any(|p| p.lod0.is_some()) {
        return Err(Error::refused(
            "nodes",
            "the scene has no mesh: a ship needs at least one part with geometry (a mesh object)",
        ));
    }
    let made = match spec.textures {
        true => materials::new_materials(scene, id, &folder, &spec.images, t.library.as_ref())?,
        false => Default::default(),
    };
    // The XMFs name each new material as its library entry does.
    let mut materials = std::borrow::Cow::Borrowed(&scene.materials[..]);
    for (i, name) in &made.renamed {
        if let Some(m) = materials.to_mut().get_mut(*i) {
            m.name.clone_from(name);
        }
    }
    let name = spec.name.clone().unwrap_or_else(|| id.to_string());
    let description = spec.description.clone().unwrap_or_default();
    let described = spec.description.is_some();
    let page = free_page(&folder, &t.pages);

    let total = authored.parts.len();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let built: Vec<Result<PartFiles>> = authored
        .parts
        .par_iter()
        .map(|p| {
            let r = part_files(p, &materials, spec.lods);
            progress(
                done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1,
                total,
            );
            r
        })
        .collect();
    let mut ext = NewExtension {
        warnings: authored
            .warnings
            .iter()
            .chain(&made.warnings)
            .cloned()
            .collect(),
        parts: total,
        connections: authored.connections.len(),
        ..Default::default()
    };
    let units = asset_folder(&t.macro_path, &t.class);
    let data = format!("{units}/{id}_data");
    let moving = states(scene, &mut authored)?;
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    let mut part_meshes = Vec::with_capacity(total);
    for b in built {
        let b = b?;
        part_meshes.push(b.meshes);
        ext.warnings.extend(b.warnings);
        ext.lods_made += b.lods_made;
        ext.collisions_made += usize::from(b.collision_made);
        files.extend(
            b.files
                .into_iter()
                .map(|(f, bytes)| (format!("{data}/{f}"), bytes)),
        );
    }

    // The component: part connections named so no hardpoint's name is taken twice.
    let mut taken: Vec<String> = authored
        .connections
        .iter()
        .map(|c| c.name.to_lowercase())
        .collect();
    let component_class = t
        .component_text
        .as_deref()
        .and_then(|c| {
            let doc = crate::check::xml::parse(c).ok()?;
            let v = doc
                .descendants()
                .find(|e| e.has_tag_name("component"))?
                .attribute("class")?
                .to_string();
            Some(v)
        })
        .unwrap_or_else(|| t.class.clone());
    // Lights, by the part they hang from (none: the component's own).
    let mut part_lights: Vec<Vec<String>> = vec![Vec::new(); authored.parts.len()];
    let mut own_lights = Vec::new();
    for l in &authored.lights {
        let on = l.parent.as_deref().and_then(|p| {
            authored
                .parts
                .iter()
                .position(|x| x.name.eq_ignore_ascii_case(p))
        });
        match on {
            Some(k) => part_lights[k].push(xml::light(l, "\t\t\t\t\t\t\t")?),
            None => own_lights.push(xml::light(l, "\t\t\t\t\t")?),
        }
    }
    let mut entries = Vec::new();
    for ((p, meshes), lights) in authored.parts.iter().zip(&part_meshes).zip(part_lights) {
        let mut n = format!("{}_connection", p.name.replace(' ', "_"));
        let mut k = 2;
        while taken.contains(&n.to_lowercase()) {
            n = format!("{}_connection{k}", p.name.replace(' ', "_"));
            k += 1;
        }
        taken.push(n.to_lowercase());
        let played = moving
            .as_ref()
            .map(|m| m.played_by(&p.name))
            .unwrap_or_default();
        entries.push(xml::PartEntry {
            connection: n,
            part: p,
            meshes,
            lights,
            played,
        });
    }
    let placed: Vec<&str> = authored
        .connections
        .iter()
        .map(|c| c.name.as_str())
        .chain(entries.iter().map(|e| e.connection.as_str()))
        .collect();
    // What the template's macro fills (cockpit, storage, docks) must be in the component: where the
    // scene places it, else where the template's component has it.
    let wanted = xml::macro_connections(&t.macro_text)?;
    let part_names: Vec<&str> = authored.parts.iter().map(|p| p.name.as_str()).collect();
    let kept = match &t.component_text {
        Some(c) => xml::template_connections(c, &placed, &wanted, &part_names)?,
        None => {
            ext.warnings.push(Warning::new(
                None,
                "template",
                format!("the template's component was not found: the scene's connections and those every {} has (space, position) are written", t.class),
            ));
            // Those the scene places itself are its own.
            xml::class_connections(&component_class)
                .into_iter()
                .filter(|(name, _)| !placed.iter().any(|p| p.eq_ignore_ascii_case(name)))
                .map(|(name, xml)| xml::TakenConnection {
                    name: name.to_string(),
                    xml,
                    at: None,
                })
                .collect()
        }
    };
    for w in &wanted {
        let is = |n: &str| n.eq_ignore_ascii_case(w);
        if placed.iter().any(|n| is(n)) {
            continue;
        }
        match kept.iter().find(|k| is(&k.name)) {
            Some(k) => {
                let (where_, on) = match &k.at {
                    Some((o, parent)) => (
                        format!(" at ({})", o.position().map(|v| format!("{v:.3}")).join(", ")),
                        parent.as_ref().map(|p| format!(" on part {p:?}")).unwrap_or_default(),
                    ),
                    None => (String::new(), String::new()),
                };
                ext.warnings.push(Warning::new(
                    None,
                    "connections",
                    format!("{w} taken from the template{where_}{on}: place an empty named {w} to move it"),
                ));
            }
            None => ext.warnings.push(Warning::new(
                None,
                "connections",
                format!("the template's macro fills {w}, which neither the scene nor the template's component has: place an empty named {w} with its tags"),
            )),
        }
    }
    let kept: Vec<String> = kept.into_iter().map(|k| k.xml).collect();
    let backslashed = |p: &str| format!("extensions\\{folder}\\{}", p.replace('/', "\\"));
    let component = xml::component(
        id,
        &component_class,
        &backslashed(&data),
        &own_lights,
        &kept,
        &entries,
        &authored.connections,
    );
    if let Some(m) = &moving {
        files.push((format!("{data}.ani"), m.bytes.clone()));
        ext.warnings.extend(m.warnings.iter().cloned());
    }
    files.push((format!("{units}/{id}.xml"), component.into_bytes()));
    let macro_text = xml::macro_file(&t.macro_text, &macro_name, id, page, described)?;
    files.push((
        format!("{units}/macros/{macro_name}.xml"),
        macro_text.into_bytes(),
    ));
    files.push((
        "index/components.xml".into(),
        xml::index(&[(id.to_string(), backslashed(&format!("{units}/{id}")))]).into_bytes(),
    ));
    files.push((
        "index/macros.xml".into(),
        xml::index(&[(
            macro_name.clone(),
            backslashed(&format!("{units}/macros/{macro_name}")),
        )])
        .into_bytes(),
    ));
    let ware = match &t.ware_text {
        Some(w) => Some(xml::ware(w, id, &macro_name, page, described)?),
        // A ship must be bought to be flown: it gets a ware of its own.
        None if t.class.starts_with("ship_") => {
            ext.warnings.push(Warning::new(
                None,
                "template",
                format!("no ware of the game or extension in view makes {:?}: a plain ware with a made-up price is written", t.macro_name),
            ));
            Some(xml::plain_ware(id, &macro_name, page))
        }
        None => {
            ext.warnings.push(Warning::new(
                None,
                "template",
                format!("no ware of the game or extension in view makes {:?}: none is written (name a template that has one, or --game with the template's game, to sell it)", t.macro_name),
            ));
            None
        }
    };
    if let Some(ware) = ware {
        files.push(("libraries/wares.xml".into(), xml::wares(&ware).into_bytes()));
    }
    files.push((
        "t/0001-l044.xml".into(),
        xml::texts(page, &name, &description).into_bytes(),
    ));
    files.extend(made.files);

    if spec.pack {
        let entries: Vec<(String, &[u8])> =
            files.iter().map(|(p, b)| (p.clone(), &b[..])).collect();
        let (cat, dat) = crate::formats::catalog::pack_bytes(&entries, 0);
        files = vec![("ext_01.dat".into(), dat), ("ext_01.cat".into(), cat)];
    }
    files.push((
        "content.xml".into(),
        xml::content(&folder, &name, &description, t.extension.as_deref()).into_bytes(),
    ));
    ext.files = files
        .into_iter()
        .map(|(p, b)| (PathBuf::from(p), b))
        .collect();
    Ok(ext)
}

/// A ship built as meshes and empties becomes a whole X4 extension, cloned from a template ship.
///
/// `scene` follows the authoring convention (a mesh node is a part, its children `<part>-lod1..3`
/// and `<part>-collision` those pieces; an empty with a `tags` extra is a connection; an untagged
/// `con_weapon*`, `con_turret*`, `con_shield*`, `con_engine*` a slot of the ship's size; the
/// hierarchy gives parents and offsets). `game` is where a template named by name is looked up.
///
/// ```
/// // A part: any mesh (here hangar's sample wedge); hardpoints would be empties with `tags`.
/// let (scene, _) = hangar::open("../samples/wedge-lod0.xmf")?.to_scene()?;
/// // The template: a ship macro file (usually a game's or a mod's; here a small one).
/// let dir = std::env::temp_dir().join("hangar-doc-new-ship");
/// let macros = dir.join("assets/units/size_s/macros");
/// std::fs::create_dir_all(&macros)?;
/// let template = macros.join("ship_x_macro.xml");
/// std::fs::write(
///     &template,
///     r#"<macros><macro name="ship_x_macro" class="ship_s"><component ref="ship_x"/></macro></macros>"#,
/// )?;
/// let mut spec = hangar::NewShip::new(template.to_string_lossy(), "ship_my_s_01");
/// spec.name = Some("My Ship".into());
/// let ext = hangar::new_ship(&scene, &spec, None)?;
/// assert!(ext.files().iter().any(|(p, _)| p.ends_with("index/macros.xml")));
/// ext.write_to(&std::env::temp_dir().join("hangar-doc-ship_my_s_01"), true)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn new_ship(scene: &Scene, spec: &NewShip, game: Option<&GameView>) -> Result<NewExtension> {
    new_ship_with_progress(scene, spec, game, &|_, _| {})
}

/// New content of any class (a turret, weapon, missile launcher, bullet, effect, dock area,
/// docking bay, station module, engine, ship...) as a whole X4 extension, cloned from a template
/// macro of that class: [`new_ship`]'s authoring convention, the class's asset folder (where the
/// template lies), its ware as the template's, plus what moves and shines. Each animation of the
/// scene (a Blender action named after its state: `gun_firing`, `dockingbay_opening`, `loop`)
/// becomes that state of the component's `.ani` and `<animations>`; each light (KHR_lights_punctual;
/// its string properties the game's attributes, `light` = `omni|spotlight|arealight|box` where the
/// glTF type does not say it) a light of the part it hangs from; a `restrictions` property a
/// connection's `<restrictions>`. Every connection the template's macro fills (a cockpit, storage,
/// docks) is written: where the scene places it, else where the template's component has it.
///
/// ```
/// let (scene, _) = hangar::open("../samples/wedge-lod0.xmf")?.to_scene()?;
/// let dir = std::env::temp_dir().join("hangar-doc-new-component");
/// let macros = dir.join("assets/props/weaponsystems/energy/macros");
/// std::fs::create_dir_all(&macros)?;
/// let template = macros.join("weapon_x_macro.xml");
/// std::fs::write(
///     &template,
///     r#"<macros><macro name="weapon_x_macro" class="weapon"><component ref="weapon_x"/></macro></macros>"#,
/// )?;
/// let spec = hangar::NewComponent::new(template.to_string_lossy(), "weapon_my_m_01");
/// let ext = hangar::new_component(&scene, &spec, None)?;
/// assert!(ext
///     .files()
///     .iter()
///     .any(|(p, _)| p.ends_with("assets/props/weaponsystems/energy/weapon_my_m_01.xml")));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn new_component(
    scene: &Scene,
    spec: &NewComponent,
    game: Option<&GameView>,
) -> Result<NewExtension> {
    new_component_with_progress(scene, spec, game, &|_, _| {})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Node;

    /// An extension folder holding one macro of `class` named `m_macro` (component `m`).
    fn template_mod(test: &str, class: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("hangar-author-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let macros = dir.join("assets/units/size_m/macros");
        std::fs::create_dir_all(&macros).unwrap();
        std::fs::write(dir.join("content.xml"), "<content id=\"tmod\"/>").unwrap();
        std::fs::write(
            macros.join("m_macro.xml"),
            format!("<macros><macro name=\"m_macro\" class=\"{class}\"><component ref=\"m\"/><properties><identification name=\"{{1,1}}\"/></properties></macro></macros>"),
        )
        .unwrap();
        std::fs::create_dir_all(dir.join("index")).unwrap();
        std::fs::write(
            dir.join("index/macros.xml"),
            "<diff><add sel=\"/index\"><entry name=\"m_macro\" value=\"extensions\\tmod\\assets\\units\\size_m\\macros\\m_macro\"/><entry name=\"taken\" value=\"x\"/></add></diff>",
        )
        .unwrap();
        macros.join("m_macro.xml")
    }

    fn one_part() -> Scene {
        let mut s = Scene {
            meshes: vec![lod::positions_mesh(
                "m",
                vec![
                    [0.0, 0.0, 0.0],
                    [1.0, 0.0, 0.0],
                    [0.0, 1.0, 0.0],
                    [0.0, 0.0, 1.0],
                ],
                vec![0, 1, 2, 0, 3, 1, 0, 2, 3, 1, 3, 2],
            )],
            ..Default::default()
        };
        let mut n = Node::new("hull");
        n.mesh = Some(0);
        s.nodes.push(n);
        s
    }

    #[test]
    fn bad_templates_and_taken_ids_are_refused() {
        let weapon = template_mod("weapon", "weapon");
        let e = new_ship(
            &one_part(),
            &NewShip::new(weapon.to_string_lossy(), "a"),
            None,
        )
        .unwrap_err();
        assert!(e.message.contains("not a ship macro"), "{e}");
        let ship = template_mod("ship", "ship_m");
        let e = new_ship(
            &one_part(),
            &NewShip::new(ship.to_string_lossy(), "taken"),
            None,
        )
        .unwrap_err();
        assert!(e.message.contains("already used"), "{e}");
        let e = new_ship(
            &one_part(),
            &NewShip::new(ship.to_string_lossy(), "bad id"),
            None,
        )
        .unwrap_err();
        assert!(e.message.contains("not an id"), "{e}");
        let ext = new_ship(
            &one_part(),
            &NewShip::new(ship.to_string_lossy(), "fresh"),
            None,
        )
        .unwrap();
        let names: Vec<String> = ext
            .files()
            .iter()
            .map(|f| f.0.display().to_string())
            .collect();
        assert_eq!(names.len(), 9, "{names:?}");
        assert!(names.contains(&"assets/units/size_m/fresh_data/hull-collision.xmf".to_string()));
        let content = &ext.files().last().unwrap().1;
        assert!(String::from_utf8_lossy(content).contains("<dependency id=\"tmod\"/>"));
        let out = ship.parent().unwrap().join("out");
        std::fs::create_dir_all(&out).unwrap();
        std::fs::write(out.join("x"), "").unwrap();
        assert!(ext.write_to(&out, false).is_err());
        assert_eq!(ext.write_to(&out, true).unwrap().len(), 9);
    }

    /// A template folder with one macro of `class` at `folder/macros/m_macro.xml`, its component
    /// `m` beside it (`component` is the text of its `<connections>`), the macro filling `fills`.
    fn template_at(
        test: &str,
        folder: &str,
        class: &str,
        component: &str,
        fills: &[&str],
    ) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("hangar-author-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let macros = dir.join(folder).join("macros");
        std::fs::create_dir_all(&macros).unwrap();
        std::fs::write(dir.join("content.xml"), "<content id=\"TemplateMod\"/>").unwrap();
        let conns: String = fills
            .iter()
            .map(|f| format!("<connection ref=\"{f}\"><macro ref=\"x_macro\" connection=\"c\"/></connection>"))
            .collect();
        std::fs::write(
            macros.join("m_macro.xml"),
            format!("<macros><macro name=\"m_macro\" class=\"{class}\"><component ref=\"m\"/><connections>{conns}</connections></macro></macros>"),
        )
        .unwrap();
        std::fs::write(
            dir.join(folder).join("m.xml"),
            format!("<components><component name=\"m\" class=\"{class}\"><connections>{component}</connections></component></components>"),
        )
        .unwrap();
        macros.join("m_macro.xml")
    }

    fn text_of(ext: &NewExtension, end: &str) -> String {
        let (_, b) = ext
            .files()
            .iter()
            .find(|(p, _)| p.to_string_lossy().ends_with(end))
            .unwrap_or_else(|| panic!("no {end}"));
        String::from_utf8(b.clone()).unwrap()
    }

    /// A dock part `door` that turns 90 degrees about Y over 1 s, with a lamp and a spot on it and
    /// a hardpoint restricted to turn about Y.
    fn moving_lit() -> Scene {
        use crate::model::{Animation, Channel, Interpolation, Light, LightKind, Property};
        let mut s = one_part();
        s.nodes[0].name = "door".into();
        s.nodes[0].translation = glam::Vec3::new(1.0, 2.0, 3.0);
        s.lights = vec![
            Light {
                name: "lamp".into(),
                kind: LightKind::Point,
                color: [1.0, 128.0 / 255.0, 0.0],
                intensity: 2.0,
                range: Some(5.0),
            },
            Light {
                name: "beam".into(),
                kind: LightKind::Spot {
                    inner: 0.0,
                    outer: std::f32::consts::FRAC_PI_4,
                },
                color: [1.0, 1.0, 1.0],
                intensity: 0.5,
                range: Some(12.5),
            },
        ];
        let mut lamp = Node::new("lamp");
        lamp.light = Some(0);
        lamp.parent = Some(0);
        lamp.translation = glam::Vec3::new(0.5, 0.0, 0.0);
        lamp.extras.insert("lighteffect".into(), "1".into());
        lamp.extras.insert("trigger".into(), "1".into());
        s.nodes.push(lamp);
        let mut beam = Node::new("beam");
        beam.light = Some(1);
        beam.extras.insert("light".into(), "spotlight".into());
        s.nodes.push(beam);
        let mut hp = Node::new("con_dock");
        hp.parent = Some(0);
        hp.extras.insert("tags".into(), "dock medium".into());
        hp.extras
            .insert("restrictions".into(), "rotation_y rotation_x".into());
        s.nodes.push(hp);
        let q = glam::Quat::from_rotation_y(std::f32::consts::FRAC_PI_2);
        s.animations.push(Animation {
            name: "dockingbay_opening".into(),
            channels: vec![
                Channel {
                    node: 0,
                    property: Property::Rotation,
                    interpolation: Interpolation::Linear,
                    times: vec![0.0, 1.0].into(),
                    values: vec![0.0, 0.0, 0.0, 1.0, q.x, q.y, q.z, q.w].into(),
                },
                // On a light: no part, named in a warning.
                Channel {
                    node: 1,
                    property: Property::Translation,
                    interpolation: Interpolation::Step,
                    times: vec![0.0].into(),
                    values: vec![0.0, 0.0, 0.0].into(),
                },
            ],
            ..Default::default()
        });
        s
    }

    #[test]
    fn a_dock_moves_and_shines_as_the_scene_says() {
        let template = template_at(
            "dock",
            "assets/structures/dock",
            "dockingbay",
            "<connection name=\"space\" tags=\"dockingbay\"><offset/></connection>",
            &[],
        );
        let spec = NewComponent::new(template.to_string_lossy(), "dock_new");
        assert!(new_ship(&moving_lit(), &spec, None)
            .unwrap_err()
            .message
            .contains("not a ship macro"));
        let ext = new_component(&moving_lit(), &spec, None).unwrap();
        let comp = text_of(&ext, "assets/structures/dock/dock_new.xml");
        assert!(comp.contains("class=\"dockingbay\""), "{comp}");
        assert!(
            comp.contains("<connection name=\"space\" tags=\"dockingbay\"><offset/></connection>"),
            "{comp}"
        );
        assert!(
            comp.contains("<animation name=\"dockingbay_opening\" start=\"0\" end=\"30\"/>"),
            "{comp}"
        );
        assert!(comp.contains("tags=\"part animation\""), "{comp}");
        // The lamp on the door, its colour in 0-255; the beam the component's own, a spot of 90 degrees.
        assert!(comp.contains("<omni name=\"lamp\" r=\"255\" g=\"128\" b=\"0\" range=\"5\" intensity=\"2\" lighteffect=\"1\" trigger=\"1\">"), "{comp}");
        assert!(
            comp.contains("<position x=\"-0.5\" y=\"0\" z=\"0\"/>"),
            "{comp}"
        );
        assert!(comp.contains("<spot name=\"beam\" r=\"255\" g=\"255\" b=\"255\" range=\"12.5\" intensity=\"0.5\" angle=\"90\">"), "{comp}");
        let door_part = comp.find("<part name=\"door\">").unwrap();
        assert!(comp.find("<omni").unwrap() > door_part && comp.find("<spot").unwrap() < door_part);
        assert!(comp.contains("<restrictions>\n\t\t\t\t\t<restriction type=\"rotation_y\"/>\n\t\t\t\t\t<restriction type=\"rotation_x\"/>\n\t\t\t\t</restrictions>"), "{comp}");
        assert!(!comp.contains("restrictions=\""), "{comp}");
        assert!(ext
            .warnings
            .iter()
            .any(|w| w.message.contains("moves \"lamp\", which is no part")));
        // The dependency is the template's content id; no ware for a dock without one.
        assert!(text_of(&ext, "content.xml").contains("<dependency id=\"TemplateMod\"/>"));
        assert!(!ext
            .files()
            .iter()
            .any(|(p, _)| p.ends_with("libraries/wares.xml")));
        // The state read back: the door at half its turn at 0.5 s, about Y.
        let ani = text_of_bytes(&ext, "assets/structures/dock/dock_new_data.ani");
        let (a, _) = crate::formats::ani::read(&ani).unwrap();
        assert_eq!(
            crate::formats::ani::states(&a),
            vec![("dockingbay_opening".to_string(), vec!["door".to_string()])]
        );
        let (anims, _) = crate::formats::ani::animations(&a, &mut |_| Some(0));
        let c = &anims[0].channels[0];
        let at = |t: f32| {
            let k = c.times.iter().position(|&x| x >= t).unwrap();
            glam::Quat::from_slice(&c.values[k * 4..k * 4 + 4])
        };
        let half = glam::Quat::from_rotation_y(std::f32::consts::FRAC_PI_4);
        let whole = glam::Quat::from_rotation_y(std::f32::consts::FRAC_PI_2);
        assert!(at(1.0).dot(whole).abs() > 0.9999, "{:?}", at(1.0));
        let mid = at(0.0).slerp(at(1.0), 0.5);
        assert!(mid.dot(half).abs() > 0.9999);
    }

    #[test]
    fn a_cubic_move_is_written_as_bezier_keys() {
        use crate::model::{Channel, Interpolation, Property};
        let template = template_at(
            "cubic",
            "assets/structures/dock",
            "dockingbay",
            "<connection name=\"space\" tags=\"dockingbay\"><offset/></connection>",
            &[],
        );
        // The door eases from x 0 to x 2 over 1 s (tangents 0), then on to x 3 by 2 s leaving at
        // 1 a second: (in-tangent, value, out-tangent) a key, as glTF's CUBICSPLINE.
        let mut scene = moving_lit();
        let a = &mut scene.animations[0];
        a.channels = vec![Channel {
            node: 0,
            property: Property::Translation,
            interpolation: Interpolation::CubicSpline,
            times: vec![0.0, 1.0, 2.0].into(),
            values: vec![
                0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, //
                0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 1.0, 0.0, 0.0, //
                0.0, 0.0, 0.0, 3.0, 0.0, 0.0, 0.0, 0.0, 0.0,
            ]
            .into(),
        }];
        let curve = a.channels[0].clone();
        let spec = NewComponent::new(template.to_string_lossy(), "dock_cubic");
        let ext = new_component(&scene, &spec, None).unwrap();
        let bytes = text_of_bytes(&ext, "assets/structures/dock/dock_cubic_data.ani");
        let (ani, _) = crate::formats::ani::read(&bytes).unwrap();
        // A key a glTF key, bezier (5) on every axis: the curve is not resampled.
        let keys = ani.fields["keys"].as_array().unwrap();
        assert_eq!(keys.len(), 3);
        assert!(keys
            .iter()
            .all(|k| k["interpolationX"] == 5 && k["interpolationZ"] == 5));
        assert_eq!(
            keys[1]["value"][0], -2.0,
            "x mirrored into the game's frame"
        );
        // Read back, on the glTF's Hermite curve at and between the keys (x mirrored back).
        let (anims, _) = crate::formats::ani::animations(&ani, &mut |_| Some(0));
        let back = &anims[0].channels[0];
        for t in [0.0, 1.0 / 6.0, 0.5, 1.0, 1.25, 1.5, 2.0] {
            let want = curve.value_at(t).unwrap();
            let got = back.value_at(t).unwrap();
            assert!((want[0] - got[0]).abs() < 1e-3, "at {t}: {want:?} {got:?}");
        }
        assert!((curve.value_at(0.5).unwrap()[0] - 1.0).abs() < 1e-6);
        assert!((curve.value_at(1.0 / 6.0).unwrap()[0] - 2.0 * 0.074_074).abs() < 1e-4);
    }

    fn text_of_bytes(ext: &NewExtension, end: &str) -> Vec<u8> {
        ext.files()
            .iter()
            .find(|(p, _)| p.to_string_lossy().ends_with(end))
            .map(|(_, b)| b.clone())
            .unwrap_or_else(|| panic!("no {end}"))
    }

    #[test]
    fn a_bullet_may_be_parts_without_geometry_and_a_ship_may_not() {
        // A bullet's template whose component is out of view: the class's own connections, less
        // the one the scene places itself.
        let dir = std::env::temp_dir().join(format!("hangar-author-bullet-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let macros = dir.join("assets/fx/weaponfx/macros");
        std::fs::create_dir_all(&macros).unwrap();
        let template = macros.join("bullet_t_macro.xml");
        std::fs::write(
            &template,
            "<macros><macro name=\"bullet_t_macro\" class=\"bullet\"><component ref=\"bullet_t\"/></macro></macros>",
        )
        .unwrap();
        let mut scene = Scene::default();
        for (name, tags, z) in [
            ("space", "bullet", 0.0),
            ("con_fx", "effect", 1.0),
            ("glow", "part", 2.0),
        ] {
            let mut n = Node::new(name);
            n.translation = glam::Vec3::new(0.0, 0.0, z);
            n.extras.insert("tags".into(), tags.into());
            scene.nodes.push(n);
        }
        let spec = NewComponent::new(template.to_string_lossy(), "bullet_new");
        let ext = new_component(&scene, &spec, None).unwrap();
        let comp = text_of(&ext, "assets/fx/weaponfx/bullet_new.xml");
        assert!(comp.contains("class=\"bullet\""), "{comp}");
        assert!(comp.contains("<part name=\"glow\"/>"), "{comp}");
        assert_eq!(comp.matches("name=\"space\"").count(), 1, "{comp}");
        assert_eq!(comp.matches("name=\"position\"").count(), 1, "{comp}");
        assert!(!ext
            .files()
            .iter()
            .any(|(p, _)| p.to_string_lossy().ends_with(".xmf")));
        // No part at all: refused, whatever the class.
        let refused = new_component(&Scene::default(), &spec, None).unwrap_err();
        assert!(refused.message.contains("no part"), "{}", refused.message);
        // A ship is seen: geometry required.
        let ship = template_mod("bullet-ship", "ship_m");
        let spec = NewComponent::new(ship.to_string_lossy(), "ship_new");
        let refused = new_component(&scene, &spec, None).unwrap_err();
        assert!(refused.message.contains("no mesh"), "{}", refused.message);
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_dir_all(ship.ancestors().nth(5).unwrap());
    }

    #[test]
    fn what_the_game_cannot_read_is_refused() {
        let template = template_at("refuse", "assets/structures/dock", "dockingbay", "", &[]);
        let spec = NewComponent::new(template.to_string_lossy(), "dock_new");
        let mut s = moving_lit();
        s.animations[0].name = "door opening".into();
        let e = new_component(&s, &spec, None).unwrap_err();
        assert!(
            e.message.contains("\"door opening\" is not a state name"),
            "{e}"
        );
        let mut s = moving_lit();
        s.lights[1].kind = crate::model::LightKind::Directional;
        s.nodes[2].extras.clear();
        let e = new_component(&s, &spec, None).unwrap_err();
        assert!(e.message.contains("a sun"), "{e}");
        s.nodes[2].extras.insert("light".into(), "torch".into());
        let e = new_component(&s, &spec, None).unwrap_err();
        assert!(e.message.contains("\"torch\" names no kind"), "{e}");
    }

    #[test]
    fn connections_the_macro_fills_come_from_the_template() {
        // con_cockpit hangs from the template's part `body` (at 0 0 10), which the scene lacks.
        let component = "<connection name=\"space\" tags=\"ship ship_m\"><offset/></connection>\
            <connection name=\"body_c\" tags=\"part\"><offset><position x=\"0\" y=\"0\" z=\"10\"/></offset><parts><part name=\"body\"/></parts></connection>\
            <connection name=\"con_cockpit\" tags=\"cockpit\" parent=\"body\"><offset><position x=\"1\" y=\"2\" z=\"3\"/></offset></connection>\
            <connection name=\"con_storage01\" tags=\"storage\"><offset><position x=\"0\" y=\"1\" z=\"0\"/></offset></connection>";
        let template = template_at(
            "fills",
            "assets/units/size_m",
            "ship_m",
            component,
            &["con_cockpit", "con_storage01", "con_dock_xs"],
        );
        let mut s = one_part();
        let mut storage = Node::new("con_storage01");
        storage.extras.insert("tags".into(), "storage".into());
        storage.translation = glam::Vec3::new(0.0, 5.0, 0.0);
        s.nodes.push(storage);
        let ext = new_ship(
            &s,
            &NewComponent::new(template.to_string_lossy(), "ship_new"),
            None,
        )
        .unwrap();
        let comp = text_of(&ext, "assets/units/size_m/ship_new.xml");
        assert!(
            comp.contains("<connection name=\"space\" tags=\"ship ship_m\"><offset/></connection>"),
            "{comp}"
        );
        // Taken from the template, carried through `body` to the component's frame.
        assert!(comp.contains("<connection name=\"con_cockpit\" tags=\"cockpit\">\n\t\t\t\t<offset>\n\t\t\t\t\t<position x=\"1\" y=\"2\" z=\"13\"/>"), "{comp}");
        // Placed by the scene: once, where the scene has it.
        assert_eq!(comp.matches("name=\"con_storage01\"").count(), 1, "{comp}");
        assert!(
            comp.contains("<position x=\"-0\" y=\"5\" z=\"0\"/>"),
            "{comp}"
        );
        let said: Vec<&str> = ext.warnings.iter().map(|w| w.message.as_str()).collect();
        assert!(said.contains(&"con_cockpit taken from the template at (1.000, 2.000, 13.000): place an empty named con_cockpit to move it"), "{said:?}");
        assert!(
            said.iter().any(|w| w.contains(
                "fills con_dock_xs, which neither the scene nor the template's component has"
            )),
            "{said:?}"
        );
        assert!(
            !said.iter().any(|w| w.contains("con_storage01")),
            "{said:?}"
        );
    }
}
