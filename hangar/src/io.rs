//! File access: inputs are mapped (big dumps are never copied), outputs are written whole or not at all.

use crate::error::{Error, Result};
use std::io::Write;
use std::path::Path;

/// The bytes of an input file: mapped when large, read when small.
pub enum Input {
    Mapped(Mapped),
    Read(Vec<u8>),
    /// A range of bytes held by something shared (an entry of a catalog's mapped `.dat`).
    Part(
        std::sync::Arc<dyn AsRef<[u8]> + Send + Sync>,
        std::ops::Range<usize>,
    ),
}

impl std::ops::Deref for Input {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Input::Mapped(m) => m,
            Input::Read(v) => v,
            Input::Part(whole, range) => (**whole).as_ref().get(range.clone()).unwrap_or(&[]),
        }
    }
}

const MAP_FROM: u64 = 1 << 20;

/// A whole file's bytes as [`map`] gives them: a read-only map in the native build, a copy in
/// memory without it (wasm has no mmap).
#[cfg(feature = "native")]
pub type Mapped = memmap2::Mmap;
#[cfg(not(feature = "native"))]
pub type Mapped = Vec<u8>;

/// The bytes of the open file `f`, mapped (native build) or read.
#[cfg(feature = "native")]
pub fn map(f: &std::fs::File) -> std::io::Result<Mapped> {
    // SAFETY: the map is read-only; hangar never writes to an input (see `write_output`), and a file
    // changed by another program while mapped gives wrong bytes, not undefined behaviour in practice.
    unsafe { memmap2::Mmap::map(f) }
}

#[cfg(not(feature = "native"))]
pub fn map(mut f: &std::fs::File) -> std::io::Result<Mapped> {
    use std::io::Read;
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes)?;
    Ok(bytes)
}

pub fn read_input(path: &Path) -> Result<Input> {
    let f = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let len = f.metadata().map_err(|e| Error::io(path, e))?.len();
    if len >= MAP_FROM {
        if let Ok(m) = map(&f) {
            return Ok(Input::Mapped(m));
        }
    }
    // Read from the file already open (reopening it by name cost two more system calls per file).
    use std::io::Read;
    let mut bytes = Vec::new();
    // The size is a hint (a file may grow, /proc says 0): a failed reservation just reads in steps.
    let _ = bytes.try_reserve_exact(usize::try_from(len).unwrap_or(0).saturating_add(1));
    (&f).read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    Ok(Input::Read(bytes))
}

/// `p` absolute with every link resolved, as [`std::fs::canonicalize`] gives it, but spelled as a
/// user writes it: on Windows without the verbatim prefix (`\\?\C:\...` is `C:\...`,
/// `\\?\UNC\server\share` is `\\server\share`), which messages and outputs would otherwise show.
/// The standard library adds the prefix back itself where a long path needs it.
pub fn canonical(p: &Path) -> std::io::Result<std::path::PathBuf> {
    let real = std::fs::canonicalize(p)?;
    if cfg!(windows) {
        if let Some(plain) = real.to_str().and_then(without_verbatim_prefix) {
            return Ok(plain.into());
        }
    }
    Ok(real)
}

