//! Test-side `JsonOut`: a minimal JSON string builder (serde_json does the escaping).

pub use shrike_app::dns::eve::JsonOut;

#[derive(Default)]
pub struct Json {
    pub s: String,
    first: Vec<bool>,
    closers: Vec<char>,
}

impl Json {
    /// Start a top-level object.
    pub fn object() -> Self {
        Json {
            s: "{".into(),
            first: vec![true],
            closers: Vec::new(),
        }
    }
    /// Close the top-level object and parse it.
    pub fn finish(mut self) -> serde_json::Value {
        self.s.push('}');
        serde_json::from_str(&self.s).unwrap_or_else(|e| panic!("bad json {e}: {}", self.s))
    }
    fn sep(&mut self) {
        if let Some(f) = self.first.last_mut() {
            if !*f {
                self.s.push(',');
            }
            *f = false;
        }
    }
    fn key(&mut self, k: &str) {
        self.sep();
        self.s.push_str(&serde_json::to_string(k).unwrap());
        self.s.push(':');
    }
    fn val_str(&mut self, v: &str) {
        self.s.push_str(&serde_json::to_string(v).unwrap());
    }
}

fn b64(v: &[u8]) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut o = String::new();
    for c in v.chunks(3) {
        let n = (c[0] as u32) << 16
            | (*c.get(1).unwrap_or(&0) as u32) << 8
            | *c.get(2).unwrap_or(&0) as u32;
        for i in 0..4 {
            if i <= c.len() {
                o.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                o.push('=');
            }
        }
    }
    o
}

impl JsonOut for Json {
    fn open_object(&mut self, key: &str) {
        self.key(key);
        self.s.push('{');
        self.first.push(true);
        self.closers.push('}');
    }
    fn open_array(&mut self, key: &str) {
        self.key(key);
        self.s.push('[');
        self.first.push(true);
        self.closers.push(']');
    }
    fn start_object(&mut self) {
        self.sep();
        self.s.push('{');
        self.first.push(true);
        self.closers.push('}');
    }
    fn close(&mut self) {
        if let Some(c) = self.closers.pop() {
            self.first.pop();
            self.s.push(c);
        }
    }
    fn set_str(&mut self, key: &str, v: &str) {
        self.key(key);
        self.val_str(v);
    }
    fn set_bytes(&mut self, key: &str, v: &[u8]) {
        self.key(key);
        self.val_str(&String::from_utf8_lossy(v));
    }
    fn set_u64(&mut self, key: &str, v: u64) {
        self.key(key);
        self.s.push_str(&v.to_string());
    }
    fn set_bool(&mut self, key: &str, v: bool) {
        self.key(key);
        self.s.push_str(if v { "true" } else { "false" });
    }
    fn str(&mut self, v: &str) {
        self.sep();
        self.val_str(v);
    }
    fn bytes(&mut self, v: &[u8]) {
        self.sep();
        self.val_str(&String::from_utf8_lossy(v));
    }
    fn set_base64(&mut self, key: &str, v: &[u8]) {
        self.key(key);
        self.val_str(&b64(v));
    }
    fn base64(&mut self, v: &[u8]) {
        self.sep();
        self.val_str(&b64(v));
    }
}

/// Load a `.fix` file: (flow, tcp, to_server, bytes).
pub fn load_fix(path: &str) -> Vec<(i64, bool, bool, Vec<u8>)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| {
            let mut it = l.split(' ');
            let flow = it.next().unwrap().parse().unwrap();
            let tcp = it.next().unwrap() == "tcp";
            let ts = it.next().unwrap() == "S";
            let hex = it.next().unwrap();
            let bytes = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                .collect();
            (flow, tcp, ts, bytes)
        })
        .collect()
}

/// Load a `.eve` file: (flow, object).
pub fn load_eve(path: &str) -> Vec<(i64, serde_json::Value)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| {
            let (f, j) = l.split_once(' ').unwrap();
            (f.parse().unwrap(), serde_json::from_str(j).unwrap())
        })
        .collect()
}

/// Validate `{"event_type": kind, kind: obj}` (plus the envelope) against the EVE schema.
pub fn schema_check(kind: &str, obj: &serde_json::Value) {
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../shared/eve-schema/schema.json"
        ))
        .or_else(|_| std::fs::read_to_string("/work/shared/eve-schema/schema.json"))
        .expect("schema"),
    )
    .unwrap();
    let v = jsonschema::validator_for(&schema).expect("schema compiles");
    let rec = serde_json::json!({
        "timestamp": "2024-01-01T00:00:00.000000+0000",
        "flow_id": 1, "event_type": kind, "src_ip": "10.0.0.1", "src_port": 1,
        "dest_ip": "10.0.0.2", "dest_port": 53, "proto": "UDP", kind: obj,
    });
    let errs: Vec<String> = v.iter_errors(&rec).map(|e| e.to_string()).collect();
    assert!(errs.is_empty(), "schema errors {errs:?} for {rec}");
}
