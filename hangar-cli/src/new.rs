//! `hangar new ship|component ...`: a ship (or any content) built in Blender (or any tool) as meshes
//! and empties becomes a whole X4 extension. The work is `hangar::new_component`'s; this file parses
//! arguments and prints.

use anyhow::{Context, Result};
use clap::Subcommand;
use std::path::{Path, PathBuf};

#[derive(Subcommand)]
pub enum NewCommand {
    /// A ship you can buy in the game, from a glTF/GLB of meshes and empties and a template ship.
    ///
    /// The scene, as built in Blender (or any tool):
    ///   - a mesh object is a part named after the object; its mesh is the part's lod0. Children
    ///     named `<part>-lod1`..`-lod3` and `<part>-collision` give those meshes; LODs not given
    ///     are made (each at most 60% of the triangles of the one before, outline kept), and a
    ///     collision mesh is made for every part whose tags lack `nocollision`;
    ///   - an empty with a `tags` custom property (glTF extras) is a connection named after the
    ///     empty (`tags="weapon medium standard"`); its other string properties (`group`,
    ///     `value`...) become the connection's attributes. An empty whose tags hold `part` is a
    ///     part without geometry. An untagged empty named `con_weapon*`, `con_turret*`,
    ///     `con_shield*` or `con_engine*` gets that slot's tags for the ship's size;
    ///   - the hierarchy gives each part's and connection's `parent` and its offset;
    ///   - actions (glTF animations) and lights: see `hangar new component --help`.
    ///
    /// From the template (a ship macro file, or a macro name found through --game): the macro
    /// (renamed, its properties and connections kept), the component's connections the scene does
    /// not place (`space`, `position`, `container`, and every one the macro fills: a cockpit,
    /// storage, docks, taken where the template has them, with a warning naming each), the ware
    /// (price, production, owners), the ship class and size, and a dependency on the template's
    /// extension (by its content id).
    ///
    ///   hangar new ship my_ship.glb --template ship_arg_m_frigate_01_a_macro --game "C:/Games/X4 Foundations" --id ship_my_m_01 --name "My Frigate"
    ///   hangar new ship my_ship.glb --template extensions/mymod/assets/units/size_m/macros/ship_x_macro.xml --id ship_my_m_01 --out extensions/ship_my_m_01
    ///
    /// Then `hangar validate extensions/ship_my_m_01` checks it, and the game loads it as it is.
    #[command(verbatim_doc_comment)]
    Ship(NewArgs),
    /// New content of any kind from a scene and a template macro of its class: a turret, weapon,
    /// missile launcher, bullet, effect, dock area, docking bay, pier, station module, engine,
    /// shield generator or ship.
    ///
    /// The scene follows `hangar new ship`'s convention (mesh objects are parts, tagged empties
    /// connections), and what moves and shines comes along:
    ///   - each action (a glTF animation) is a state, named as the game names it
    ///     (`gun_firing`, `weapon_firing`, `dockingbay_opening`, `landinggears_activating`,
    ///     `loop`...): the parts it moves get a track of the component's .ani (step and linear
    ///     keys as keys) and an <animation> entry (frames at 30 a second);
    ///   - each light (Blender point, spot, or any light with a `light` property) is a light of
    ///     the part it hangs from, or of the component: colour, range and intensity from the
    ///     light, its string properties as the game's attributes (`light` = omni, spotlight,
    ///     arealight or box; `lighteffect`, `trigger`, `shadow`, `specularintensity`, `areax`...);
    ///   - a `restrictions` property on a part or empty (`rotation_y`, several separated by spaces)
    ///     is its connection's <restrictions>, as turret chains carry them.
    ///
    /// The class, the asset folder the game keeps it in (where the template lies:
    /// assets/props/weaponsystems/..., assets/structures/..., assets/fx/...), the macro, the ware,
    /// the index entries, the texts and content.xml come from the template as `new ship` takes
    /// them.
    ///
    ///   hangar new component turret.glb --template turret_arg_m_laser_01_macro --game "C:/Games/X4 Foundations" --id turret_my_m_01 --name "My Turret"
    ///   hangar new component dock.glb --template extensions/mymod/assets/structures/dock/macros/dockarea_x_macro.xml --id dockarea_my_01
    #[command(verbatim_doc_comment)]
    Component(NewArgs),
}