/// A Windows path without its verbatim prefix, when it has one that can go: a drive's or a share's.
fn without_verbatim_prefix(p: &str) -> Option<String> {
    let rest = p.strip_prefix(r"\\?\")?;
    if let Some(share) = rest.strip_prefix(r"UNC\") {
        return Some(format!(r"\\{share}"));
    }
    let drive = rest.as_bytes();
    (drive.len() >= 2 && drive[0].is_ascii_alphabetic() && drive[1] == b':')
        .then(|| rest.to_string())
}

/// `file` as a relative path from the folder `from` (`/` separated), when both are absolute paths
/// on the same root.
pub(crate) fn relative_path(from: &Path, file: &Path) -> Option<String> {
    use std::path::Component;
    let a: Vec<Component> = from.components().collect();
    let b: Vec<Component> = file.components().collect();
    let same_root = matches!(
        (a.first(), b.first()),
        (Some(x), Some(y)) if x == y && matches!(x, Component::RootDir | Component::Prefix(_))
    );
    if !same_root {
        return None;
    }
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut parts: Vec<String> = vec!["..".into(); a.len() - common];
    for c in b.get(common..)? {
        match c {
            Component::Normal(n) => parts.push(n.to_str()?.to_string()),
            _ => return None,
        }
    }
    Some(parts.join("/"))
}

/// `base` joined with `rel` as the file system would walk it, each `..` of `rel` taking one
/// folder off `base` (for messages and results that name a file plainly).
pub(crate) fn joined(base: &Path, rel: &Path) -> std::path::PathBuf {
    let mut out = base.to_path_buf();
    for c in rel.components() {
        match c {
            std::path::Component::ParentDir if out.file_name().is_some() => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

/// The folder `file` lies (or will be written) in, absolute and with links resolved as far as it
/// exists.
pub(crate) fn folder_of(file: &Path) -> Option<std::path::PathBuf> {
    let dir = file.parent().filter(|p| !p.as_os_str().is_empty());
    let dir = std::path::absolute(dir.unwrap_or(Path::new("."))).ok()?;
    // Resolve the part that exists (links), keep the rest as written.
    let mut existing = dir.clone();
    let mut rest = Vec::new();
    while !existing.exists() {
        rest.push(existing.file_name()?.to_os_string());
        existing = existing.parent()?.to_path_buf();
    }
    let mut out = canonical(&existing).ok()?;
    for r in rest.into_iter().rev() {
        out.push(r);
    }
    Some(out)
}

/// True when `a` and `b` name the same existing file (through links too).
pub fn same_file(a: &Path, b: &Path) -> bool {
    // The file's identity from one stat each: resolving both paths cost a batch a dozen system
    // calls per file.
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        // `b` first: in a conversion it is the output, usually not there yet.
        let Ok(y) = std::fs::metadata(b) else {
            return false;
        };
        std::fs::metadata(a).is_ok_and(|x| x.dev() == y.dev() && x.ino() == y.ino())
    }
    #[cfg(not(unix))]
    match (canonical(a), canonical(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// Writes `bytes` to `path` through a temporary file in the same folder and a rename, so a reader
/// never sees half a file and a failed run leaves no file behind.
pub fn write_output(path: &Path, bytes: &[u8]) -> Result<()> {
    write_output_with(path, |f| f.write_all(bytes))
}

/// [`write_output`] for outputs written piece by piece (a catalog's `.dat`): `fill` writes into the
/// temporary file, which replaces `path` only when it succeeds.
pub fn write_output_with(
    path: &Path,
    fill: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
) -> Result<()> {
    through_temp(path, false, fill)
}

/// [`write_output_with`] for one file of many going into folders that may not be there yet (an
/// extraction): the folder is made only when the file cannot be created without it.
pub fn write_output_made(
    path: &Path,
    fill: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
) -> Result<()> {
    through_temp(path, true, fill)
}

/// `fill` writes the temporary file beside `path`, which replaces `path` only when it succeeds;
/// with `make_folder`, a missing folder of `path` is made.
fn through_temp(
    path: &Path,
    make_folder: bool,
    fill: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
) -> Result<()> {
    let tmp = temp_for(path);
    let result = (|| {
        let mut f = match std::fs::File::create(&tmp) {
            Err(e) if make_folder && e.kind() == std::io::ErrorKind::NotFound => {
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir)?;
                }
                std::fs::File::create(&tmp)?
            }
            other => other?,
        };
        // No fsync: the rename already keeps readers from half a file, and a flush per output
        // costs a batch more than the conversion itself on slow disks.
        fill(&mut f)?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(Error::io(path, e));
    }
    Ok(())
}

/// Writes `bytes` to `to` in steps of [`STEP`]: on Linux (6.18, ext4, a 2-core VM) one write of a
/// 16 MB file took 0.9-2.6 ms of system time a MB, steps of 64 KiB 0.31 ms (the kernel takes a
/// large write into large page-cache folios, each fresh memory to the host); elsewhere a system
/// call every 64 KiB costs nothing measurable.
pub fn write_in_steps(to: &mut std::fs::File, bytes: &[u8]) -> std::io::Result<()> {
    bytes.chunks(STEP).try_for_each(|piece| to.write_all(piece))
}

/// The most [`write_in_steps`] hands the kernel at once.
pub const STEP: usize = 64 << 10;

/// Writes `bytes`, which are the bytes at `offset` of the file `from` (a file stored as it is in
/// an archive), to `to`: copied by the kernel from file to file where it can (`copy_file_range` on
/// Linux: the bytes never pass through this process, a third of the CPU time of writing them from
/// memory), the rest written from `bytes`.
pub fn copy_range(
    from: &std::fs::File,
    offset: u64,
    bytes: &[u8],
    to: &mut std::fs::File,
) -> std::io::Result<()> {
    let done = kernel_copy(from, offset, bytes.len(), to);
    write_in_steps(to, bytes.get(done..).unwrap_or_default())
}

/// Bytes copied by `copy_file_range`, stopping at the first error or short end (then the caller
/// writes the rest itself).
#[cfg(all(target_os = "linux", feature = "native"))]
fn kernel_copy(from: &std::fs::File, offset: u64, len: usize, to: &std::fs::File) -> usize {
    use std::os::fd::AsRawFd;
    let mut done = 0usize;
    while done < len {
        let Ok(mut off) = libc::loff_t::try_from(offset.saturating_add(done as u64)) else {
            break;
        };
        // SAFETY: both descriptors belong to open files; `off` outlives the call; a null output
        // offset writes at `to`'s position and moves it.
        let n = unsafe {
            libc::copy_file_range(
                from.as_raw_fd(),
                &mut off,
                to.as_raw_fd(),
                std::ptr::null_mut(),
                len - done,
                0,
            )
        };
        match usize::try_from(n) {
            Ok(n @ 1..) => done += n,
            _ => break,
        }
    }
    done
}

#[cfg(not(all(target_os = "linux", feature = "native")))]
fn kernel_copy(_: &std::fs::File, _: u64, _: usize, _: &std::fs::File) -> usize {
    0
}

/// The temporary file [`write_output`] fills before renaming it to `path`.
fn temp_for(path: &Path) -> std::path::PathBuf {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    static PID: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    dir.join(format!(".{name}.hangar-{}.tmp", PID.get_or_init(own_pid)))
}

/// This process's id (0 on wasm, where `std::process::id` panics: there are no processes).
pub(crate) fn own_pid() -> u32 {
    if cfg!(target_family = "wasm") {
        0
    } else {
        std::process::id()
    }
}

/// A file's bytes as the slices it is made of, in order (a .glb: its head, then the scene's own
/// arrays), so it is written without being joined into one buffer first.
#[derive(Debug, Default)]
pub struct Pieces<'a>(pub Vec<std::borrow::Cow<'a, [u8]>>);

impl<'a> Pieces<'a> {
    pub fn len(&self) -> usize {
        self.0.iter().map(|p| p.len()).sum()
    }

    /// The bytes joined.
    pub fn to_vec(&self) -> Vec<u8> {
        self.0.concat()
    }

    /// Writes every slice, a batch of them per system call.
    pub fn write_to(&self, f: &mut impl Write) -> std::io::Result<()> {
        let mut slices: Vec<std::io::IoSlice<'_>> = self
            .0
            .iter()
            .filter(|p| !p.is_empty())
            .map(|p| std::io::IoSlice::new(p))
            .collect();
        let mut rest = &mut slices[..];
        while !rest.is_empty() {
            match f.write_vectored(rest) {
                Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
                Ok(n) => std::io::IoSlice::advance_slices(&mut rest, n),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

impl From<Vec<u8>> for Pieces<'_> {
    fn from(bytes: Vec<u8>) -> Self {
        Pieces(vec![bytes.into()])
    }
}

impl<'a> From<&'a [u8]> for Pieces<'a> {
    fn from(bytes: &'a [u8]) -> Self {
        Pieces(vec![bytes.into()])
    }
}

/// [`write_outputs`] of whole files by path, in order (the last is written last).
pub fn write_files(files: &[(std::path::PathBuf, Vec<u8>)]) -> Result<()> {
    let bodies: Vec<Pieces<'_>> = files.iter().map(|(_, b)| b[..].into()).collect();
    let all: Vec<(&Path, &Pieces<'_>)> = files
        .iter()
        .map(|(p, _)| p.as_path())
        .zip(&bodies)
        .collect();
    write_outputs(&all)
}

/// Writes several files as one output (a glTF and the textures it names): every file goes to a
/// temporary file beside it first, and only when all of them are written are they renamed, in
/// order (so the last one, the file naming the others, appears last). A failure while writing
/// leaves none of them; folders are made as needed.
pub fn write_outputs(files: &[(&Path, &Pieces<'_>)]) -> Result<()> {
    let mut temps: Vec<std::path::PathBuf> = Vec::with_capacity(files.len());
    let clean = |temps: &[std::path::PathBuf]| {
        for t in temps {
            let _ = std::fs::remove_file(t);
        }
    };
    for (path, bytes) in files {
        let tmp = temp_for(path);
        // The folder is made only when the file cannot be created without it: asking first cost
        // a system call per file for the usual folder that is already there.
        let created = match std::fs::File::create(&tmp) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if let Err(e) = create_parent(path) {
                    clean(&temps);
                    return Err(e);
                }
                std::fs::File::create(&tmp)
            }
            other => other,
        };
        let written = created.and_then(|mut f| {
            preallocate(&f, bytes.len());
            bytes.write_to(&mut f)
        });
        temps.push(tmp);
        if let Err(e) = written {
            clean(&temps);
            return Err(Error::io(path, e));
        }
    }
    for (i, ((path, _), tmp)) in files.iter().zip(&temps).enumerate() {
        if let Err(e) = std::fs::rename(tmp, path) {
            clean(temps.get(i..).unwrap_or_default());
            return Err(Error::io(path, e));
        }
    }
    Ok(())
}

/// Makes the folder `dir` and those above it that are missing; returns the ones it made, the
/// outermost first, for [`remove_made`] to take back when the work that needed them fails.
pub fn create_dirs(dir: &Path) -> std::io::Result<Vec<std::path::PathBuf>> {
    let mut made = Vec::new();
    let mut d = Some(dir);
    while let Some(p) = d.filter(|p| !p.as_os_str().is_empty() && !p.exists()) {
        made.push(p.to_path_buf());
        d = p.parent();
    }
    std::fs::create_dir_all(dir)?;
    made.reverse();
    Ok(made)
}

/// Removes the folders [`create_dirs`] made, innermost first, each only while empty: nothing that
/// was there before, nor anything written into them since, is removed.
pub fn remove_made(made: &[std::path::PathBuf]) {
    for d in made.iter().rev() {
        let _ = std::fs::remove_dir(d);
    }
}

/// Makes the folder `path` goes in (and those above it) when it is missing; the error names it.
pub fn create_parent(path: &Path) -> Result<()> {
    match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) => std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e)),
        None => Ok(()),
    }
}

/// For a program that converts many files in a row (the CLI's batches, the benches): glibc hands
/// each buffer over 128 KiB to a fresh mmap and unmaps it when freed, so every file of a batch
/// page-faults its buffers in again (a quarter of an XMF batch's time went there). Large
/// thresholds keep freed memory for the next file; the peak stays what one file needs. glibc
/// refuses an mmap threshold above 32 MiB (and keeps its default), so that is the one set. Call
/// it first thing, before other threads start; elsewhere than glibc it does nothing.
pub fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu", feature = "native"))]
    // SAFETY: mallopt only sets allocator parameters.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 512 << 20);
    }
}

/// Reserves `len` bytes for a file about to be written whole, so ext4 does not reserve its blocks
/// page by page as the writes arrive (a fifth of the time spent writing an M3 batch's 44 MB).
/// Best effort: where the file system cannot, the file is written as before.
#[cfg(all(target_os = "linux", feature = "native"))]
fn preallocate(f: &std::fs::File, len: usize) {
    use std::os::fd::AsRawFd;
    if let Ok(len @ 1..) = libc::off_t::try_from(len) {
        // SAFETY: fallocate reads its integer arguments only; the descriptor is the open file's.
        unsafe { libc::fallocate(f.as_raw_fd(), 0, 0, len) };
    }
}

#[cfg(not(all(target_os = "linux", feature = "native")))]
fn preallocate(_: &std::fs::File, _: usize) {}

/// Asks the kernel to start writing `f`'s bytes to the storage device now, and returns without
/// waiting for it: one of many files written in a row (an extraction) goes to the device while the
/// next ones are made, rather than all of them after the last one (when a `sync`, or the kernel's
/// writeback seconds later, comes). Best effort; elsewhere than Linux it does nothing.
#[cfg(all(target_os = "linux", feature = "native"))]
pub(crate) fn write_behind(f: &std::fs::File) {
    use std::os::fd::AsRawFd;
    // SAFETY: sync_file_range reads its integer arguments only; the descriptor is the open file's.
    unsafe { libc::sync_file_range(f.as_raw_fd(), 0, 0, libc::SYNC_FILE_RANGE_WRITE) };
}

#[cfg(not(all(target_os = "linux", feature = "native")))]
pub(crate) fn write_behind(_: &std::fs::File) {}

/// True for the temporary files [`write_output`] writes before its rename.
pub fn is_temp(path: &Path) -> bool {
    temp_owner(path).is_some()
}

/// The process that wrote a temporary file of [`write_output`] (`.NAME.hangar-PID.tmp`).
fn temp_owner(path: &Path) -> Option<u32> {
    let name = path.file_name()?.to_str()?;
    let rest = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let (_, pid) = rest.rsplit_once(".hangar-")?;
    pid.parse().ok()
}

/// Removes the temporary files that a killed run left under `dir` (their process is gone).
/// Returns how many were removed.
pub fn remove_stale_temps(dir: &Path) -> usize {
    let mut removed = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.filter_map(|e| e.ok()) {
            let Ok(ty) = e.file_type() else { continue };
            let p = e.path();
            if ty.is_dir() {
                stack.push(p);
            } else if let Some(pid) = temp_owner(&p) {
                if pid != own_pid() && !process_alive(pid) && std::fs::remove_file(&p).is_ok() {
                    removed += 1;
                }
            }
        }
    }
    removed
}

