//! The hangar command line: argument parsing and printing only. Every decision about a format is
//! made by the library (`hangar::any`).

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use hangar::any;
use hangar::formats::dds;
use hangar::validate::Finding;
use hangar::validate::Severity;
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Prints a line to stdout. A closed pipe (`hangar info f | head`) ends the program quietly; any
/// other failure to write (a full disk) is an error: exit code 1, never a silent success.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = writeln!(std::io::stdout().lock(), $($arg)*) {
            $crate::stdout_failed(e);
        }
    }};
}

mod batch;
mod cat;

fn stdout_failed(e: std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    eprintln!("error: writing to standard output: {e}");
    std::process::exit(1);
}

#[derive(Parser)]
#[command(
    name = "hangar",
    version,
    about = "Inspect, validate and convert X4 / X Rebirth and StarCraft II model files",
    long_about = "hangar reads game model files, tells you what is in them, checks them before the game \
crashes on them, and converts them to glTF 2.0 and back.\n\n\
Formats are recognised by their first bytes, not their extension.\n\
Supported today: XMF (X4 static meshes, visual and -collision), M3 and .m3a (StarCraft II / Heroes, \
MD34 and MD33: to glTF with skeleton, skin and animations, byte-exact rewrite, JSON dump and back, \
game-ready M3 from glTF), \
XAC actors with XSM motions, XPM, X4 part animations (.ani) and component folders, \
X Rebirth Anark UI files (.bgf as readable XML and back, .bsg to glTF, .bgp to Graphviz), \
glTF 2.0 (.glb/.gltf) in and out, OBJ out, and hangar's own JSON dump in and out.",
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
hangar cat verify ext_01.cat                            # damaged by git? names the cause"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Also print notes: oddities of real files that hangar reads correctly (declared lengths that
    /// lie, exporter quirks). Without it only warnings, which mean a real problem, are printed.
    #[arg(short, long, global = true)]
    verbose: bool,
}

