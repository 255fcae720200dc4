//! The binary's configuration parsing: shrike's own YAML (`config::parse_native`, strict
//! serde-saphyr into `SensorConfig`, which holds the detect/output/capture config types) and
//! Suricata's `suricata.yaml` translation (`suricata_yaml::parse_tree` + `translate`), plus
//! `--set` paths, reached through the `shrike` package's library target.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shrike_fuzz::bin_config::{config, suricata_yaml};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Err(msg) = config::parse_native(text) {
        assert!(!msg.is_empty());
    }
    if let Ok(mut tree) = suricata_yaml::parse_tree(text) {
        let _ = suricata_yaml::translate(&tree, std::path::Path::new("/nonexistent"));
        // A `--set` built from the first line of the input.
        if let Some((k, v)) = text.lines().next().and_then(|l| l.split_once('=')) {
            let _ = config::set_path(&mut tree, k, v);
        }
    }
});
