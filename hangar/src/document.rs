//! What every format implements: a [`FileFormat`] (recognise, open, write from a neutral scene) and a
//! [`Document`] (describe, dump, check, make a scene, write itself). The registry ([`crate::any`])
//! lists the formats; this module knows none of them, so the formats import it and nothing here
//! imports back.

use crate::detect::Format;
use crate::error::{Error, ErrorKind, Result, Warning};
use crate::model::Scene;
use crate::validate::Finding;
use serde::Serialize;
use serde_json::{Map, Value};
use std::path::Path;

/// One format hangar reads.
pub trait FileFormat: Sync {
    /// The formats this entry opens.
    fn formats(&self) -> &'static [Format];

    /// The format of `bytes`, when they are this format's (by their leading bytes; `ext`, lower
    /// case without the dot, decides only where a format has no magic).
    fn detect(&self, bytes: &[u8], ext: &str) -> Option<Format>;

    /// Opens `bytes`, detected as `format`, read from `path`.
    fn open<'a>(&self, format: Format, bytes: &'a [u8], path: &Path) -> Result<Opened<'a>>;

    /// The `format` name a `hangar dump` of this format carries, if it has a dump.
    fn dump_name(&self) -> Option<&'static str> {
        None
    }

    /// The document an edited dump describes (the dump's fields, without `hangar_dump`).
    fn open_dump(&self, _body: Value, _path: &Path) -> Result<Opened<'static>> {
        Err(Error::unsupported("this format has no dump"))
    }

    /// The extensions its documents write themselves (see [`Document::write`]), for messages and
    /// for checking an output name before any work.
    fn extensions(&self) -> &'static [&'static str] {
        &[]
    }

    /// True when this format writes files named like `output` from a neutral scene.
    fn writes_scene(&self, _output: &Path) -> bool {
        false
    }

    /// The file `output` names, built from a neutral scene (see [`Self::writes_scene`]) as `opts`
    /// asks.
    fn write_scene(
        &self,
        _scene: &Scene,
        _output: &Path,
        _opts: &WriteOptions,
    ) -> Result<(Vec<u8>, Vec<Warning>)> {
        Err(Error::unsupported(
            "this format is not written from a scene",
        ))
    }
}

/// An opened file of some format.
pub trait Document {
    /// The numbers `hangar info` shows (format name and warnings are added by [`Opened::info`]).
    fn info(&self) -> Info;

    /// Every field as JSON; [`FileFormat::open_dump`] of it writes the same bytes again.
    fn dump(&self) -> Result<Value> {
        Err(Error::unsupported("this file has no dump"))
    }

    /// The dump as text with its header keys (`format`, `hangar_dump`), when the document writes
    /// it without building [`Self::dump`]'s JSON tree first (large files: half the memory).
    fn dump_text(&self, _format: &str, _version: u32) -> Option<Result<String>> {
        None
    }

    /// What `hangar validate` reports beyond the reader's warnings.
    fn validate(&self) -> Vec<Finding>;

    /// The document as a neutral scene named `name`, with the clips of `motions` (label, file).
    fn to_scene(
        &self,
        name: &str,
        motions: &[(String, &Opened<'_>)],
    ) -> Result<(Scene, Vec<Warning>)>;

    /// The bytes of `output` when it names a form this document writes itself: its own format
    /// (a byte-exact rewrite) or another form of its own (a readable text, a picture). `None` when
    /// the output is not one of them: then it is made from the neutral scene.
    fn write(&self, _output: &Path) -> Option<Result<(Vec<u8>, Vec<Warning>)>> {
        None
    }

    /// The names that tie a motion to its actor: for an actor the node and morph target names it
    /// offers, for a motion the names it drives. Empty for other files.
    fn binding_names(&self) -> Vec<String> {
        Vec::new()
    }

    /// The file as an animation source for another model's `--motion`.
    fn motion(&self) -> Option<Motion<'_>> {
        None
    }

    /// The bytes the document was read from, where something else is read from them later (a
    /// glTF's images, written back as game textures): no second read of the file.
    fn source(&self) -> Option<&[u8]> {
        None
    }
}

/// Files whose clips can be added to another model (`--motion`).
pub enum Motion<'s> {
    M3(&'s crate::formats::m3::M3<'s>),
    Emfx(&'s crate::formats::emfx::File),
}

/// An opened file: its format, the document and what the reader noticed on the way.
pub struct Opened<'a> {
    pub format: Format,
    pub document: Box<dyn Document + 'a>,
    pub warnings: Vec<Warning>,
}

impl<'a> Opened<'a> {
    pub fn new(format: Format, document: impl Document + 'a, warnings: Vec<Warning>) -> Self {
        Opened {
            format,
            document: Box::new(document),
            warnings,
        }
    }

    /// `hangar info`: the document's numbers, its format's name and the reader's warnings.
    pub fn info(&self) -> Info {
        let mut info = self.document.info();
        if info.format.is_empty() {
            info.format = self.format.name().to_string();
        }
        info.warnings = self.warnings.clone();
        info
    }

    /// The reader's warnings and the document's findings.
    pub fn validate(&self) -> Vec<Finding> {
        let mut v: Vec<Finding> = self.warnings.iter().cloned().map(Into::into).collect();
        v.extend(self.document.validate());
        v
    }
}

/// `hangar info --json`: the numbers every format reports, then what is particular to the format.
#[derive(Debug, Default, Serialize)]
pub struct Info {
    pub format: String,
    pub vertices: u64,
    pub triangles: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bones: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sequences: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub animations: Option<u64>,
    /// Keys a format puts at the top level (tools depend on their names).
    #[serde(flatten)]
    pub top: Map<String, Value>,
    pub details: Value,
    pub warnings: Vec<Warning>,
}

pub(crate) const DUMP_VERSION: u32 = 1;

/// A dump that JSON could not hold (a document's [`Document::dump`] or [`Document::dump_text`]).
pub(crate) fn dump_error(e: serde_json::Error) -> Error {
    Error::new(ErrorKind::Invalid, None, "dump", e.to_string())
}

/// Refuses `--motion` for a document that has nothing to move.
pub fn no_motions(motions: &[(String, &Opened<'_>)]) -> Result<()> {
    match motions.first() {
        Some((label, _)) => Err(Error::unsupported(format!(
            "{label}: motions can be added to M3 models and XAC actors only"
        ))),
        None => Ok(()),
    }
}

/// How a file built from a neutral scene is written (`hangar convert --modl-version`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteOptions {
    /// The MODL version of an .m3 or .m3a output (`None`: the default, see
    /// [`crate::formats::m3::build::VERSIONS`]). An M3 input is then rebuilt from its scene
    /// instead of being rewritten byte for byte.
    pub modl_version: Option<u32>,
    /// A component `.xml` written from a glTF with an original (`--patch`): the XML is a
    /// `<diff>` patch that turns the original's XML into the full write's; its XMFs and `.ani`
    /// are written as files, as without it.
    pub patch: bool,
}
