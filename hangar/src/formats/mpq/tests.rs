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

/// `n` bytes of xorshift noise: they do not shrink.
fn noise(n: usize) -> Vec<u8> {
    let mut x = 0x2545_F491u32;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            (x >> 24) as u8
        })
        .collect()
}

#[test]
fn a_built_archive_reads_back_file_for_file() {
    let big: Vec<u8> = (0..40_000u32).map(|i| (i % 251) as u8).collect();
    let noise = noise(20_000);
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

#[test]
fn an_extraction_writes_every_file_as_it_reads() {
    // A compressed file of three sectors, one stored whole (noise: copied file to file by the
    // kernel), an empty one and a small one, in two folders.
    let big: Vec<u8> = (0..40_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let noise = noise(70_001);
    let files: Vec<(String, &[u8])> = vec![
        ("Base.SC2Data\\GameData\\UnitData.xml".into(), &big),
        ("Assets\\Sounds\\noise.ogg".into(), &noise),
        ("empty.txt".into(), b""),
        ("Assets\\Models\\a.m3".into(), b"MD34 a model"),
    ];
    let dir = std::env::temp_dir().join(format!("hangar-mpq-extract-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("x.SC2Map");
    std::fs::write(&path, build(&files).unwrap()).unwrap();
    let o = open(&path).unwrap();
    let noise_entry = o.archive.find("assets/sounds/noise.ogg").unwrap();
    assert_eq!(noise_entry.flags, FILE_EXISTS | FILE_SINGLE_UNIT);
    let out = dir.join("out");
    let x = extract(&o, &out, &[], &|_| {});
    assert!(x.failed.is_empty(), "{:?}", x.failed);
    // The four files and the (listfile), a name and CR LF a line.
    let listfile: usize = files.iter().map(|f| f.0.len() + 2).sum();
    assert_eq!(listfile, 92);
    assert_eq!((x.written, x.bytes), (5, 40_000 + 70_001 + 12 + 92));
    for (name, data) in &files {
        let got = std::fs::read(out.join(name.replace('\\', "/"))).unwrap();
        assert_eq!(&got, data, "{name}");
    }
    let (read, bad) = verify(&o, &|_| {});
    assert_eq!((read, bad.len()), (5, 0));
    // A buffer handed over dirty and longer than the file: its first bytes are the file.
    let e = o
        .archive
        .find("base.sc2data/gamedata/unitdata.xml")
        .unwrap();
    let mut buf = vec![0xAA; 100_000];
    match o.archive.read_in(&o.bytes, &e, &mut buf).unwrap() {
        read::Got::Buf(n) => assert_eq!(&buf[..n], &big[..]),
        read::Got::Source(..) => panic!("a compressed file is inflated into the buffer"),
    }
    assert_eq!(buf.len(), 100_000);
    // The stored file is lent from the map, with its place in the archive.
    match o.archive.read_in(&o.bytes, &noise_entry, &mut buf).unwrap() {
        read::Got::Source(b, at) => assert_eq!((b, at), (&noise[..], noise_entry.offset)),
        read::Got::Buf(_) => panic!("a file stored as it is is lent"),
    }
    // Bytes the kernel cannot copy (past the end of the file given) are written from memory.
    let mut f = std::fs::File::create(dir.join("copied")).unwrap();
    crate::io::copy_range(o.file.as_ref().unwrap(), 1 << 40, b"from memory", &mut f).unwrap();
    assert_eq!(std::fs::read(dir.join("copied")).unwrap(), b"from memory");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_file_that_does_not_inflate_is_not_extracted() {
    let big: Vec<u8> = (0..40_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let files: Vec<(String, &[u8])> =
        vec![("Assets\\bad.xml".into(), &big), ("ok.txt".into(), b"ok")];
    let mut bytes = build(&files).unwrap();
    let a = Archive::from_source(&bytes).unwrap();
    let e = a.find("assets/bad.xml").unwrap();
    // Three sectors behind a table of four offsets: the first sector's stream made noise.
    let at = e.offset as usize + 16;
    bytes[at + 2..at + 40].fill(0xFF);
    let dir = std::env::temp_dir().join(format!("hangar-mpq-bad-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("x.SC2Map");
    std::fs::write(&path, &bytes).unwrap();
    let o = open(&path).unwrap();
    let out = dir.join("out");
    let x = extract(&o, &out, &[], &|_| {});
    assert_eq!((x.written, x.failed.len()), (2, 1));
    let err = x.failed[0].to_string();
    assert!(
        err.contains("Assets\\bad.xml") && err.contains("x.SC2Map"),
        "{err}"
    );
    // Neither the file nor a temporary file of it is left: the two others alone.
    let mut left = Vec::new();
    let mut stack = vec![out.clone()];
    while let Some(d) = stack.pop() {
        for f in std::fs::read_dir(d).unwrap().map(|f| f.unwrap().path()) {
            if f.is_dir() {
                stack.push(f);
            } else {
                left.push(f.strip_prefix(&out).unwrap().to_string_lossy().into_owned());
            }
        }
    }
    left.sort();
    assert_eq!(left, ["(listfile)", "ok.txt"]);
    std::fs::remove_dir_all(&dir).unwrap();
}
