use super::*;

const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

fn pps(rate: f64) -> Schedule {
    Schedule {
        pace: Pace::pps(rate),
        sizes: SizeSeq::Fixed(64),
        packets: None,
        duration_ns: None,
        burst: None,
        start_delay_ns: 0,
    }
}

fn for_ns(mut s: Schedule, ns: u64) -> Schedule {
    s.duration_ns = Some(ns);
    s
}

/// A sender that wakes every `step_ns` and takes up to `batch` due frames each time, until
/// the timeline is done; calls `seen` with each frame.
fn drive(tl: &mut Timeline, step_ns: u64, batch: usize, mut seen: impl FnMut(&Due, u64)) {
    let mut out = vec![Due::default(); batch];
    let mut now = 0;
    while !tl.done() {
        let n = tl.fill_batch(now, &mut out);
        for d in &out[..n] {
            assert!(d.deadline_ns <= now, "never handed out early");
            seen(d, now);
        }
        if n < batch {
            now += step_ns;
        }
    }
}

/// Event by event: the sender is always exactly on time.
fn order(tl: &mut Timeline) -> Vec<u32> {
    let mut v = Vec::new();
    while let Some(t) = tl.next_deadline() {
        while let Some(d) = tl.next(t) {
            v.push(d.stream);
        }
    }
    v
}

#[test]
fn one_and_ninety_nine_percent_interleave_evenly() {
    let total = 1_000_000.0;
    let mut tl = Timeline::new(
        vec![
            for_ns(pps(total * 0.01), 100 * MS),
            for_ns(pps(total * 0.99), 100 * MS),
        ],
        0,
    );
    let seq = order(&mut tl);
    assert_eq!(tl.count(0).packets, 1000);
    assert_eq!(tl.count(1).packets, 99_000);
    let small: Vec<usize> = (0..seq.len()).filter(|&i| seq[i] == 0).collect();
    let max_run = small.windows(2).map(|w| w[1] - w[0] - 1).max().unwrap();
    assert!(max_run <= 99usize.div_ceil(1) + 1, "run of {max_run}");
    let min_run = small.windows(2).map(|w| w[1] - w[0] - 1).min().unwrap();
    assert!(
        min_run >= 98,
        "the small stream is spread evenly: {min_run}"
    );
}

#[test]
fn rates_hold_over_ten_seconds() {
    let imix = SizeSeq::Weighted {
        sizes: vec![60, 590, 1514].into_boxed_slice(),
        tops: vec![u64::MAX / 12 * 7, u64::MAX / 12 * 11, u64::MAX].into_boxed_slice(),
    };
    let bps = Schedule {
        pace: Pace::bps(50e6),
        sizes: imix,
        ..pps(1.0)
    };
    let mut tl = Timeline::new(
        vec![
            for_ns(pps(10_000.0), 10 * S),
            for_ns(pps(54_321.0), 10 * S),
            for_ns(bps, 10 * S),
        ],
        0,
    );
    // A sender that wakes every 50 us and takes 256 frames at most.
    drive(&mut tl, 50_000, 256, |_, _| {});
    let close = |got: f64, want: f64| (got - want).abs() <= want * 0.001;
    assert!(close(tl.count(0).packets as f64, 100_000.0));
    assert!(close(tl.count(1).packets as f64, 543_210.0));
    let c = tl.count(2);
    let wire_bits = (c.bytes + 24 * c.packets) as f64 * 8.0;
    assert!(close(wire_bits, 5e8), "{wire_bits}");
    assert_eq!(
        tl.total().packets,
        (0..3).map(|i| tl.count(i).packets).sum::<u64>()
    );
}

#[test]
fn bursts_then_a_gap() {
    let s = Schedule {
        burst: Some(BurstShape {
            packets: 5,
            gap_fp: u128::from(10 * MS) * FP_ONE,
            count: Some(3),
        }),
        ..pps(1000.0)
    };
    let mut tl = Timeline::new(vec![s], 7);
    let mut at = Vec::new();
    while let Some(t) = tl.next_deadline() {
        let d = tl.next(t).unwrap();
        at.push((d.deadline_ns - 7) / MS);
    }
    assert_eq!(at, [0, 1, 2, 3, 4, 15, 16, 17, 18, 19, 30, 31, 32, 33, 34]);
    assert!(tl.done());
}

#[test]
fn bursts_without_a_count_run_on() {
    let s = Schedule {
        burst: Some(BurstShape {
            packets: 2,
            gap_fp: u128::from(MS) * FP_ONE,
            count: None,
        }),
        ..pps(1000.0)
    };
    let mut tl = Timeline::new(vec![s], 0);
    let mut out = [Due::default(); 100];
    // Two frames per 3 ms: 0, 1, 3, 4, 6, 7, 9 ms by 9 ms.
    assert_eq!(tl.fill_batch(9 * MS, &mut out), 7);
    assert!(!tl.done());
}

#[test]
fn start_delays() {
    let mut late = pps(1000.0);
    late.start_delay_ns = 5 * MS;
    let mut tl = Timeline::new(vec![pps(1000.0), late], 100);
    let mut out = [Due::default(); 16];
    let n = tl.fill_batch(100 + 5 * MS - 1, &mut out);
    assert!(
        out[..n].iter().all(|d| d.stream == 0),
        "nothing of the late one"
    );
    assert_eq!(n, 5);
    assert_eq!(tl.next_deadline(), Some(100 + 5 * MS));
    let d = tl.next(100 + 5 * MS).unwrap();
    assert_eq!((d.stream, d.seq), (0, 5), "ties go to the lower index");
    let d = tl.next(100 + 5 * MS).unwrap();
    assert_eq!((d.stream, d.seq, d.deadline_ns), (1, 0, 100 + 5 * MS));
}

