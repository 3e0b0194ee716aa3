//! M3 (MD34, MD33, .m3a) in the registry.

use super::{check, dump, read, scene, write, M3};
use crate::detect::Format;
use crate::document::{Document, FileFormat, Info, Motion, Opened, WriteOptions};
use crate::error::{Error, Result, Warning};
use crate::model::Scene;
use crate::validate::Finding;
use serde_json::Value;
use std::path::Path;

pub struct M3Format;

struct M3Document<'a>(M3<'a>);

fn format_of(file: &M3<'_>) -> Format {
    if file.small_refs() {
        Format::M3Md33
    } else {
        Format::M3Md34
    }
}

impl FileFormat for M3Format {
    fn formats(&self) -> &'static [Format] {
        &[Format::M3Md34, Format::M3Md33]
    }

    /// Tags are stored byte-reversed: MD34 is `43DM`.
    fn detect(&self, bytes: &[u8], _ext: &str) -> Option<Format> {
        match bytes.get(..4)? {
            b"43DM" => Some(Format::M3Md34),
            b"33DM" => Some(Format::M3Md33),
            _ => None,
        }
    }

    fn open<'a>(&self, format: Format, bytes: &'a [u8], _path: &Path) -> Result<Opened<'a>> {
        let (file, warnings) = read::read(bytes)?;
        Ok(Opened::new(format, M3Document(file), warnings))
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["m3", "m3a"]
    }

    fn dump_name(&self) -> Option<&'static str> {
        Some("m3")
    }

    fn open_dump(&self, body: Value, _path: &Path) -> Result<Opened<'static>> {
        let file = dump::from_json(&body)?;
        Ok(Opened::new(format_of(&file), M3Document(file), Vec::new()))
    }

    fn writes_scene(&self, output: &Path) -> bool {
        crate::io::has_ext(output, "m3") || crate::io::has_ext(output, "m3a")
    }

    /// A game-ready M3 built from the scene; an `.m3a` holds only the bones and sequences.
    fn write_scene(
        &self,
        scene: &Scene,
        output: &Path,
        opts: &WriteOptions,
    ) -> Result<(Vec<u8>, Vec<Warning>)> {
        // M3 tracks hold linear keys.
        super::build::build(
            &scene.cubic_sampled(),
            &super::build::Options {
                motions_only: crate::io::has_ext(output, "m3a"),
                modl_version: opts
                    .modl_version
                    .unwrap_or(super::build::DEFAULT_MODL_VERSION),
            },
        )
    }
}

impl Document for M3Document<'_> {
    fn info(&self) -> Info {
        check::summary(&self.0)
    }

    fn dump(&self) -> Result<Value> {
        Ok(dump::to_json(&self.0))
    }

    fn validate(&self) -> Vec<Finding> {
        check::check(&self.0)
    }

    fn to_scene(
        &self,
        name: &str,
        motions: &[(String, &Opened<'_>)],
    ) -> Result<(Scene, Vec<Warning>)> {
        let mut files = Vec::with_capacity(motions.len());
        for (label, o) in motions {
            match o.document.motion() {
                Some(Motion::M3(m)) => files.push((label.as_str(), m)),
                _ => {
                    return Err(Error::unsupported(format!(
                        "{label}: an M3 model takes M3 animation files (.m3a or .m3), not {}",
                        o.format.name()
                    )))
                }
            }
        }
        scene::to_scene(&self.0, name, &files)
    }

    fn write(&self, output: &Path) -> Option<Result<(Vec<u8>, Vec<Warning>)>> {
        (crate::io::has_ext(output, "m3") || crate::io::has_ext(output, "m3a"))
            .then(|| Ok((write::write(&self.0)?, Vec::new())))
    }

    fn motion(&self) -> Option<Motion<'_>> {
        Some(Motion::M3(&self.0))
    }
}
