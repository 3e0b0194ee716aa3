//! A mod check as one HTML page (`hangar validate MOD --report page.html`): the mod's files as a
//! tree of folders, each file with its findings and the references it makes, each reference a
//! link to the file it names.

use super::ModCheck;
use crate::validate::Severity;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

/// `s` safe inside HTML text and attribute values.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A folder of the tree: its sub-folders and its files (indexes into `ModCheck::files`).
#[derive(Default)]
struct Folder {
    folders: BTreeMap<String, Folder>,
    files: Vec<usize>,
}

impl ModCheck {
    /// The page: self-contained HTML (no script, no outside file).
    pub fn to_html(&self) -> String {
        let ids: HashMap<String, usize> = self
            .files
            .iter()
            .enumerate()
            .map(|(i, f)| (f.to_lowercase(), i))
            .collect();
        let mut root = Folder::default();
        for (i, f) in self.files.iter().enumerate() {
            let parts: Vec<&str> = f.split("::").flat_map(|p| p.split('/')).collect();
            let mut at = &mut root;
            for dir in parts.iter().take(parts.len().saturating_sub(1)) {
                at = at.folders.entry((*dir).to_string()).or_default();
            }
            at.files.push(i);
        }
        let errors = self
            .findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .count();
        let mut h = String::new();
        let _ = write!(
            h,
            "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{name}: hangar check</title>\n\
<style>body{{font:14px system-ui,sans-serif;margin:1.5em}}details{{margin-left:1.2em}}\
.file{{margin:.2em 0 .2em 1.2em}}.error{{color:#b00020}}.warning{{color:#8a6d00}}\
.ref{{color:#555}}a{{color:#0645ad}}ul{{margin:.1em 0 .3em 0}}:target{{background:#ffef9e}}</style></head><body>\n\
<h1>{name}</h1><p>{kind} mod: {files} files, {links} references followed, {errors} errors, {warnings} warnings.</p>\n",
            name = esc(&self.name),
            kind = esc(&self.kind),
            files = self.files.len(),
            links = self.links.len(),
            warnings = self.findings.len() - errors,
        );
        // Findings without a file of the mod (the mod as a whole) first.
        let loose: Vec<_> = self
            .findings
            .iter()
            .filter(|f| {
                f.file
                    .as_ref()
                    .is_none_or(|x| !ids.contains_key(&x.to_lowercase()))
            })
            .collect();
        if !loose.is_empty() {
            h.push_str("<ul>");
            for f in loose {
                let _ = write!(
                    h,
                    "<li class=\"{}\">{}</li>",
                    sev(f.severity),
                    esc(&f.to_string())
                );
            }
            h.push_str("</ul>\n");
        }
        self.folder_html(&root, &ids, &mut h);
        h.push_str("</body></html>\n");
        h
    }

    fn folder_html(&self, folder: &Folder, ids: &HashMap<String, usize>, h: &mut String) {
        for (name, sub) in &folder.folders {
            let bad = self.has_error_below(sub);
            let _ = writeln!(
                h,
                "<details{}><summary>{}/</summary>",
                if bad { " open" } else { "" },
                esc(name)
            );
            self.folder_html(sub, ids, h);
            h.push_str("</details>\n");
        }
        for &i in &folder.files {
            let Some(file) = self.files.get(i) else {
                continue;
            };
            let short = file.rsplit(['/', ':']).next().unwrap_or(file);
            let here = |f: &Option<String>| f.as_deref() == Some(file.as_str());
            let findings: Vec<_> = self.findings.iter().filter(|f| here(&f.file)).collect();
            let links: Vec<_> = self.links.iter().filter(|l| l.file == *file).collect();
            let class = match findings
                .iter()
                .map(|f| f.severity)
                .min_by_key(|s| *s != Severity::Error)
            {
                Some(s) => sev(s),
                None => "",
            };
            let _ = write!(h, "<div class=\"file {class}\" id=\"f{i}\">{}", esc(short));
            if !findings.is_empty() || !links.is_empty() {
                h.push_str("<ul>");
                for f in findings {
                    let at = f.line.map(|l| format!("line {l}: ")).unwrap_or_default();
                    let _ = write!(
                        h,
                        "<li class=\"{}\">{at}{}</li>",
                        sev(f.severity),
                        esc(&f.message)
                    );
                }
                for l in links {
                    let at = l.line.map(|n| format!("line {n}: ")).unwrap_or_default();
                    let target = match &l.target {
                        Some(t) => match ids.get(&t.to_lowercase()) {
                            Some(j) => format!("<a href=\"#f{j}\">{}</a>", esc(t)),
                            None => esc(t),
                        },
                        None => "(not found or not checked)".into(),
                    };
                    let _ = write!(
                        h,
                        "<li class=\"ref\">{at}{} &rarr; {target}</li>",
                        esc(&l.written)
                    );
                }
                h.push_str("</ul>");
            }
            h.push_str("</div>\n");
        }
    }

    fn has_error_below(&self, folder: &Folder) -> bool {
        folder.files.iter().any(|&i| {
            let file = self.files.get(i);
            self.findings
                .iter()
                .any(|f| f.severity == Severity::Error && f.file.as_ref() == file)
        }) || folder.folders.values().any(|s| self.has_error_below(s))
    }

    /// Writes [`Self::to_html`] to `path`, whole or not at all; gives the bytes written.
    pub fn write_report(&self, path: &std::path::Path) -> crate::error::Result<usize> {
        let page = self.to_html();
        crate::io::write_output(path, page.as_bytes())?;
        Ok(page.len())
    }
}

fn sev(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}
