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

mod batch;
mod cat;

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
hangar convert extracted/assets out/ --to glb          # a whole folder, in parallel\n  \
hangar info \"X4::assets/units/size_s/ship_arg_s_fighter_01_data/part-lod0.xmf\"  # inside the game's catalogs\n  \
hangar convert \"X4::assets/units\" out/ --to glb       # a batch straight from the game (report.json)\n  \
hangar cat verify ext_01.cat                            # damaged by git? names the cause"
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
    },
    /// X4 / X Rebirth catalogs (.cat + .dat): list, verify, extract, pack, diff.
    Cat {
        #[command(subcommand)]
        cmd: cat::CatCommand,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Info { files, json } => info(&files, json),
        Command::Dump { file } => dump(&file),
        Command::Validate { files, json } => validate(&files, json),
        Command::Cat { cmd } => cat::run(cmd),
        Command::Convert {
            input,
            output,
            to,
            motions,
        } => {
            let game_folder =
                input
                    .to_str()
                    .and_then(hangar::vfs::split_spec)
                    .and_then(|(game, inside)| {
                        let view = hangar::vfs::GameView::open(&game).ok()?;
                        (!view.exists(inside)).then(|| (view, inside.to_string()))
                    });
            let one_file = matches!(Output::from_path(&output), Ok(Output::Glb | Output::Gltf))
                && !output.is_dir();
            if let Some((view, inside)) = game_folder {
                batch::convert_view(&view, &inside, &output, &to)
            } else if input.is_dir() && one_file && motions.is_empty() {
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
                convert_one(&input, &output, &motions, true).map(|_| true)
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
        let bytes = hangar::vfs::read_arg(f)?;
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
    let bytes = hangar::vfs::read_arg(file)?;
    let opened = any::open(&bytes, file)?;
    out!("{}", opened.document.dump().map_err(|e| e.in_file(file))?);
    Ok(true)
}

fn validate(files: &[PathBuf], json: bool) -> Result<bool> {
    let results: Vec<(PathBuf, Vec<hangar::validate::Finding>)> = files
        .par_iter()
        .map(|f| {
            let findings = match hangar::vfs::read_arg(f).and_then(|b| {
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

fn convert_one(input: &Path, output: &Path, motions: &[PathBuf], verbose: bool) -> Result<()> {
    if hangar::io::same_file(input, output) {
        bail!(
            "{}: refusing to write over the input; pick another output name",
            output.display()
        );
    }
    Output::from_path(output)?;
    let bytes = hangar::vfs::read_arg(input)?;
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
    let labels: Vec<(String, &any::Opened<'_>)> = motions
        .iter()
        .zip(&motion_files)
        .map(|(m, o)| (m.display().to_string(), o))
        .collect();
    let (out, warnings) = any::convert_with(&opened, input, output, &labels)?;
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
