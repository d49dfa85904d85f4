use super::*;
use crate::lab::{TX_MAC, dut::DUT_IN_MAC};

/// An IPv4/UDP frame from the lab's sender to the receiver behind the DUT, TTL `ttl`,
/// `payload` bytes of UDP payload, the IPv4 checksum correct.
fn v4(ttl: u8, payload: usize) -> Vec<u8> {
    let mut f = vec![0u8; 14 + 20 + 8 + payload];
    f[0..6].copy_from_slice(&DUT_IN_MAC.0);
    f[6..12].copy_from_slice(&TX_MAC.0);
    f[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    let ip = &mut f[14..34];
    ip[0] = 0x45;
    ip[2..4].copy_from_slice(&((20 + 8 + payload) as u16).to_be_bytes());
    ip[4..6].copy_from_slice(&0x1234u16.to_be_bytes());
    ip[8] = ttl;
    ip[9] = 17;
    ip[12..16].copy_from_slice(&[10, 99, 0, 1]);
    ip[16..20].copy_from_slice(&[10, 99, 1, 2]);
    let c = crate::wire::checksum::finish(crate::wire::checksum::sum(ip));
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    f
}

fn v6(hops: u8) -> Vec<u8> {
    let mut f = vec![0u8; 14 + 40 + 8];
    f[0..6].copy_from_slice(&DUT_IN_MAC.0);
    f[6..12].copy_from_slice(&TX_MAC.0);
    f[12..14].copy_from_slice(&0x86ddu16.to_be_bytes());
    f[14] = 0x60;
    f[18..20].copy_from_slice(&8u16.to_be_bytes());
    f[20] = 17;
    f[21] = hops;
    f
}

#[test]
fn ipv4_is_routed_as_the_kernel_forwards_it() {
    let mut f = v4(32, 18);
    let before = f.clone();
    route(&mut f, DUT_OUT_MAC, RX_MAC).unwrap();
    assert_eq!(&f[0..6], &RX_MAC.0, "to the next hop's MAC");
    assert_eq!(&f[6..12], &DUT_OUT_MAC.0, "from dut-out's");
    assert_eq!(f[14 + 8], 31, "TTL less one");
    // The header's checksum is right again: the one's-complement sum of the header is 0xffff.
    assert_eq!(crate::wire::checksum::sum(&f[14..34]), 0xffff);
    // By RFC 1624 the checksum of a TTL one less rises by 0x0100 (the TTL is the high byte
    // of its word), end-around carry.
    let c0 = u16::from_be_bytes([before[24], before[25]]);
    let c1 = u16::from_be_bytes([f[24], f[25]]);
    let (s, carry) = c0.overflowing_add(0x0100);
    assert_eq!(c1, s + u16::from(carry));
    // Nothing else changed.
    assert_eq!(f[12..22], before[12..22]);
    assert_eq!(f[23..24], before[23..24]);
    assert_eq!(f[26..], before[26..]);
}

#[test]
fn ipv6_loses_a_hop() {
    let mut f = v6(64);
    let before = f.clone();
    route(&mut f, DUT_OUT_MAC, RX_MAC).unwrap();
    assert_eq!(f[14 + 7], 63);
    assert_eq!((&f[0..6], &f[6..12]), (&RX_MAC.0[..], &DUT_OUT_MAC.0[..]));
    assert_eq!(f[12..21], before[12..21]);
    assert_eq!(f[22..], before[22..]);
}

#[test]
fn what_the_kernel_would_not_forward_is_not_routed() {
    for (mut f, why) in [
        (v4(1, 18), NotRouted::TtlExpired),
        (v4(0, 18), NotRouted::TtlExpired),
        (v6(1), NotRouted::TtlExpired),
        (v4(32, 18)[..30].to_vec(), NotRouted::Malformed),
        (v4(32, 18)[..10].to_vec(), NotRouted::Malformed),
        (v6(64)[..50].to_vec(), NotRouted::Malformed),
    ] {
        assert_eq!(route(&mut f, DUT_OUT_MAC, RX_MAC), Err(why), "{f:02x?}");
    }
    let mut bad_sum = v4(32, 18);
    bad_sum[24] ^= 1;
    assert_eq!(
        route(&mut bad_sum, DUT_OUT_MAC, RX_MAC),
        Err(NotRouted::Malformed)
    );
    let mut arp = v4(32, 18);
    arp[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
    let kept = arp.clone();
    assert_eq!(route(&mut arp, DUT_OUT_MAC, RX_MAC), Err(NotRouted::NotIp));
    assert_eq!(arp, kept, "a frame not routed is left as it was");
}

/// Releases what is due at `now`, returning the first byte of each frame sent (the tests
/// number their frames there).
fn due(q: &mut Queue, now: u64) -> Vec<u8> {
    let mut out = Vec::new();
    q.release(now, |f| {
        out.push(f[0]);
        Sent::Ok
    });
    out
}

#[test]
fn each_frame_is_held_exactly_the_delay_and_released_in_order() {
    let mut q = Queue::new(Duration::from_nanos(10_000));
    q.push(&[1, 0], 1_000);
    q.push(&[2, 0], 1_500);
    q.push(&[3, 0], 4_000);
    assert_eq!(q.next_due(), Some(11_000));
    assert_eq!(due(&mut q, 10_999), Vec::<u8>::new());
    assert_eq!(due(&mut q, 11_000), [1]);
    assert_eq!(q.next_due(), Some(11_500));
    assert_eq!(due(&mut q, 13_999), [2]);
    assert_eq!(due(&mut q, 20_000), [3]);
    assert!(q.is_empty() && q.next_due().is_none());
    assert_eq!(q.counts.forwarded, 3);
    assert_eq!(q.counts.max_queued, 3);
}

#[test]
fn a_frame_not_yet_due_holds_the_ones_behind_it() {
    // Arrival order is kept even if a later frame's timestamp is earlier (a clock stepped
    // back): the line never reorders.
    let mut q = Queue::new(Duration::from_nanos(100));
    q.push(&[1], 500);
    q.push(&[2], 100);
    assert_eq!(due(&mut q, 250), Vec::<u8>::new());
    assert_eq!(due(&mut q, 600), [1, 2]);
}

#[test]
fn no_delay_releases_at_once() {
    let mut q = Queue::new(Duration::ZERO);
    q.push(&[7], 42);
    assert_eq!(due(&mut q, 42), [7]);
}

#[test]
fn the_queue_is_bounded_by_frames_and_by_bytes() {
    let mut q = Queue::bounded(Duration::from_secs(1), 3, 1 << 20);
    for i in 0..5u8 {
        q.push(&[i; 60], 0);
    }
    assert_eq!((q.len(), q.counts.queue_full), (3, 2));
    assert_eq!(due(&mut q, 1_000_000_000), [0, 1, 2]);
    // Room again once released.
    assert!(q.push(&[9; 60], 0));

    let mut q = Queue::bounded(Duration::from_secs(1), 1000, 3000);
    for _ in 0..3 {
        assert!(q.push(&[0; 1000], 0));
    }
    assert!(!q.push(&[0; 1], 0), "3000 bytes held: not one more");
    assert_eq!(q.counts.queue_full, 1);
    q.release(u64::MAX, |_| Sent::Ok);
    assert!(q.push(&[0; 1000], 0));
}

#[test]
fn the_default_bound_is_64ki_frames() {
    let mut q = Queue::new(Duration::from_secs(1));
    for _ in 0..MAX_QUEUED + 10 {
        q.push(&[0; 64], 0);
    }
    assert_eq!((q.len(), q.counts.queue_full), (MAX_QUEUED, 10));
}

#[test]
fn sends_are_counted_by_how_they_went() {
    let mut q = Queue::new(Duration::ZERO);
    for i in 0..3u8 {
        q.push(&[i], 0);
    }
    let mut verdicts = [Sent::Ok, Sent::EgressDropped, Sent::Failed].into_iter();
    assert_eq!(q.release(0, |_| verdicts.next().unwrap()), 3);
    let c = q.counts;
    assert_eq!((c.forwarded, c.egress_dropped, c.send_failed), (1, 1, 1));
}

#[test]
fn take_routes_holds_and_counts() {
    let mut q = Queue::new(Duration::from_nanos(5));
    let mut f = v4(32, 18);
    q.take(&mut f, true, 10);
    let mut other = v4(32, 18);
    q.take(&mut other, false, 11);
    let mut expired = v4(1, 18);
    q.take(&mut expired, true, 12);
    assert_eq!((q.counts.received, q.counts.not_routed), (3, 2));
    let mut sent = Vec::new();
    q.release(15, |b| {
        sent.push(b.to_vec());
        Sent::Ok
    });
    assert_eq!(sent.len(), 1);
    assert_eq!(&sent[0][0..6], &RX_MAC.0);
    assert_eq!(sent[0][14 + 8], 31);
}

#[test]
fn counts_between_two_readings() {
    let a = LineCounts {
        received: 10,
        forwarded: 8,
        max_queued: 4,
        ..LineCounts::default()
    };
    let b = LineCounts {
        received: 25,
        forwarded: 20,
        queue_full: 2,
        max_queued: 6,
        ..LineCounts::default()
    };
    let d = a.delta(&b);
    assert_eq!(
        (d.received, d.forwarded, d.queue_full, d.max_queued),
        (15, 12, 2, 6)
    );
}