/// Whether process `pid` still runs (where the system tells; elsewhere, assume it is gone).
fn process_alive(pid: u32) -> bool {
    let proc = Path::new("/proc");
    proc.is_dir() && proc.join(pid.to_string()).exists()
}

/// True when `p` ends in `.ext` (any case).
pub fn has_ext(p: &Path, ext: &str) -> bool {
    p.extension().is_some_and(|e| e.eq_ignore_ascii_case(ext))
}

/// The file `rel` (a path read from inside a file, e.g. a glTF buffer uri or a texture path) names
/// relative to the folder `root`, refused unless it resolves, after following links, to a regular
/// file inside `root`. A shared model must not smuggle the user's other files (`/etc/passwd`,
/// `../../x`, a link pointing out, `/dev/zero`) into what hangar writes.
pub fn resolve_inside(root: &Path, rel: &str) -> Result<std::path::PathBuf> {
    let refuse = |why: &str| Error::refused("", format!("path {rel:?} {why}"));
    let p = Path::new(rel);
    if rel.is_empty()
        || rel.contains('\0')
        || p.is_absolute()
        || rel.starts_with(['/', '\\'])
        || p.components()
            .any(|c| matches!(c, std::path::Component::Prefix(_)))
    {
        return Err(refuse("is not a relative path inside the file's folder"));
    }
    let root = absolute(root).ok_or_else(|| refuse("has no folder to resolve against"))?;
    let target =
        canonical(&root.join(p)).map_err(|e| refuse(&format!("cannot be resolved: {e}")))?;
    if !target.starts_with(&root) {
        return Err(refuse(&format!(
            "leads outside the folder {} (to {})",
            root.display(),
            target.display()
        )));
    }
    let meta = std::fs::metadata(&target).map_err(|e| Error::io(&target, e))?;
    if !meta.is_file() {
        return Err(refuse("is not a regular file"));
    }
    Ok(target)
}

