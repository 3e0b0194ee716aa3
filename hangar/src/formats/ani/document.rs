//! X4 part animations (.ani) in the registry.

use super::Ani;
use crate::detect::Format;
use crate::document::{no_motions, Document, FileFormat, Info, Opened};
use crate::error::{Result, Warning};
use crate::model::Scene;
use crate::validate::Finding;
use serde_json::{json, Value};
use std::path::Path;

pub struct AniFormat;

struct AniDocument(Ani);

/// Header: i32 count, i32 key data offset (= 16 + 160 * count), i32 version, i32 zero.
fn looks_like_ani(b: &[u8]) -> bool {
    let w = |i: usize| {
        b.get(i..i + 4)
            .and_then(|s| s.try_into().ok())
            .map(i32::from_le_bytes)
    };
    let (Some(count), Some(offset), Some(version)) = (w(0), w(4), w(8)) else {
        return false;
    };
    let count = i64::from(count);
    (0..=1_000_000).contains(&count)
        && i64::from(offset) == 16 + 160 * count
        && (1..=16).contains(&version)
}

impl FileFormat for AniFormat {
    fn formats(&self) -> &'static [Format] {
        &[Format::Ani]
    }

    fn detect(&self, bytes: &[u8], _ext: &str) -> Option<Format> {
        looks_like_ani(bytes).then_some(Format::Ani)
    }

    fn open<'a>(&self, format: Format, bytes: &'a [u8], _path: &Path) -> Result<Opened<'a>> {
        let (file, warnings) = super::read(bytes)?;
        Ok(Opened::new(format, AniDocument(file), warnings))
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["ani"]
    }

    fn dump_name(&self) -> Option<&'static str> {
        Some("ani")
    }

    fn open_dump(&self, body: Value, _path: &Path) -> Result<Opened<'static>> {
        Ok(Opened::new(
            Format::Ani,
            AniDocument(Ani { fields: body }),
            Vec::new(),
        ))
    }
}

impl Document for AniDocument {
    fn info(&self) -> Info {
        let states = super::states(&self.0);
        Info {
            animations: Some(states.len() as u64),
            details: json!({
                "states": states.iter().map(|(s, parts)| format!("{s}: {}", parts.join(", "))).collect::<Vec<_>>(),
            }),
            ..Default::default()
        }
    }

    fn dump(&self) -> Result<Value> {
        Ok(self.0.fields.clone())
    }

    fn validate(&self) -> Vec<Finding> {
        super::check(&self.0)
    }

    fn to_scene(
        &self,
        name: &str,
        motions: &[(String, &Opened<'_>)],
    ) -> Result<(Scene, Vec<Warning>)> {
        no_motions(motions)?;
        Ok(super::to_scene(&self.0, name))
    }

    fn write(&self, output: &Path) -> Option<Result<(Vec<u8>, Vec<Warning>)>> {
        crate::io::has_ext(output, "ani").then(|| Ok((super::write(&self.0)?, Vec::new())))
    }
}
