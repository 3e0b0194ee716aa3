//! No M3 input crashes hangar: cut and bit-flipped corpus files and random bytes give errors with a
//! place (byte offset or structure path), never a panic or a runaway allocation.

mod common;

use proptest::prelude::*;
use std::path::{Path, PathBuf};

/// Everything a user can ask of a file; returns the first error.
fn exercise(bytes: &[u8], path: &Path) -> Result<(), hangar::Error> {
    let opened = common::open(bytes, path)?;
    let _ = opened.validate();
    let _ = opened.info();
    let _ = opened.dump()?;
    let _ = common::convert(&opened, Path::new("out.m3"))?;
    let _ = common::convert(&opened, Path::new("out.glb"))?;
    Ok(())
}

/// A few corpus files of every kind: small effects, a skinned unit, the .m3a.
fn files() -> Option<Vec<PathBuf>> {
    let mut all = common::corpus("m3", "m3")?;
    all.extend(common::corpus("m3", "m3a")?);
    let pick = [
        "DarkBlinkIn.m3",
        "Chaos_Defiler_Death.m3",
        "HonkaiUnitStatus.m3",
        "LandGroundBasic.m3",
        "storm_effect_minionwarpin.m3",
        "SantaHat.m3",
        "requiredanims_compressed.m3a",
    ];
    Some(common::choose(all, &pick))
}

#[test]
fn cut_files_fail_with_a_place() {
    let Some(files) = files() else { return };
    // Every cut loses the index at the end, so every cut fails, with an offset and a path.
    let failed = common::check_cuts(
        &files,
        |n| {
            vec![
                0,
                3,
                4,
                8,
                12,
                23,
                24,
                100,
                1000,
                n / 3,
                n / 2,
                n - 17,
                n - 16,
                n - 1,
            ]
        },
        |b, p| {
            let e = exercise(b, p).expect_err("a cut file loses its index");
            assert!(e.offset.is_some() && !e.path.is_empty(), "{e}");
            assert!(e.to_string().contains(&common::name(p)), "{e}");
            Err(e)
        },
    );
    assert!(failed >= 90, "{failed}");
}

#[test]
fn flipped_bits_never_panic_and_errors_have_a_place() {
    let Some(files) = files() else { return };
    // Half the flips land in the index at the end, where offsets and counts live.
    let (failed, total) = common::check_flips(
        &files,
        0x9e37_79b9_7f4a_7c15,
        150,
        |round, b| {
            let index_at = u32::from_le_bytes(b[4..8].try_into().unwrap()) as usize;
            if round % 2 == 0 {
                index_at..b.len()
            } else {
                0..b.len()
            }
        },
        exercise,
    );
    assert!(
        total >= 1000 && failed > 0,
        "{failed} of {total} flipped files failed"
    );
}

#[test]
fn a_huge_count_is_refused_before_allocating() {
    // An index that claims 2^28 entries behind a 40-byte file.
    let mut b = b"43DM".to_vec();
    b.extend_from_slice(&24u32.to_le_bytes());
    b.extend_from_slice(&0x1000_0000u32.to_le_bytes());
    b.resize(40, 0);
    let err = exercise(&b, Path::new("bomb.m3")).unwrap_err();
    assert_eq!(err.path, "MD34.indexCount");
    assert_eq!(err.offset, Some(24));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]
    #[test]
    fn random_bytes_after_a_magic_never_panic(tail in proptest::collection::vec(any::<u8>(), 0..600)) {
        let mut b = b"43DM".to_vec();
        b.extend_from_slice(&tail);
        let _ = exercise(&b, Path::new("random.m3"));
    }
}
