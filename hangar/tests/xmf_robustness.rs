//! No input crashes hangar: cut and bit-flipped corpus files, and random bytes, give errors with a
//! place, never a panic or a runaway allocation.

mod common;

use proptest::prelude::*;
use std::path::Path;

/// Everything a user can ask of a file; returns the first error.
fn exercise(bytes: &[u8], path: &Path) -> Result<(), hangar::Error> {
    let opened = common::open(bytes, path)?;
    let _ = opened.validate();
    let _ = opened.info();
    let (_bytes, _) = common::convert(&opened, Path::new("out.glb"))?;
    let _ = common::convert(&opened, Path::new("out.xmf"))?;
    Ok(())
}

fn corpus_and_samples() -> Vec<std::path::PathBuf> {
    let mut files = common::corpus("x4", "xmf").unwrap_or_default();
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples");
    files.push(samples.join("wedge-lod0.xmf"));
    files.push(samples.join("wedge-collision.xmf"));
    files
}

#[test]
fn cut_files_fail_with_an_offset() {
    let mut cuts_checked = 0;
    for f in corpus_and_samples() {
        let bytes = std::fs::read(&f).unwrap();
        let n = bytes.len();
        for cut in [
            0,
            3,
            4,
            8,
            11,
            12,
            30,
            63,
            64,
            100,
            252,
            300,
            440,
            n / 2,
            n - 20,
            n - 1,
        ] {
            if cut >= n {
                continue;
            }
            let err = exercise(&bytes[..cut], &f).expect_err("a cut file cannot convert");
            assert!(
                err.offset.is_some() || !err.path.is_empty(),
                "{} cut at {cut}: error without a place: {err}",
                common::name(&f)
            );
            assert!(err.to_string().contains(&common::name(&f)), "{err}");
            cuts_checked += 1;
        }
    }
    assert!(cuts_checked >= 30, "{cuts_checked}");
}

#[test]
fn flipped_bytes_never_panic() {
    let mut rng = common::Rng(0x2545_f491_4f6c_dd1du64);
    let mut next = || rng.next();
    let (mut failed, mut total) = (0, 0);
    for f in corpus_and_samples() {
        let bytes = std::fs::read(&f).unwrap();
        // Header, descriptors and materials are where a flip changes the structure; the data area is sampled.
        for round in 0..120 {
            let mut b = bytes.clone();
            let span = if round % 2 == 0 {
                b.len().min(720)
            } else {
                b.len()
            };
            for _ in 0..1 + round % 3 {
                let at = (next() as usize) % span;
                b[at] ^= 1 << (next() % 8);
            }
            total += 1;
            if let Err(e) = exercise(&b, &f) {
                failed += 1;
                assert!(
                    e.offset.is_some() || !e.path.is_empty(),
                    "{}: error without a place: {e}",
                    common::name(&f)
                );
            }
        }
    }
    assert!(
        total >= 240 && failed > 0,
        "{failed} of {total} flipped files failed"
    );
}

#[test]
fn a_lying_size_does_not_allocate_it() {
    // A 4-byte "zlib stream" whose descriptor claims 2^31 vertices of 255 bytes.
    let mut b =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/wedge-collision.xmf"))
            .unwrap();
    let items_at = 0x40 + 28;
    b[items_at..items_at + 4].copy_from_slice(&0x7fff_ffffu32.to_le_bytes());
    let err = exercise(&b, Path::new("bomb-collision.xmf")).unwrap_err();
    assert_eq!(err.path, "XMF.buffers[0].data");
    assert!(err.message.contains("more than a"), "{err}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]
    #[test]
    fn random_bytes_after_a_magic_never_panic(tail in proptest::collection::vec(any::<u8>(), 0..900)) {
        let mut b = b"XUMF".to_vec();
        b.extend_from_slice(&tail);
        let _ = exercise(&b, Path::new("random.xmf"));
    }
}
