use super::*;

#[test]
fn storm_hashes_match_the_known_table_keys() {
    // The keys every MPQ reader uses for the two tables.
    assert_eq!(hash_table_key(), 0xC3AF_3770);
    assert_eq!(block_table_key(), 0xEC83_B3A3);
    // Letter case and separators do not change a name's hash.
    assert_eq!(
        hash(b"Assets/Models/X.m3", HashKind::NameA),
        hash(b"ASSETS\\MODELS\\x.M3", HashKind::NameA)
    );
}

#[test]
fn encryption_round_trips() {
    let plain: Vec<u8> = (0..64u8).collect();
    let mut b = plain.clone();
    encrypt(&mut b, 0x1234_5678);
    assert_ne!(b, plain);
    decrypt(&mut b, 0x1234_5678);
    assert_eq!(b, plain);
}

#[test]
fn a_built_archive_reads_back_file_for_file() {
    let big: Vec<u8> = (0..40_000u32).map(|i| (i % 251) as u8).collect();
    let mut x = 0x2545_F491u32;
    let noise: Vec<u8> = (0..20_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            (x >> 24) as u8
        })
        .collect();
    let files: Vec<(String, &[u8])> = vec![
        ("Assets\\Models\\a.m3".into(), b"MD34 a model"),
        ("Base.SC2Data/GameData/UnitData.xml".into(), &big),
        ("empty.txt".into(), b""),
        ("noise.bin".into(), &noise),
        ("sixteen.bin".into(), &big[..16384]),
    ];
    let bytes = build(&files).unwrap();
    assert_eq!(&bytes[..4], b"MPQ\x1a");
    let a = Archive::from_source(&bytes).unwrap();
    assert_eq!(a.header.format_version, 0);
    let names: Vec<&str> = a.entries.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(
        names,
        [
            "(listfile)",
            "Assets\\Models\\a.m3",
            "Base.SC2Data\\GameData\\UnitData.xml",
            "empty.txt",
            "noise.bin",
            "sixteen.bin"
        ]
    );
    for (name, data) in &files {
        let norm = crate::gamepath::normalize(name).unwrap();
        let e = a.find(&norm).unwrap();
        assert_eq!(&a.read(&bytes, &e).unwrap(), data, "{name}");
    }
    // The 40,000 bytes of a repeating pattern shrink; the noise is stored whole.
    let unit = a.find("base.sc2data/gamedata/unitdata.xml").unwrap();
    assert!(unit.compressed_size < 2000, "{}", unit.compressed_size);
    assert_eq!(unit.flags, FILE_EXISTS | FILE_COMPRESS);
    assert_eq!(
        a.find("noise.bin").unwrap().flags,
        FILE_EXISTS | FILE_SINGLE_UNIT
    );
    assert_eq!(build(&files).unwrap(), bytes, "same files, same bytes");
}

#[test]
fn names_the_game_takes_for_one_are_refused() {
    let files: Vec<(String, &[u8])> = vec![("a/X.dds".into(), b"1"), ("A\\x.dds".into(), b"2")];
    let e = build(&files).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Refused);
}

#[test]
fn an_encrypted_file_reads_with_the_key_of_its_name() {
    let text = b"a secret of 21 bytes!";
    let files: Vec<(String, &[u8])> = vec![("Assets\\secret.txt".into(), text)];
    let mut bytes = build(&files).unwrap();
    let a = Archive::from_source(&bytes).unwrap();
    let e = a.find("assets/secret.txt").unwrap();
    // One sector, stored as it is (it does not shrink) behind a table of two offsets.
    assert_eq!(e.flags, FILE_EXISTS | FILE_COMPRESS);
    assert_eq!(e.compressed_size, 8 + 21);
    // Encrypt the table with the key of "secret.txt" less one and the sector with the key, and
    // mark its block so.
    let key = hash(b"secret.txt", HashKind::Key);
    let at = e.offset as usize;
    encrypt(&mut bytes[at..at + 8], key.wrapping_sub(1));
    encrypt(&mut bytes[at + 8..at + 29], key);
    let pos = a.header.block_table_pos as usize;
    let table = &mut bytes[pos..pos + 32];
    decrypt(table, block_table_key());
    let i = e.block as usize * 16 + 12;
    table[i..i + 4].copy_from_slice(&(e.flags | FILE_ENCRYPTED).to_le_bytes());
    encrypt(table, block_table_key());
    let a = Archive::from_source(&bytes).unwrap();
    let e = a.find("assets/secret.txt").unwrap();
    assert_eq!(e.flags & FILE_ENCRYPTED, FILE_ENCRYPTED);
    assert_eq!(a.read(&bytes, &e).unwrap(), text);
}
