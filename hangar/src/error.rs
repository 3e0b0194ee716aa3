//! Errors and warnings. Each one names the byte offset and the structure path where it was found;
//! the file name is attached by whoever opened the file (`Error::in_file`).

use std::fmt;
use std::path::{Path, PathBuf};

/// What went wrong, by kind: callers can tell bad input from an unsupported feature or a refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The bytes end before a structure does.
    Truncated,
    /// A value that the format does not allow (a bad magic, a count that cannot fit, a broken stream).
    Invalid,
    /// A format or variant hangar recognises but does not handle yet.
    Unsupported,
    /// A write that would produce a file the game rejects or crashes on.
    Refused,
    /// Reading or writing the file system failed.
    Io,
}

/// An error with its place: file (when known), byte offset and structure path.
#[derive(Debug, Clone, thiserror::Error, serde::Serialize)]
pub struct Error {
    pub kind: ErrorKind,
    pub file: Option<PathBuf>,
    pub offset: Option<u64>,
    /// Structure path such as `XMF.buffers[1].itemSize`; empty when the error is not about one place.
    pub path: String,
    pub message: String,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn new(
        kind: ErrorKind,
        offset: Option<u64>,
        path: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Error {
            kind,
            file: None,
            offset,
            path: path.into(),
            message: message.into(),
        }
    }

    pub fn invalid(offset: u64, path: impl Into<String>, message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Invalid, Some(offset), path, message)
    }

    pub fn unsupported(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Unsupported, None, "", message)
    }

    pub fn refused(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Refused, None, path, message)
    }

    pub fn io(file: &Path, err: std::io::Error) -> Self {
        use std::io::ErrorKind as K;
        // A folder where a file is expected: Windows refuses to open it ("Access denied"), Linux
        // opens it and fails to read ("Is a directory"); both say what it is instead.
        let folder = matches!(err.kind(), K::PermissionDenied | K::IsADirectory) && file.is_dir();
        let message = match folder {
            true => "is a folder; a file is expected here".to_string(),
            false => err.to_string(),
        };
        Self::new(ErrorKind::Io, None, "", message).in_file(file)
    }

    /// Names the file the error is about, unless an inner step already did.
    pub fn in_file(mut self, file: &Path) -> Self {
        if self.file.is_none() {
            self.file = Some(file.to_path_buf());
        }
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{}: ", file.display())?;
        }
        match (self.offset, self.path.is_empty()) {
            (Some(o), false) => write!(f, "at byte {o} (0x{o:x}), {}: ", self.path)?,
            (Some(o), true) => write!(f, "at byte {o} (0x{o:x}): ")?,
            (None, false) => write!(f, "{}: ", self.path)?,
            (None, true) => {}
        }
        f.write_str(&self.message)
    }
}

/// Something a tolerant reader noticed and went past: the file still loads. A warning means a real
/// problem; a `note` is an oddity of real files that hangar reads correctly (shown with `-v`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Warning {
    pub offset: Option<u64>,
    pub path: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub note: bool,
}

impl Warning {
    pub fn new(offset: Option<u64>, path: impl Into<String>, message: impl Into<String>) -> Self {
        Warning {
            offset,
            path: path.into(),
            message: message.into(),
            note: false,
        }
    }

    /// An oddity that real files carry and hangar reads correctly: a note, not a warning.
    pub fn note(offset: Option<u64>, path: impl Into<String>, message: impl Into<String>) -> Self {
        Warning {
            note: true,
            ..Warning::new(offset, path, message)
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(o) = self.offset {
            write!(f, "at byte {o} (0x{o:x}), ")?;
        }
        if !self.path.is_empty() {
            write!(f, "{}: ", self.path)?;
        }
        f.write_str(&self.message)
    }
}
