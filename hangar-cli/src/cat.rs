//! `hangar cat ...`: catalogs (.cat/.dat) and MPQ archives (StarCraft II maps and mods, see
//! `mpq.rs`) listed, verified, extracted, packed and compared. The work is done by
//! `hangar::catalogs` and `hangar::archives`; this file parses arguments and prints.

use anyhow::{bail, Result};
use clap::Subcommand;
use hangar::catalogs as catalog;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};

#[derive(Subcommand)]
pub enum CatCommand {
    /// Every entry of a catalog in catalog order: path, size, mtime (Unix seconds), md5 and offset
    /// in the .dat. For an MPQ archive (.SC2Map, .SC2Mod, known by its magic): every file its
    /// (listfile) names, by path: size, compressed size, flags, offset (only the tables are read).
    List {
        cat: PathBuf,
        /// Print one JSON array of objects, in catalog order.
        #[arg(long)]
        json: bool,
    },
    /// Check that each .dat holds what its .cat says: sizes add up to the .dat, every md5 matches
    /// (32 zeros for an empty file are accepted). Names each bad entry and why, recognises damage
    /// done by git's line-ending conversion and prints the .gitattributes lines that prevent it.
    /// Exits with 1 when anything is damaged. For an MPQ archive: every named file is read whole.
    Verify {
        #[arg(required = true)]
        cats: Vec<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Extract files (a catalog's with their mtimes) into DIR (`-o DIR`, or the first argument
    /// after the catalog or archive); PATTERNs (`*`, `?`, or a folder) select, case and `/` vs `\`
    /// ignored. Entries whose path would leave DIR (`../x`, `/abs`, `C:\x`) are refused.
    Extract {
        cat: PathBuf,
        #[arg(short = 'o', long = "out", value_name = "DIR")]
        out: Option<PathBuf>,
        patterns: Vec<String>,
    },
    /// Pack every file under DIR into NAME.cat + NAME.dat: `/` separators, sorted paths, md5 and
    /// mtime of each file, as the game expects. Named NAME.SC2Mod, .SC2Map, .SC2Components or
    /// .mpq: one MPQ archive (format 1, `\` separators, a (listfile), zlib where it helps) that
    /// StarCraft II, its editor and mpyq open.
    Pack {
        dir: PathBuf,
        /// NAME.cat to write (the .dat goes beside it), or NAME.SC2Mod / NAME.SC2Map; with --ext or
        /// --subst, the folder to put the next free ext_NN.cat / subst_NN.cat in.
        #[arg(short = 'o', long = "out", value_name = "NAME.cat")]
        out: PathBuf,
        /// Name the catalog ext_NN.cat (an extension's own files).
        #[arg(long, conflicts_with = "subst")]
        ext: bool,
        /// Name the catalog subst_NN.cat (replacements of base-game files).
        #[arg(long)]
        subst: bool,
    },
    /// Which paths B adds, changes (size or md5) and removes compared with A, e.g. a mod against
    /// the base game.
    Diff {
        a: PathBuf,
        b: PathBuf,
        #[arg(long)]
        json: bool,
    },
}

pub(crate) fn bytes_bar(total: u64) -> ProgressBar {
    let bar = ProgressBar::new(total);
    if let Ok(style) =
        ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {bytes_per_sec}")
    {
        bar.set_style(style);
    }
    bar
}

fn warn(cat: &Path, warnings: &[hangar::Warning]) {
    for w in warnings {
        eprintln!("warning: {}: {w}", cat.display());
    }
}

pub fn run(cmd: CatCommand) -> Result<bool> {
    if let Some(done) = crate::mpq::run(&cmd) {
        return done;
    }
    match cmd {
        CatCommand::List { cat, json } => {
            let o = catalog::open(&cat)?;
            warn(&cat, &o.warnings);
            if json {
                let v: Vec<serde_json::Value> = o
                    .catalog
                    .entries
                    .iter()
                    .map(|e| {
                        serde_json::json!({
                            "path": e.path, "size": e.size, "mtime": e.mtime,
                            "md5": e.md5, "offset": e.offset,
                        })
                    })
                    .collect();
                out!("{}", serde_json::to_string(&v)?);
            } else {
                for e in &o.catalog.entries {
                    out!("{} {} {} {} @{}", e.path, e.size, e.mtime, e.md5, e.offset);
                }
            }
            Ok(o.catalog.bad_lines.is_empty())
        }
        CatCommand::Verify { cats, json } => {
            let mut ok = true;
            let mut all = Vec::new();
            for cat in &cats {
                let o = match catalog::open(cat) {
                    Ok(o) => o,
                    Err(e) => {
                        eprintln!("error: {e}");
                        ok = false;
                        continue;
                    }
                };
                let bar = bytes_bar(o.catalog.data_len());
                let v = catalog::verify(&o, &|n| bar.inc(n));
                bar.finish_and_clear();
                ok &= v.ok();
                if json {
                    let mut j = serde_json::to_value(&v)?;
                    j["catalog"] = cat.display().to_string().into();
                    j["ok"] = v.ok().into();
                    all.push(j);
                    continue;
                }
                warn(cat, &o.warnings);
                if v.ok() {
                    out!(
                        "{}: ok ({} entries, {} bytes)",
                        cat.display(),
                        v.entries,
                        v.dat_len
                    );
                    continue;
                }
                out!("{}: DAMAGED ({} entries)", cat.display(), v.entries);
                for d in &v.damage {
                    match (d.line, d.path.is_empty()) {
                        (Some(l), false) => out!("  line {l}: {}: {}", d.path, d.message),
                        (Some(l), true) => out!("  line {l}: {}", d.message),
                        _ => out!("  {}", d.message),
                    }
                }
                if let Some(le) = &v.line_endings {
                    out!(
                        "  cause: git's line-ending conversion ({}) rewrote {} line breaks in {} text entr{} ({}); \
converted back, every md5 matches again; re-pack from the original files or take the catalog from a release archive.",
                        le.conversion,
                        le.line_breaks,
                        le.entries.len(),
                        if le.entries.len() == 1 { "y" } else { "ies" },
                        le.entries.join(", ")
                    );
                }
                if v.line_endings.is_some() || o.catalog.crlf {
                    out!("  prevent it: add these lines to the repository's .gitattributes:");
                    for l in catalog::GITATTRIBUTES {
                        out!("    {l}");
                    }
                }
            }
            if json {
                out!("{}", serde_json::to_string_pretty(&all)?);
            }
            Ok(ok)
        }
        CatCommand::Extract {
            cat,
            out,
            mut patterns,
        } => {
            let out = crate::mpq::out_dir(out, &mut patterns)?;
            let o = catalog::open(&cat)?;
            warn(&cat, &o.warnings);
            std::fs::create_dir_all(&out)?;
            let bar = bytes_bar(o.catalog.data_len());
            let x = catalog::extract(&o, &out, &patterns, &|n| bar.inc(n));
            bar.finish_and_clear();
            Ok(extracted(&x, &out))
        }
        CatCommand::Pack {
            dir,
            out,
            ext,
            subst,
        } => {
            if !dir.is_dir() {
                bail!("{}: not a folder", dir.display());
            }
            let cat = match (ext, subst) {
                (true, _) => catalog::pack_name(&out, "ext_"),
                (_, true) => catalog::pack_name(&out, "subst_"),
                _ => out,
            };
            if !cat
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("cat"))
            {
                bail!("{}: the catalog's name must end in .cat", cat.display());
            }
            if let Some(d) = cat.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(d)
                    .map_err(|e| anyhow::anyhow!("{}: cannot make the folder: {e}", d.display()))?;
            }
            let bar = bytes_bar(0);
            let c = catalog::pack(&dir, &cat, &|n| bar.inc(n))?;
            bar.finish_and_clear();
            eprintln!(
                "wrote {} and {} ({} files, {} bytes)",
                cat.display(),
                catalog::dat_path(&cat).display(),
                c.entries.len(),
                c.data_len()
            );
            Ok(true)
        }
        CatCommand::Diff { a, b, json } => {
            let (ca, cb) = (catalog::open(&a)?, catalog::open(&b)?);
            let d = catalog::diff(&ca.catalog, &cb.catalog);
            if json {
                out!("{}", serde_json::to_string_pretty(&d)?);
            } else {
                for p in &d.added {
                    out!("+ {p}");
                }
                for p in &d.changed {
                    out!("~ {p}");
                }
                for p in &d.removed {
                    out!("- {p}");
                }
                out!(
                    "{} added, {} changed, {} removed",
                    d.added.len(),
                    d.changed.len(),
                    d.removed.len()
                );
            }
            Ok(true)
        }
    }
}

/// Says what an extraction wrote and what failed; true when nothing failed.
pub fn extracted(x: &catalog::Extracted, dir: &Path) -> bool {
    for e in &x.failed {
        eprintln!("error: {e}");
    }
    eprintln!(
        "extracted {} files ({} bytes) to {}, {} failed",
        x.written,
        x.bytes,
        dir.display(),
        x.failed.len()
    );
    x.failed.is_empty()
}