/// What `new ship` and `new component` take.
#[derive(clap::Args)]
pub struct NewArgs {
    /// The scene: a .glb or .gltf.
    scene: PathBuf,
    /// The macro to clone: a macro file, or a macro name looked up through --game.
    #[arg(long, value_name = "MACRO")]
    template: String,
    /// The new component's name (letters, digits, _); the macro is ID_macro, the ware ID.
    #[arg(long)]
    id: String,
    /// The name in the game (default: the id).
    #[arg(long, value_name = "TEXT")]
    name: Option<String>,
    /// The description in the game.
    #[arg(long, value_name = "TEXT")]
    description: Option<String>,
    /// Where a template named by name is found: a game folder (with its catalogs and
    /// extensions) or an extension folder.
    #[arg(long, value_name = "DIR")]
    game: Option<PathBuf>,
    /// LODs below lod0 made where the scene gives none (0 to 3).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(0..=3))]
    lods: u32,
    /// Put everything but content.xml into ext_01.cat/.dat.
    #[arg(long)]
    pack: bool,
    /// write (default): a material the game's library lacks (any without a collection, like
    /// Blender's `Red Paint`) becomes `ID.red_paint`, an entry of a
    /// libraries/material_library.xml patch, and its images gzip'd DDS textures under
    /// assets/textures/ID/, as `convert --textures write` writes them; the game's own
    /// materials (`collection.material`, checked against --game's library) are named, not
    /// copied. none: the XMFs name the scene's materials and nothing more is written.
    #[arg(long, value_enum, default_value_t = Textures::Write)]
    textures: Textures,
    /// The extension folder to write (default: ./ID); its name is the extension's id.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Write into an --out folder that is not empty.
    #[arg(long)]
    force: bool,
    /// Print what was written as JSON.
    #[arg(long)]
    json: bool,
}

/// `--textures`: whether new materials and their images are written.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Textures {
    Write,
    None,
}

pub fn run(cmd: NewCommand, verbose: bool) -> Result<bool> {
    let (args, ship) = match cmd {
        NewCommand::Ship(a) => (a, true),
        NewCommand::Component(a) => (a, false),
    };
    let NewArgs {
        scene,
        template,
        id,
        name,
        description,
        game,
        lods,
        pack,
        textures,
        out,
        force,
        json,
    } = args;
    let out = out.unwrap_or_else(|| PathBuf::from(&id));
    if out.exists() && !out.is_dir() {
        anyhow::bail!(
            "{}: --out names a file; it must be a folder (the extension's, made when missing)",
            out.display()
        );
    }
    let folder = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .context("--out names no folder")?;
    let opened = hangar::open(&scene)?;
    let (model, warnings) = opened.to_scene()?;
    crate::print_warnings(&scene, &warnings, verbose);
    let view = game.as_deref().map(hangar::GameView::open).transpose()?;
    let mut spec = hangar::NewComponent::new(template, id);
    spec.name = name;
    spec.description = description;
    spec.lods = lods;
    spec.folder = Some(folder);
    spec.pack = pack;
    spec.textures = matches!(textures, Textures::Write);
    if spec.textures {
        let (images, warnings) = opened.images()?;
        crate::print_warnings(&scene, &warnings, verbose);
        spec.images = images;
    }
    let bar = crate::files_bar(model.nodes.len());
    let progress = |done: usize, total: usize| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    };
    let ext = if ship {
        hangar::new_ship_with_progress(&model, &spec, view.as_ref(), &progress)?
    } else {
        hangar::new_component_with_progress(&model, &spec, view.as_ref(), &progress)?
    };
    bar.finish_and_clear();
    crate::print_warnings(&scene, &ext.warnings, verbose);
    let written = ext.write_to(&out, force)?;
    report(&out, &written, &ext, json)?;
    Ok(true)
}

fn report(out: &Path, written: &[PathBuf], ext: &hangar::NewExtension, json: bool) -> Result<()> {
    if json {
        let files: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
        out!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "extension": out.display().to_string(),
                "files": files,
                "parts": ext.parts,
                "connections": ext.connections,
                "lods_made": ext.lods_made,
                "collisions_made": ext.collisions_made,
            }))?
        );
    } else {
        out!(
            "{}: {} files; {} parts, {} connections, {} LODs and {} collision meshes made",
            out.display(),
            written.len(),
            ext.parts,
            ext.connections,
            ext.lods_made,
            ext.collisions_made
        );
    }
    Ok(())
}
