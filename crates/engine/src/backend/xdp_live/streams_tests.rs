//! A config's streams through the streams program (on the eBPF interpreter of the
//! program's own tests): the sender fills the slots as the send loop does (the timeline's
//! next frames, each written whole by its stream), the program stamps each with its own
//! clock and copies it into a recycled page, and every frame that leaves equals what the
//! stream's own writer makes of the same stream, sequence, length and send time.

use crate::bpf::prog::xdp_live::slots::{
    SlotSpec, Stamp as ProgStamp, layout, slots_program, state,
};
use crate::bpf::prog::xdp_live::vm::{PATCH_FD, REDIRECT_TARGET, SLOTS_FD, STATE_FD, Vm, World};
use crate::bpf::prog::xdp_live::{Verdict, XDP_REDIRECT};
use crate::stream::build::StreamFrames;
use crate::stream::multi::MultiStream;
use crate::stream::spec::{
    EthernetSpec, Header, Ipv4Spec, Ipv6Spec, Length, Pattern, Rate, Size, StreamSpec, TcpSpec,
    UdpSpec, VlanSpec,
};
use crate::stream::{FrameSource, Stamp};
use crate::wire::signature::Signature;

fn stream(name: &str, headers: Vec<Header>, size: Size, pps: f64) -> StreamSpec {
    StreamSpec {
        name: name.into(),
        headers,
        size,
        rate: Rate::Pps(pps),
        length: Length::Continuous,
        start_delay_ns: 0,
        fill: Default::default(),
    }
}

/// Four streams unlike each other: UDP/IPv4 without a checksum of 60 bytes with walked
/// ports and addresses, TCP/IPv4 of weighted sizes with random ports, VLAN-tagged UDP/IPv6
/// of 996 bytes, and UDP/IPv4 of every length from 61 to 80 (the send time at odd and at
/// even offsets from the checksum's words).
fn three() -> Vec<StreamSpec> {
    let udp = stream(
        "udp64",
        vec![
            Header::Ethernet(EthernetSpec::default()),
            Header::Ipv4(Ipv4Spec {
                src: Pattern::Increment {
                    start: 0x0a63_0001,
                    step: 1,
                    count: 5,
                },
                ..Default::default()
            }),
            Header::Udp(UdpSpec {
                src_port: Pattern::List(vec![1000, 2000, 3000]),
                dst_port: Pattern::Decrement {
                    start: 9000,
                    step: 3,
                    count: 7,
                },
                checksum: false,
            }),
        ],
        Size::Fixed(60),
        10_000.0,
    );
    let tcp = stream(
        "tcp_imix",
        vec![
            Header::Ethernet(EthernetSpec::default()),
            Header::Ipv4(Ipv4Spec::default()),
            Header::Tcp(TcpSpec {
                src_port: Pattern::Random {
                    min: 1024,
                    max: 65535,
                    seed: 7,
                },
                ..Default::default()
            }),
        ],
        Size::Weighted(vec![(70, 7), (566, 4), (1514, 1)]),
        20_000.0,
    );
    let v6 = stream(
        "v6_vlan",
        vec![
            Header::Ethernet(EthernetSpec::default()),
            Header::Vlan(VlanSpec {
                vid: Pattern::Value(100),
                pcp: Pattern::Value(3),
                ..Default::default()
            }),
            Header::Ipv6(Ipv6Spec::default()),
            Header::Udp(UdpSpec {
                checksum: true,
                ..Default::default()
            }),
        ],
        Size::Fixed(996),
        30_000.0,
    );
    let odd = stream(
        "odd",
        vec![
            Header::Ethernet(EthernetSpec::default()),
            Header::Ipv4(Ipv4Spec::default()),
            Header::Udp(UdpSpec {
                checksum: true,
                ..Default::default()
            }),
        ],
        Size::Increment {
            start: 61,
            end: 80,
            step: 1,
        },
        10_000.0,
    );
    vec![udp, tcp, v6, odd]
}

/// The clock's offset the tests store (CLOCK_REALTIME - CLOCK_MONOTONIC).
const RT_OFFSET: u64 = 1_700_000_000_000_000_000;
/// Frames between the program's clock readings.
const EVERY: u32 = 8;

/// What one run left on the wire: its stream, sequence and frame, and the send time the
/// program's clock gave it.
struct Sent {
    stream: u16,
    seq: u32,
    frame: Vec<u8>,
    clock: u64,
}

