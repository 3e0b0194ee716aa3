//! Findings and links as a walk over a mod makes them, and the mod's files validated one by one.

use super::files::{ModFile, ModFiles};
use super::world::Found;
use super::Link;
use crate::validate::Finding;
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Extensions of the files validated one by one as `hangar validate` does (XML is walked).
const VALIDATED: &[&str] = &[
    "xmf", "ani", "xac", "xsm", "xpm", "m3", "m3a", "dds", "tga", "bgf", "bsg", "bgp",
];

/// Findings and links as the walk makes them.
#[derive(Default)]
pub struct Out {
    pub findings: Vec<Finding>,
    pub links: Vec<Link>,
    /// References not followed (no game given), by file: what each names and why.
    unchecked: BTreeMap<String, BTreeSet<String>>,
}

impl Out {
    pub fn push(&mut self, f: Finding, file: &str, line: Option<u32>) {
        self.findings.push(f.in_file(file, line));
    }

    /// Records where the reference `written` (the `what` of `file`) led: a link, a finding
    /// when it is missing or refused (an error, or a warning when `error` is false), or a note
    /// for the summary when it could not be followed.
    pub fn follow(
        &mut self,
        file: &str,
        line: Option<u32>,
        written: &str,
        found: &Found,
        what: &str,
        error: bool,
    ) {
        self.links.push(Link {
            file: file.to_string(),
            line,
            written: written.to_string(),
            target: found.target(),
        });
        let finding = match found {
            Found::Mod(_) | Found::Game(_) => return,
            Found::Unchecked(why) => {
                self.unchecked
                    .entry(file.to_string())
                    .or_default()
                    .insert(format!("{written} ({why})"));
                return;
            }
            Found::Missing => format!("{what} {written:?}: not found"),
            Found::Refused(why) => format!("{what}: {why}"),
        };
        let f = if error || matches!(found, Found::Refused(_)) {
            Finding::error("", finding)
        } else {
            Finding::warning("", finding)
        };
        self.push(f.missing(written), file, line);
    }

    /// One warning a file for the references it makes outside what was given.
    pub fn summarize_unchecked(&mut self) {
        for (file, refs) in std::mem::take(&mut self.unchecked) {
            let shown: Vec<&str> = refs.iter().take(3).map(String::as_str).collect();
            let more = match refs.len().saturating_sub(3) {
                0 => String::new(),
                n => format!(" and {n} more"),
            };
            let msg = format!(
                "{} references lead outside the mod and were not checked (give the game with --game): {}{more}",
                refs.len(),
                shown.join(", ")
            );
            self.push(Finding::warning("", msg), &file, None);
        }
    }
}

/// Every model, motion and texture file validated alone, in parallel.
pub fn validate_files(mod_files: &ModFiles, files: &[ModFile], out: &mut Out) {
    let found: Vec<Vec<Finding>> = files
        .par_iter()
        .filter(|f| {
            let ext = f.norm.rsplit_once('.').map_or("", |x| x.1);
            VALIDATED.contains(&ext)
        })
        .map(|f| {
            let findings = match mod_files.read(f) {
                Some(Ok(bytes)) => match crate::any::open(&bytes, Path::new(&f.norm)) {
                    Ok(o) => o.validate(),
                    Err(e) => vec![e.into()],
                },
                Some(Err(e)) => vec![e.into()],
                None => Vec::new(),
            };
            findings
                .into_iter()
                .filter(|x| !x.note)
                .map(|x| x.in_file(f.label.clone(), None))
                .collect()
        })
        .collect();
    out.findings.extend(found.into_iter().flatten());
}
