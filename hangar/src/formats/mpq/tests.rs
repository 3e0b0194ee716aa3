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

/// An archive laid out by hand, as Blizzard's tools store files the writer here does not:
/// `files` are (name, flags, declared size, stored bytes), after them a `(listfile)` naming them.
fn by_hand(files: &[(&str, u32, u32, Vec<u8>)]) -> Vec<u8> {
    let listfile: String = files.iter().map(|f| format!("{}\r\n", f.0)).collect();
    let mut all: Vec<(&str, u32, u32, Vec<u8>)> = files.to_vec();
    all.push((
        LISTFILE,
        FILE_EXISTS | FILE_SINGLE_UNIT,
        listfile.len() as u32,
        listfile.into_bytes(),
    ));
    let mut out = vec![0u8; 32];
    let mut blocks = Vec::new();
    for (_, flags, size, data) in &all {
        blocks.push((out.len() as u32, data.len() as u32, *size, *flags));
        out.extend_from_slice(data);
    }
    let slots = (all.len() * 2).next_power_of_two();
    let mut hashes = vec![0xFFu8; slots * 16];
    for (i, (name, ..)) in all.iter().enumerate() {
        let mut s = hash(name.as_bytes(), HashKind::Slot) as usize % slots;
        while hashes[s * 16 + 12..s * 16 + 16] != [0xFF; 4] {
            s = (s + 1) % slots;
        }
        let e = &mut hashes[s * 16..s * 16 + 16];
        e[0..4].copy_from_slice(&hash(name.as_bytes(), HashKind::NameA).to_le_bytes());
        e[4..8].copy_from_slice(&hash(name.as_bytes(), HashKind::NameB).to_le_bytes());
        e[8..12].fill(0);
        e[12..16].copy_from_slice(&(i as u32).to_le_bytes());
    }
    let mut table: Vec<u8> = blocks
        .iter()
        .flat_map(|b| [b.0, b.1, b.2, b.3].map(u32::to_le_bytes))
        .flatten()
        .collect();
    encrypt(&mut hashes, hash_table_key());
    encrypt(&mut table, block_table_key());
    let hash_pos = out.len() as u32;
    out.extend(hashes);
    let block_pos = out.len() as u32;
    out.extend(table);
    let total = out.len() as u32;
    let head = &mut out[..32];
    head[..4].copy_from_slice(&MAGIC);
    head[4..8].copy_from_slice(&32u32.to_le_bytes());
    head[8..12].copy_from_slice(&total.to_le_bytes());
    head[12..14].copy_from_slice(&0u16.to_le_bytes());
    head[14..16].copy_from_slice(&3u16.to_le_bytes());
    head[16..20].copy_from_slice(&hash_pos.to_le_bytes());
    head[20..24].copy_from_slice(&block_pos.to_le_bytes());
    head[24..28].copy_from_slice(&(slots as u32).to_le_bytes());
    head[28..32].copy_from_slice(&(all.len() as u32).to_le_bytes());
    out
}

fn bzip2_of(data: &[u8]) -> Vec<u8> {
    let mut z = bzip2::write::BzEncoder::new(vec![0x10], bzip2::Compression::best());
    std::io::Write::write_all(&mut z, data).unwrap();
    z.finish().unwrap()
}

