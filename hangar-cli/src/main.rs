//! The hangar command line: argument parsing and printing only. Every decision about a format is
//! made by the library (`hangar::any`).

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use hangar::any::{self, Output};
use hangar::validate::Severity;
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Prints a line to stdout; a closed pipe (`hangar info f | head`) ends the program quietly.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if writeln!(std::io::stdout().lock(), $($arg)*).is_err() {
            std::process::exit(0);
        }
    }};
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
MD34 and MD33: to glTF with skeleton, skin and animations, byte-exact rewrite, JSON dump and back), \
XAC actors with XSM motions, XPM, X4 part animations (.ani) and component folders, \
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
hangar convert actor.xac --motion walk.xsm --motion smile.xpm actor.glb\n  \
hangar convert ship_part_folder ship.glb               # parts + their _data.ani states\n  \
hangar convert extracted/assets out/ --to glb          # a whole folder, in parallel"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
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
    /// .xsm .xpm .ani .json.
    ///
    /// A name ending in -collision.xmf makes a collision mesh (positions only, 32-bit indices, no
    /// materials), anything else a visual mesh. A file converted to its own format (XMF, M3, XAC, XSM,
    /// XPM, .ani) is rewritten byte for byte; a .json dump turns back into its binary file; a glTF
    /// becomes a game-ready XMF or an XAC actor (skinned meshes, materials, morph targets).
    /// With a folder as INPUT and a .glb/.gltf OUTPUT, the folder is one X4 component: its parts
    /// (`*-lod0.xmf` as meshes, other LODs and `-collision` as marked nodes) and the `*_data.ani`
    /// beside them (one animation a state) become one scene. With a folder as OUTPUT, every supported
    /// file in INPUT (recursively) is converted into it with the extension given by --to.
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
        /// A folder searched first for the model's textures (repeatable); paths inside the model
        /// are matched as the game does (any case, `\` or `/`, `.gz` for `.dds`).
        #[arg(long = "textures-from", value_name = "DIR")]
        textures_from: Vec<PathBuf>,
        /// The game or mod folder the model belongs to (the same as `GAME::path` as INPUT): its
        /// textures and libraries are looked up there.
        #[arg(long, value_name = "GAME")]
        game: Option<PathBuf>,
        /// embed: the textures become PNG images inside the glTF; none: only their paths are kept
        /// (in the materials' extras).
        #[arg(long, value_enum, default_value = "embed")]
        textures: TextureMode,
        /// PNG compression for converted textures: fast (default; they are intermediates) or best.
        #[arg(long = "png-compression", value_enum, default_value = "fast")]
        png_compression: PngLevel,
    },
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum TextureMode {
    Embed,
    None,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum PngLevel {
    Fast,
    Best,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Info { files, json } => info(&files, json),
        Command::Dump { file } => dump(&file),
        Command::Validate { files, json } => validate(&files, json),
        Command::Convert {
            input,
            output,
            to,
            motions,
            textures_from,
            game,
            textures,
            png_compression,
        } => {
            let png = match png_compression {
                PngLevel::Fast => hangar::formats::dds::PngCompression::Fast,
                PngLevel::Best => hangar::formats::dds::PngCompression::Best,
            };
            let tex = TexArgs {
                from: textures_from,
                game,
                mode: match textures {
                    TextureMode::Embed => hangar::textures::Mode::Embed,
                    TextureMode::None => hangar::textures::Mode::None,
                },
                png,
            };
            let one_file = matches!(Output::from_path(&output), Ok(Output::Glb | Output::Gltf))
                && !output.is_dir();
            if input.is_dir() && one_file && motions.is_empty() {
                convert_component(&input, &output).map(|_| true)
            } else if input.is_dir() {
                if motions.is_empty() {
                    convert_folder(&input, &output, &to)
                } else {
                    Err(anyhow::anyhow!(
                        "--motion applies to one model, not to a folder conversion"
                    ))
                }
            } else {
                convert_model(&input, &output, &motions, &tex).map(|_| true)
            }
        }
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}

fn info(files: &[PathBuf], json: bool) -> Result<bool> {
    let mut all = Vec::new();
    let mut ok = true;
    for f in files {
        let bytes = hangar::io::read_input(f)?;
        let opened = match any::open(&bytes, f) {
            Ok(o) => o,
            Err(e) => {
                eprintln!("error: {e}");
                ok = false;
                continue;
            }
        };
        let info = opened.document.info(opened.format, &opened.warnings);
        if json {
            let mut v = serde_json::to_value(&info)?;
            v["file"] = f.display().to_string().into();
            all.push(v);
        } else {
            out!("{}: {}", f.display(), info.format);
            out!(
                "  vertices: {}  triangles: {}",
                info.vertices,
                info.triangles
            );
            if let Some(o) = info.details.as_object() {
                for (k, v) in o {
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
            }
            for w in &info.warnings {
                out!("  warning: {w}");
            }
        }
    }
    if json {
        let out = if all.len() == 1 {
            all.pop().unwrap()
        } else {
            serde_json::Value::Array(all)
        };
        out!("{}", serde_json::to_string_pretty(&out)?);
    }
    Ok(ok)
}

fn dump(file: &Path) -> Result<bool> {
    let bytes = hangar::io::read_input(file)?;
    let opened = any::open(&bytes, file)?;
    out!("{}", opened.document.dump().map_err(|e| e.in_file(file))?);
    Ok(true)
}

fn validate(files: &[PathBuf], json: bool) -> Result<bool> {
    let results: Vec<(PathBuf, Vec<hangar::validate::Finding>)> = files
        .par_iter()
        .map(|f| {
            let findings = match hangar::io::read_input(f).and_then(|b| {
                let o = any::open(&b, f)?;
                let mut v: Vec<hangar::validate::Finding> =
                    o.warnings.iter().cloned().map(Into::into).collect();
                v.extend(o.document.validate());
                Ok(v)
            }) {
                Ok(v) => v,
                Err(e) => vec![e.into()],
            };
            (f.clone(), findings)
        })
        .collect();
    let errors = results
        .iter()
        .flat_map(|r| &r.1)
        .filter(|f| f.severity == Severity::Error)
        .count();
    if json {
        let v: Vec<serde_json::Value> = results
            .iter()
            .map(|(f, findings)| {
                serde_json::json!({
                    "file": f.display().to_string(),
                    "ok": !findings.iter().any(|x| x.severity == Severity::Error),
                    "findings": findings,
                })
            })
            .collect();
        out!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        for (f, findings) in &results {
            let bad = findings.iter().any(|x| x.severity == Severity::Error);
            out!("{}: {}", f.display(), if bad { "FAILED" } else { "ok" });
            for x in findings {
                out!("  {x}");
            }
        }
        out!(
            "{} files, {} with errors",
            results.len(),
            results
                .iter()
                .filter(|r| r.1.iter().any(|x| x.severity == Severity::Error))
                .count()
        );
    }
    Ok(errors == 0)
}

struct TexArgs {
    from: Vec<PathBuf>,
    game: Option<PathBuf>,
    mode: hangar::textures::Mode,
    png: hangar::formats::dds::PngCompression,
}

/// One model (or texture, to .png), with the texture options; INPUT may be `GAME::path`.
fn convert_model(input: &Path, output: &Path, motions: &[PathBuf], tex: &TexArgs) -> Result<()> {
    let spec = input.to_string_lossy().into_owned();
    let (game, input_path, bytes) = match hangar::vfs::split_spec(&spec) {
        Some((game, inside)) => {
            let view = hangar::vfs::GameView::open(&game)?;
            let bytes = view.read(inside)?;
            (Some(view), game.join(inside), bytes)
        }
        None => (None, input.to_path_buf(), hangar::io::read_input(input)?),
    };
    if hangar::io::same_file(&input_path, output) {
        bail!(
            "{}: refusing to write over the input; pick another output name",
            output.display()
        );
    }
    if hangar::io::has_ext(output, "png") {
        let png =
            hangar::formats::dds::to_png(&bytes, tex.png).map_err(|e| e.in_file(&input_path))?;
        for w in &png.warnings {
            eprintln!("warning: {}: {w}", input_path.display());
        }
        hangar::io::write_output(output, &png.bytes)?;
        let (w, h, n) = (png.width, png.height, png.bytes.len());
        eprintln!("wrote {} ({w}x{h}, {n} bytes)", output.display());
        return Ok(());
    }
    let mut views = Vec::new();
    for d in &tex.from {
        views.push(hangar::vfs::GameView::open(d)?);
    }
    if let Some(g) = &tex.game {
        views.push(hangar::vfs::GameView::open(g)?);
    }
    views.extend(game);
    let opts = hangar::textures::Options {
        views,
        mode: tex.mode,
        png: tex.png,
    };
    convert_bytes(&input_path, &bytes, output, motions, true, &opts)
}

fn convert_one(input: &Path, output: &Path, motions: &[PathBuf], verbose: bool) -> Result<()> {
    if hangar::io::same_file(input, output) {
        bail!(
            "{}: refusing to write over the input; pick another output name",
            output.display()
        );
    }
    Output::from_path(output)?;
    let bytes = hangar::io::read_input(input)?;
    convert_bytes(input, &bytes, output, motions, verbose, &Default::default())
}

fn convert_bytes(
    input: &Path,
    bytes: &[u8],
    output: &Path,
    motions: &[PathBuf],
    verbose: bool,
    textures: &hangar::textures::Options,
) -> Result<()> {
    Output::from_path(output)?;
    let opened = any::open(bytes, input)?;
    let motion_bytes = motions
        .iter()
        .map(|m| hangar::io::read_input(m).map_err(anyhow::Error::from))
        .collect::<Result<Vec<_>>>()?;
    let motion_files = motions
        .iter()
        .zip(&motion_bytes)
        .map(|(m, b)| any::open(b, m).map_err(anyhow::Error::from))
        .collect::<Result<Vec<_>>>()?;
    let labels: Vec<(String, &any::Opened<'_>)> = motions
        .iter()
        .zip(&motion_files)
        .map(|(m, o)| (m.display().to_string(), o))
        .collect();
    let (out, warnings) = any::convert_textured(&opened, input, output, &labels, textures)?;
    if verbose {
        for w in opened.warnings.iter().chain(&warnings) {
            eprintln!("warning: {}: {w}", input.display());
        }
        for (m, o) in motions.iter().zip(&motion_files) {
            for w in &o.warnings {
                eprintln!("warning: {}: {w}", m.display());
            }
        }
    }
    hangar::io::write_output(output, &out)?;
    if verbose {
        eprintln!("wrote {} ({} bytes)", output.display(), out.len());
    }
    Ok(())
}

fn convert_component(input: &Path, output: &Path) -> Result<()> {
    let (bytes, warnings) = any::convert_component(input, output)?;
    for w in &warnings {
        eprintln!("warning: {}: {w}", input.display());
    }
    hangar::io::write_output(output, &bytes)?;
    eprintln!("wrote {} ({} bytes)", output.display(), bytes.len());
    Ok(())
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    for e in std::fs::read_dir(dir).with_context(|| format!("reading folder {}", dir.display()))? {
        let p = e?.path();
        if p.is_dir() {
            collect(&p, out)?;
        } else {
            out.push(p);
        }
    }
    Ok(())
}

fn convert_folder(input: &Path, output: &Path, to: &str) -> Result<bool> {
    Output::from_path(Path::new(&format!("x.{to}")))?;
    let mut files = Vec::new();
    collect(input, &mut files)?;
    files.sort();
    // Only files hangar can read: a quick look at the first bytes.
    let files: Vec<PathBuf> = files
        .into_iter()
        .filter(|f| {
            let head = std::fs::File::open(f).ok().and_then(|mut h| {
                use std::io::Read;
                let mut b = vec![0u8; 64];
                let n = h.read(&mut b).ok()?;
                b.truncate(n);
                Some(b)
            });
            head.is_some_and(|h| {
                let fmt = hangar::detect::detect(&h, Some(f));
                fmt.supported()
                    && !matches!(
                        fmt,
                        hangar::detect::Format::HangarJson | hangar::detect::Format::GltfText
                    )
            })
        })
        .collect();
    let bar = ProgressBar::new(files.len() as u64);
    bar.set_style(ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}").unwrap());
    let failures: Vec<String> = files
        .par_iter()
        .filter_map(|f| {
            let rel = f.strip_prefix(input).unwrap_or(f);
            let dest = output.join(rel).with_extension(to);
            let r = dest
                .parent()
                .map_or(Ok(()), std::fs::create_dir_all)
                .map_err(anyhow::Error::from)
                .and_then(|_| convert_one(f, &dest, &[], false));
            bar.inc(1);
            r.err().map(|e| format!("{e:#}"))
        })
        .collect();
    bar.finish_and_clear();
    for f in &failures {
        eprintln!("error: {f}");
    }
    eprintln!(
        "{} files converted, {} failed",
        files.len() - failures.len(),
        failures.len()
    );
    Ok(failures.is_empty())
}