/// Reads the file `rel` inside `root` (see [`resolve_inside`]), refused unless it holds `len` bytes
/// (up to 3 bytes more, the padding to 4 some exporters add).
pub fn read_inside(root: &Path, rel: &str, len: usize) -> Result<Vec<u8>> {
    let p = resolve_inside(root, rel)?;
    let size = std::fs::metadata(&p).map_err(|e| Error::io(&p, e))?.len();
    if size < len as u64 || size > len as u64 + 3 {
        return Err(Error::refused(
            "",
            format!("path {rel:?}: file of {size} bytes, {len} declared"),
        ));
    }
    let mut data = std::fs::read(&p).map_err(|e| Error::io(&p, e))?;
    data.truncate(len);
    Ok(data)
}

/// `p` with every link resolved (`.` for an empty path), if it exists.
fn absolute(p: &Path) -> Option<std::path::PathBuf> {
    let p = if p.as_os_str().is_empty() {
        Path::new(".")
    } else {
        p
    };
    canonical(p).ok()
}

#[cfg(test)]
mod tests {
    #[test]
    fn relative_paths_climb_to_the_common_folder() {
        assert_eq!(
            super::relative_path(
                super::Path::new("/w/out"),
                super::Path::new("/w/mod/tex/a.png")
            )
            .as_deref(),
            Some("../mod/tex/a.png")
        );
        assert_eq!(
            super::relative_path(super::Path::new("/w"), super::Path::new("/w/a.png")).as_deref(),
            Some("a.png")
        );
        assert_eq!(
            super::relative_path(super::Path::new("w"), super::Path::new("/w/a.png")),
            None
        );
    }

