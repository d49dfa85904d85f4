use super::*;
use crate::pg::DevConfig;
use crate::pg::generate::DeviceInfo;
use crate::stream::for_config;

fn info() -> DeviceInfo {
    DeviceInfo {
        mac: "02:00:00:99:00:01".parse().unwrap(),
        ipv4: Some("10.99.0.1".parse().unwrap()),
        tx_queues: 1,
    }
}

fn cfg(name: &str, cmds: &[&str]) -> DevConfig {
    let mut c = DevConfig::new(name);
    c.command("dst 10.99.0.2").unwrap();
    c.command("dst_mac 02:00:00:99:00:02").unwrap();
    for cmd in cmds {
        c.command(cmd).unwrap();
    }
    c
}

fn timing(c: &DevConfig) -> Timing {
    Timing {
        count: c.count,
        delay_ns: c.delay,
        burst: c.burst,
        timestamps: !c.has(crate::pg::Flag::NoTimestamp),
    }
}

/// The devices' frames on one timeline, device `i` drawing with seed `i`.
fn timeline(cfgs: &[DevConfig]) -> DeviceTimeline {
    DeviceTimeline::new(
        cfgs.iter()
            .enumerate()
            .map(|(i, c)| (for_config(c, &info(), i as u64, 0).unwrap(), timing(c)))
            .collect(),
    )
    .unwrap()
}

/// Runs a source as the send loop does (look at the next frame's due time, take it, write
/// it into a buffer that held the frame before, mark it sent), frame `k` stamped
/// `(1000 + k, 7)`: each frame's due time and bytes.
fn drain(src: &mut dyn FrameSource, n: u64) -> Vec<(Option<u64>, Vec<u8>)> {
    let mut buf = src.prefill();
    (0..n)
        .map(|k| {
            let due = src.due_ns(k);
            let len = src.advance();
            src.write(&mut buf[..len], Stamp::tv(1000 + k as u32, 7));
            src.sent();
            (due, buf[..len].to_vec())
        })
        .collect()
}

/// The UDP destination port of an IPv4 frame without tags.
fn dst_port(f: &[u8]) -> u16 {
    u16::from_be_bytes([f[36], f[37]])
}

/// pktgen's sequence number (after the 8-byte UDP header, the 4-byte magic).
fn pg_seq(f: &[u8]) -> u32 {
    u32::from_be_bytes([f[46], f[47], f[48], f[49]])
}

#[test]
fn each_device_sends_its_own_frames_in_deadline_order() {
    let a = cfg(
        "eth0@0",
        &[
            "count 3",
            "ratep 1000",
            "pkt_size 60",
            "udp_dst_min 1001",
            "udp_dst_max 1001",
        ],
    );
    let b = cfg(
        "eth0@1",
        &[
            "count 9",
            "ratep 3000",
            "pkt_size 200",
            "udp_dst_min 2001",
            "udp_dst_max 2001",
            "vlan_id 5",
        ],
    );
    let mut t = timeline(&[a.clone(), b.clone()]);
    let got = drain(&mut t, 12);
    let dues: Vec<u64> = got.iter().map(|g| g.0.unwrap()).collect();
    assert!(dues.windows(2).all(|w| w[0] <= w[1]), "{dues:?}");
    // Device a is due every 1 ms, b every 333,333 ns (ratep 3000's delay), from 0.
    assert_eq!(&dues[..5], [0, 0, 333_333, 666_666, 999_999]);
    assert_eq!(
        t.due_ns(12),
        Some(u64::MAX),
        "both counts done: never due again"
    );
    // Each device's frames are the ones it sends alone, in its own order.
    for (i, (c, len)) in [(&a, 60), (&b, 200)].into_iter().enumerate() {
        let mut alone = for_config(c, &info(), i as u64, 0).unwrap();
        let mine: Vec<(u64, &Vec<u8>)> = got
            .iter()
            .enumerate()
            .filter(|(_, g)| g.1.len() == len)
            .map(|(k, g)| (k as u64, &g.1))
            .collect();
        assert_eq!(mine.len() as u64, c.count);
        let mut buf = alone.prefill();
        for (k, frame) in mine {
            let n = alone.advance();
            alone.write(&mut buf[..n], Stamp::tv(1000 + k as u32, 7));
            alone.sent();
            assert_eq!(&buf[..n], &frame[..], "device {i}, frame {k}");
        }
    }
    // Their own pktgen sequences, from 1 (b's after its VLAN tag).
    let a_seq: Vec<u32> = got
        .iter()
        .filter(|g| g.1.len() == 60)
        .map(|g| pg_seq(&g.1))
        .collect();
    assert_eq!(a_seq, [1, 2, 3]);
    assert!(
        got.iter()
            .filter(|g| g.1.len() == 60)
            .all(|g| dst_port(&g.1) == 1001)
    );
    // Each device's count, bytes and own Result figures.
    let p = t.parts();
    assert_eq!((p[0].frames, p[0].bytes, p[0].pkt_size), (3, 180, 60));
    assert_eq!((p[1].frames, p[1].bytes, p[1].pkt_size), (9, 1800, 200));
    assert!(p[0].walk.is_none(), "a's frames take the fast path");
    assert_eq!(
        p[1].walk.as_ref().map(|w| w.seq),
        Some(10),
        "b's walk: its next sequence number"
    );
    // The thread's: every frame at its real length, the sizes' range.
    assert_eq!(t.imix_bytes(), Some(1980));
    assert_eq!(t.size_range(), Some((60, 200)));
    assert_eq!(t.pkt_size(), 165, "the mean frame");
}

