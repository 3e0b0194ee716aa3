//! Anark (.bgf, .bgp, .bsg and the readable presentation XML) in the registry.

use super::{check, dot, scene, xml, Anark};
use crate::detect::Format;
use crate::document::{no_motions, Document, FileFormat, Info, Opened};
use crate::error::{Error, Result, Warning};
use crate::model::Scene;
use crate::validate::Finding;
use serde_json::Value;
use std::path::Path;

pub struct AnarkFormat;

struct AnarkDocument(Anark);

fn format_of(a: &Anark) -> Format {
    match a {
        Anark::Bgf(_) => Format::AnarkBgf,
        Anark::Bgp(_) => Format::AnarkBgp,
        Anark::Bsg(_) => Format::AnarkBsg,
    }
}

fn own_ext(a: &Anark) -> &'static str {
    match a {
        Anark::Bgf(_) => "bgf",
        Anark::Bgp(_) => "bgp",
        Anark::Bsg(_) => "bsg",
    }
}

impl FileFormat for AnarkFormat {
    fn formats(&self) -> &'static [Format] {
        &[
            Format::AnarkBgf,
            Format::AnarkBgp,
            Format::AnarkBsg,
            Format::AnarkXml,
        ]
    }

    /// The first byte is the endianness (0 or 1); a .bgf has its magic after a 4-byte header size,
    /// a .bsg after a short and the size; a .bgp has no magic (the extension decides); the readable
    /// form is XML with a `<presentation>` root.
    fn detect(&self, bytes: &[u8], ext: &str) -> Option<Format> {
        let endian = matches!(bytes.first(), Some(0 | 1));
        if endian && bytes.get(6..14) == Some(b"AnarkBGF") {
            return Some(Format::AnarkBgf);
        }
        if endian && bytes.get(8..16) == Some(b"AnarkBGF") {
            return Some(Format::AnarkBsg);
        }
        if endian && ext == "bgp" {
            return Some(Format::AnarkBgp);
        }
        let probe = bytes.get(..bytes.len().min(4096))?;
        let first = probe.iter().find(|b| !b.is_ascii_whitespace())?;
        (*first == b'<' && String::from_utf8_lossy(probe).contains("<presentation"))
            .then_some(Format::AnarkXml)
    }

    fn open<'a>(&self, format: Format, bytes: &'a [u8], _path: &Path) -> Result<Opened<'a>> {
        if format == Format::AnarkXml {
            let text = std::str::from_utf8(bytes)
                .map_err(|e| Error::invalid(e.valid_up_to() as u64, "presentation", "not UTF-8"))?;
            let file = Anark::Bgf(xml::from_xml(text)?);
            return Ok(Opened::new(format, AnarkDocument(file), Vec::new()));
        }
        let (file, warnings) = super::read(bytes, format == Format::AnarkBgp)?;
        Ok(Opened::new(format, AnarkDocument(file), warnings))
    }

    fn dump_name(&self) -> Option<&'static str> {
        Some("anark")
    }

    fn open_dump(&self, body: Value, _path: &Path) -> Result<Opened<'static>> {
        let file = Anark::from_json(&body)?;
        Ok(Opened::new(
            format_of(&file),
            AnarkDocument(file),
            Vec::new(),
        ))
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["bgf", "bgp", "bsg", "xml", "dot"]
    }
}

impl Document for AnarkDocument {
    /// The counts are top-level keys too (`elements`, `slides`, `nodes`, `states`...): tools read them there.
    fn info(&self) -> Info {
        let details = self.0.info();
        let mut top = details.as_object().cloned().unwrap_or_default();
        top.remove("format");
        let animations = top.remove("animations").and_then(|a| a.as_u64());
        Info {
            animations,
            top,
            details,
            ..Default::default()
        }
    }

    fn dump(&self) -> Result<Value> {
        Ok(self.0.to_json())
    }

    fn validate(&self) -> Vec<Finding> {
        check::check(&self.0)
            .into_iter()
            .map(|w| Finding::error(w.path, w.message))
            .collect()
    }

    fn to_scene(
        &self,
        _name: &str,
        motions: &[(String, &Opened<'_>)],
    ) -> Result<(Scene, Vec<Warning>)> {
        no_motions(motions)?;
        match &self.0 {
            Anark::Bsg(f) => Ok((scene::to_scene(f), Vec::new())),
            _ => Err(Error::unsupported(
                "only a .bsg scene graph becomes a glTF; a .bgf converts to .xml or .json, a .bgp to .dot",
            )),
        }
    }

    /// Its own kind byte for byte; a .bgf also as readable XML, a .bgp as a Graphviz drawing.
    fn write(&self, output: &Path) -> Option<Result<(Vec<u8>, Vec<Warning>)>> {
        let ext = output
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        let own = own_ext(&self.0);
        let bytes = match (ext.as_str(), &self.0) {
            (e, a) if e == own => a.write(),
            ("xml", Anark::Bgf(f)) => Ok(xml::to_xml(f).into_bytes()),
            ("dot", Anark::Bgp(f)) => Ok(dot::to_dot(f).into_bytes()),
            ("bgf" | "bgp" | "bsg" | "xml" | "dot", _) => Err(Error::unsupported(format!(
                "this file is a .{own}: it writes .{own}, .json{}",
                match own {
                    "bgf" => ", and .xml (the readable form)",
                    "bgp" => ", and .dot (a drawing of its states)",
                    _ => ", and .glb (its node tree)",
                }
            ))),
            _ => return None,
        };
        Some(bytes.map(|b| (b, Vec::new())))
    }
}
