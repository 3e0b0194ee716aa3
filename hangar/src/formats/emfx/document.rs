//! XAC, XSM and XPM in the registry; the XAC writer from a scene.

use super::{build, check, motion, scene, File, Kind};
use crate::detect::Format;
use crate::document::{Document, FileFormat, Info, Motion, Opened, WriteOptions};
use crate::error::{Error, Result, Warning};
use crate::model::Scene;
use crate::validate::Finding;
use serde_json::Value;
use std::path::Path;

pub struct EmfxFormat;

struct EmfxDocument(File);

fn format_of(kind: Kind) -> Format {
    match kind {
        Kind::Xac => Format::Xac,
        Kind::Xsm => Format::Xsm,
        Kind::Xpm => Format::Xpm,
    }
}

impl FileFormat for EmfxFormat {
    fn formats(&self) -> &'static [Format] {
        &[Format::Xac, Format::Xsm, Format::Xpm]
    }

    fn detect(&self, bytes: &[u8], _ext: &str) -> Option<Format> {
        [Kind::Xac, Kind::Xsm, Kind::Xpm]
            .into_iter()
            .find(|k| bytes.starts_with(k.magic()))
            .map(format_of)
    }

    fn open<'a>(&self, format: Format, bytes: &'a [u8], _path: &Path) -> Result<Opened<'a>> {
        let (file, warnings) = super::read(bytes)?;
        Ok(Opened::new(format, EmfxDocument(file), warnings))
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["xac", "xsm", "xpm"]
    }

    fn dump_name(&self) -> Option<&'static str> {
        Some("emfx")
    }

    fn open_dump(&self, body: Value, _path: &Path) -> Result<Opened<'static>> {
        let file = super::from_json(&body)?;
        Ok(Opened::new(
            format_of(file.kind),
            EmfxDocument(file),
            Vec::new(),
        ))
    }

    fn writes_scene(&self, output: &Path) -> bool {
        ["xac", "xsm", "xpm"]
            .iter()
            .any(|e| crate::io::has_ext(output, e))
    }

    /// An actor, or a motion of the scene's one clip.
    fn write_scene(
        &self,
        scene: &Scene,
        output: &Path,
        _opts: &WriteOptions,
    ) -> Result<(Vec<u8>, Vec<Warning>)> {
        // Emotion FX keys are linear.
        let scene = &*scene.cubic_sampled();
        let (file, warnings) = if crate::io::has_ext(output, "xsm") {
            motion::skeletal(scene, None, None)?
        } else if crate::io::has_ext(output, "xpm") {
            motion::morph(scene, None, None)?
        } else {
            (build::actor(scene)?, Vec::new())
        };
        Ok((super::write(&file)?, warnings))
    }
}

impl Document for EmfxDocument {
    fn info(&self) -> Info {
        check::summary(&self.0)
    }

    fn dump(&self) -> Result<Value> {
        Ok(super::to_json(&self.0))
    }

    fn dump_text(&self, format: &str, version: u32) -> Option<Result<String>> {
        Some(super::dump_text(&self.0, format, version).map_err(crate::document::dump_error))
    }

    fn validate(&self) -> Vec<Finding> {
        check::check(&self.0)
    }

    fn to_scene(
        &self,
        name: &str,
        motions: &[(String, &Opened<'_>)],
    ) -> Result<(Scene, Vec<Warning>)> {
        let (mut s, mut warnings) = scene::to_scene(&self.0, name)?;
        for (label, o) in motions {
            match o.document.motion() {
                Some(Motion::Emfx(m)) => warnings.extend(scene::add_motion(&mut s, m, label)?),
                _ => {
                    return Err(Error::unsupported(format!(
                        "{label}: an XAC actor takes XSM motions, not {}",
                        o.format.name()
                    )))
                }
            }
        }
        Ok((s, warnings))
    }

    /// The same kind of file again, byte for byte. (An XAC is also made from a scene, through
    /// [`EmfxFormat::write_scene`].)
    fn write(&self, output: &Path) -> Option<Result<(Vec<u8>, Vec<Warning>)>> {
        let own = self.0.kind.name();
        if crate::io::has_ext(output, own) {
            return Some(super::write(&self.0).map(|b| (b, Vec::new())));
        }
        ["xsm", "xpm"]
            .iter()
            .any(|e| crate::io::has_ext(output, e))
            .then(|| {
                Err(Error::unsupported(format!(
                    "XSM and XPM are written from a file of the same kind or its dump, not from {own}"
                )))
            })
    }

    fn binding_names(&self) -> Vec<String> {
        match self.0.kind {
            Kind::Xac => {
                let mut names = scene::node_names(&self.0);
                names.extend(scene::morph_target_names(&self.0));
                names
            }
            Kind::Xsm | Kind::Xpm => scene::driven_names(&self.0),
        }
    }

    fn motion(&self) -> Option<Motion<'_>> {
        Some(Motion::Emfx(&self.0))
    }
}
