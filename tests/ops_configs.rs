//! Every file in configs/ passes `shrike -T -c`, and the capture settings of the example
//! interfaces are valid for the capture crate's own types (key names, ring geometry, DPDK
//! limits).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Map, Value};
use shrike_capture::{AfPacketConfig, DpdkConfig};

fn configs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs");
    let mut v = vec![root.join("shrike.yaml")];
    let mut ex: Vec<PathBuf> = std::fs::read_dir(root.join("examples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().and_then(|s| s.to_str()) == Some("yaml"))
        .collect();
    ex.sort();
    v.extend(ex);
    assert!(v.len() >= 3, "{v:?}");
    v
}

fn check(path: &Path) -> (bool, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_shrike"))
        .arg("-T")
        // The examples name the rule files of a deployed sensor, absent here: check the
        // configuration itself.
        .arg("--disable-detection")
        .arg("-c")
        .arg(path)
        .output()
        .unwrap();
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("shrike-ops-configs-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn yaml(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    serde_saphyr::from_str::<Value>(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn shrike_accepts_every_config() {
    for p in configs() {
        let (ok, err) = check(&p);
        assert!(ok, "{}: {err}", p.display());
    }
}

#[test]
fn a_misspelt_capture_key_names_line_and_column() {
    let d = scratch("badkey");
    let bad = d.join("bad.yaml");
    std::fs::write(
        &bad,
        "interfaces:\n  - name: lo\n    af-packet:\n      cluster-idd: 98\n",
    )
    .unwrap();
    let (ok, err) = check(&bad);
    assert!(!ok);
    assert!(
        err.contains("cluster-idd") && err.contains("line 4"),
        "{err}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn shrike_rejects_a_broken_config() {
    let d = scratch("bad");
    let bad = d.join("bad.yaml");
    let base = std::fs::read_to_string(configs()[0].clone()).unwrap();
    std::fs::write(&bad, base.replace("  interval: 8", "  intervall: 8")).unwrap();
    let (ok, err) = check(&bad);
    assert!(!ok, "a misspelt key must fail -T");
    assert!(err.contains("intervall"), "{err}");
    std::fs::remove_dir_all(&d).unwrap();
}

/// The capture method's own section of an `interfaces:` entry.
fn capture_settings(entry: &Map<String, Value>) -> Map<String, Value> {
    ["af-packet", "dpdk"]
        .iter()
        .find_map(|k| entry.get(*k).and_then(Value::as_object).cloned())
        .unwrap_or_default()
}

#[test]
fn example_interfaces_are_valid_capture_settings() {
    let mut afp = 0;
    let mut dpdk = 0;
    for p in configs().iter().skip(1) {
        let tree = yaml(p);
        let list = tree["interfaces"]
            .as_array()
            .unwrap_or_else(|| panic!("{}", p.display()));
        assert!(
            !list.is_empty(),
            "{}: an example names its NIC",
            p.display()
        );
        for entry in list {
            let e = entry.as_object().unwrap();
            let name = e["name"].as_str().unwrap();
            let threads = e.get("threads").and_then(Value::as_u64);
            let cpus = e
                .get("cpus")
                .and_then(Value::as_array)
                .map(|c| c.len() as u64);
            assert_eq!(threads, cpus, "{}: one pinned CPU per worker", p.display());
            let settings = Value::Object(capture_settings(e));
            match e.get("capture").and_then(Value::as_str) {
                Some("dpdk") => {
                    let c: DpdkConfig = serde_json::from_value(settings)
                        .unwrap_or_else(|err| panic!("{}: {name}: {err}", p.display()));
                    c.validate().unwrap();
                    assert_eq!(
                        c.rss_key_bytes().unwrap(),
                        shrike_capture::config::SYMMETRIC_RSS_KEY
                    );
                    assert_eq!(
                        c.rx_queues.map(u64::from),
                        threads,
                        "one RX queue per worker"
                    );
                    let args = c.eal_params.to_args();
                    assert!(
                        args.windows(2).any(|w| w[0] == "-a" && w[1] == name),
                        "{args:?}"
                    );
                    dpdk += 1;
                }
                None | Some("af-packet") => {
                    let mut m = capture_settings(e);
                    m.insert("interface".into(), Value::String(name.into()));
                    let c: AfPacketConfig = serde_json::from_value(Value::Object(m))
                        .unwrap_or_else(|err| panic!("{}: {name}: {err}", p.display()));
                    let g = c.geometry().unwrap();
                    assert!(
                        g.ring_bytes() >= 16 << 20,
                        "{}: ring too small",
                        p.display()
                    );
                    assert!(c.lints().is_empty(), "{:?}", c.lints());
                    afp += 1;
                }
                other => panic!("{}: capture {other:?}", p.display()),
            }
        }
    }
    assert!(afp >= 1 && dpdk >= 1);
}
