//! Translation of the Suricata config sections owned by the crates (detect, output, capture).
//! Filled in as each crate's configuration lands.

use serde_json::Value;

/// Translate Suricata's detect/output/capture sections into the shrike tree `out`.
pub fn translate_sections(
    _tree: &Value,
    _out: &mut Value,
    _ignored: &mut Vec<String>,
) -> Result<(), String> {
    Ok(())
}
