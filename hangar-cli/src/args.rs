//! The command line's arguments (clap) and their translation into the library's options.

use anyhow::Result;
use clap::{Parser, Subcommand};
use hangar::pictures as dds;
use std::path::{Path, PathBuf};

#[derive(Parser)]
#[command(
    name = "hangar",
    version = concat!(env!("CARGO_PKG_VERSION"), " (commit ", env!("HANGAR_COMMIT"), ")"),
    about = "Inspect, validate and convert X4 / X Rebirth and StarCraft II model files",
    long_about = "hangar reads game model files, tells you what is in them, checks them before the game \
crashes on them, and converts them to glTF 2.0 and back.\n\n\
Formats are recognised by their first bytes, not their extension.\n\
Supported today: XMF (X4 static meshes, visual and -collision), M3 and .m3a (StarCraft II / Heroes, \
MD34 and MD33: to glTF with skeleton, skin and animations, byte-exact rewrite, JSON dump and back, \
game-ready M3 from glTF), \
XAC actors with XSM motions, XPM, X4 part animations (.ani) and component folders, \
X Rebirth Anark UI files (.bgf as readable XML and back, .bsg to glTF, .bgp to Graphviz), \
glTF 2.0 (.glb/.gltf) in and out, OBJ out, and hangar's own JSON dump in and out.\n\n\
Containers: X4 catalogs (.cat + .dat) and StarCraft II MPQ archives (.SC2Map, .SC2Mod, \
.SC2Components, .mpq, .s2ma): `hangar cat` lists, verifies, extracts, packs and compares them, \
`hangar info` describes an archive, and a file inside either is named GAME::path or ARCHIVE::path \
(`hangar convert Map.SC2Map::Assets/Units/x.m3 x.glb`).",
    after_help = "Examples:\n  \
hangar info part_main-lod0.xmf\n  \
hangar info --json part_main-lod0.xmf | jq .triangles\n  \
hangar validate assets/**/*.xmf\n  \
hangar convert part_main-lod0.xmf part_main.glb\n  \
hangar convert part_main.glb part_main-lod0.xmf        # game-ready visual mesh\n  \
hangar convert part_main.glb part_main-collision.xmf   # collision mesh, as the game demands\n  \
hangar dump part_main-lod0.xmf > part.json             # edit, then:\n  \
hangar convert part.json part_main-lod0.xmf\n  \
hangar convert Marine.m3 marine.glb\n  \
hangar convert hero.m3 --motion hero.m3a hero.glb       # add an .m3a's sequences\n  \
hangar convert model.glb Model.m3                      # from Blender into StarCraft II\n  \
hangar convert actor.xac --motion walk.xsm --motion smile.xpm actor.glb\n  \
hangar convert ship_part_folder ship.glb               # parts + their _data.ani states\n  \
hangar convert --textures copy ship.xml ship.gltf       # textures as PNG files in ship_textures/\n  \
hangar convert tex.dds tex.png                          # a cube map or array: its surfaces side by side\n  \
hangar convert tex.png tex.dds --format bc1             # BC7 by default, with every mip level\n  \
hangar convert extracted/assets out/ --to glb          # a whole folder, in parallel\n  \
hangar info \"X4::assets/units/size_s/ship_arg_s_fighter_01_data/part-lod0.xmf\"  # inside the game's catalogs\n  \
hangar convert \"X4::assets/units\" out/ --to glb       # a batch straight from the game (report.json)\n  \
hangar cat verify ext_01.cat                            # damaged by git? names the cause\n  \
hangar info Map.SC2Map                                  # an MPQ archive: files, sizes, models\n  \
hangar cat extract Map.SC2Map -o map                    # edit map/, then:\n  \
hangar cat pack map -o New.SC2Map                       # (listfile) made for the files as they are"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Also print notes: oddities of real files that hangar reads correctly (declared lengths that
    /// lie, exporter quirks). Without it only warnings, which mean a real problem, are printed.
    #[arg(short, long, global = true)]
    pub verbose: bool,
    /// The most bytes one command inflates from an MPQ archive (one file read, or the compressed
    /// files of one extraction or verification together), in bytes or with K, M or G (KiB, MiB,
    /// GiB); 2G unless given. A file declaring more is refused, named, and not written.
    #[arg(long, global = true, value_name = "SIZE", value_parser = parse_size)]
    pub max_inflate: Option<u64>,
}