#[test]
fn a_slow_device_between_a_fast_one_never_waits_for_it_to_finish() {
    // 1 % and 99 %: the slow device's frames fall where its rate puts them.
    let slow = cfg("eth0@0", &["count 10", "ratep 1000", "pkt_size 100"]);
    let fast = cfg("eth0@1", &["count 1000", "delay 10000", "pkt_size 60"]);
    let mut t = timeline(&[slow, fast]);
    let got = drain(&mut t, 1010);
    let mut run = 0;
    let mut longest = 0;
    for g in &got {
        if g.1.len() == 60 {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    // 100 fast frames a millisecond: never more in a row between two slow ones.
    assert_eq!(longest, 100);
    let slow_at: Vec<usize> = (0..got.len()).filter(|&k| got[k].1.len() == 100).collect();
    assert_eq!(slow_at.len(), 10);
    assert!(
        slow_at.windows(2).all(|w| w[1] - w[0] == 101),
        "{slow_at:?}"
    );
}

#[test]
fn unpaced_devices_take_turns_each_its_burst_in_a_row() {
    let a = cfg("eth0@0", &["count 6", "pkt_size 60"]);
    let b = cfg("eth0@1", &["count 6", "pkt_size 80", "burst 3"]);
    let mut t = timeline(&[a, b]);
    let lens: Vec<usize> = drain(&mut t, 12).iter().map(|g| g.1.len()).collect();
    assert_eq!(lens, [60, 80, 80, 80, 60, 60, 60, 80, 80, 80, 60, 60]);
}

#[test]
fn a_burst_is_due_at_once_each_tick_of_burst_times_delay() {
    let a = cfg("eth0@0", &["count 4", "delay 1000", "burst 2"]);
    let mut t = timeline(&[a]);
    let dues: Vec<u64> = drain(&mut t, 4).iter().map(|g| g.0.unwrap()).collect();
    assert_eq!(dues, [0, 0, 2000, 2000]);
}

#[test]
fn count_zero_runs_on_and_no_timestamp_stays_per_device() {
    let a = cfg("eth0@0", &["count 0", "pkt_size 60", "flag NO_TIMESTAMP"]);
    let b = cfg("eth0@1", &["count 0", "pkt_size 64"]);
    let mut t = timeline(&[a, b]);
    let got = drain(&mut t, 100);
    assert!(t.due_ns(100).is_some_and(|d| d != u64::MAX), "never ends");
    let tv = |f: &[u8]| u32::from_be_bytes([f[50], f[51], f[52], f[53]]);
    assert!(
        got.iter()
            .filter(|g| g.1.len() == 60)
            .all(|g| tv(&g.1) == 0)
    );
    assert!(
        got.iter()
            .filter(|g| g.1.len() == 64)
            .all(|g| tv(&g.1) >= 1000)
    );
    assert_eq!(t.parts()[0].frames, 50);
}

#[test]
fn one_size_counts_sent_times_size() {
    let a = cfg("eth0@0", &["count 2"]);
    let b = cfg("eth0@1", &["count 2"]);
    let mut t = timeline(&[a, b]);
    drain(&mut t, 4);
    assert_eq!(
        (t.imix_bytes(), t.size_range(), t.pkt_size()),
        (None, None, 60)
    );
}

#[test]
fn devices_that_cannot_share_a_timeline_are_refused() {
    let f = |c: &DevConfig| (for_config(c, &info(), 0, 0).unwrap(), timing(c));
    let paced = cfg("eth0@0", &["ratep 1000"]);
    let unpaced = cfg("eth0@1", &[]);
    let never = cfg("eth0@2", &["delay 2147483647"]);
    assert!(matches!(
        DeviceTimeline::new(vec![f(&paced), f(&unpaced)]).err(),
        Some(TimelineError::Mixed {
            paced: 0,
            unpaced: 1
        })
    ));
    assert!(matches!(
        DeviceTimeline::new(vec![f(&paced), f(&never)]).err(),
        Some(TimelineError::NeverSends(1))
    ));
    assert!(matches!(
        DeviceTimeline::new(Vec::new()).err(),
        Some(TimelineError::Empty)
    ));
}
