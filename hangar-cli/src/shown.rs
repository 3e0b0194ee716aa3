//! What the `cat` commands show for catalogs and archives alike: a byte progress bar, what an
//! extraction wrote, what a comparison found. Below `cat.rs` and `mpq.rs`, which both print so.

use hangar::catalogs::{Diff, Extracted};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::Path;

pub fn bytes_bar(total: u64) -> ProgressBar {
    let bar = ProgressBar::new(total);
    if let Ok(style) =
        ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {bytes_per_sec}")
    {
        bar.set_style(style);
    }
    bar
}

/// Says what an extraction wrote and what failed; true when nothing failed.
pub fn extracted(x: &Extracted, dir: &Path) -> bool {
    for e in &x.failed {
        eprintln!("error: {e}");
    }
    eprintln!(
        "extracted {} files ({} bytes) to {}, {} failed",
        x.written,
        x.bytes,
        dir.display(),
        x.failed.len()
    );
    x.failed.is_empty()
}

/// Prints a comparison: `+ added`, `~ changed`, `- removed` and the counts, or the JSON.
pub fn diff(d: &Diff, json: bool) -> anyhow::Result<()> {
    if json {
        out!("{}", serde_json::to_string_pretty(d)?);
        return Ok(());
    }
    for p in &d.added {
        out!("+ {p}");
    }
    for p in &d.changed {
        out!("~ {p}");
    }
    for p in &d.removed {
        out!("- {p}");
    }
    out!(
        "{} added, {} changed, {} removed",
        d.added.len(),
        d.changed.len(),
        d.removed.len()
    );
    Ok(())
}
