//! The hangar command line: arguments in (`args.rs`), messages out. Every decision about a file
//! is the library's (`hangar::open`, `hangar::convert`).

use anyhow::{Context, Result};
use clap::Parser;
use hangar::{Finding, Outcome, Severity};
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

mod anark;
mod args;
mod cat;
mod find;
mod modtools;
mod mpq;
mod new;
mod shown;

use args::{Cli, Command};

fn stdout_failed(e: std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    eprintln!("error: writing to standard output: {e}");
    std::process::exit(1);
}

fn main() -> ExitCode {
    hangar::keep_freed_memory();
    let cli = Cli::parse();
    let verbose = cli.verbose;
    if let Some(n) = cli.max_inflate {
        hangar::archives::set_max_inflate(n);
    }
    let result = match cli.command {
        Command::Info { files, json } => info(&files, json, verbose),
        Command::Dump { file } => dump(&file),
        Command::Hash { names } => {
            anark::print_hashes(&names);
            Ok(true)
        }
        Command::Validate {
            files,
            json,
            game,
            report,
        } => validate(&files, json, verbose, game.as_deref(), report.as_deref()),
        Command::Cat { cmd } => cat::run(cmd),
        Command::Diff(a) => modtools::diff(a),
        Command::Patch(a) => modtools::patch(a),
        Command::Conflicts(a) => modtools::conflicts(a),
        Command::Find(a) => find::run(a),
        Command::New { cmd } => new::run(cmd, verbose),
        Command::Convert {
            input,
            output,
            to,
            motions,
            modl_version,
            original,
            patch,
            jobs,
            textures,
            encoding,
        } => set_jobs(jobs).and_then(|_| {
            let opts =
                args::convert_options(&input, &textures, &encoding, modl_version, original, patch)?;
            convert(&input, &output, &motions, &to, verbose, &opts)
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

/// Prints the warnings of `file` (notes only with `--verbose`).
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
        let mut info = match hangar::open(f) {
            Ok(o) => o.info(),
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
    out!("{}", hangar::open(file)?.dump()?);
    Ok(true)
}

fn validate(
    files: &[PathBuf],
    json: bool,
    verbose: bool,
    game: Option<&Path>,
    report: Option<&Path>,
) -> Result<bool> {
    let mods: Vec<&PathBuf> = files
        .iter()
        .filter(|f| hangar::mod_kind(f).is_some())
        .collect();
    if mods.is_empty() && (game.is_some() || report.is_some()) {
        anyhow::bail!("--game and --report apply to a mod folder (a folder with content.xml, *.SC2Mod, *.SC2Map)");
    }
    if report.is_some() && mods.len() != 1 {
        anyhow::bail!("--report writes the page of one mod folder");
    }
    if let ([one], [_]) = (files, mods.as_slice()) {
        return validate_mod(one, json, verbose, game, report);
    }
    let results: Vec<(PathBuf, Vec<Finding>)> = files
        .par_iter()
        .map(|f| {
            let findings = if hangar::mod_kind(f).is_some() {
                match hangar::check_mod(f, game) {
                    Ok(c) => c.findings,
                    Err(e) => vec![e.into()],
                }
            } else {
                match hangar::open(f) {
                    Ok(o) => o.validate(),
                    Err(e) => vec![e.into()],
                }
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

/// `hangar validate MOD`: the mod checked whole; `--json` prints its findings as one list.
fn validate_mod(
    dir: &Path,
    json: bool,
    verbose: bool,
    game: Option<&Path>,
    report: Option<&Path>,
) -> Result<bool> {
    let checked = hangar::check_mod(dir, game)?;
    if let Some(page) = report {
        let wrote = checked.write_report(page)?;
        eprintln!("wrote {} ({wrote} bytes)", page.display());
    }
    if json {
        out!("{}", serde_json::to_string_pretty(&checked.findings)?);
        return Ok(!checked.failed());
    }
    let errors = checked
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .count();
    out!(
        "{}: {} ({} mod, {} files, {} references followed, {errors} errors, {} warnings)",
        dir.display(),
        if errors > 0 { "FAILED" } else { "ok" },
        checked.kind,
        checked.files.len(),
        checked.links.len(),
        checked.findings.len() - errors
    );
    for x in checked.findings.iter().filter(|x| verbose || !x.note) {
        out!("  {x}");
    }
    Ok(errors == 0)
}

fn convert(
    input: &Path,
    output: &Path,
    motions: &[PathBuf],
    to: &str,
    verbose: bool,
    opts: &hangar::ConvertOptions,
) -> Result<bool> {
    let bar = files_bar(0);
    let progress = |p: hangar::batch::Progress| {
        bar.set_length(p.total as u64);
        bar.set_position(p.done as u64);
    };
    let outcome = hangar::convert(input, output, motions, to, opts, &progress);
    bar.finish_and_clear();
    match outcome? {
        Outcome::File {
            output,
            wrote,
            warnings,
        } => {
            for (file, w) in &warnings {
                print_warnings(file, w, verbose);
            }
            let beside = match wrote.files {
                0 => String::new(),
                n => format!(", and {n} more files beside it"),
            };
            let what = if wrote.what.is_empty() {
                String::new()
            } else {
                format!("{}, ", wrote.what)
            };
            eprintln!(
                "wrote {} ({what}{} bytes{beside})",
                output.display(),
                wrote.bytes
            );
            Ok(true)
        }
        Outcome::Batch(report) => {
            if report.stale_removed > 0 {
                eprintln!(
                    "removed {} temporary files left by an interrupted run",
                    report.stale_removed
                );
            }
            for f in &report.failed {
                eprintln!("error: {}", f.error);
            }
            eprintln!(
                "{} files converted, {} failed, {} warnings (details: {})",
                report.converted,
                report.failed.len(),
                report.warnings.len(),
                report.report.display()
            );
            Ok(report.ok())
        }
    }
}
