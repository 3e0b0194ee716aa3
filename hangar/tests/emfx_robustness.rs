//! No XAC, XSM or .ani input crashes hangar: cut and bit-flipped corpus files and random bytes give
//! errors with a place, never a panic or a runaway allocation.

mod common;

use proptest::prelude::*;
use std::path::{Path, PathBuf};

fn exercise(bytes: &[u8], path: &Path) -> Result<(), hangar::Error> {
    let opened = common::open(bytes, path)?;
    let _ = opened.validate();
    let _ = opened.info();
    let _ = opened.dump()?;
    let ext = path.extension().unwrap().to_string_lossy().to_string();
    let _ = common::convert(&opened, Path::new(&format!("out.{ext}")))?;
    if ext != "xsm" {
        let _ = common::convert(&opened, Path::new("out.glb"))?;
    }
    Ok(())
}

fn files() -> Option<Vec<PathBuf>> {
    let mut all = common::corpus("emfx", "xac")?;
    all.extend(common::corpus("emfx", "xsm")?);
    all.extend(common::corpus("x4", "ani")?);
    let pick = [
        "Spanish_Helmet1.xac",
        "City_African_00.xac",
        "jap_flag.xac",
        "German_Tank.xac",
        "Zulu_Idle.xsm",
        "German_Tank_Idle.xsm",
        "Static.xsm",
        "superyard_data.ani",
        "ship_otas_l_astraeus_data.ani",
    ];
    Some(common::choose(all, &pick))
}

#[test]
fn cut_files_fail_with_a_place() {
    let Some(files) = files() else { return };
    // A cut that lands between chunks leaves a shorter, valid file, so not every cut fails.
    let failed = common::check_cuts(
        &files,
        |n| vec![0, 3, 7, 9, 15, 20, 40, 100, n / 3, n / 2, n - 9, n - 1],
        exercise,
    );
    assert!(failed >= 80, "{failed}");
}

#[test]
fn flipped_bits_never_panic_and_errors_have_a_place() {
    let Some(files) = files() else { return };
    // Half the flips land in the first 600 bytes, where the headers and counts are.
    let (failed, total) = common::check_flips(
        &files,
        0x5851_f42d_4c95_7f2d,
        100,
        |round, b| {
            0..if round % 2 == 0 {
                b.len().min(600)
            } else {
                b.len()
            }
        },
        exercise,
    );
    assert!(total >= 900 && failed > 0, "{failed} of {total}");
}

#[test]
fn a_huge_count_is_refused_before_allocating() {
    // A node chunk claiming 2^30 nodes in a 40-byte file: the count is checked against the bytes
    // left before anything is allocated, and the chunk is kept raw with a warning.
    let mut b = b"XAC \x01\x00\x00\x00".to_vec();
    for v in [0xBu32, 8, 1, 0x4000_0000, 0] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    let opened = common::open(&b, Path::new("bomb.xac")).unwrap();
    let w = &opened.warnings()[0];
    assert_eq!(w.offset, Some(8));
    assert!(w.message.contains("does not follow its layout"), "{w}");
    assert!(w.message.contains("do not fit"), "{w}");
    let (again, _) = common::convert(&opened, Path::new("o.xac")).unwrap();
    assert_eq!(again, b);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn random_chunks_never_panic(tail in proptest::collection::vec(any::<u8>(), 0..400), kind in 0..3usize) {
        let (magic, ext) = [(&b"XAC "[..], "xac"), (b"XSM ", "xsm"), (b"XPM ", "xpm")][kind];
        let mut b = magic.to_vec();
        b.extend_from_slice(&[1, 0, 0, 0]);
        b.extend_from_slice(&tail);
        let _ = exercise(&b, Path::new(&format!("random.{ext}")));
    }
}
