//! The JSON writer operations the protocols' EVE records need, as a trait so record code
//! can be tested with other writers; `shrike_output::JsonWriter` implements it.

/// The JSON writer operations EVE records need (same names as `shrike_output::JsonWriter`).
pub trait JsonOut {
    /// `"key":{`.
    fn open_object(&mut self, key: &str);
    /// `"key":[`.
    fn open_array(&mut self, key: &str);
    /// `{` as an array element.
    fn start_object(&mut self);
    /// Close the innermost object or array.
    fn close(&mut self);
    /// `"key":"v"`.
    fn set_str(&mut self, key: &str, v: &str);
    /// `"key":"v"` from bytes (invalid UTF-8 escaped as Suricata does).
    fn set_bytes(&mut self, key: &str, v: &[u8]);
    /// `"key":n`.
    fn set_u64(&mut self, key: &str, v: u64);
    /// `"key":true|false`.
    fn set_bool(&mut self, key: &str, v: bool);
    /// A string array element.
    fn str(&mut self, v: &str);
    /// A string array element from bytes.
    fn bytes(&mut self, v: &[u8]);
    /// `"key":"<base64 of v>"`.
    fn set_base64(&mut self, key: &str, v: &[u8]);
    /// A base64 string array element.
    fn base64(&mut self, v: &[u8]);
}

impl JsonOut for shrike_output::json::JsonWriter {
    fn open_object(&mut self, key: &str) {
        shrike_output::json::JsonWriter::open_object(self, key);
    }
    fn open_array(&mut self, key: &str) {
        shrike_output::json::JsonWriter::open_array(self, key);
    }
    fn start_object(&mut self) {
        shrike_output::json::JsonWriter::start_object(self);
    }
    fn close(&mut self) {
        shrike_output::json::JsonWriter::close(self);
    }
    fn set_str(&mut self, key: &str, v: &str) {
        shrike_output::json::JsonWriter::set_str(self, key, v);
    }
    fn set_bytes(&mut self, key: &str, v: &[u8]) {
        shrike_output::json::JsonWriter::set_bytes(self, key, v);
    }
    fn set_u64(&mut self, key: &str, v: u64) {
        shrike_output::json::JsonWriter::set_u64(self, key, v);
    }
    fn set_bool(&mut self, key: &str, v: bool) {
        shrike_output::json::JsonWriter::set_bool(self, key, v);
    }
    fn str(&mut self, v: &str) {
        shrike_output::json::JsonWriter::str(self, v);
    }
    fn bytes(&mut self, v: &[u8]) {
        shrike_output::json::JsonWriter::bytes(self, v);
    }
    fn set_base64(&mut self, key: &str, v: &[u8]) {
        shrike_output::json::JsonWriter::set_base64(self, key, v);
    }
    fn base64(&mut self, v: &[u8]) {
        shrike_output::json::JsonWriter::base64(self, v);
    }
}
