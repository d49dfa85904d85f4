use super::*;
use crate::rx::sink::SeqCounters;

/// A frame of `len` bytes ending with the signature of `stream`, numbered `seq`, sent at
/// `tx_ns`.
pub(crate) fn signed_frame(len: usize, stream: u16, seq: u32, tx_ns: u64) -> Vec<u8> {
    let mut f = vec![0x5a; len];
    Signature { stream, seq, tx_ns }.emit(&mut f);
    f
}

fn sig(stream: u16, seq: u32, tx_ns: u64) -> Signature {
    Signature { stream, seq, tx_ns }
}

/// Feeds stream `id` the numbers `seqs`, each sent at 1 s + seq µs and received 10 µs later.
fn feed(t: &mut StreamTable, id: u16, seqs: &[u32]) -> Vec<Option<SeqEvent>> {
    seqs.iter()
        .map(|&q| {
            let tx = 1_000_000_000 + u64::from(q) * 1000;
            t.record(&sig(id, q, tx), 100, tx + 10_000, 0)
        })
        .collect()
}

fn seq_of(t: &StreamTable, id: usize) -> SeqCounters {
    t.streams[id].seq.c
}

#[test]
fn in_order_stream_has_no_loss_and_counts_frames_and_bytes() {
    let mut t = StreamTable::new(2, true).unwrap();
    let seqs: Vec<u32> = (0..1000).collect();
    feed(&mut t, 1, &seqs);
    let r = t.report(&[], 2);
    let s = &r.streams[1];
    assert_eq!((s.frames, s.bytes), (1000, 100_000));
    assert_eq!((s.first_seq, s.last_seq), (Some(0), Some(999)));
    assert_eq!(s.seq.received, 1000);
    assert_eq!((s.seq.lost, s.seq.duplicates, s.seq.reordered), (0, 0, 0));
    assert_eq!(r.streams[0].frames, 0, "the other stream saw nothing");
    assert_eq!(r.streams[0].first_rx_ns, None);
    assert_eq!(
        (s.first_rx_ns, s.last_rx_ns),
        (Some(1_000_010_000), Some(1_000_010_000 + 999_000))
    );
    assert_eq!(r.aggregate.streams_seen, 1);
}

#[test]
fn gaps_count_as_lost_and_a_late_start_only_from_the_start() {
    let mut t = StreamTable::new(1, true).unwrap();
    let seqs: Vec<u32> = (0..100).filter(|q| q % 10 != 3).collect();
    feed(&mut t, 0, &seqs);
    assert_eq!(seq_of(&t, 0).lost, 10);
    assert_eq!(seq_of(&t, 0).received, 90);
    // The first frame received is number 5: 0 to 4 are lost when the receiver was up first,
    // not when it joined a stream already flowing.
    let mut t = StreamTable::new(1, true).unwrap();
    assert_eq!(feed(&mut t, 0, &[5]), [Some(SeqEvent::New { skipped: 5 })]);
    assert_eq!(seq_of(&t, 0).lost, 5);
    let mut t = StreamTable::new(1, false).unwrap();
    feed(&mut t, 0, &[5]);
    assert_eq!(seq_of(&t, 0).lost, 0);
}

#[test]
fn duplicates_and_reordering() {
    let mut t = StreamTable::new(1, true).unwrap();
    use SeqEvent::*;
    let ev = feed(&mut t, 0, &[0, 1, 1, 3, 2, 2, 4]);
    assert_eq!(
        ev,
        [
            New { skipped: 0 },
            New { skipped: 0 },
            Duplicate,
            New { skipped: 1 },
            Reordered,
            Duplicate,
            New { skipped: 0 }
        ]
        .map(Some)
    );
    let c = seq_of(&t, 0);
    assert_eq!(
        (c.received, c.lost, c.duplicates, c.reordered),
        (5, 0, 2, 1)
    );
    assert_eq!(t.streams[0].frames, 7, "frames count duplicates too");
    assert_eq!(
        t.streams[0].hist.len(),
        5,
        "no latency recorded for a duplicate"
    );
}

