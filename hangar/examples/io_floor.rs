//! The file work of a conversion batch with no conversion: every input is read the way
//! `hangar convert` reads it (`io::read_input`) and an output of a given size is written the way it
//! writes one (`io::write_outputs`: a temporary file, space reserved, vectored writes, a rename).
//! `bench/compare.sh` times it beside the real batch and a plain copy, to show how much of a
//! batch's time is the system's share of reading and writing those bytes.
//!
//! Usage: `io_floor IN_DIR OUT_DIR [SIZES_DIR]`: each output `OUT_DIR/STEM.glb` has the size of
//! `SIZES_DIR/STEM.glb` (a real batch's output), or of its input when no SIZES_DIR is given.

use hangar::io::{read_input, write_outputs, Pieces};
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
    // One buffer as large as the largest output, written from for every file (the conversion's
    // own buffers are not the point here).
    let mut fill = Vec::new();
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
        if fill.len() < n {
            fill.resize(n, 0x5a);
        }
        write_outputs(&[(&output.join(&name), &Pieces::from(&fill[..n]))])?;
        read += bytes.len() as u64;
        written += n as u64;
    }
    Ok((names.len(), read, written))
}
