//! Timer-wheel memory under bursts (found by the soak test: RSS crept up as every wheel slot
//! kept the largest allocation it ever needed). After bursts of timers pass through the
//! wheel's slots, the slots' retained capacity goes back to a small bound instead of the
//! sum of the bursts.

use shrike_flow::TimerWheel;

#[test]
fn slot_capacity_returns_to_a_bound_after_bursts() {
    let mut w: TimerWheel<u32> = TimerWheel::new(0);
    let mut fired = 0u64;
    // 40 bursts of 20,000 timers each, all due at the same instant, at different times so
    // they cascade through different slots of every level.
    let mut now = 0u64;
    for b in 0..40u64 {
        let due = now + 30_000 + b * 7_777;
        for i in 0..20_000u32 {
            w.schedule(due, i);
        }
        now = due + 1;
        w.advance(now, &mut |_, _| fired += 1);
        assert!(w.is_empty());
    }
    assert_eq!(fired, 40 * 20_000);
    let cap = w.slot_capacity();
    // 6 levels x 64 slots x 256 references retained at most, plus the due list.
    assert!(
        cap <= 6 * 64 * 256 + 32_768,
        "the wheel keeps {cap} references of capacity after every burst fired"
    );
}

#[test]
fn steady_load_keeps_its_allocations() {
    // A steady trickle reuses slot allocations: capacity stays small and stable.
    let mut w: TimerWheel<u32> = TimerWheel::new(0);
    let mut caps = Vec::new();
    for t in 0..200_000u64 {
        w.schedule(t + 60_000, t as u32);
        w.advance(t, &mut |_, _| {});
        if t % 50_000 == 49_999 {
            caps.push(w.slot_capacity());
        }
    }
    let (first, last) = (caps[1], *caps.last().unwrap());
    assert!(
        last <= first * 2 + 1024,
        "capacity crept from {first} to {last}"
    );
}
