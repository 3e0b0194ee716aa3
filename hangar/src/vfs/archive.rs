//! An MPQ archive (a StarCraft II `.SC2Map`, `.SC2Mod`) as a layer of the game view: its named
//! files by game path, read when asked for. Only the header and tables are read on opening; the
//! archive may be a mapped file or a [`ByteSource`] read in slices (a browser's `File`).

use super::{listed, ByteSource, GameView, Layer, SharedSource};
use crate::error::Result;
use crate::formats::mpq::{self, Archive, ReadAt};
use crate::io::Input;
use std::borrow::Cow;
use std::path::Path;
use std::sync::Arc;

/// A [`ByteSource`] as the archive reader reads: a read that comes back short is an error.
struct Sliced(SharedSource);

impl ReadAt for Sliced {
    fn size(&self) -> u64 {
        self.0.len()
    }

    fn read_at(&self, offset: u64, len: usize) -> Result<Cow<'_, [u8]>> {
        let b = self.0.read_at(offset, len)?;
        if b.len() < len {
            return Err(mpq::past_end(offset, len as u64, self.0.len(), "archive"));
        }
        Ok(Cow::Owned(b))
    }
}

/// An archive's files as a layer.
pub struct ArchiveLayer {
    // Boxed: the tables and names would make every layer as large as this one.
    archive: Box<Archive>,
    src: Box<dyn ReadAt>,
    /// The archive as messages name it.
    label: String,
}

impl ArchiveLayer {
    /// The archive at `path` (mapped when large).
    pub fn open(path: &Path) -> Result<ArchiveLayer> {
        let bytes = crate::io::read_input(path)?;
        let archive = Archive::from_source(&bytes).map_err(|e| e.in_file(path))?;
        Ok(ArchiveLayer {
            archive: Box::new(archive),
            src: Box::new(bytes),
            label: path.display().to_string(),
        })
    }

    /// The archive in `src`, read in slices; `label` names it in messages.
    pub fn from_source(src: SharedSource, label: &str) -> Result<ArchiveLayer> {
        let src = Sliced(src);
        let archive = Archive::from_source(&src).map_err(|e| e.in_file(Path::new(label)))?;
        Ok(ArchiveLayer {
            archive: Box::new(archive),
            src: Box::new(src),
            label: label.to_string(),
        })
    }

    fn entry(&self, norm: &str) -> Option<mpq::Entry> {
        if mpq::SPECIAL.contains(&norm) {
            return None;
        }
        self.archive.find(norm)
    }

    /// The file's name as the archive's listfile spells it, with `/`.
    pub(super) fn spelled(&self, norm: &str) -> Option<String> {
        self.entry(norm).map(|e| e.path.replace('\\', "/"))
    }

    pub(super) fn has(&self, norm: &str) -> bool {
        self.entry(norm).is_some()
    }

    pub(super) fn get(&self, norm: &str) -> Option<Result<Input>> {
        let e = self.entry(norm)?;
        Some(
            self.archive
                .read(self.src.as_ref(), &e)
                .map(Input::Read)
                .map_err(|err| err.in_file(Path::new(&self.label))),
        )
    }

    pub(super) fn files(&self, prefix: &str, out: &mut Vec<String>) {
        listed(self.archive.paths(), "", prefix, out);
    }
}

impl GameView {
    /// The files of the MPQ archive at `path` as a view.
    pub fn archive(path: &Path) -> Result<GameView> {
        Ok(GameView {
            label: path.display().to_string(),
            layers: vec![Arc::new(Layer::Archive(ArchiveLayer::open(path)?))],
        })
    }

    /// The files of the archive in `src` (read in slices) as a view named `label`.
    pub fn archive_source(src: SharedSource, label: &str) -> Result<GameView> {
        Ok(GameView {
            label: label.to_string(),
            layers: vec![Arc::new(Layer::Archive(ArchiveLayer::from_source(
                src, label,
            )?))],
        })
    }
}

/// True when the first bytes of `src` start an MPQ archive.
pub fn is_archive_source(src: &dyn ByteSource) -> bool {
    src.read_at(0, 4).is_ok_and(|h| mpq::is_archive(&h))
}
