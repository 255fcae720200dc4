//! The timer wheel against a naive model (BTreeMap) over random schedule / cancel /
//! advance sequences.

use std::collections::BTreeMap;

use proptest::prelude::*;
use shrike_flow::{TimerId, TimerWheel};

#[derive(Clone, Debug)]
enum Op {
    Schedule(u64),
    Cancel(usize),
    Advance(u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => prop_oneof![0u64..100, 0u64..5_000, 0u64..400_000, 0u64..(1 << 40)].prop_map(Op::Schedule),
        1 => any::<usize>().prop_map(Op::Cancel),
        2 => prop_oneof![0u64..50, 0u64..10_000, 0u64..1_000_000, 0u64..(1 << 41)].prop_map(Op::Advance),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn wheel_matches_model(start in 0u64..(1 << 40), ops in proptest::collection::vec(op(), 1..200)) {
        let mut w: TimerWheel<u64> = TimerWheel::new(start);
        // Model: (deadline, seq) -> value.
        let mut model: BTreeMap<(u64, u64), u64> = BTreeMap::new();
        let mut ids: Vec<(TimerId, u64, u64)> = Vec::new(); // id, deadline, seq
        let mut now = start;
        let mut seq = 0u64;
        for op in ops {
            match op {
                Op::Schedule(delta) => {
                    seq += 1;
                    // Some deadlines in the past.
                    let d = if delta % 7 == 0 { now.saturating_sub(delta) } else { now + delta };
                    let id = w.schedule(d, seq);
                    model.insert((d, seq), seq);
                    ids.push((id, d, seq));
                }
                Op::Cancel(i) => {
                    if ids.is_empty() { continue; }
                    let (id, d, s) = ids[i % ids.len()];
                    let got = w.cancel(id);
                    let want = model.remove(&(d, s));
                    prop_assert_eq!(got, want);
                }
                Op::Advance(delta) => {
                    now += delta;
                    let mut fired = Vec::new();
                    w.advance(now, &mut |_, v| fired.push(v));
                    let due: Vec<(u64, u64)> = model.range(..(now + 1, 0)).map(|(k, _)| *k).collect();
                    let want: Vec<u64> = due.iter().map(|k| model.remove(k).unwrap()).collect();
                    // Same set, in deadline order (ties in insertion order).
                    prop_assert_eq!(&fired, &want);
                }
            }
            prop_assert_eq!(w.len(), model.len());
            prop_assert_eq!(w.next_deadline(), model.keys().next().map(|k| k.0));
        }
    }
}