#[test]
fn late_beyond_the_stream_window() {
    let mut t = StreamTable::new(1, false).unwrap();
    let base = 1_000_000u32;
    let ev = feed(&mut t, 0, &[base, base + STREAM_WINDOW + 10, base + 1]);
    assert_eq!(ev[2], Some(SeqEvent::LateBeyondWindow));
    let c = seq_of(&t, 0);
    assert_eq!(c.late_beyond_window, 1);
    assert_eq!(
        c.lost,
        u64::from(STREAM_WINDOW + 9),
        "it was counted lost when skipped"
    );
    // Within the window it is an ordinary reorder.
    let mut t = StreamTable::new(1, false).unwrap();
    let ev = feed(&mut t, 0, &[base, base + STREAM_WINDOW - 1, base + 1]);
    assert_eq!(ev[2], Some(SeqEvent::Reordered));
}

#[test]
fn wrapped_sequence_is_an_ordinary_step() {
    let mut t = StreamTable::new(1, false).unwrap();
    // Stamps rising with arrival: sent at k µs.
    for (k, q) in [u32::MAX - 1, u32::MAX, 0, 2, 1].into_iter().enumerate() {
        let tx = 1_000_000 + k as u64 * 1000;
        let tx = if q == 1 { tx - 2000 } else { tx }; // 1 was sent before 2
        t.record(&sig(0, q, tx), 64, tx + 5000, 0);
    }
    let c = seq_of(&t, 0);
    assert_eq!(c.wraps, 1);
    assert_eq!((c.received, c.lost, c.reordered), (5, 0, 1));
    assert_eq!(t.streams[0].seq.last_seq(), Some(2));
}

#[test]
fn latency_percentiles_of_a_known_set() {
    let mut t = StreamTable::new(1, true).unwrap();
    // 1,000 frames with latencies 1, 2, ..., 1000 µs, in a shuffled order of arrival.
    for k in 0..1000u32 {
        let lat = u64::from((k * 7919) % 1000 + 1) * 1000;
        let tx = 5_000_000_000 + u64::from(k) * 1_000_000;
        t.record(&sig(0, k, tx), 64, tx + lat, 0);
    }
    let l = t.report(&[], 1).streams[0].latency.unwrap();
    assert_eq!(l.count, 1000);
    assert_eq!((l.min_ns, l.max_ns), (1000, 1_000_000), "exact");
    assert_eq!(l.mean_ns, 500_500.0, "exact");
    let near = |v: u64, want: u64| (v as f64 - want as f64).abs() <= want as f64 * 0.01;
    assert!(near(l.p50_ns, 500_000), "{l:?}");
    assert!(near(l.p90_ns, 900_000), "{l:?}");
    assert!(near(l.p99_ns, 990_000), "{l:?}");
    assert!(near(l.p999_ns, 999_000), "{l:?}");
}

#[test]
fn percentiles_stay_within_the_exact_min_and_max() {
    // Above 4,096 streams the histograms keep 1 significant digit: one frame at 88.1 µs
    // lands in a bucket whose highest value is 90.1 µs, which is no percentile of it.
    let mut t = StreamTable::new(FINE_STREAMS + 1, true).unwrap();
    assert_eq!(t.latency_digits(), 1);
    t.record(&sig(0, 0, 1_000_000), 64, 1_000_000 + 88_100, 0);
    t.record(&sig(1, 0, 1_000_000), 64, 1_000_000 + 88_100, 0);
    t.record(&sig(1, 1, 2_000_000), 64, 2_000_000 + 80_000, 0);
    let r = t.report(&[], 2);
    for l in r
        .streams
        .iter()
        .take(2)
        .map(|s| s.latency.unwrap())
        .chain([r.aggregate.latency.unwrap()])
    {
        for p in [l.p50_ns, l.p90_ns, l.p99_ns, l.p999_ns] {
            assert!((l.min_ns..=l.max_ns).contains(&p), "{l:?}");
        }
    }
    assert_eq!(r.streams[0].latency.unwrap().p50_ns, 88_100);
}

