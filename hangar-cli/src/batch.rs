//! A batch conversion from a game view (`hangar convert "GAME::assets" OUT --to glb`): every model
//! below the path, read through the catalogs, converted in parallel; failures do not stop the
//! batch and are named in OUT/report.json.

use anyhow::Result;
use hangar::any;
use hangar::vfs::GameView;
use rayon::prelude::*;
use std::path::Path;

pub fn convert_view(
    view: &GameView,
    prefix: &str,
    output: &Path,
    to: &str,
    opts: &hangar::any::ConvertOptions,
) -> Result<bool> {
    any::check_output(Path::new(&format!("x.{to}")))?;
    // Only files hangar can read as models: a look at the first bytes (a slice of the mapped .dat).
    let files: Vec<String> = view
        .files(prefix)?
        .into_iter()
        .filter(|f| {
            view.read(f).is_ok_and(|b| {
                let head = b.get(..64).unwrap_or(&b);
                let fmt = hangar::detect::detect(head, Some(Path::new(f)));
                fmt.supported()
                    && !matches!(
                        fmt,
                        hangar::detect::Format::HangarJson | hangar::detect::Format::GltfText
                    )
            })
        })
        .collect();
    std::fs::create_dir_all(output)?;
    let bar = crate::files_bar(files.len());
    let failures: Vec<(String, String)> = files
        .par_iter()
        .filter_map(|f| {
            let r = convert_entry(view, f, output, to, opts);
            bar.inc(1);
            r.err().map(|e| (f.clone(), format!("{e:#}")))
        })
        .collect();
    bar.finish_and_clear();
    for (f, e) in &failures {
        eprintln!("error: {f}: {e}");
    }
    let report = serde_json::json!({
        "source": format!("{}::{prefix}", view.label),
        "to": to,
        "models": files.len(),
        "converted": files.len() - failures.len(),
        "failed": failures
            .iter()
            .map(|(f, e)| serde_json::json!({ "path": f, "error": e }))
            .collect::<Vec<_>>(),
    });
    let report_path = output.join("report.json");
    hangar::io::write_output(
        &report_path,
        serde_json::to_string_pretty(&report)?.as_bytes(),
    )?;
    eprintln!(
        "{} files converted, {} failed (report: {})",
        files.len() - failures.len(),
        failures.len(),
        report_path.display()
    );
    Ok(failures.is_empty())
}

fn convert_entry(
    view: &GameView,
    game_path: &str,
    output: &Path,
    to: &str,
    opts: &hangar::any::ConvertOptions,
) -> Result<()> {
    let bytes = view.read(game_path)?;
    let label = Path::new(game_path);
    let opened = any::open(&bytes, label)?;
    let dest = output.join(game_path).with_extension(to);
    any::convert_and_write(&opened, label, &dest, &[], opts)?;
    Ok(())
}
