//! An MPQ archive in the registry: `hangar info MAP.SC2Map` tells its format version, files, sizes
//! and the models it holds. Its files are converted through the game view (`ARCHIVE::path`, or the
//! archive as a folder), so the archive itself makes no scene.

use super::{is_archive, Archive, SPECIAL};
use crate::detect::Format;
use crate::document::{Document, FileFormat, Info, Opened};
use crate::error::{Error, Result, Warning};
use crate::model::Scene;
use crate::validate::Finding;
use serde_json::{json, Map};
use std::path::Path;

pub struct ArchiveFormat;

struct ArchiveDocument {
    archive: Archive,
}

impl FileFormat for ArchiveFormat {
    fn formats(&self) -> &'static [Format] {
        &[Format::Mpq]
    }

    fn detect(&self, bytes: &[u8], _ext: &str) -> Option<Format> {
        is_archive(bytes).then_some(Format::Mpq)
    }

    fn open<'a>(&self, format: Format, bytes: &'a [u8], _path: &Path) -> Result<Opened<'a>> {
        let mut archive = Archive::from_source(&bytes)?;
        let warnings = std::mem::take(&mut archive.warnings);
        Ok(Opened::new(format, ArchiveDocument { archive }, warnings))
    }
}

/// The lower-case extension of a game path (`""` without one).
fn ext(path: &str) -> String {
    let name = path.rsplit(['\\', '/']).next().unwrap_or(path);
    name.rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default()
}

impl Document for ArchiveDocument {
    fn info(&self) -> Info {
        let a = &self.archive;
        let h = &a.header;
        let own = |p: &str| SPECIAL.iter().any(|s| p.eq_ignore_ascii_case(s));
        let files: Vec<_> = a.entries.iter().filter(|e| !own(&e.path)).collect();
        let has = |name: &str| a.entries.iter().any(|e| e.path.eq_ignore_ascii_case(name));
        let mut kinds: std::collections::BTreeMap<String, u64> = Default::default();
        for e in &files {
            *kinds.entry(ext(&e.path)).or_default() += 1;
        }
        let models: Vec<&str> = files
            .iter()
            .filter(|e| matches!(ext(&e.path).as_str(), "m3" | "m3a"))
            .map(|e| e.path.as_str())
            .collect();
        let mut top = Map::new();
        top.insert("files".into(), files.len().into());
        top.insert("models".into(), json!(models));
        let details = json!({
            "format_version": u32::from(h.format_version) + 1,
            "archive_bytes": a.len,
            "bytes": files.iter().map(|e| u64::from(e.size)).sum::<u64>(),
            "stored_bytes": files.iter().map(|e| u64::from(e.compressed_size)).sum::<u64>(),
            "sector_size": h.sector_size(),
            "hash_table_entries": h.hash_table_entries,
            "block_table_entries": h.block_table_entries,
            "unnamed_files": a.unnamed,
            "listfile": has(super::LISTFILE),
            "attributes": has(super::ATTRIBUTES),
            "signature": has("(signature)"),
            "kinds": kinds,
        });
        Info {
            format: format!(
                "MPQ archive, format {} (StarCraft II map or mod)",
                u32::from(h.format_version) + 1
            ),
            top,
            details,
            ..Info::default()
        }
    }

    fn validate(&self) -> Vec<Finding> {
        Vec::new()
    }

    fn to_scene(
        &self,
        _name: &str,
        _motions: &[(String, &Opened<'_>)],
    ) -> Result<(Scene, Vec<Warning>)> {
        Err(Error::unsupported(
            "an MPQ archive holds files, not one model: convert ARCHIVE::path/model.m3 for one, or the archive into a folder for all",
        ))
    }
}