#[test]
fn the_clock_offset_moves_latency_not_jitter() {
    // The far receiver's clock is 3 ms ahead: receive times are 3 ms late on the sender's.
    let mut t = StreamTable::new(2, true).unwrap();
    for k in 0..10u32 {
        let tx = 1_000_000_000 + u64::from(k) * 1000;
        let rx = tx + 3_000_000 + 20_000 + u64::from(k % 2) * 1000;
        t.record(&sig(0, k, tx), 64, rx, -3_000_000);
        t.record(&sig(1, k, tx), 64, rx, 0);
    }
    let r = t.report(&[], 2);
    let (a, b) = (&r.streams[0], &r.streams[1]);
    let l = a.latency.unwrap();
    assert_eq!((l.min_ns, l.max_ns), (20_000, 21_000));
    assert_eq!(b.latency.unwrap().min_ns, 3_020_000);
    assert_eq!(a.jitter_ns, b.jitter_ns);
    // An offset that makes it arrive before it was sent: counted, not recorded.
    let mut t = StreamTable::new(1, true).unwrap();
    t.record(&sig(0, 0, 1_000_000), 64, 1_500_000, -600_000);
    t.record(&sig(0, 1, 0), 64, 1_500_000, 0);
    t.record(&sig(0, 2, 1_000_000), 64, 62_000_000_000, 0);
    let r = t.report(&[], 1);
    let n = r.streams[0].latency_not_recorded;
    assert_eq!(
        (n.clock_backwards, n.no_timestamp, n.out_of_range),
        (1, 1, 1)
    );
    assert!(r.streams[0].latency.is_none());
}

#[test]
fn jitter_follows_rfc_3550_by_hand() {
    let mut t = StreamTable::new(1, true).unwrap();
    // Sent every 1000 ns; transit times 100, 150, 100, 300 ns.
    for (k, transit) in [100u64, 150, 100, 300].into_iter().enumerate() {
        let tx = 1_000_000 + k as u64 * 1000;
        t.record(&sig(0, k as u32, tx), 64, tx + transit, 0);
    }
    // |D| = 50, 50, 200:
    // J1 = 0 + (50 - 0)/16 = 3.125
    // J2 = 3.125 + (50 - 3.125)/16 = 6.0546875
    // J3 = 6.0546875 + (200 - 6.0546875)/16 = 18.17626953125
    assert_eq!(
        t.report(&[], 1).streams[0].jitter_ns,
        Some(18.176_269_531_25)
    );
    // One stamped frame: J is still 0; none: no jitter.
    let mut t = StreamTable::new(2, true).unwrap();
    t.record(&sig(0, 0, 1000), 64, 2000, 0);
    t.record(&sig(1, 0, 0), 64, 2000, 0);
    let r = t.report(&[], 2);
    assert_eq!(
        (r.streams[0].jitter_ns, r.streams[1].jitter_ns),
        (Some(0.0), None)
    );
}

#[test]
fn jitter_takes_frames_in_order_of_arrival() {
    // Numbers 0, 2, 1 arrive in that order: D is taken between neighbours in arrival, so
    // 1's transit is compared with 2's, not 0's.
    let mut t = StreamTable::new(1, true).unwrap();
    t.record(&sig(0, 0, 1), 64, 101, 0); // transit 100
    t.record(&sig(0, 2, 2001), 64, 2001 + 100, 0); // transit 100: D = 0
    t.record(&sig(0, 1, 1001), 64, 1001 + 1700, 0); // transit 1700: D = 1600
    assert_eq!(t.report(&[], 1).streams[0].jitter_ns, Some(100.0));
    assert_eq!(t.streams[0].seq.c.reordered, 1);
}

#[test]
fn foreign_ids_and_frames_without_a_signature() {
    let mut t = StreamTable::new(3, true).unwrap();
    assert_eq!(
        t.record_frame(&signed_frame(64, 2, 0, 1), 64, 10, 0),
        Some(SeqEvent::New { skipped: 0 })
    );
    assert_eq!(t.record_frame(&signed_frame(64, 3, 0, 1), 64, 10, 0), None);
    assert_eq!(
        t.record_frame(&signed_frame(64, u16::MAX, 0, 1), 64, 10, 0),
        None
    );
    assert_eq!(t.foreign(), 2);
    // No magic; shorter than a signature; the end not captured (a 128-byte frame of which
    // 64 bytes were kept).
    assert_eq!(t.record_frame(&[0u8; 64], 64, 10, 0), None);
    assert_eq!(t.record_frame(&[0x75, 0x70, 0, 0], 4, 10, 0), None);
    let f = signed_frame(128, 0, 0, 1);
    assert_eq!(t.record_frame(&f[..64], 128, 10, 0), None);
    assert_eq!(t.unsigned(), 3);
    let r = t.report(&[], 3);
    assert_eq!(
        r.aggregate.frames, 1,
        "only the frame of stream 2 is in a stream"
    );
    assert_eq!((r.foreign, r.unsigned), (2, 3));
    assert!(
        r.text()
            .contains("2 with a stream id beyond the 3 expected, 3 without a signature")
    );
}