/// Blizzard's sparse coding: runs of 3 to 130 zeros as one byte, other bytes 1 to 128 at a time.
fn sparse_of(data: &[u8]) -> Vec<u8> {
    let mut out = (data.len() as u32).to_be_bytes().to_vec();
    let mut i = 0;
    while i < data.len() {
        let zeros = data[i..].iter().take(130).take_while(|&&b| b == 0).count();
        if zeros >= 3 {
            out.push((zeros - 3) as u8);
            i += zeros;
        } else {
            let n = (data.len() - i).min(128);
            out.push(0x80 | (n - 1) as u8);
            out.extend_from_slice(&data[i..i + n]);
            i += n;
        }
    }
    out
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("hangar-mpq-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn a_mebibyte_of_zeros_in_bzip2_extracts_whole() {
    // The real failure: a terrain layer of zeros packs far past zlib's ratio.
    let zeros = vec![0u8; 1 << 20];
    let packed = bzip2_of(&zeros);
    assert!(packed.len() < 60, "{}", packed.len());
    // Sparse coding then zlib, as Blizzard chains them (0x22).
    let mut layer = vec![0u8; 70_000];
    layer[1000..1010].copy_from_slice(b"0123456789");
    layer[69_999] = 7;
    let mut chained = flate2::write::ZlibEncoder::new(vec![0x22], flate2::Compression::best());
    std::io::Write::write_all(&mut chained, &sparse_of(&layer)).unwrap();
    let chained = chained.finish().unwrap();
    let single = FILE_EXISTS | FILE_COMPRESS | FILE_SINGLE_UNIT;
    let bytes = by_hand(&[
        (
            "PaintedPathingLayer",
            single,
            zeros.len() as u32,
            packed.clone(),
        ),
        ("t3TextureMasks", single, layer.len() as u32, chained),
    ]);
    let dir = scratch("zeros");
    let path = dir.join("x.SC2Map");
    std::fs::write(&path, &bytes).unwrap();
    let o = open(&path).unwrap();
    let e = o.archive.find("paintedpathinglayer").unwrap();
    assert_eq!((e.size, e.compressed_size), (1 << 20, packed.len() as u32));
    assert_eq!(o.read(&e).unwrap(), zeros);
    let x = extract(&o, &dir.join("out"), &[], &|_| {});
    assert!(x.failed.is_empty(), "{:?}", x.failed);
    assert_eq!(x.written, 3);
    let got = std::fs::read(dir.join("out/PaintedPathingLayer")).unwrap();
    assert_eq!(got, zeros);
    assert_eq!(
        std::fs::read(dir.join("out/t3TextureMasks")).unwrap(),
        layer
    );
    let (read, bad) = verify(&o, &|_| {});
    assert_eq!((read, bad.len()), (3, 0));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_file_declaring_4_gib_is_refused_and_nothing_written() {
    let packed = bzip2_of(&[0u8; 4096]);
    let single = FILE_EXISTS | FILE_COMPRESS | FILE_SINGLE_UNIT;
    let bytes = by_hand(&[
        ("bomb.bin", single, u32::MAX, packed.clone()),
        ("ok.bin", single, 4096, packed.clone()),
    ]);
    let dir = scratch("bomb");
    let path = dir.join("x.SC2Map");
    std::fs::write(&path, &bytes).unwrap();
    let o = open(&path).unwrap();
    let e = o.archive.find("bomb.bin").unwrap();
    let err = o.read(&e).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Refused);
    assert_eq!(err.offset, Some(32));
    let msg = err.to_string();
    for part in [
        "x.SC2Map",
        "bomb.bin",
        "declares 4294967295 bytes",
        &format!("from {} stored at byte 32", packed.len()),
        "past the 2147483648 bytes",
        "--max-inflate",
    ] {
        assert!(msg.contains(part), "{part:?} in {msg}");
    }
    let x = extract(&o, &dir.join("out"), &[], &|_| {});
    assert_eq!((x.written, x.failed.len()), (2, 1));
    assert!(x.failed[0].to_string().contains("bomb.bin"));
    assert!(!dir.join("out/bomb.bin").exists());
    assert_eq!(std::fs::read(dir.join("out/ok.bin")).unwrap(), [0u8; 4096]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_inflate_limit_bounds_a_whole_extraction() {
    let zeros = vec![0u8; 1 << 20];
    let packed = bzip2_of(&zeros);
    let single = FILE_EXISTS | FILE_COMPRESS | FILE_SINGLE_UNIT;
    let bytes = by_hand(&[
        ("a.bin", single, 1 << 20, packed.clone()),
        ("b.bin", single, 1 << 20, packed),
    ]);
    let dir = scratch("limit");
    let path = dir.join("x.SC2Map");
    std::fs::write(&path, &bytes).unwrap();
    let mut o = open(&path).unwrap();
    assert_eq!(o.archive.max_inflate, DEFAULT_MAX_INFLATE);
    // Room for one of the two: the other is refused, named, and not written.
    o.archive.max_inflate = 3 << 19;
    let x = extract(&o, &dir.join("out"), &[], &|_| {});
    assert_eq!((x.written, x.failed.len()), (2, 1), "{:?}", x.failed);
    let why = x.failed[0].to_string();
    assert!(
        why.contains("past the 1572864 bytes one extraction or verification may inflate"),
        "{why}"
    );
    let left = ["a.bin", "b.bin"].map(|f| dir.join("out").join(f).exists());
    assert_eq!(left.iter().filter(|&&l| l).count(), 1);
    // One file read alone fits.
    let e = o.archive.find("b.bin").unwrap();
    assert_eq!(o.read(&e).unwrap().len(), 1 << 20);
    std::fs::remove_dir_all(&dir).unwrap();
}