/// A size as `--max-inflate` takes it: `4096`, `512K`, `64M`, `4G` (powers of 1024; `KiB` too).
fn parse_size(s: &str) -> std::result::Result<u64, String> {
    let t = s.trim();
    let lower = t.to_ascii_lowercase();
    let digits = lower.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let shift = match lower.get(digits.len()..).unwrap_or_default() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        u => {
            return Err(format!(
                "{u:?} is not a unit: K, M, G or T (powers of 1024)"
            ))
        }
    };
    let n: u64 = digits
        .trim()
        .parse()
        .map_err(|_| format!("{t:?} is not a size such as 4096, 512M or 4G"))?;
    n.checked_mul(1 << shift)
        .ok_or_else(|| format!("{t} is more bytes than can be counted"))
}

#[derive(Subcommand)]
pub enum Command {
    /// Show what a file holds: format, vertex and triangle counts, bones, sequences, chunks or
    /// sections, materials, warnings.
    Info {
        /// Files to describe.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Print JSON (always with top-level `vertices` and `triangles`; an array for several files).
        #[arg(long)]
        json: bool,
    },
    /// Print every field of a file as JSON. `hangar convert dump.json out.xmf` turns an edited dump
    /// back into the binary file (unchanged fields come back byte for byte).
    Dump { file: PathBuf },
    /// Check files for what breaks the game or a converter: index and reference bounds, material
    /// ranges, buffer sizes, the collision-mesh rule, bone parents and lookups, skin weights, morph
    /// indices, animation tables and key order. Exits with 1 when any file has an error.
    ///
    /// A mod folder is checked whole: an X4 / X Rebirth extension (a folder with content.xml,
    /// loose files and its own ext_*.cat / subst_*.cat) or a StarCraft II mod or map saved as a
    /// folder (*.SC2Mod, *.SC2Map). Every file is validated and every reference followed:
    /// content.xml, index entries to their files, macros to components, connections to macros,
    /// parts to their meshes, .ani states to parts, meshes' materials to the material library,
    /// its textures, wares to macros, {page,id} texts; SC2 data's models, their textures and
    /// animations. A path with '..', a drive or a network share is an error and is never read.
    ///
    ///   hangar validate extensions/my_ship_mod
    ///   hangar validate extensions/my_ship_mod --game "C:/Games/X4 Foundations" --json
    ///   hangar validate MyMod.SC2Mod --report report.html
    Validate {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Print the findings as JSON (a mod folder alone: one list of findings, each with
        /// severity, file, line, message and, for a reference whose target is missing, missing).
        #[arg(long)]
        json: bool,
        /// The game a mod folder is checked on (its folder: catalogs read as the game stacks
        /// them, with its extensions). Without it, references into the game are listed as not
        /// checked, never reported as errors.
        #[arg(long, value_name = "GAME")]
        game: Option<PathBuf>,
        /// Also write the mod as a page: its files as a tree, each with its findings, each
        /// reference a link to what it names.
        #[arg(long, value_name = "HTML")]
        report: Option<PathBuf>,
    },
    /// Convert INPUT to OUTPUT; the output's extension picks the type: .glb .gltf .obj .xmf .m3 .xac
    /// .xsm .xpm .ani .json .bgf .bgp .bsg .xml .dot .png .dds.
    ///
    /// A name ending in -collision.xmf makes a collision mesh (positions only, 32-bit indices, no
    /// materials), anything else a visual mesh. A file converted to its own format (XMF, M3, XAC, XSM,
    /// XPM, .ani) is rewritten byte for byte; a .json dump turns back into its binary file; a glTF
    /// becomes a game-ready XMF, an XAC actor (skinned meshes, materials, morph targets) or a
    /// StarCraft II M3 (.m3; .m3a for the sequences alone; see --modl-version).
    /// With a folder as INPUT and a .glb/.gltf OUTPUT, the folder is one X4 component: its parts
    /// (`*-lod0.xmf` as meshes, other LODs and `-collision` as marked nodes) and the `*_data.ani`
    /// beside them (one animation a state) become one scene. An X4 component XML (ship.xml) as INPUT
    /// becomes one scene with every part placed by its connection, hardpoint markers, lights and the
    /// .ani states; a `ship_data` folder uses the ship.xml beside it. A .glb/.gltf INPUT with an .xml
    /// OUTPUT writes the component back: the XML, `<name>_data/` with every part's XMFs, and the .ani.
    /// With a folder as OUTPUT, every supported
    /// file in INPUT (recursively) is converted into it with the extension given by --to.
    /// Anark UI files: a .bgf becomes the readable presentation .xml (and an .xml a .bgf), a .bsg
    /// scene graph a .glb node tree (nodes `AK<id>`, bounding boxes in extras), a .bgp a Graphviz .dot.
    /// Textures: a .dds, X4 .gz or .tga becomes a .png (a cube map's six faces, an array's layers
    /// side by side); a .png, .tga, .gz or .dds becomes a .dds (`--format`, `--mipmaps`), e.g.
    /// `hangar convert hull_diff.png hull_diff.dds --format bc1`.
    Convert {
        input: PathBuf,
        output: PathBuf,
        /// Output extension for folder conversion (glb, gltf, obj, json, or the files' own format).
        #[arg(long, default_value = "glb")]
        to: String,
        /// An animation file whose clips are added to the glTF output (repeatable): an M3 model's
        /// .m3a (sequences matched to bones by animation id), an XAC actor's .xsm (matched to
        /// nodes by name) or .xpm (matched to morph targets by name).
        #[arg(long = "motion", value_name = "FILE")]
        motions: Vec<PathBuf>,
        /// The MODL version of an .m3 or .m3a output, with the structure versions StarCraft II
        /// files of that version use: 23, 25, 26, 28 or 29 (default 29, as current game models).
        /// An M3 input is then rebuilt from its meshes, materials, skeleton and sequences instead
        /// of being copied byte for byte.
        #[arg(long = "modl-version", value_name = "N")]
        modl_version: Option<u32>,
        /// For a glTF input: the game file it was made from (a component .xml, .xmf, .m3, .xac,
        /// .xsm, .xpm). What another tool's export lost (Blender drops custom properties by
        /// default) is taken from it: part roles, connection names, materials, the bytes of
        /// untouched meshes, animation keys. `hangar convert edited.glb ship.xml --original
        /// game/ship.xml`.
        #[arg(long, value_name = "FILE")]
        original: Option<PathBuf>,
        /// With --original and a component .xml OUTPUT: write the XML as an X4 <diff> patch
        /// against the original (a moved part is one <replace> of its offset, a new part one
        /// <add>), for a mod; the XMFs and .ani are written as files.
        #[arg(long, requires = "original")]
        patch: bool,
        /// Files converted at once in a folder conversion (default: one per core).
        #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
        jobs: Option<u16>,
        #[command(flatten)]
        textures: TextureArgs,
        #[command(flatten)]
        encoding: GltfArgs,
    },
    /// Print the Anark name hash of each NAME (as .bgf/.bgp/.bsg files store names): signed decimal,
    /// then hex. Attribute keys use the low 27 bits (`hangar hash opacity`).
    Hash {
        #[arg(required = true)]
        names: Vec<String>,
    },
    /// Write the X4 <diff> patch that turns BASE into EDITED (one <replace> a changed attribute,
    /// <add> for new attributes and elements, <remove>); every sel selects one node when applied.
    ///   hangar diff game/libraries/wares.xml my_wares.xml -o extensions/my_mod/libraries/wares.xml
    Diff(crate::modtools::DiffArgs),
    /// Apply an X4 <diff> patch to BASE as the game does; names each operation that fails and why
    /// (its sel selects nothing or several nodes). Exits with 1 when one fails.
    ///   hangar patch game/libraries/wares.xml my_mod/libraries/wares.xml -o wares.patched.xml
    Patch(crate::modtools::PatchArgs),
    /// What X4 extensions both define, where the one loaded last silently wins: components,
    /// macros and wares two of them declare, files both provide that the game does not merge, t
    /// page ids filled with different texts; with --game, game nodes two patches both change.
    /// An XML file that does not read is named with why (its definitions are not compared).
    /// Exits with 1 when there is a conflict or such a file.
    ///   hangar conflicts extensions/mod_a extensions/mod_b --json
    ///   hangar conflicts --game "C:/Games/X4 Foundations"     # every installed extension
    Conflicts(crate::modtools::ConflictsArgs),
    /// Find the macros, components and wares of a game, an extension or a game with its
    /// extensions by the name a player reads ("Cerberus", "Osprey Dropship") or part of an id.
    /// Names are resolved as the game shows them: identification name/basename and ware name
    /// through the t files of the language (plain or <diff> patched by extensions, in load order).
    /// One line a result (kind, id, name, file, extension), best first; exits with 1 when
    /// nothing matches.
    ///   hangar find "Cerberus Dropship" --game extensions/dropships --json
    Find(crate::find::FindArgs),
    /// X4 / X Rebirth catalogs (.cat + .dat) and StarCraft II MPQ archives (.SC2Map, .SC2Mod,
    /// .SC2Components, .mpq, .s2ma): list, verify, extract, pack, diff.
    Cat {
        #[command(subcommand)]
        cmd: crate::cat::CatCommand,
    },
    /// New game content from a scene: `hangar new ship|component SCENE --template MACRO --id ID` (an X4 extension).
    New {
        #[command(subcommand)]
        cmd: crate::new::NewCommand,
    },
}

/// How a glTF output is encoded.
#[derive(clap::Args)]
pub struct GltfArgs {
    /// Smaller glTF with the precision the games keep (KHR_mesh_quantization): normals and
    /// tangents as 8-bit, texture coordinates as 16-bit when they lie in [0, 1] or [-1, 1],
    /// skin weights and colours as 8-bit, rotation keys as 16-bit; positions stay 32-bit floats.
    /// Blender and three.js read it.
    #[arg(long)]
    pub quantize: bool,
    /// Compress vertex, index, skin and animation data with meshoptimizer
    /// (EXT_meshopt_compression; with --quantize it shrinks most). For web viewers (three.js,
    /// Babylon.js, gltfpack's tools) and hangar itself; Blender's importer does not read it yet:
    /// use --quantize alone for Blender.
    #[arg(long)]
    pub compress: bool,
}

/// Where a model's textures are found and how the glTF carries them.
#[derive(clap::Args)]
pub struct TextureArgs {
    /// A folder searched first for the model's textures (repeatable); paths inside the model
    /// are matched as the game does (any case, `\` or `/`, `.gz` for `.dds`).
    #[arg(long = "textures-from", value_name = "DIR")]
    pub textures_from: Vec<PathBuf>,
    /// The game or mod folder (or one .cat) the model belongs to, as with `GAME::path` as INPUT:
    /// its textures and material library are looked up there.
    #[arg(long, value_name = "GAME")]
    pub game: Option<PathBuf>,
    /// embed: the textures become PNG images inside the glTF; copy: PNG files in
    /// `<output name>_textures/` beside the output, which names them by relative path (a .glb
    /// too); link: a texture that is a loose PNG file is named where it lies (relative path), the
    /// others are copied; none: only their paths are kept (in the materials' extras); write (a
    /// game model from a glTF): the glTF's images that differ from the game's are written back as
    /// the game reads them, at the paths the materials name below the model's folder, in the
    /// original's compression with a full mip chain (SC2 .dds, X4 gzip'd .gz).
    /// Example: `hangar convert model.glb Model.m3 --textures write`.
    #[arg(long, value_enum, default_value = "embed")]
    pub textures: TextureMode,
    /// PNG compression for converted textures: fast (default; they are intermediates) or best.
    #[arg(long = "png-compression", value_enum, default_value = "fast")]
    pub png_compression: PngLevel,
    /// Block compression of a .dds OUTPUT: bc7 (RGBA, best quality), bc3 (DXT5, RGBA), bc1 (DXT1,
    /// RGB), bc4 (one channel), bc5 (two channels: normal maps).
    /// Example: `hangar convert tex.png tex.dds --format bc1`.
    #[arg(long, value_enum, default_value = "bc7")]
    pub format: DdsFormat,
    /// Mip levels of a .dds OUTPUT: full (every level down to 1x1) or none (full size only).
    #[arg(long, value_enum, default_value = "full")]
    pub mipmaps: MipLevels,
    /// A cube map, array or volume to .png: strip (every face, layer or slice side by side, left
    /// to right as stored) or first (the first surface only).
    #[arg(long, value_enum, default_value = "strip")]
    pub surfaces: SurfaceChoice,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum TextureMode {
    Embed,
    Copy,
    Link,
    None,
    Write,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum DdsFormat {
    Bc7,
    Bc3,
    Bc1,
    Bc4,
    Bc5,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum MipLevels {
    Full,
    None,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum SurfaceChoice {
    Strip,
    First,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum PngLevel {
    Fast,
    Best,
}

impl TextureArgs {
    /// The library's texture options; `input`'s game (`GAME::path`) is searched after the user's.
    /// Fills `o` (whose views [`hangar::ConvertOptions::for_input`] set) with these choices.
    pub fn apply(&self, o: &mut hangar::TextureOptions) {
        *o = hangar::TextureOptions {
            views: std::mem::take(&mut o.views),
            mode: match self.textures {
                TextureMode::Embed => hangar::TextureMode::Embed,
                TextureMode::Copy => hangar::TextureMode::Copy,
                TextureMode::Link => hangar::TextureMode::Link,
                TextureMode::None => hangar::TextureMode::None,
                TextureMode::Write => hangar::TextureMode::Write,
            },
            png: match self.png_compression {
                PngLevel::Fast => dds::PngCompression::Fast,
                PngLevel::Best => dds::PngCompression::Best,
            },
            surfaces: match self.surfaces {
                SurfaceChoice::Strip => dds::Surfaces::Strip,
                SurfaceChoice::First => dds::Surfaces::First,
            },
            dds: dds::DdsOptions {
                encoding: match self.format {
                    DdsFormat::Bc7 => dds::Encoding::Bc7,
                    DdsFormat::Bc3 => dds::Encoding::Bc3,
                    DdsFormat::Bc1 => dds::Encoding::Bc1,
                    DdsFormat::Bc4 => dds::Encoding::Bc4,
                    DdsFormat::Bc5 => dds::Encoding::Bc5,
                },
                mipmaps: match self.mipmaps {
                    MipLevels::Full => dds::Mipmaps::Full,
                    MipLevels::None => dds::Mipmaps::None,
                },
            },
            nearby: Default::default(),
        };
    }
}

impl GltfArgs {
    pub fn options(&self) -> hangar::GltfOptions {
        hangar::GltfOptions {
            quantize: self.quantize,
            compress: self.compress,
        }
    }
}

/// The library's options for `hangar convert INPUT ...`.
pub fn convert_options(
    input: &Path,
    textures: &TextureArgs,
    encoding: &GltfArgs,
    modl_version: Option<u32>,
    original: Option<PathBuf>,
    patch: bool,
) -> Result<hangar::ConvertOptions> {
    let mut views = Vec::new();
    for d in textures.textures_from.iter().chain(&textures.game) {
        views.push(hangar::GameView::open(d)?);
    }
    let mut o = hangar::ConvertOptions::for_input(input, views)?;
    textures.apply(&mut o.textures);
    o.gltf = encoding.options();
    o.write = hangar::WriteOptions {
        modl_version,
        patch,
    };
    o.original = original;
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes_are_read_in_powers_of_1024() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("512K"), Ok(512 << 10));
        assert_eq!(parse_size("64MiB"), Ok(64 << 20));
        assert_eq!(parse_size(" 4g "), Ok(4 << 30));
        assert!(parse_size("4X").unwrap_err().contains("not a unit"));
        assert!(parse_size("G").is_err());
        assert!(parse_size("99999999999T")
            .unwrap_err()
            .contains("more bytes"));
    }
}