#[test]
fn four_thousand_streams_interleaved() {
    let n = 4096;
    let mut t = StreamTable::new(n, true).unwrap();
    let mut frame = signed_frame(80, 0, 0, 0);
    let mut clock = 1_700_000_000_000_000_000u64;
    for q in 0..40u32 {
        for id in 0..n as u16 {
            clock += 100;
            if (id, q) == (7, 20) || (id, q) == (4000, 39) {
                continue; // dropped
            }
            sig(id, q, clock).emit(&mut frame);
            // Stream 9's number 5 arrives twice.
            let times = if (id, q) == (9, 5) { 2 } else { 1 };
            for _ in 0..times {
                t.record_frame(&frame, 80, clock + 2000 + u64::from(id % 5) * 100, 0);
            }
        }
    }
    let r = t.report(&[], 16);
    assert_eq!(r.streams.len(), n);
    for s in &r.streams {
        let (lost, dup, received) = match s.id {
            7 => (1, 0, 39),
            // A loss after the last number received is invisible to the receiver.
            4000 => (0, 0, 39),
            9 => (0, 1, 40),
            _ => (0, 0, 40),
        };
        assert_eq!(
            (s.seq.lost, s.seq.duplicates, s.seq.received),
            (lost, dup, received),
            "stream {}",
            s.id
        );
        assert_eq!(s.seq.reordered, 0);
        let l = s.latency.unwrap();
        assert_eq!(l.min_ns, 2000 + u64::from(s.id % 5) * 100);
    }
    let a = &r.aggregate;
    assert_eq!((a.streams, a.streams_seen), (4096, 4096));
    assert_eq!(a.frames, 4096 * 40 - 2 + 1);
    assert_eq!(a.bytes, a.frames * 80);
    assert_eq!((a.seq.lost, a.seq.duplicates), (1, 1));
    let l = a.latency.unwrap();
    assert_eq!((l.min_ns, l.max_ns, l.count), (2000, 2400, 4096 * 40 - 2));
    // 16 streams shown one by one, the 4,080 others summed.
    let (shown, rest) = r.labelled();
    assert_eq!(shown.len(), 16);
    let rest = rest.unwrap();
    assert_eq!(rest.streams, 4080);
    assert_eq!(
        rest.frames + shown.iter().map(|s| s.frames).sum::<u64>(),
        a.frames
    );
    assert_eq!(
        (rest.seq.lost, rest.seq.duplicates),
        (0, 0),
        "7 and 9 are shown"
    );
}

#[test]
fn memory_is_bounded_by_the_table_size() {
    let t = StreamTable::new(FINE_STREAMS, true).unwrap();
    assert_eq!(t.latency_digits(), 2);
    let m = t.memory_bytes();
    assert!(m <= FINE_STREAMS * FINE_STREAM_BYTES, "{m} bytes");
    assert!(m <= 72 << 20, "4,096 streams within 72 MiB: {m}");
    // Nothing grows with traffic: the histograms are sized for their whole range.
    let mut t = StreamTable::new(4, true).unwrap();
    let before = t.memory_bytes();
    for k in 0..1000u32 {
        t.record(
            &sig((k % 4) as u16, k / 4, 1),
            64,
            1 + u64::from(k) * 50_000_000,
            0,
        );
    }
    assert_eq!(t.memory_bytes(), before);
    // Beyond FINE_STREAMS a coarser histogram per stream.
    let n = FINE_STREAMS + 1;
    let t = StreamTable::new(n, true).unwrap();
    assert_eq!(t.latency_digits(), 1);
    assert!(
        t.memory_bytes() <= n * COARSE_STREAM_BYTES,
        "{}",
        t.memory_bytes()
    );
}

#[test]
fn table_size_is_checked() {
    assert_eq!(StreamTable::new(0, true).unwrap_err(), StreamsError::Empty);
    let e = StreamTable::new(MAX_STREAMS + 1, true).unwrap_err();
    assert_eq!(e, StreamsError::TooMany(65_537));
    assert!(e.to_string().contains("at most 65536"), "{e}");
}

