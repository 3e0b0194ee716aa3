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

/// What [`new_ship`] makes: the template, the new ship's id and texts, how many LODs.
#[derive(Debug, Clone)]
pub struct NewShip {
    /// A ship macro: a macro file, or a macro's name found through the game view.
    pub template: String,
    /// The component's name; its macro is `<id>_macro`, its ware `<id>`.
    pub id: String,
    /// The ship's name in the game (default: the id).
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
    /// [`images`]: NewShip::images
    pub textures: bool,
    /// The images the scene's materials are drawn with, by material name (a glTF's:
    /// [`crate::Opened::images`]).
    pub images: Vec<crate::textures::Edit>,
}

impl NewShip {
    /// A spec with the defaults: the name is the id, two LODs, the folder named as the id.
    pub fn new(template: impl Into<String>, id: impl Into<String>) -> NewShip {
        NewShip {
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
    spec: &NewShip,
    game: Option<&GameView>,
    progress: &(dyn Fn(usize, usize) + Sync),
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
    let (size, size_word) = size_of(&t.class);
    let authored = scene::read(scene, size_word)?;
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
    let units = format!("assets/units/size_{size}");
    let data = format!("{units}/{id}_data");
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
    let mut part_conns = Vec::new();
    for (p, meshes) in authored.parts.iter().zip(&part_meshes) {
        let mut n = format!("{}_connection", p.name.replace(' ', "_"));
        let mut k = 2;
        while taken.contains(&n.to_lowercase()) {
            n = format!("{}_connection{k}", p.name.replace(' ', "_"));
            k += 1;
        }
        taken.push(n.to_lowercase());
        part_conns.push((n, p, meshes));
    }
    let placed: Vec<&str> = authored
        .connections
        .iter()
        .map(|c| c.name.as_str())
        .chain(part_conns.iter().map(|(n, _, _)| n.as_str()))
        .collect();
    let kept = match &t.component_text {
        Some(c) => xml::unplaced_connections(c, &placed)?,
        None => {
            ext.warnings.push(Warning::new(
                None,
                "template",
                "the template's component was not found: only the scene's connections are written",
            ));
            Vec::new()
        }
    };
    let backslashed = |p: &str| format!("extensions\\{folder}\\{}", p.replace('/', "\\"));
    let component = xml::component(
        id,
        &component_class,
        &backslashed(&data),
        &kept,
        &part_conns,
        &authored.connections,
    );
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
        Some(w) => xml::ware(w, id, &macro_name, page, described)?,
        None => {
            ext.warnings.push(Warning::new(
                None,
                "template",
                format!("no ware of the game or extension in view makes {:?}: a plain ware with a made-up price is written", t.macro_name),
            ));
            xml::plain_ware(id, &macro_name, page)
        }
    };
    files.push(("libraries/wares.xml".into(), xml::wares(&ware).into_bytes()));
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
}