#[test]
fn many_streams_hold_their_rates() {
    // 4,096 rates; over 100 ms each stream sends exactly ceil(rate * 0.1 s) frames, and its
    // k-th frame is due at k / rate (to the nanosecond): the rate holds all along, not only
    // on average.
    let rates: Vec<f64> = (0..4096)
        .map(|i| 1000.0 + f64::from(i % 97) * 5.5)
        .collect();
    let mut tl = Timeline::new(rates.iter().map(|&r| for_ns(pps(r), S / 10)).collect(), 0);
    let mut off = 0u64;
    drive(&mut tl, 100_000, 1024, |d, _| {
        let want = d.seq as f64 * 1e9 / rates[d.stream as usize];
        off = off.max((d.deadline_ns as f64 - want).abs().ceil() as u64);
    });
    assert!(off <= 1, "a deadline {off} ns off its rate");
    for (i, r) in rates.iter().enumerate() {
        assert_eq!(tl.count(i).packets, (r / 10.0).ceil() as u64, "stream {i}");
    }
}

#[test]
fn a_late_sender_gets_what_is_owed_in_deadline_order() {
    let mut tl = Timeline::new(vec![pps(1000.0), pps(500.0)], 0);
    let mut out = [Due::default(); 64];
    let n = tl.fill_batch(10 * MS, &mut out);
    assert_eq!(n, 11 + 6, "0..=10 ms and 0, 2, .. 10 ms");
    assert!(
        out[..n]
            .windows(2)
            .all(|w| w[0].deadline_ns <= w[1].deadline_ns)
    );
    assert_eq!(tl.fill_batch(10 * MS, &mut out), 0, "nothing more is due");
    assert_eq!(tl.next_deadline(), Some(11 * MS));
}

#[test]
fn packet_counts_and_durations_end_exactly() {
    let mut n = pps(1e6);
    n.packets = Some(7);
    let mut tl = Timeline::new(
        vec![
            n,
            for_ns(pps(1000.0), S),
            for_ns(pps(3.0), S),
            for_ns(pps(1e6), 1),
        ],
        0,
    );
    let mut seqs = vec![Vec::new(); 4];
    drive(&mut tl, MS, 64, |d, _| seqs[d.stream as usize].push(d.seq));
    assert_eq!(tl.count(0).packets, 7);
    assert_eq!(tl.count(1).packets, 1000, "due at 0, 1, .., 999 ms");
    assert_eq!(tl.count(2).packets, 3, "due at 0, 333, 667 ms");
    assert_eq!(tl.count(3).packets, 1, "only the first is due within 1 ns");
    assert_eq!(
        seqs[0],
        (0..7).collect::<Vec<_>>(),
        "each stream's own sequence"
    );
    assert_eq!(tl.count(1).bytes, 64_000);
    assert!(tl.done() && tl.next_deadline().is_none());
}

#[test]
fn sizes_pace_a_bit_rate() {
    // 1 Gbit/s with 1,000-byte frames: (1000 + 24) * 8 bits = 8,192 ns apart.
    let s = Schedule {
        pace: Pace::bps(1e9),
        sizes: SizeSeq::Fixed(1000),
        ..pps(1.0)
    };
    let mut tl = Timeline::new(vec![s], 0);
    let a = tl.next(0).unwrap();
    assert_eq!(tl.next_deadline(), Some(8192));
    assert_eq!((a.len, a.seq), (1000, 0));
}

#[test]
fn the_queue_orders_as_a_sorted_list() {
    // Random pushes, replacements of the top and pops, against a sorted Vec: the smallest
    // key always comes first, at every size (a node's last children are fewer than four).
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut q = Queue::default();
    let mut want: Vec<u128> = Vec::new();
    for step in 0..20_000 {
        let k = key(rnd() % 1_000, (rnd() % 64) as u32);
        match rnd() % 4 {
            0 | 1 => {
                q.push(k);
                want.push(k);
            }
            2 if !want.is_empty() => {
                want.sort_unstable();
                want[0] = k;
                q.replace_top(k);
            }
            _ => {
                want.sort_unstable();
                let w = (!want.is_empty()).then(|| want.remove(0));
                assert_eq!(q.pop(), w, "step {step}");
            }
        }
        want.sort_unstable();
        assert_eq!(q.peek(), want.first().copied(), "step {step}");
        assert_eq!(q.len(), want.len());
    }
    while let Some(w) = (!want.is_empty()).then(|| want.remove(0)) {
        assert_eq!(q.pop(), Some(w));
    }
    assert!(q.is_empty());
}

#[test]
fn equal_deadlines_go_to_the_lower_stream_and_keys_round_trip() {
    assert!(key(5, 9) < key(6, 0), "the deadline first");
    assert!(key(5, 1) < key(5, 2), "then the lower stream");
    assert_eq!(unkey(key(u64::MAX, u32::MAX)), (u64::MAX, u32::MAX));
    // 1,024 streams at one rate: served round-robin, in index order each round.
    let mut tl = Timeline::new((0..1024).map(|_| for_ns(pps(1000.0), 5 * MS)).collect(), 0);
    let seq = order(&mut tl);
    assert_eq!(seq.len(), 5 * 1024);
    for (k, s) in seq.iter().enumerate() {
        assert_eq!(*s as usize, k % 1024);
    }
}

#[test]
fn a_count_of_zero_sends_nothing() {
    let mut z = pps(1000.0);
    z.packets = Some(0);
    let mut tl = Timeline::new(vec![z, for_ns(pps(1000.0), 3 * MS)], 0);
    assert_eq!(order(&mut tl), [1, 1, 1]);
    assert_eq!(tl.count(0).packets, 0);
}
