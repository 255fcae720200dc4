//! The file store (Suricata's `file-store` v2) through `TrackedFile`: its own test binary,
//! as turning the store on is once per process.

use sha2::{Digest, Sha256};
use shrike_app::files::{self, FileConfig, FileState, TrackedFile};
use shrike_output::JsonWriter;

fn eve(f: &TrackedFile) -> serde_json::Value {
    let mut w = JsonWriter::new();
    w.start_object();
    f.write_eve(&mut w, 0, None);
    w.close();
    serde_json::from_slice(w.as_bytes()).unwrap()
}

#[test]
fn files_are_stored_by_sha256_when_asked() {
    let dir = std::env::temp_dir().join(format!("shrike-filestore-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    files::enable_store(&dir, false, 0).unwrap();
    assert!(dir.join("tmp").is_dir());
    let data: Vec<u8> = (0..5000u32).map(|i| (i % 251) as u8).collect();
    let hex: String = Sha256::digest(&data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let path = dir.join(&hex[..2]).join(&hex);

    // Not asked: nothing stored, and no data kept without filestore rules.
    let mut f = TrackedFile::open(b"a.bin", &FileConfig::default());
    f.append(&data);
    f.close(false);
    assert!(!path.exists());
    assert_eq!(eve(&f)["stored"], false);
    // The store turns SHA-256 on for every file.
    assert_eq!(eve(&f)["sha256"], hex.as_str());

    // Asked while open, from its first byte: written as it streams, named when it ends.
    let mut f = TrackedFile::open(b"b.bin", &FileConfig::default());
    f.request_store();
    assert_eq!(eve(&f)["storing"], true);
    for c in data.chunks(700) {
        f.append(c);
    }
    f.close(false);
    assert_eq!(f.state(), FileState::Closed);
    let id = f.stored_id().expect("stored");
    assert_eq!(std::fs::read(&path).unwrap(), data);
    let j = eve(&f);
    assert_eq!(
        (j["stored"].clone(), j["file_id"].clone()),
        (true.into(), id.into())
    );

    // Asked after its data went by: only when filestore rules keep it; the same content
    // keeps the one stored copy, with a new id.
    let keep = FileConfig {
        keep_for_store: true,
        ..FileConfig::default()
    };
    let mut f = TrackedFile::open(b"c.bin", &keep);
    f.append(&data);
    f.close(false);
    f.request_store();
    let id2 = f.stored_id().expect("stored from kept data");
    assert!(id2 > id);
    assert_eq!(std::fs::read(&path).unwrap(), data);
    let mut f = TrackedFile::open(b"d.bin", &FileConfig::default());
    f.append(&data);
    f.request_store();
    f.close(false);
    assert_eq!(f.stored_id(), None);
    assert_eq!(eve(&f)["stored"], false);

    // A file dropped while being stored leaves no temporary file behind.
    let mut f = TrackedFile::open(b"e.bin", &FileConfig::default());
    f.request_store();
    f.append(b"partial");
    drop(f);
    let tmp: Vec<_> = std::fs::read_dir(dir.join("tmp")).unwrap().collect();
    assert!(tmp.is_empty(), "{tmp:?}");

    // `filestore` of `tx` scope: the transaction's files to come are stored too; of flow
    // scope: every later file of the flow; of file scope: only what was there.
    use shrike_app::files::{StoreOrders, StoreScope};
    use shrike_app::http::{HttpConfig, HttpState};
    use shrike_app::registry::AppParser;
    use shrike_app::Dir;
    let mut cfg = HttpConfig::default();
    cfg.files.keep_for_store = true;
    let mut st = HttpState::new(std::sync::Arc::new(cfg));
    let resp = |body: &str| {
        format!(
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
    };
    st.parse(
        Dir::ToServer,
        b"GET /a HTTP/1.1\r\nHost: h\r\n\r\nGET /b HTTP/1.1\r\nHost: h\r\n\r\n\
GET /c HTTP/1.1\r\nHost: h\r\n\r\n",
    );
    let mut orders = StoreOrders::default();
    orders.add(1, [false, true], StoreScope::Tx);
    orders.add(0, [false, true], StoreScope::File);
    st.parse(Dir::ToClient, resp("first").as_bytes());
    st.parse(Dir::ToClient, resp("second").as_bytes());
    orders.apply(&mut st);
    let stored = |st: &HttpState, tx: u64| {
        let mut s = None;
        st.files(tx, Dir::ToClient, &mut |f| {
            s = Some(f.stored_id().is_some())
        });
        s
    };
    assert_eq!(stored(&st, 0), Some(false));
    assert_eq!(stored(&st, 1), Some(true));
    orders.add(0, [false, true], StoreScope::Flow);
    st.parse(Dir::ToClient, resp("third").as_bytes());
    orders.apply(&mut st);
    assert_eq!(stored(&st, 2), Some(true));
    let _ = std::fs::remove_dir_all(&dir);
}
