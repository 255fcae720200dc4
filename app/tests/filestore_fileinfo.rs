//! File store `max-open-files` and `write-fileinfo` (Suricata's output-filestore.c): its own
//! test binary, as turning the store on is once per process.

use sha2::{Digest, Sha256};
use shrike_app::files::{self, FileConfig, TrackedFile};
use shrike_output::{EveBuffer, EventKind};

fn hex(d: &[u8]) -> String {
    Sha256::digest(d)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn open_file_limit_and_fileinfo_files() {
    let dir = std::env::temp_dir().join(format!("shrike-fs-info-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    files::set_max_open_files(1);
    files::set_write_fileinfo(true);
    files::enable_store(&dir, false, 0).unwrap();

    // Two files stored at once with a limit of one: the second finds the limit reached
    // (a hit) and is reopened for each write; both are stored whole.
    let a: Vec<u8> = (0..3000u32).map(|i| (i % 253) as u8).collect();
    let b: Vec<u8> = (0..4000u32).map(|i| (i % 7) as u8).collect();
    let mut fa = TrackedFile::open(b"a", &FileConfig::default());
    let mut fb = TrackedFile::open(b"b", &FileConfig::default());
    fa.request_store();
    fb.request_store();
    assert_eq!(files::open_files_counters(), (1, 1));
    for (ca, cb) in a.chunks(500).zip(b.chunks(500)) {
        fa.append(ca);
        fb.append(cb);
    }
    fb.append(&b[3000..]);
    fa.close(false);
    fb.close(false);
    assert_eq!(files::open_files_counters(), (0, 1));
    for (d, f) in [(&a, &fa), (&b, &fb)] {
        let h = hex(d);
        assert_eq!(std::fs::read(dir.join(&h[..2]).join(&h)).unwrap(), *d);
        assert!(f.stored_id().is_some());
    }

    // A stored file's fileinfo record goes to `<sha256>.<seconds>.<id>.json` next to it,
    // whether or not the eve-log logs it; an unstored file gets none.
    let ts_ns = 1_517_331_496_444_334_000;
    for emit in [true, false] {
        let mut buf = EveBuffer::new(0);
        let mut rec = buf.record(EventKind::Other);
        rec.start_object().set_str("event_type", "fileinfo");
        rec.open_object("fileinfo");
        fa.write_eve(&mut rec, 0, None);
        rec.close();
        rec.close();
        files::finish_fileinfo(rec, &fa, ts_ns, emit);
        let path = files::fileinfo_path(&fa, ts_ns).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let id = fa.stored_id().unwrap();
        assert_eq!(name, format!("{}.1517331496.{id}.json", hex(&a)));
        let text = std::fs::read(&path).unwrap();
        assert_ne!(text.last(), Some(&b'\n'));
        let j: serde_json::Value = serde_json::from_slice(&text).unwrap();
        assert_eq!(j["fileinfo"]["stored"], true);
        assert_eq!(j["fileinfo"]["file_id"], u64::from(id));
        assert_eq!(buf.is_empty(), !emit);
        std::fs::remove_file(&path).unwrap();
    }
    let mut fc = TrackedFile::open(b"c", &FileConfig::default());
    fc.append(b"not stored");
    fc.close(false);
    assert!(!files::wants_fileinfo_file(&fc));
    assert_eq!(files::fileinfo_path(&fc, ts_ns), None);

    // The store's temporary folder vanishes mid-run: a file reopened per write fails at
    // its next write, one kept open at its rename, a new one at its creation; none is stored (`stored: false`, no metadata file), the failures are counted,
    // and a later file is stored again once the folder is back.
    let st = files::store().unwrap();
    let errs = st.errors.load(std::sync::atomic::Ordering::Relaxed);
    let mut fd = TrackedFile::open(b"d", &FileConfig::default());
    let mut fe = TrackedFile::open(b"e", &FileConfig::default());
    fd.request_store();
    fe.request_store(); // past the limit of one: reopened for each write
    fe.append(b"first");
    std::fs::remove_dir_all(dir.join("tmp")).unwrap();
    fe.append(b"second");
    fd.append(b"kept open");
    fe.close(false);
    fd.close(false);
    assert_eq!(fe.stored_id(), None);
    assert!(!files::wants_fileinfo_file(&fe));
    // The one kept open was written, but its temporary name is gone: the rename fails.
    assert_eq!(fd.stored_id(), None);
    let mut ff = TrackedFile::open(b"f", &FileConfig::default());
    ff.request_store();
    ff.append(b"x");
    ff.close(false);
    assert_eq!(ff.stored_id(), None);
    assert_eq!(
        st.errors.load(std::sync::atomic::Ordering::Relaxed),
        errs + 3
    );
    std::fs::create_dir_all(dir.join("tmp")).unwrap();
    let mut fg = TrackedFile::open(b"g", &FileConfig::default());
    fg.request_store();
    fg.append(b"back");
    fg.close(false);
    assert!(fg.stored_id().is_some());
    assert_eq!(files::open_files_counters().0, 0);
    let _ = std::fs::remove_dir_all(&dir);
}