#[test]
fn report_names_shows_and_sums() {
    let mut t = StreamTable::new(4, true).unwrap();
    for id in 0..4u16 {
        for q in 0..10u32 {
            if (id, q) == (3, 4) {
                continue;
            }
            let tx = 1_000_000 + u64::from(q) * 1000;
            t.record(
                &sig(id, q, tx),
                64 + u32::from(id),
                tx + 1000 * u64::from(id + 1),
                0,
            );
        }
    }
    let names: Vec<String> = ["udp64", "tcp-imix", "v6\u{1b}[31m"]
        .map(String::from)
        .to_vec();
    let r = t.report(&names, 2);
    assert_eq!(
        r.streams
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>(),
        ["udp64", "tcp-imix", "v6\u{1b}[31m", "3"],
        "a stream without a name is called by its id"
    );
    let rest = r.rest.as_ref().unwrap();
    assert_eq!((rest.streams, rest.frames, rest.seq.lost), (2, 19, 1));
    assert_eq!(rest.bytes, 10 * 66 + 9 * 67);
    let l = rest.latency.unwrap();
    assert_eq!((l.min_ns, l.max_ns, l.count), (3000, 4000, 19));
    // Percentiles of the two streams' frames together (ten at 3 µs, nine at 4 µs).
    let near = |v: u64, want: u64| (v as f64 - want as f64).abs() <= want as f64 * 0.01;
    assert!(near(l.p50_ns, 3000) && near(l.p99_ns, 4000), "{l:?}");
    assert_eq!(r.aggregate.seq.lost, 1);
    assert_eq!(r.aggregate.latency.unwrap().min_ns, 1000);
    let text = r.text();
    assert!(
        text.starts_with("Streams:     4 expected, 4 seen: 39 frames"),
        "{text}"
    );
    assert!(text.contains(" udp64 "), "{text}");
    assert!(text.contains("others (2)"), "{text}");
    assert!(text.contains("all (4)"), "{text}");
    assert!(!text.contains('\u{1b}'), "names are escaped: {text}");
    assert_eq!(text.lines().count(), 1 + 1 + 2 + 2 + 1, "{text}");
    // JSON round trip.
    let j = serde_json::to_string(&r).unwrap();
    let back: StreamsReport = serde_json::from_str(&j).unwrap();
    assert_eq!(back, r);
    // Every stream shown: no rest.
    let r = t.report(&names, 100);
    assert_eq!((r.shown, r.rest.is_none()), (4, true));
    assert_eq!(r.labelled().0.len(), 4);
}

/// The aggregate's percentiles are of every stream's frames together (the histograms
/// merged), not a mean of the streams' percentiles: a fast stream of 95 frames at 10 µs
/// and a slow one of 5 at 1 ms have a p50 of 10 µs together (the mean of their p50s would
/// be 505 µs) and a p99 of 1 ms (the mean of p99s: 505 µs again).
#[test]
fn the_aggregate_latency_is_the_union_of_the_streams_frames() {
    let mut t = StreamTable::new(2, true).unwrap();
    for (id, n, lat) in [(0u16, 95u32, 10_000u64), (1, 5, 1_000_000)] {
        for q in 0..n {
            let tx = 1_000_000_000 + u64::from(q) * 10_000_000;
            t.record(&sig(id, q, tx), 100, tx + lat, 0);
        }
    }
    let r = t.report(&[], 2);
    let near = |v: u64, want: u64| (v as f64 - want as f64).abs() <= want as f64 * 0.01;
    let fast = r.streams[0].latency.unwrap();
    let slow = r.streams[1].latency.unwrap();
    assert!(near(fast.p50_ns, 10_000) && near(slow.p50_ns, 1_000_000));
    let a = r.aggregate.latency.unwrap();
    assert_eq!(a.count, 100);
    assert_eq!((a.min_ns, a.max_ns), (10_000, 1_000_000));
    assert!(near(a.p50_ns, 10_000), "{a:?}");
    assert!(near(a.p90_ns, 10_000), "{a:?}");
    assert!(near(a.p99_ns, 1_000_000), "{a:?}");
    // The mean is the frames' (95 x 10 µs + 5 x 1 ms) / 100, exact.
    assert_eq!(a.mean_ns, 59_500.0);
}