/// Runs the send loop's part and the program's for `batches` syscalls of up to `slots`
/// frames each, on one recycled page.
fn send(specs: &[StreamSpec], ids: &[u16], batches: usize) -> (Vec<Sent>, MultiStream) {
    let mut m = MultiStream::signed(specs, ids, None).unwrap();
    let (min_len, max_len) = (m.min_len(), m.max_len());
    // Every signature id up to the largest has an entry, as the backend makes it.
    let patch = super::patch_entries(&m.signature_checksums());
    let spec = SlotSpec {
        ifindex: REDIRECT_TARGET,
        verdict: Verdict::Redirect,
        slots: 64,
        min_len,
        max_len,
        stamp: Some(ProgStamp {
            patch_fd: PATCH_FD,
            streams: (patch.len() / crate::bpf::prog::xdp_live::slots::patch::ENTRY) as u32,
            every: EVERY,
        }),
    };
    let prog = slots_program(&spec, STATE_FD, SLOTS_FD).unwrap();
    let stride = layout::value_size(max_len).next_multiple_of(8);
    let mut world = World {
        slots: vec![0; stride * spec.slots as usize],
        slot_stride: stride,
        patch,
        ..World::default()
    };
    let mut st = vec![0u8; state::SIZE];
    let mut page = vec![0x5au8; max_len];
    let mut out = Vec::new();
    let mut k = 0u64;
    for b in 0..batches {
        // As many as are due, up to the slots (a varying count, as pacing makes it).
        let n = [64, 1, 17, 64, 40][b % 5];
        let stamp = Stamp::at(1_000_000 + b as u64);
        for i in 0..n {
            m.due_ns(k).unwrap();
            let len = m.advance();
            let v = &mut world.slots[i * stride..(i + 1) * stride];
            m.write(layout::frame_mut(v, len), stamp);
            m.sent();
            k += 1;
        }
        for (at, v) in [
            (state::NEXT, 0),
            (state::RT_OFFSET, RT_OFFSET),
            (state::CLOCK_AT, 0),
        ] {
            st[at as usize..][..8].copy_from_slice(&v.to_ne_bytes());
        }
        let mut clock = 0;
        for i in 0..n {
            // The kernel resets the page to the prepared frame's length; it keeps the
            // bytes a previous run (another stream's frame) left in it.
            world.len = None;
            // The clock moves on with every run; the program reads it at the first frame
            // of the syscall and every EVERY frames.
            world.mono_ns = 5_000_000 + 1_000 * k + i as u64 * 7;
            if i % EVERY as usize == 0 {
                clock = RT_OFFSET + world.mono_ns;
            }
            let r = Vm::on(&mut page, &mut st, &mut world).run(&prog);
            assert_eq!(r, XDP_REDIRECT as u64);
            let frame = page[..world.len.unwrap()].to_vec();
            let sig = Signature::parse(&frame).expect("a signature");
            out.push(Sent {
                stream: sig.stream,
                seq: sig.seq,
                frame,
                clock,
            });
        }
    }
    let frames = u64::from_ne_bytes(st[..8].try_into().unwrap());
    assert_eq!(frames, k, "the program counted every run");
    (out, m)
}

#[test]
fn every_frame_is_its_streams_own_for_its_seq_and_length() {
    every_frame_is_its_own(&[0, 1, 2, 3]);
}

/// Streams signed with ids of their own (a port's flows among a config's): the patch map
/// holds every id up to the largest.
#[test]
fn streams_signed_with_sparse_ids_are_stamped_by_their_ids() {
    every_frame_is_its_own(&[7, 2, 40, 5]);
}

fn every_frame_is_its_own(ids: &[u16]) {
    let specs = three();
    let (sent, m) = send(&specs, ids, 25);
    let writers: Vec<StreamFrames> = specs
        .iter()
        .zip(ids)
        .map(|(s, &id)| StreamFrames::new(id, s).unwrap())
        .collect();
    let mut next = [0u32; 4];
    for (i, s) in sent.iter().enumerate() {
        let id = ids
            .iter()
            .position(|&x| x == s.stream)
            .expect("a stream's id");
        assert_eq!(
            s.seq, next[id],
            "frame {i}: stream {id}'s sequence in order"
        );
        next[id] += 1;
        let sizes = specs[id].size.seq();
        let len = sizes.at(u64::from(s.seq)) as usize;
        assert_eq!(
            s.frame.len(),
            len,
            "frame {i}: its stream's size for its seq"
        );
        let tx_ns = Signature::parse(&s.frame).unwrap().tx_ns;
        assert_eq!(
            tx_ns, s.clock,
            "frame {i}: the program's clock at its batch"
        );
        // The stream's own writer, given that send time: the same bytes, every checksum.
        let mut want = vec![0u8; len];
        writers[id].write(u64::from(s.seq), len, tx_ns, &mut want);
        assert_eq!(s.frame, want, "frame {i} (stream {id}, seq {})", s.seq);
    }
    // The timeline's share: 1 : 2 : 3 : 1 (10k, 20k, 30k, 10k pps), each counted in its
    // stream.
    let t = m.tally();
    let total: u32 = next.iter().sum();
    assert_eq!(total as usize, sent.len());
    for (id, &n) in next.iter().enumerate() {
        assert_eq!(t.get(id).0, u64::from(n), "stream {id}'s tally");
        let want = total as f64 * [1.0, 2.0, 3.0, 1.0][id] / 7.0;
        assert!(
            (f64::from(n) - want).abs() <= 2.0,
            "stream {id}: {n} of {total}"
        );
    }
    // The sizes varied within a stream and across streams, odd lengths among them.
    let lens: std::collections::BTreeSet<usize> = sent.iter().map(|s| s.frame.len()).collect();
    for l in [60, 61, 70, 79, 80, 566, 996, 1514] {
        assert!(lens.contains(&l), "{l} in {lens:?}");
    }
}