    #[test]
    fn windows_paths_lose_only_the_verbatim_prefix() {
        use super::without_verbatim_prefix as plain;
        assert_eq!(
            plain(r"\\?\C:\Games\X4 Foundations").as_deref(),
            Some(r"C:\Games\X4 Foundations")
        );
        assert_eq!(
            plain(r"\\?\UNC\nas\mods\ship.xml").as_deref(),
            Some(r"\\nas\mods\ship.xml")
        );
        // A device path or a plain one has nothing that can go.
        assert_eq!(plain(r"\\?\Volume{1234}\x"), None);
        assert_eq!(plain(r"C:\x"), None);
    }

    #[test]
    fn resolve_inside_keeps_to_the_folder() {
        let d = std::env::temp_dir().join(format!("hangar-io-resolve-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("sub")).unwrap();
        std::fs::write(d.join("sub/a.bin"), b"abcd").unwrap();
        let got = super::resolve_inside(&d, "sub/../sub/a.bin").unwrap();
        assert_eq!(got, d.canonicalize().unwrap().join("sub/a.bin"));
        assert_eq!(super::read_inside(&d, "sub/a.bin", 4).unwrap(), b"abcd");
        for bad in ["", "/etc/passwd", "..", "sub", "missing.bin", "../hostile"] {
            let e = super::resolve_inside(&d, bad).unwrap_err();
            assert_eq!(e.kind, crate::error::ErrorKind::Refused, "{bad:?}: {e}");
        }
    }

    #[test]
    fn folders_made_for_a_failed_run_go_and_others_stay() {
        let d = std::env::temp_dir().join(format!("hangar-io-made-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("there")).unwrap();
        let made = super::create_dirs(&d.join("there/a/b")).unwrap();
        assert_eq!(made, [d.join("there/a"), d.join("there/a/b")]);
        super::remove_made(&made);
        assert!(!d.join("there/a").exists() && d.join("there").is_dir());
        // Something written into a made folder since keeps it (and those above it).
        let made = super::create_dirs(&d.join("there/a/b")).unwrap();
        std::fs::write(d.join("there/a/keep.txt"), b"x").unwrap();
        super::remove_made(&made);
        assert!(!d.join("there/a/b").exists() && d.join("there/a/keep.txt").is_file());
        // A folder that was there is never made, nor removed.
        assert!(super::create_dirs(&d.join("there")).unwrap().is_empty());
        let _ = std::fs::remove_dir_all(&d);
    }

    use super::Pieces;
    use std::borrow::Cow;

    /// Takes at most 7 bytes and 3 slices a call, as a slow pipe or a full disk cache might.
    struct Trickle(Vec<u8>);

    impl std::io::Write for Trickle {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let n = buf.len().min(7);
            self.0.extend_from_slice(&buf[..n]);
            Ok(n)
        }

        fn write_vectored(&mut self, bufs: &[std::io::IoSlice<'_>]) -> std::io::Result<usize> {
            let mut n = 0;
            for b in bufs.iter().take(3) {
                let take = b.len().min(7 - n);
                self.0.extend_from_slice(&b[..take]);
                n += take;
                if n == 7 {
                    break;
                }
            }
            Ok(n)
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn pieces_are_written_whole_across_short_writes() {
        // More slices than one writev takes (IOV_MAX is 1024 on Linux), empty ones among them.
        let owned: Vec<Vec<u8>> = (0..3000u32)
            .map(|i| (0..i % 13).map(|k| (i + k) as u8).collect())
            .collect();
        let pieces = Pieces(owned.iter().map(|v| Cow::Borrowed(&v[..])).collect());
        let joined = pieces.to_vec();
        assert_eq!(joined.len(), owned.iter().map(Vec::len).sum::<usize>());
        assert_eq!(pieces.len(), joined.len());
        let mut t = Trickle(Vec::new());
        pieces.write_to(&mut t).unwrap();
        assert_eq!(t.0, joined);
        let mut f = Vec::new();
        pieces.write_to(&mut f).unwrap();
        assert_eq!(f, joined);
        // Slice i holds i % 13 bytes counting up from i: [], [1], [2, 3], [3, 4, 5]...
        assert_eq!(&joined[..6], &[1, 2, 3, 3, 4, 5]);
    }

    #[test]
    fn same_file_sees_one_file_under_two_names_and_nothing_in_a_missing_one() {
        let dir = std::env::temp_dir().join(format!("hangar-same-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        let a = dir.join("a.m3");
        std::fs::write(&a, b"MD34").unwrap();
        std::fs::write(dir.join("b.glb"), b"MD34").unwrap();
        assert!(super::same_file(&a, &dir.join("sub/../a.m3")));
        // A hard link is the same file by its inode (elsewhere only by its resolved path).
        #[cfg(unix)]
        {
            std::fs::hard_link(&a, dir.join("link.glb")).unwrap();
            assert!(super::same_file(&a, &dir.join("link.glb")));
        }
        // Same bytes, another file; and an output not written yet.
        assert!(!super::same_file(&a, &dir.join("b.glb")));
        assert!(!super::same_file(&a, &dir.join("a.glb")));
        assert!(!super::same_file(&dir.join("gone.m3"), &a));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn outputs_replace_a_longer_file_with_exactly_their_bytes() {
        // Space is reserved before writing: the file must end where the bytes end, also when a
        // longer file was there, and no temporary file may stay behind.
        let dir = std::env::temp_dir().join(format!("hangar-io-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let (a, b) = (dir.join("a.glb"), dir.join("sub/b.bin"));
        std::fs::write(&a, vec![7u8; 100_000]).unwrap();
        let head = [1u8; 20];
        let body: Vec<u8> = (0..70_001u32).map(|i| i as u8).collect();
        let first = Pieces(vec![Cow::Borrowed(&head[..]), Cow::Borrowed(&body[..])]);
        let second = Pieces(vec![Cow::Borrowed(&body[..5])]);
        super::write_outputs(&[(&a, &first), (&b, &second)]).unwrap();
        assert_eq!(std::fs::read(&a).unwrap(), first.to_vec());
        assert_eq!(std::fs::metadata(&a).unwrap().len(), 70_021);
        assert_eq!(std::fs::read(&b).unwrap(), vec![0, 1, 2, 3, 4]);
        let names = |d: &std::path::Path| {
            let mut n: Vec<String> = std::fs::read_dir(d)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            n.sort();
            n
        };
        assert_eq!(names(&dir), ["a.glb", "sub"]);
        assert_eq!(names(&dir.join("sub")), ["b.bin"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
