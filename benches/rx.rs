//! Benchmark of the receiver's userspace work per frame: classify + sequence tracking +
//! latency histogram, on upktgen's own 60-byte frames (what runs per frame after the kernel
//! has put it in the ring). `cargo bench --bench rx` prints ns per frame and the frames per
//! second one core could take at that cost (the ceiling of the userspace part).

use std::hint::black_box;
use std::net::Ipv4Addr;
use std::time::Instant;
use upktgen::rx::frame::{Class, FrameCounters, classify};
use upktgen::rx::sink::{FlowKeyMode, Sink};
use upktgen::wire::{FrameSpec, MacAddr, PacketFields, Udp4Template};

fn main() {
    let t = Udp4Template::new(&FrameSpec {
        dst_mac: MacAddr([2, 0, 0, 0x99, 0, 2]),
        src_mac: MacAddr([2, 0, 0, 0x99, 0, 1]),
        src_ip: Ipv4Addr::new(10, 99, 0, 1),
        dst_ip: Ipv4Addr::new(10, 99, 0, 2),
        tos: 0,
        pkt_size: 60,
        udp_csum: false,
    })
    .unwrap();
    // 1024 prepared frames (so the loop is not one cached frame), seq patched per use.
    let mut frames: Vec<Vec<u8>> = (0..1024u32)
        .map(|i| {
            let mut f = t.frame().to_vec();
            t.write(
                &mut f,
                &PacketFields {
                    ip_id: i as u16,
                    udp_src: 9,
                    udp_dst: 9,
                    seq: i + 1,
                    tv_sec: 1_700_000_000,
                    tv_usec: 0,
                },
            );
            f
        })
        .collect();
    let n: u32 = 20_000_000;
    let mut counters = FrameCounters::default();
    let mut sink = Sink::new(FlowKeyMode::Addr, Some(1));
    let t0 = Instant::now();
    for seq in 1..=n {
        let f = &mut frames[(seq % 1024) as usize];
        f[46..50].copy_from_slice(&seq.to_be_bytes());
        let class = classify(black_box(f));
        if let Class::Pktgen(p) = &class {
            sink.record(p, Some(1_700_000_000_000_000_000 + 50_000));
        }
        counters.count(&class, f.len());
    }
    let dt = t0.elapsed();
    let ns = dt.as_nanos() as f64 / f64::from(n);
    let totals = sink.totals();
    assert_eq!(totals.received, u64::from(n));
    assert_eq!(totals.lost, 0);
    println!(
        "rx userspace path: {n} frames in {:.3} s: {ns:.1} ns/frame = {:.1} Mpps on one core",
        dt.as_secs_f64(),
        1e3 / ns
    );
}
