//! Benchmark of the stream engine's pure part: frames per second of the timeline and the
//! frame builder together (no sending), for 1 stream against 1,024 on one timeline.
//!
//! `cargo bench --bench streams` prints frames/s of each case and their ratio, and of the
//! timeline alone (issue 23 asks
//! that 1,024 streams send at least 95 % of the single stream's rate; this measures only the
//! CPU part of that). `-- --quick` builds fewer frames. The figures depend on the machine and
//! its load: run it on a quiet one.
//!
//! Each stream is IPv4/UDP, 64 bytes, with the source address and both ports incrementing
//! (so every frame writes three varying fields, two checksums and the signature). The
//! timeline is asked for frames "now = the end of time", so it hands them out as fast as it
//! can in deadline order: the cost of scheduling and building, without waiting.

use std::hint::black_box;
use std::time::Instant;
use upktgen::stream::multi::MultiStream;
use upktgen::stream::spec::{
    EthernetSpec, Fill, Header, Ipv4Spec, Length, Pattern, Rate, Size, StreamSpec, UdpSpec,
};
use upktgen::stream::timeline::{Due, Timeline};
use upktgen::stream::{FrameSource, Stamp};

const BATCH: usize = 64;

fn stream(i: usize, pps: f64) -> StreamSpec {
    let inc = |start: u128, count: u64| Pattern::Increment {
        start,
        step: 1,
        count,
    };
    StreamSpec {
        name: format!("s{i}"),
        headers: vec![
            Header::Ethernet(EthernetSpec::default()),
            Header::Ipv4(Ipv4Spec {
                src: inc(0x0a00_0001 + (i as u128) * 256, 200),
                ..Ipv4Spec::default()
            }),
            Header::Udp(UdpSpec {
                src_port: inc(1024, 1000),
                dst_port: inc(9, 7),
                checksum: true,
            }),
        ],
        size: Size::Fixed(64),
        rate: Rate::Pps(pps),
        length: Length::Continuous,
        start_delay_ns: 0,
        fill: Fill::Zeros,
    }
}

/// Frames per second of wall time for `n` streams sharing 10 Mpps, over `frames` frames,
/// driven as the send loop drives a config's streams: a batch's due times looked at first,
/// then each frame taken, written into its buffer and counted.
fn run(n: usize, frames: u64) -> f64 {
    let specs: Vec<StreamSpec> = (0..n).map(|i| stream(i, 1e7 / n as f64)).collect();
    let mut m = MultiStream::new(&specs, None).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(1);
    });
    let mut bufs = vec![[0u8; 64]; BATCH];
    let mut done = 0u64;
    let t0 = Instant::now();
    while done < frames {
        for k in done..done + BATCH as u64 {
            black_box(m.due_ns(k));
        }
        for buf in bufs.iter_mut() {
            let len = m.advance();
            m.write(&mut buf[..len], Stamp::at(done));
            m.sent();
        }
        black_box(&bufs);
        done += BATCH as u64;
    }
    let wall = t0.elapsed().as_secs_f64();
    let sent: u64 = (0..n).map(|i| m.tally().get(i).0).sum();
    assert_eq!(sent, done);
    done as f64 / wall
}

/// Frames per second of the timeline alone (no frame written).
fn timeline_only(n: usize, frames: u64) -> f64 {
    let specs: Vec<StreamSpec> = (0..n).map(|i| stream(i, 1e7 / n as f64)).collect();
    let schedules = specs
        .iter()
        .map(|s| s.schedule(None))
        .collect::<Result<Vec<_>, _>>()
        .unwrap_or_else(|e| {
            eprintln!("{e}");
            std::process::exit(1);
        });
    let mut tl = Timeline::new(schedules, 0);
    let mut batch = [Due::default(); BATCH];
    let mut done = 0u64;
    let t0 = Instant::now();
    while done < frames {
        let got = tl.fill_batch(u64::MAX, &mut batch);
        black_box(&batch);
        done += got as u64;
    }
    done as f64 / t0.elapsed().as_secs_f64()
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let frames = if quick { 2_000_000 } else { 20_000_000 };
    println!("upktgen streams benchmark: timeline + frame build, {frames} frames of 64 bytes");
    let one = run(1, frames);
    println!("   1 stream : {:>7.2} M frames/s", one / 1e6);
    let many = run(1024, frames);
    println!("1024 streams: {:>7.2} M frames/s", many / 1e6);
    println!("ratio 1024/1: {:.3}", many / one);
    let one = timeline_only(1, frames);
    let many = timeline_only(1024, frames);
    println!(
        "timeline alone: 1 stream {:.2} M/s, 1024 streams {:.2} M/s, ratio {:.3}",
        one / 1e6,
        many / 1e6,
        many / one
    );
}
