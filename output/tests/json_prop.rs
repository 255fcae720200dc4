//! Property test: any tree of values written through `JsonWriter` (with random rollbacks of
//! garbage in between) parses with serde_json to the expected value; strings round-trip.

use proptest::prelude::*;
use serde_json::{Map, Value};
use shrike_output::JsonWriter;

#[derive(Debug, Clone)]
enum Node {
    Str(String),
    Bytes(Vec<u8>),
    U(u64),
    I(i64),
    F(f64),
    B(bool),
    Null,
    Raw(i32),
    B64(Vec<u8>),
    Hex(Vec<u8>),
    Arr(Vec<Node>),
    Obj(Vec<(String, Node)>),
}

fn node() -> impl Strategy<Value = Node> {
    let leaf = prop_oneof![
        any::<String>().prop_map(Node::Str),
        proptest::collection::vec(any::<u8>(), 0..24).prop_map(Node::Bytes),
        any::<u64>().prop_map(Node::U),
        any::<i64>().prop_map(Node::I),
        any::<f64>().prop_map(Node::F),
        any::<bool>().prop_map(Node::B),
        Just(Node::Null),
        any::<i32>().prop_map(Node::Raw),
        proptest::collection::vec(any::<u8>(), 0..20).prop_map(Node::B64),
        proptest::collection::vec(any::<u8>(), 0..20).prop_map(Node::Hex),
    ];
    leaf.prop_recursive(5, 64, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Node::Arr),
            proptest::collection::vec((any::<String>(), inner), 0..6).prop_map(|mut v| {
                // JSON objects with duplicate keys collapse in serde_json; keep keys unique.
                let mut seen = std::collections::HashSet::new();
                v.retain(|(k, _)| seen.insert(k.clone()));
                Node::Obj(v)
            }),
        ]
    })
}

/// Suricata's text for bytes that are not valid UTF-8.
fn suricata_bytes(b: &[u8]) -> String {
    match std::str::from_utf8(b) {
        Ok(s) => s.to_string(),
        Err(_) => b
            .iter()
            .map(|&c| {
                if c < 0x80 {
                    (c as char).to_string()
                } else {
                    format!("\\x{c:02x}")
                }
            })
            .collect(),
    }
}

fn expected(n: &Node) -> Value {
    match n {
        Node::Str(s) => Value::String(s.clone()),
        Node::Bytes(b) => Value::String(suricata_bytes(b)),
        Node::U(u) => Value::from(*u),
        Node::I(i) => Value::from(*i),
        Node::F(f) if f.is_finite() => Value::from(*f),
        Node::F(_) | Node::Null => Value::Null,
        Node::B(b) => Value::Bool(*b),
        Node::Raw(i) => Value::from(*i),
        Node::B64(b) => {
            let mut v = Vec::new();
            shrike_output::json::encode_base64(&mut v, b);
            Value::String(String::from_utf8(v).unwrap())
        }
        Node::Hex(b) => Value::String(b.iter().map(|c| format!("{c:02x}")).collect()),
        Node::Arr(a) => Value::Array(a.iter().map(expected).collect()),
        Node::Obj(o) => {
            let mut m = Map::new();
            for (k, v) in o {
                m.insert(k.clone(), expected(v));
            }
            Value::Object(m)
        }
    }
}

/// Write some junk and roll it back.
fn garbage(w: &mut JsonWriter, in_object: bool) {
    let m = w.mark();
    if in_object {
        w.open_array("junk").u64(1).start_object().set_str("x", "y");
    } else {
        w.start_object().set_bool("junk", true).open_array("a");
    }
    w.rollback(m);
}

fn write_value(w: &mut JsonWriter, n: &Node, salt: &mut u32) {
    *salt = salt.wrapping_mul(1_103_515_245).wrapping_add(12345);
    match n {
        Node::Str(s) => {
            w.str(s);
        }
        Node::Bytes(b) => {
            w.bytes(b);
        }
        Node::U(u) => {
            w.u64(*u);
        }
        Node::I(i) => {
            w.i64(*i);
        }
        Node::F(f) => {
            w.f64(*f);
        }
        Node::B(b) => {
            w.bool(*b);
        }
        Node::Null => {
            w.null();
        }
        Node::Raw(i) => {
            w.raw(i.to_string().as_bytes());
        }
        Node::B64(b) => {
            w.base64(b);
        }
        Node::Hex(b) => {
            w.hex(b);
        }
        Node::Arr(a) => {
            w.start_array();
            for (i, x) in a.iter().enumerate() {
                if (*salt >> (i % 16)) & 1 == 1 {
                    garbage(w, false);
                }
                write_value(w, x, salt);
            }
            w.close();
        }
        Node::Obj(o) => {
            w.start_object();
            for (i, (k, x)) in o.iter().enumerate() {
                if (*salt >> (i % 16)) & 1 == 1 {
                    garbage(w, true);
                }
                // Mix keyed setters with key()+value.
                match (x, *salt % 3) {
                    (Node::Str(s), 0) => {
                        w.set_str(k, s);
                    }
                    (Node::U(u), 0) => {
                        w.set_u64(k, *u);
                    }
                    (Node::Arr(_), 1) | (Node::Obj(_), 1) => {
                        w.key(k);
                        write_value(w, x, salt);
                    }
                    (Node::Bytes(b), _) => {
                        w.set_bytes(k, b);
                    }
                    _ => {
                        w.key(k);
                        write_value(w, x, salt);
                    }
                }
            }
            w.close();
        }
    }
}

fn approx_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            x == y || ((x - y).abs() <= 1e-12 * x.abs().max(y.abs()))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| approx_eq(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| approx_eq(v, w)))
        }
        _ => a == b,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn writes_parse_to_expected(n in node(), salt in any::<u32>()) {
        let mut w = JsonWriter::new();
        let mut s = salt;
        write_value(&mut w, &n, &mut s);
        prop_assert!(w.error().is_none(), "{:?}", w.error());
        prop_assert!(w.is_complete());
        let text = std::str::from_utf8(w.as_bytes()).expect("output is UTF-8");
        let got: Value = serde_json::from_str(text).map_err(|e| TestCaseError::fail(format!("{e}: {text}")))?;
        let want = expected(&n);
        prop_assert!(approx_eq(&got, &want), "got {} want {}", got, want);
    }

    #[test]
    fn strings_round_trip(s in any::<String>(), key in any::<String>()) {
        let mut w = JsonWriter::new();
        w.start_object().set_str(&key, &s).close();
        let v: Value = serde_json::from_slice(w.as_bytes()).unwrap();
        prop_assert_eq!(v.get(&key).and_then(|x| x.as_str()), Some(s.as_str()));
        // No raw control characters ever reach the output.
        prop_assert!(w.as_bytes().iter().all(|&b| b >= 0x20));
    }
}
