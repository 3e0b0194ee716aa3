//! `hangar cat ...`: X4 catalogs (.cat/.dat) and MPQ archives (StarCraft II maps and mods, see
//! `mpq.rs`) listed, verified, extracted, packed and compared. The work is done by
//! `hangar::catalogs` and `hangar::archives`; this file parses arguments, sends an archive's
//! command to `mpq.rs` and prints a catalog's (`shown.rs` holds what both print).

use crate::{mpq, shown};
use anyhow::{bail, Result};
use clap::Subcommand;
use hangar::archives;
use hangar::catalogs as catalog;
use std::path::{Path, PathBuf};

/// Each command takes an X4 / X Rebirth catalog (NAME.cat, its NAME.dat beside it) or an MPQ
/// archive (a StarCraft II map or mod saved as one file: .SC2Map, .SC2Mod, .SC2Components, .mpq,
/// .s2ma), told by its first bytes or, for a file too short to tell, by its name.
#[derive(Subcommand)]
pub enum CatCommand {
    /// Every entry of a catalog in catalog order: path, size, mtime (Unix seconds), md5 and offset
    /// in the .dat. For an MPQ archive: every file its (listfile) names, by path: size, compressed
    /// size, flags, offset (only the tables are read).
    List {
        /// NAME.cat, or an MPQ archive (NAME.SC2Map, NAME.SC2Mod...).
        cat: PathBuf,
        /// Print one JSON array of objects, in catalog order.
        #[arg(long)]
        json: bool,
    },
    /// Check that each .dat holds what its .cat says: sizes add up to the .dat, every md5 matches
    /// (32 zeros for an empty file are accepted). Names each bad entry and why, recognises damage
    /// done by git's line-ending conversion and prints the .gitattributes lines that prevent it.
    /// For an MPQ archive: every named file is read whole (sectors, compression). Catalogs and
    /// archives can be mixed. Exits with 1 when anything is damaged.
    Verify {
        /// Catalogs (NAME.cat) and MPQ archives.
        #[arg(required = true)]
        cats: Vec<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Extract files of a catalog (with their mtimes) or of an MPQ archive into DIR (`-o DIR`, or
    /// the first argument after the catalog or archive); PATTERNs (`*`, `?`, or a folder) select,
    /// case and `/` vs `\` ignored. Entries whose path would leave DIR (`../x`, `/abs`, `C:\x`)
    /// are refused. An archive's (listfile) and (attributes) come out too: `cat pack` makes them
    /// anew.
    Extract {
        /// NAME.cat, or an MPQ archive (NAME.SC2Map, NAME.SC2Mod...).
        cat: PathBuf,
        #[arg(short = 'o', long = "out", value_name = "DIR")]
        out: Option<PathBuf>,
        patterns: Vec<String>,
    },
    /// Pack every file under DIR into NAME.cat + NAME.dat: `/` separators, sorted paths, md5 and
    /// mtime of each file, as the game expects. Named NAME.SC2Mod, .SC2Map, .SC2Components or
    /// .mpq: one MPQ archive (format 1, `\` separators, zlib where it helps) that StarCraft II,
    /// its editor and mpyq open, with a (listfile) naming every file packed; the (listfile),
    /// (attributes) and (signature) an extraction left at the top of DIR are not packed back (an
    /// (attributes) is made for the new files when DIR held one).
    ///
    ///   hangar cat extract Map.SC2Map -o map && (edit map/) && hangar cat pack map -o New.SC2Map
    Pack {
        dir: PathBuf,
        /// NAME.cat to write (the .dat goes beside it), or NAME.SC2Mod / NAME.SC2Map; with --ext or
        /// --subst, the folder to put the next free ext_NN.cat / subst_NN.cat in.
        #[arg(short = 'o', long = "out", value_name = "NAME.cat|NAME.SC2Map")]
        out: PathBuf,
        /// Name the catalog ext_NN.cat (an extension's own files).
        #[arg(long, conflicts_with = "subst")]
        ext: bool,
        /// Name the catalog subst_NN.cat (replacements of base-game files).
        #[arg(long)]
        subst: bool,
        /// MPQ archive: pack the (listfile) found at the top of DIR as it is, instead of one naming
        /// the files as they are now (files it does not name are then not listed).
        #[arg(long)]
        keep_listfile: bool,
    },
    /// Which paths B adds, changes and removes compared with A: two catalogs (by size and md5,
    /// e.g. a mod against the base game) or two MPQ archives (by size and bytes, their own
    /// (listfile) and (attributes) left out).
    Diff {
        a: PathBuf,
        b: PathBuf,
        #[arg(long)]
        json: bool,
    },
}

fn warn(cat: &Path, warnings: &[hangar::Warning]) {
    for w in warnings {
        eprintln!("warning: {}: {w}", cat.display());
    }
}

/// `-o DIR`, or the first argument after the catalog or archive.
fn out_dir(out: Option<PathBuf>, patterns: &mut Vec<String>) -> Result<PathBuf> {
    match out {
        Some(o) => Ok(o),
        None if !patterns.is_empty() => Ok(PathBuf::from(patterns.remove(0))),
        None => bail!("name the folder to extract into: `-o DIR` or after the catalog or archive"),
    }
}

pub fn run(cmd: CatCommand) -> Result<bool> {
    // An archive by its magic or by its name: an empty or cut x.SC2Map is then told as a broken
    // archive, not asked for its x.dat.
    let archive = |p: &Path| archives::is_archive_path(p);
    match cmd {
        CatCommand::List { cat, json } if archive(&cat) => mpq::list(&cat, json),
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
                let (good, j) = if archive(cat) {
                    mpq::verify(cat, json)
                } else {
                    verify(cat, json)?
                };
                ok &= good;
                all.extend(j);
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
            let out = out_dir(out, &mut patterns)?;
            if archive(&cat) {
                return mpq::extract(&cat, &out, &patterns);
            }
            let o = catalog::open(&cat)?;
            warn(&cat, &o.warnings);
            std::fs::create_dir_all(&out)?;
            let bar = shown::bytes_bar(o.catalog.data_len());
            let x = catalog::extract(&o, &out, &patterns, &|n| bar.inc(n));
            bar.finish_and_clear();
            Ok(shown::extracted(&x, &out))
        }
        CatCommand::Pack {
            dir,
            out,
            ext,
            subst,
            keep_listfile,
        } => {
            if archives::has_archive_name(&out.to_string_lossy()) {
                if ext || subst {
                    bail!(
                        "--ext and --subst name X4 catalogs; {} is an MPQ archive",
                        out.display()
                    );
                }
                return mpq::pack(&dir, &out, keep_listfile);
            }
            if keep_listfile {
                bail!("--keep-listfile applies to an MPQ archive (NAME.SC2Map, NAME.SC2Mod...), not to a catalog");
            }
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
                bail!(
                    "{}: name a catalog NAME.cat, or an MPQ archive NAME.SC2Map, NAME.SC2Mod, NAME.SC2Components, NAME.mpq",
                    cat.display()
                );
            }
            if let Some(d) = cat.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(d)
                    .map_err(|e| anyhow::anyhow!("{}: cannot make the folder: {e}", d.display()))?;
            }
            let bar = shown::bytes_bar(0);
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
        CatCommand::Diff { a, b, json } => match (archive(&a), archive(&b)) {
            (true, true) => mpq::diff(&a, &b, json),
            (false, false) => {
                let (ca, cb) = (catalog::open(&a)?, catalog::open(&b)?);
                shown::diff(&catalog::diff(&ca.catalog, &cb.catalog), json)?;
                Ok(true)
            }
            (a_is, _) => {
                let (x, y) = if a_is { (&a, &b) } else { (&b, &a) };
                bail!(
                    "{} is an MPQ archive and {} is not: cat diff compares two catalogs or two archives",
                    x.display(),
                    y.display()
                )
            }
        },
    }
}

/// One catalog checked against its .dat: true when nothing is damaged; its JSON object with
/// `--json`. A catalog that does not open is an error printed, not the end of the run.
fn verify(cat: &Path, json: bool) -> Result<(bool, Option<serde_json::Value>)> {
    let o = match catalog::open(cat) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok((false, None));
        }
    };
    let bar = shown::bytes_bar(o.catalog.data_len());
    let v = catalog::verify(&o, &|n| bar.inc(n));
    bar.finish_and_clear();
    if json {
        let mut j = serde_json::to_value(&v)?;
        j["catalog"] = cat.display().to_string().into();
        j["ok"] = v.ok().into();
        return Ok((v.ok(), Some(j)));
    }
    warn(cat, &o.warnings);
    if v.ok() {
        out!(
            "{}: ok ({} entries, {} bytes)",
            cat.display(),
            v.entries,
            v.dat_len
        );
        return Ok((true, None));
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
    Ok((false, None))
}
