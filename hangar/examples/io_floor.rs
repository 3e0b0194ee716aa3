//! The file work of a conversion batch with no conversion: every input is read the way
//! `hangar convert` reads it (mapped from 1 MiB, else read whole from the open file) and an output
//! of a given size is written the way it writes one (`Converted::write`: a temporary file, space
//! reserved, a rename).
//! `bench/compare.sh` times it beside the real batch and a plain copy, to show how much of a
//! batch's time is the system's share of reading and writing those bytes.
//!
//! Usage: `io_floor IN_DIR OUT_DIR [SIZES_DIR]`: each output `OUT_DIR/STEM.glb` has the size of
//! `SIZES_DIR/STEM.glb` (a real batch's output), or of its input when no SIZES_DIR is given.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let (Some(input), Some(output)) = (args.first(), args.get(1)) else {
        eprintln!("usage: io_floor IN_DIR OUT_DIR [SIZES_DIR]");
        return ExitCode::FAILURE;
    };
    match run(input, output, args.get(2).map(PathBuf::as_path)) {
        Ok((files, read, written)) => {
            println!("{files} files: {read} bytes read, {written} bytes written");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("io_floor: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(input: &Path, output: &Path, sizes: Option<&Path>) -> hangar::Result<(usize, u64, u64)> {
    let mut names: Vec<PathBuf> = std::fs::read_dir(input)
        .map_err(|e| hangar::Error::io(input, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    names.sort();
    // One buffer, cut or grown to each output's size (the conversion's own buffers are not the
    // point here).
    let mut fill = hangar::Converted::default();
    let (mut read, mut written) = (0u64, 0u64);
    for p in &names {
        let bytes = read_input(p)?;
        let name = format!(
            "{}.glb",
            p.file_stem().unwrap_or_default().to_string_lossy()
        );
        let n = sizes.map_or(bytes.len(), |dir| {
            std::fs::metadata(dir.join(&name)).map_or(bytes.len(), |m| m.len() as usize)
        });
        fill.bytes.resize(n, 0x5a);
        fill.write(&output.join(&name))?;
        read += bytes.len() as u64;
        written += n as u64;
    }
    Ok((names.len(), read, written))
}

/// An input's bytes as `hangar convert` reads them: mapped from 1 MiB, else read from the file
/// already open with its size reserved.
fn read_input(path: &Path) -> hangar::Result<Box<dyn std::ops::Deref<Target = [u8]>>> {
    use std::io::Read;
    let io = |e| hangar::Error::io(path, e);
    let f = std::fs::File::open(path).map_err(io)?;
    let len = f.metadata().map_err(io)?.len();
    if len >= 1 << 20 {
        // SAFETY: read-only map of an input no one writes to while the example runs.
        if let Ok(m) = unsafe { memmap2::Mmap::map(&f) } {
            return Ok(Box::new(m));
        }
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0) + 1);
    (&f).read_to_end(&mut bytes).map_err(io)?;
    Ok(Box::new(bytes))
}