#[derive(Subcommand)]
enum Command {
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
    Validate {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Print the findings as JSON.
        #[arg(long)]
        json: bool,
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
    /// X4 / X Rebirth catalogs (.cat + .dat): list, verify, extract, pack, diff.
    Cat {
        #[command(subcommand)]
        cmd: cat::CatCommand,
    },
}

/// How a glTF output is encoded.
#[derive(clap::Args)]
struct GltfArgs {
    /// Smaller glTF with the precision the games keep (KHR_mesh_quantization): normals and
    /// tangents as 8-bit, texture coordinates as 16-bit when they lie in [0, 1] or [-1, 1],
    /// skin weights and colours as 8-bit, rotation keys as 16-bit; positions stay 32-bit floats.
    /// Blender and three.js read it.
    #[arg(long)]
    quantize: bool,
    /// Compress vertex, index, skin and animation data with meshoptimizer
    /// (EXT_meshopt_compression; with --quantize it shrinks most). For web viewers (three.js,
    /// Babylon.js, gltfpack's tools) and hangar itself; Blender's importer does not read it yet:
    /// use --quantize alone for Blender.
    #[arg(long)]
    compress: bool,
}

/// Where a model's textures are found and how the glTF carries them.
#[derive(clap::Args)]
struct TextureArgs {
    /// A folder searched first for the model's textures (repeatable); paths inside the model
    /// are matched as the game does (any case, `\` or `/`, `.gz` for `.dds`).
    #[arg(long = "textures-from", value_name = "DIR")]
    textures_from: Vec<PathBuf>,
    /// The game or mod folder (or one .cat) the model belongs to, as with `GAME::path` as INPUT:
    /// its textures and material library are looked up there.
    #[arg(long, value_name = "GAME")]
    game: Option<PathBuf>,
    /// embed: the textures become PNG images inside the glTF; copy: PNG files in
    /// `<output name>_textures/` beside the output, which names them by relative path (a .glb
    /// too); link: a texture that is a loose PNG file is named where it lies (relative path), the
    /// others are copied; none: only their paths are kept (in the materials' extras).
    #[arg(long, value_enum, default_value = "embed")]
    textures: TextureMode,
    /// PNG compression for converted textures: fast (default; they are intermediates) or best.
    #[arg(long = "png-compression", value_enum, default_value = "fast")]
    png_compression: PngLevel,
    /// Block compression of a .dds OUTPUT: bc7 (RGBA, best quality), bc3 (DXT5, RGBA), bc1 (DXT1,
    /// RGB), bc4 (one channel), bc5 (two channels: normal maps).
    /// Example: `hangar convert tex.png tex.dds --format bc1`.
    #[arg(long, value_enum, default_value = "bc7")]
    format: DdsFormat,
    /// Mip levels of a .dds OUTPUT: full (every level down to 1x1) or none (full size only).
    #[arg(long, value_enum, default_value = "full")]
    mipmaps: MipLevels,
    /// A cube map, array or volume to .png: strip (every face, layer or slice side by side, left
    /// to right as stored) or first (the first surface only).
    #[arg(long, value_enum, default_value = "strip")]
    surfaces: SurfaceChoice,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum TextureMode {
    Embed,
    Copy,
    Link,
    None,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum DdsFormat {
    Bc7,
    Bc3,
    Bc1,
    Bc4,
    Bc5,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum MipLevels {
    Full,
    None,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum SurfaceChoice {
    Strip,
    First,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum PngLevel {
    Fast,
    Best,
}

impl TextureArgs {
    /// The library's texture options; `input`'s game (`GAME::path`) is searched after the user's.
    fn options(&self, input: &Path) -> Result<hangar::textures::Options> {
        let mut views = Vec::new();
        for d in self.textures_from.iter().chain(&self.game) {
            views.push(hangar::vfs::GameView::open(d)?);
        }
        if let Some((game, _)) = input.to_str().and_then(hangar::vfs::split_spec) {
            views.push(hangar::vfs::GameView::open(&game)?);
        }
        Ok(hangar::textures::Options {
            views,
            mode: match self.textures {
                TextureMode::Embed => hangar::textures::Mode::Embed,
                TextureMode::Copy => hangar::textures::Mode::Copy,
                TextureMode::Link => hangar::textures::Mode::Link,
                TextureMode::None => hangar::textures::Mode::None,
            },
            png: match self.png_compression {
                PngLevel::Fast => dds::PngCompression::Fast,
                PngLevel::Best => dds::PngCompression::Best,
            },
            surfaces: match self.surfaces {
                SurfaceChoice::Strip => dds::Surfaces::Strip,
                SurfaceChoice::First => dds::Surfaces::First,
            },
            dds: dds::encode::Options {
                encoding: match self.format {
                    DdsFormat::Bc7 => dds::encode::Encoding::Bc7,
                    DdsFormat::Bc3 => dds::encode::Encoding::Bc3,
                    DdsFormat::Bc1 => dds::encode::Encoding::Bc1,
                    DdsFormat::Bc4 => dds::encode::Encoding::Bc4,
                    DdsFormat::Bc5 => dds::encode::Encoding::Bc5,
                },
                mipmaps: match self.mipmaps {
                    MipLevels::Full => dds::encode::Mipmaps::Full,
                    MipLevels::None => dds::encode::Mipmaps::None,
                },
            },
            nearby: Default::default(),
        })
    }
}

/// glibc hands each buffer over 128 KiB to a fresh mmap and unmaps it when freed, so every file
/// of a batch page-faults its buffers in again (a quarter of an XMF batch's time went there).
/// Large thresholds keep freed memory for the next file; the peak stays what one file needs.
/// glibc refuses an mmap threshold above 32 MiB (and keeps its default), so that is the one set.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn keep_freed_memory() {
    // SAFETY: mallopt only sets allocator parameters; called first thing, before other threads.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 512 << 20);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn keep_freed_memory() {}

fn main() -> ExitCode {
    keep_freed_memory();
    let cli = Cli::parse();
    let verbose = cli.verbose;
    let result = match cli.command {
        Command::Info { files, json } => info(&files, json, verbose),
        Command::Dump { file } => dump(&file),
        Command::Hash { names } => {
            for n in &names {
                let h = hangar::formats::anark::hash::hash(n);
                out!("{n}\t{}\t0x{h:08X}", h as i32);
            }
            Ok(true)
        }
        Command::Validate { files, json } => validate(&files, json, verbose),
        Command::Cat { cmd } => cat::run(cmd),
        Command::Convert {
            input,
            output,
            to,
            motions,
            modl_version,
            jobs,
            textures,
            encoding,
        } => set_jobs(jobs).and_then(|_| {
            let opts = hangar::any::ConvertOptions {
                textures: textures.options(&input)?,
                gltf: hangar::gltf::export::Options {
                    quantize: encoding.quantize,
                    compress: encoding.compress,
                },
                write: any::WriteOptions { modl_version },
            };
            // `GAME::folder`: a batch through the game view (a file inside the view is one file).
            let game_folder =
                input
                    .to_str()
                    .and_then(hangar::vfs::split_spec)
                    .and_then(|(game, inside)| {
                        let view = hangar::vfs::GameView::open(&game).ok()?;
                        (!view.exists(inside)).then(|| (view, inside.to_string()))
                    });
            match game_folder {
                Some(_) if modl_version.is_some() => {
                    bail!("--modl-version applies to files on disk, not to a game view")
                }
                Some((view, inside)) => batch::convert_view(&view, &inside, &output, &to, &opts),
                None => convert(&input, &output, &to, &motions, verbose, &opts),
            }
        }),
    };
    if let Err(e) = std::io::Write::flush(&mut std::io::stdout()) {
        stdout_failed(e);
    }
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}

/// The progress bar of a batch of `n` files, drawn only when standard error is a terminal.
fn files_bar(n: usize) -> ProgressBar {
    let bar = if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        ProgressBar::new(n as u64)
    } else {
        ProgressBar::hidden()
    };
    if let Ok(style) = ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}") {
        bar.set_style(style);
    }
    bar
}

/// `--jobs N` sizes the one thread pool every batch runs on (by default RAYON_NUM_THREADS, else
/// one thread a core). This thread is one of them: with one job the batch runs here and no thread
/// is started (a worker's malloc arena grew in hundreds of mprotect calls a batch, and handing
/// each file's nested parallel work to a worker cost a wake-up).
fn set_jobs(jobs: Option<u16>) -> Result<()> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.map_or(0, usize::from))
        .use_current_thread()
        .build_global()
        .context("cannot start the worker threads")
}

/// Prints the reader's warnings of `file` (notes only with `--verbose`).
fn print_warnings(file: &Path, warnings: &[hangar::Warning], verbose: bool) {
    for w in warnings.iter().filter(|w| verbose || !w.note) {
        let what = if w.note { "note" } else { "warning" };
        eprintln!("{what}: {}: {w}", file.display());
    }
}

fn info(files: &[PathBuf], json: bool, verbose: bool) -> Result<bool> {
    let mut all = Vec::new();
    let mut ok = true;
    for f in files {
        let info = hangar::vfs::read_arg(f).and_then(|bytes| Ok(any::open(&bytes, f)?.info()));
        let mut info = match info {
            Ok(i) => i,
            Err(e) => {
                ok = false;
                if json {
                    all.push(serde_json::json!({ "file": f.display().to_string(), "error": e.to_string() }));
                } else {
                    eprintln!("error: {e}");
                }
                continue;
            }
        };
        if !verbose {
            info.warnings.retain(|w| !w.note);
        }
        if json {
            let mut v = serde_json::to_value(&info)?;
            v["file"] = f.display().to_string().into();
            all.push(v);
            continue;
        }
        out!("{}: {}", f.display(), info.format);
        out!(
            "  vertices: {}  triangles: {}",
            info.vertices,
            info.triangles
        );
        for (k, v) in info
            .top
            .iter()
            .chain(info.details.as_object().into_iter().flatten())
        {
            match v {
                serde_json::Value::Array(items) => {
                    out!("  {k}:");
                    for i in items {
                        out!(
                            "    {}",
                            i.as_str()
                                .map(str::to_string)
                                .unwrap_or_else(|| i.to_string())
                        );
                    }
                }
                _ => out!("  {k}: {v}"),
            }
        }
        for w in &info.warnings {
            out!("  {}: {w}", if w.note { "note" } else { "warning" });
        }
    }
    if json {
        // One file: its object; several: one entry an argument, in order.
        let out = match (files.len(), all.pop()) {
            (1, Some(one)) => one,
            (_, last) => {
                all.extend(last);
                serde_json::Value::Array(all)
            }
        };
        out!("{}", serde_json::to_string_pretty(&out)?);
    }
    Ok(ok)
}

fn dump(file: &Path) -> Result<bool> {
    let bytes = hangar::vfs::read_arg(file)?;
    let opened = any::open(&bytes, file)?;
    out!("{}", opened.dump().map_err(|e| e.in_file(file))?);
    Ok(true)
}

fn validate(files: &[PathBuf], json: bool, verbose: bool) -> Result<bool> {
    let results: Vec<(PathBuf, Vec<Finding>)> = files
        .par_iter()
        .map(|f| {
            let findings =
                match hangar::vfs::read_arg(f).and_then(|b| Ok(any::open(&b, f)?.validate())) {
                    Ok(v) => v,
                    Err(e) => vec![e.into()],
                };
            (f.clone(), findings)
        })
        .collect();
    let failed = |findings: &[Finding]| findings.iter().any(|x| x.severity == Severity::Error);
    let bad = results.iter().filter(|r| failed(&r.1)).count();
    if json {
        let v: Vec<serde_json::Value> = results
            .iter()
            .map(|(f, findings)| {
                serde_json::json!({
                    "file": f.display().to_string(),
                    "ok": !failed(findings),
                    "findings": findings,
                })
            })
            .collect();
        out!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        for (f, findings) in &results {
            out!(
                "{}: {}",
                f.display(),
                if failed(findings) { "FAILED" } else { "ok" }
            );
            for x in findings.iter().filter(|x| verbose || !x.note) {
                out!("  {x}");
            }
        }
        out!("{} files, {} with errors", results.len(), bad);
    }
    Ok(bad == 0)
}

fn convert(
    input: &Path,
    output: &Path,
    to: &str,
    motions: &[PathBuf],
    verbose: bool,
    opts: &hangar::any::ConvertOptions,
) -> Result<bool> {
    if motions.is_empty() && any::writes_component(input, output) {
        write_component(input, output)?;
        return Ok(true);
    }
    if !input.is_dir() {
        convert_one(input, output, motions, verbose, opts)?;
        return Ok(true);
    }
    if !motions.is_empty() {
        bail!("--motion applies to one model, not to a folder conversion");
    }
    let one_file = !output.is_dir()
        && output.extension().is_some_and(|e| {
            ["glb", "gltf", "obj"]
                .iter()
                .any(|x| e.eq_ignore_ascii_case(x))
        });
    if one_file {
        convert_component(input, output, verbose, opts)?;
        return Ok(true);
    }
    if !output.is_dir() && output.extension().is_some() {
        bail!(
            "{}: a folder converts into a folder, and this name looks like a file; name a folder (and pick the type with --to), or a .glb for one component",
            output.display()
        );
    }
    convert_folder(input, output, to, verbose, opts)
}

/// `--motion` files are named in the glTF by their stem, made unique.
fn motion_labels(motions: &[PathBuf]) -> Vec<String> {
    let mut labels: Vec<String> = Vec::new();
    for m in motions {
        let stem = m
            .file_stem()
            .map_or("motion".into(), |s| s.to_string_lossy().into_owned());
        let mut label = stem.clone();
        let mut k = 2;
        while labels.contains(&label) {
            label = format!("{stem} {k}");
            k += 1;
        }
        labels.push(label);
    }
    labels
}

/// Converts one file; returns its warnings (the reader's, the motions', the conversion's; not notes).
fn convert_one(
    input: &Path,
    output: &Path,
    motions: &[PathBuf],
    verbose: bool,
    opts: &hangar::any::ConvertOptions,
) -> Result<Vec<String>> {
    if hangar::io::same_file(input, output) {
        bail!(
            "{}: refusing to write over the input; pick another output name",
            output.display()
        );
    }
    let bytes = hangar::vfs::read_arg(input)?;
    if let Some(picture) = hangar::textures::convert_texture(&bytes, input, output, &opts.textures)
    {
        return write_picture(input, output, picture?, verbose);
    }
    any::check_output(output)?;
    let opened = any::open(&bytes, input)?;
    let motion_bytes = motions
        .iter()
        .map(|m| hangar::io::read_input(m).map_err(anyhow::Error::from))
        .collect::<Result<Vec<_>>>()?;
    let motion_files = motions
        .iter()
        .zip(&motion_bytes)
        .map(|(m, b)| any::open(b, m).map_err(anyhow::Error::from))
        .collect::<Result<Vec<_>>>()?;
    let labels: Vec<(String, &any::Opened<'_>)> = motion_labels(motions)
        .into_iter()
        .zip(&motion_files)
        .collect();
    let written = any::convert_and_write(&opened, input, output, &labels, opts)?;
    let warnings = &written.warnings;
    print_warnings(input, &opened.warnings, verbose);
    print_warnings(input, warnings, verbose);
    for (m, o) in motions.iter().zip(&motion_files) {
        print_warnings(m, &o.warnings, verbose);
    }
    if verbose {
        eprintln!("{}", wrote(output, written.bytes, written.files));
    }
    let mut all: Vec<String> = Vec::new();
    let mut keep = |file: &Path, w: &[hangar::Warning]| {
        all.extend(
            w.iter()
                .filter(|w| !w.note)
                .map(|w| format!("{}: {w}", file.display())),
        )
    };
    keep(input, &opened.warnings);
    keep(input, warnings);
    for (m, o) in motions.iter().zip(&motion_files) {
        keep(m, &o.warnings);
    }
    Ok(all)
}

/// Writes a converted texture (a .png or .dds output) and says what it is.
fn write_picture(
    input: &Path,
    output: &Path,
    picture: hangar::textures::Picture,
    verbose: bool,
) -> Result<Vec<String>> {
    print_warnings(input, &picture.warnings, verbose);
    hangar::io::write_output(output, &picture.bytes)?;
    let (w, h, n) = (picture.width, picture.height, picture.bytes.len());
    eprintln!(
        "wrote {} ({w}x{h}{}, {n} bytes)",
        output.display(),
        picture.what
    );
    Ok(picture
        .warnings
        .iter()
        .filter(|w| !w.note)
        .map(|w| format!("{}: {w}", input.display()))
        .collect())
}

fn convert_component(
    input: &Path,
    output: &Path,
    verbose: bool,
    opts: &hangar::any::ConvertOptions,
) -> Result<()> {
    let converted = any::convert_component(input, output, opts)?;
    print_warnings(input, &converted.warnings, verbose);
    converted.write(output)?;
    eprintln!(
        "{}",
        wrote(output, converted.bytes.len(), converted.files.len())
    );
    Ok(())
}

/// What a conversion wrote: the file, and the texture files beside it.
fn wrote(output: &Path, bytes: usize, files: usize) -> String {
    format!(
        "wrote {} ({bytes} bytes{})",
        output.display(),
        match files {
            0 => String::new(),
            n => format!(
                ", and {n} texture files in {}",
                hangar::textures::copy_folder(output)
            ),
        }
    )
}

fn write_component(input: &Path, output: &Path) -> Result<()> {
    let written = any::gltf_to_component(input, output)?;
    for w in &written.warnings {
        eprintln!("warning: {}: {w}", input.display());
    }
    if let Some((p, _)) = written
        .files
        .iter()
        .find(|(p, _)| hangar::io::same_file(p, input))
    {
        anyhow::bail!("{} would be written over the input", p.display());
    }
    for (path, bytes) in &written.files {
        hangar::io::create_parent(path)?;
        hangar::io::write_output(path, bytes)?;
    }
    eprintln!(
        "wrote {} and {} more files",
        output.display(),
        written.files.len().saturating_sub(1)
    );
    Ok(())
}

fn convert_folder(
    input: &Path,
    output: &Path,
    to: &str,
    verbose: bool,
    opts: &hangar::any::ConvertOptions,
) -> Result<bool> {
    any::check_output(Path::new(&format!("x.{to}")))?;
    // One clear error for an output folder that cannot be written, before any work.
    std::fs::create_dir_all(output)
        .and_then(|_| {
            let probe = output.join(format!(".hangar-probe-{}", std::process::id()));
            std::fs::write(&probe, b"")?;
            std::fs::remove_file(&probe)
        })
        .with_context(|| format!("cannot write into the output folder {}", output.display()))?;
    let stale = hangar::io::remove_stale_temps(output);
    if stale > 0 {
        eprintln!("removed {stale} temporary files left by an interrupted run");
    }
    let files = hangar::batch::collect(input, output)?;
    if files.is_empty() {
        bail!(
            "{}: no file hangar can convert in this folder",
            input.display()
        );
    }
    let jobs = hangar::batch::plan(input, &files, output, to);
    let bar = files_bar(jobs.len());
    let results: Vec<(&hangar::batch::Job, Result<Vec<String>>)> = jobs
        .par_iter()
        .map(|j| {
            let r = convert_one(&j.input, &j.output, &j.motions, verbose, opts);
            bar.inc(1);
            (j, r)
        })
        .collect();
    bar.finish_and_clear();
    let failed: Vec<serde_json::Value> = results
        .iter()
        .filter_map(|(j, r)| r.as_ref().err().map(|e| serde_json::json!({ "file": j.input.display().to_string(), "error": format!("{e:#}") })))
        .collect();
    let warnings: Vec<&String> = results
        .iter()
        .filter_map(|(_, r)| r.as_ref().ok())
        .flatten()
        .collect();
    for f in &failed {
        eprintln!("error: {}", f["error"].as_str().unwrap_or_default());
    }
    let report = output.join("report.json");
    let summary = serde_json::json!({
        "input": input.display().to_string(),
        "converted": results.len() - failed.len(),
        "failed": failed,
        "warnings": warnings,
        "outputs": results.iter().filter(|(_, r)| r.is_ok()).map(|(j, _)| serde_json::json!({
            "input": j.input.display().to_string(),
            "motions": j.motions.iter().map(|m| m.display().to_string()).collect::<Vec<_>>(),
            "output": j.output.display().to_string(),
        })).collect::<Vec<_>>(),
    });
    hangar::io::write_output(&report, serde_json::to_string_pretty(&summary)?.as_bytes())?;
    eprintln!(
        "{} files converted, {} failed, {} warnings (details: {})",
        results.len() - failed.len(),
        failed.len(),
        warnings.len(),
        report.display()
    );
    Ok(failed.is_empty())
}
