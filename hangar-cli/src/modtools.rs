//! `hangar diff`, `hangar patch` and `hangar conflicts`: X4 `<diff>` patches written and applied,
//! and what several extensions both define. The work is the library's; this file parses
//! arguments and prints.

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct DiffArgs {
    /// The file as it is (the game's, or another extension's).
    base: PathBuf,
    /// The same file as the mod wants it.
    edited: PathBuf,
    /// The patch to write (an extension's file at the same path as BASE in the game);
    /// standard output without it.
    #[arg(short = 'o', long = "output", value_name = "PATCH")]
    output: Option<PathBuf>,
}

#[derive(clap::Args)]
pub struct PatchArgs {
    /// The file the patch changes.
    base: PathBuf,
    /// The `<diff>` patch.
    patch: PathBuf,
    /// The patched file to write; standard output without it.
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    output: Option<PathBuf>,
    /// Print what was applied as JSON (operations, failures with index, op, sel and why).
    #[arg(long)]
    json: bool,
}

fn read(p: &Path) -> Result<Vec<u8>> {
    std::fs::read(p).with_context(|| format!("cannot read {}", p.display()))
}

/// Refuses an output that is one of the inputs.
fn not_over(out: &Path, inputs: &[&Path]) -> Result<()> {
    let same = |i: &&Path| match (std::fs::canonicalize(out), std::fs::canonicalize(i)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    };
    if inputs.iter().any(same) {
        bail!("{} is an input: refusing to write over it", out.display());
    }
    Ok(())
}

pub fn diff(a: DiffArgs) -> Result<bool> {
    let base = read(&a.base)?;
    let edited = read(&a.edited)?;
    let patch = hangar::diff_xml_counted(&base, &edited)
        .with_context(|| format!("{} -> {}", a.base.display(), a.edited.display()))?;
    match &a.output {
        Some(out) => {
            not_over(out, &[&a.base, &a.edited])?;
            hangar::write_xml(out, &patch.xml)?;
            eprintln!("wrote {} ({} operations)", out.display(), patch.ops);
        }
        None => out!("{}", patch.xml.trim_end()),
    }
    Ok(true)
}

pub fn patch(a: PatchArgs) -> Result<bool> {
    let base = read(&a.base)?;
    let patch = read(&a.patch)?;
    let done = hangar::patch_xml(&base, &patch)
        .with_context(|| format!("{} patched with {}", a.base.display(), a.patch.display()))?;
    let failed = done.failures.iter().filter(|f| !f.silent).count();
    if let Some(out) = &a.output {
        not_over(out, &[&a.base, &a.patch])?;
        hangar::write_xml(out, &done.xml)?;
    }
    if a.json {
        let v = serde_json::json!({
            "operations": done.ops,
            "applied": done.ops - done.failures.len(),
            "failures": done.failures,
        });
        out!("{}", serde_json::to_string_pretty(&v)?);
    } else if a.output.is_none() {
        out!("{}", done.xml.trim_end());
    }
    for f in &done.failures {
        let what = if f.silent { "note (silent)" } else { "error" };
        eprintln!("{what}: {}: {f}", a.patch.display());
    }
    if let Some(out) = &a.output {
        eprintln!(
            "wrote {} ({} of {} operations applied)",
            out.display(),
            done.ops - done.failures.len(),
            done.ops
        );
    }
    Ok(failed == 0)
}

#[derive(clap::Args)]
pub struct ConflictsArgs {
    /// Extension folders (each with a content.xml); none with --game: every extension installed.
    dirs: Vec<PathBuf>,
    /// The game folder: its files are what the extensions' <diff> patches change (a node two
    /// patches replace or remove is reported), and without DIRs its extensions are checked.
    #[arg(long, value_name = "GAME")]
    game: Option<PathBuf>,
    /// Print a list of objects with kind (component, macro, ware, file, text, patch, or
    /// unreadable for an XML file that does not read), name, mods (in load order), files and
    /// message.
    #[arg(long)]
    json: bool,
}

pub fn conflicts(a: ConflictsArgs) -> Result<bool> {
    if a.dirs.is_empty() && a.game.is_none() {
        bail!("name extension folders, or --game GAME for every extension installed in it");
    }
    let found = hangar::conflicts(&a.dirs, a.game.as_deref())?;
    if a.json {
        out!("{}", serde_json::to_string_pretty(&found)?);
    } else {
        for c in &found {
            out!("{} {}: {}", c.kind, c.name, c.message);
            for f in &c.files {
                out!("  {f}");
            }
        }
        let unreadable = found.iter().filter(|c| c.kind == "unreadable").count();
        match unreadable {
            0 => out!("{} conflicts", found.len()),
            n => out!(
                "{} conflicts, {n} XML files that do not read (not compared)",
                found.len() - n
            ),
        }
    }
    Ok(found.is_empty())
}
