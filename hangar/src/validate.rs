//! What `hangar validate` reports: findings with a severity, a place and a message.

use crate::error::{Error, Warning};
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The game or a tool will misbehave or crash on this.
    Error,
    /// Suspicious, but files like this load.
    Warning,
}

#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    pub severity: Severity,
    pub offset: Option<u64>,
    pub path: String,
    pub message: String,
    /// A note rather than a warning (see [`Warning`]).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub note: bool,
    /// The file of a mod the finding is about, relative to the mod's root (`ext_01.cat::path`
    /// inside a catalog); none when it is about the file validated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The line in `file` (from 1), where there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// The reference exactly as written, when what it names is missing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missing: Option<String>,
}

impl Finding {
    pub fn error(path: impl Into<String>, message: impl Into<String>) -> Self {
        Finding {
            severity: Severity::Error,
            offset: None,
            path: path.into(),
            message: message.into(),
            note: false,
            file: None,
            line: None,
            missing: None,
        }
    }

    pub fn warning(path: impl Into<String>, message: impl Into<String>) -> Self {
        Finding {
            severity: Severity::Warning,
            offset: None,
            path: path.into(),
            message: message.into(),
            note: false,
            file: None,
            line: None,
            missing: None,
        }
    }

    /// An oddity real files carry that loads fine: shown only with `-v` (see [`Warning::note`]).
    pub fn note(path: impl Into<String>, message: impl Into<String>) -> Self {
        Finding {
            note: true,
            ..Finding::warning(path, message)
        }
    }
}

impl Finding {
    /// This finding about `file` of a mod, at `line`.
    pub fn in_file(mut self, file: impl Into<String>, line: Option<u32>) -> Self {
        self.file = Some(file.into());
        self.line = line;
        self
    }

    /// This finding about a reference, written `missing`, whose target is not there.
    pub fn missing(mut self, written: impl Into<String>) -> Self {
        self.missing = Some(written.into());
        self
    }
}

impl From<Warning> for Finding {
    fn from(w: Warning) -> Self {
        Finding {
            severity: Severity::Warning,
            offset: w.offset,
            path: w.path,
            message: w.message,
            note: w.note,
            file: None,
            line: None,
            missing: None,
        }
    }
}

impl From<Error> for Finding {
    fn from(e: Error) -> Self {
        Finding {
            severity: Severity::Error,
            offset: e.offset,
            path: e.path,
            message: e.message,
            note: false,
            file: None,
            line: None,
            missing: None,
        }
    }
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sev = match (self.severity, self.note) {
            (Severity::Error, _) => "error",
            (Severity::Warning, false) => "warning",
            (Severity::Warning, true) => "note",
        };
        write!(f, "{sev}: ")?;
        if let Some(file) = &self.file {
            match self.line {
                Some(l) => write!(f, "{file}:{l}: ")?,
                None => write!(f, "{file}: ")?,
            }
        }
        if let Some(o) = self.offset {
            write!(f, "at byte {o} (0x{o:x}), ")?;
        }
        if !self.path.is_empty() {
            write!(f, "{}: ", self.path)?;
        }
        f.write_str(&self.message)
    }
}

/// The items whose parent chain (parent index, -1 for none) comes back to them.
pub fn looping_parents(parents: &[i64]) -> Vec<usize> {
    (0..parents.len())
        .filter(|&i| {
            let mut at = parents[i];
            let mut steps = 0;
            while at >= 0 && (at as usize) < parents.len() {
                if at as usize == i || steps > parents.len() {
                    return true;
                }
                at = parents[at as usize];
                steps += 1;
            }
            false
        })
        .collect()
}
