//! The programs run on a small eBPF interpreter (the subset they use), against frames an
//! independent parser reads, and against the userspace frame writer.

use super::vm::*;
use super::*;
use crate::wire::udp4::{OFF_IP_CSUM, OFF_IP_ID, OFF_SEQ, OFF_UDP_CSUM, OFF_UDP_SPORT};
use crate::wire::{FrameSpec, PacketFields, PktgenHdr, Udp4Template};
use etherparse::{NetSlice, SlicedPacket, TransportSlice};
use std::net::Ipv4Addr;

fn template(size: usize, csum: bool) -> Udp4Template {
    Udp4Template::new(&FrameSpec {
        dst_mac: "02:00:00:99:00:02".parse().unwrap(),
        src_mac: "02:00:00:99:00:01".parse().unwrap(),
        src_ip: Ipv4Addr::new(10, 99, 0, 1),
        dst_ip: Ipv4Addr::new(10, 99, 0, 2),
        tos: 0,
        pkt_size: size,
        udp_csum: csum,
    })
    .unwrap()
}

/// The frame the backend hands the kernel: the template with the first packet's fields.
fn prepared(t: &Udp4Template, sport: PortWalk, dport: PortWalk) -> Vec<u8> {
    let mut f = t.frame().to_vec();
    t.write(
        &mut f,
        &PacketFields {
            ip_id: 0,
            udp_src: sport.min,
            udp_dst: dport.min,
            seq: 1,
            tv_sec: 0,
            tv_usec: 0,
        },
    );
    f
}

fn spec(frame: &[u8], timestamps: bool, csum: bool, sport: PortWalk, dport: PortWalk) -> Spec {
    Spec::udp4(REDIRECT_TARGET, frame, timestamps, 4, csum, sport, dport)
}

/// Runs the program `n` times on recycled pages (a page keeps what the previous run
/// wrote, as the kernel's page pool does) and compares every frame with what the
/// userspace writer makes of the same fields.
fn check(size: usize, timestamps: bool, csum: bool, sport: PortWalk, dport: PortWalk, start: u64) {
    check_pages(size, timestamps, csum, sport, dport, start, false);
}

/// What a forwarding path does to a page in place: a router rewrites the Ethernet
/// addresses and decrements the TTL (fixing the checksum), a NAT rewrites the source
/// address and port; and a stray write hits pktgen's magic.
fn mangle(page: &mut [u8]) {
    let (dst, src) = page.split_at_mut(6);
    dst.swap_with_slice(&mut src[..6]);
    page[22] -= 1;
    page[24] ^= 0x55;
    page[26..30].copy_from_slice(&[192, 0, 2, 77]);
    page[34..36].copy_from_slice(&40000u16.to_be_bytes());
    page[16..18].copy_from_slice(&[0xff, 0xff]);
    page[42] ^= 0xff;
}

#[allow(clippy::too_many_arguments)]
fn check_pages(
    size: usize,
    timestamps: bool,
    csum: bool,
    sport: PortWalk,
    dport: PortWalk,
    start: u64,
    mangled: bool,
) {
    let t = template(size, csum);
    let frame = prepared(&t, sport, dport);
    let s = spec(&frame, timestamps, csum, sport, dport);
    let prog = xdp_program(&s, STATE_FD).unwrap();
    let mut st = State {
        frames: start,
        rt_offset: 1_700_000_000_000_000_000 - 5_000_000_000,
        ..State::default()
    }
    .to_bytes();
    let mut world = World {
        mono_ns: 5_000_000_000 + 123_456_789,
        ..World::default()
    };
    let mut pages = vec![frame.clone(); 3];
    let n = 40u64;
    for k in 0..n {
        if k == 10 {
            // A later run: userspace asks for a fresh clock reading at its first frame.
            world.mono_ns += 2_000_000_000;
            let mut v = State::from_bytes(&st);
            v.clock_at = 0;
            st = v.to_bytes();
        }
        let page = &mut pages[(k % 3) as usize];
        if mangled {
            mangle(page);
        }
        let rc = Vm::on(page, &mut st, &mut world).run(&prog);
        assert_eq!(rc, XDP_REDIRECT as u64);
        let seq = start + k;
        let (tv_sec, tv_usec) = if timestamps {
            let rt: u64 =
                1_700_000_000_000_000_000 + 123_456_789 + if k >= 10 { 2_000_000_000 } else { 0 };
            (
                (rt / 1_000_000_000) as u32,
                ((rt % 1_000_000_000) / 1000) as u32,
            )
        } else {
            (0, 0)
        };
        let want_fields = PacketFields {
            ip_id: seq as u16,
            udp_src: sport.min + (seq % u64::from(sport.span)) as u16,
            udp_dst: dport.min + (seq % u64::from(dport.span)) as u16,
            seq: (seq + 1) as u32,
            tv_sec,
            tv_usec,
        };
        let mut want = frame.clone();
        t.write(&mut want, &want_fields);
        assert_eq!(
            page, &want,
            "frame {k} (size {size} ts {timestamps} csum {csum})"
        );
        parse_ok(page, csum, &want_fields);
    }
    assert_eq!(State::from_bytes(&st).frames, start + n);
    assert!(world.redirects.iter().all(|&i| i == REDIRECT_TARGET));
    assert_eq!(world.redirects.len() as u64, n);
    if timestamps {
        // Frames 0, 4, 8 | 10, 14, ... 38: once per clock_every frames and at each run.
        assert_eq!(world.clock_reads, 3 + 8);
    } else {
        assert_eq!(world.clock_reads, 0);
    }
}

fn parse_ok(b: &[u8], csum: bool, p: &PacketFields) {
    let s = SlicedPacket::from_ethernet(b).unwrap();
    let Some(NetSlice::Ipv4(ip)) = &s.net else {
        panic!("not ipv4")
    };
    let hdr = ip.header().to_header();
    assert_eq!(hdr.header_checksum, hdr.calc_header_checksum());
    assert_eq!(hdr.identification, p.ip_id);
    let Some(TransportSlice::Udp(u)) = &s.transport else {
        panic!("not udp")
    };
    assert_eq!(
        (u.source_port(), u.destination_port()),
        (p.udp_src, p.udp_dst)
    );
    if csum {
        let want = u.to_header().calc_checksum_ipv4(&hdr, u.payload()).unwrap();
        assert_eq!(u.checksum(), want);
    } else {
        assert_eq!(u.checksum(), 0);
    }
    let h = PktgenHdr::parse(u.payload()).unwrap();
    assert_eq!((h.seq, h.tv_sec, h.tv_usec), (p.seq, p.tv_sec, p.tv_usec));
}

#[test]
fn full_program_writes_what_the_userspace_writer_writes() {
    let fixed = PortWalk::new(9, 9);
    for size in [60, 61, 128, 1514] {
        for timestamps in [false, true] {
            for csum in [false, true] {
                check(size, timestamps, csum, fixed, fixed, 0);
            }
        }
    }
}

/// Frames leave as prepared whatever the path did to their recycled pages (a DUT that
/// routes or NATs them in place). Fails without the write-back (`restore` empty).
#[test]
fn pages_changed_in_place_by_the_path_are_written_back() {
    for csum in [false, true] {
        for (sp, dp) in [
            (PortWalk::new(9, 9), PortWalk::new(9, 9)),
            (PortWalk::new(1000, 1003), PortWalk::new(9, 9)),
        ] {
            check_pages(60, true, csum, sp, dp, 0, true);
            check_pages(200, false, csum, sp, dp, 0, true);
        }
    }
}

#[test]
fn the_write_back_covers_every_constant_byte_and_nothing_written() {
    let t = template(60, true);
    let frame = prepared(&t, PortWalk::new(1000, 1003), PortWalk::new(9, 9));
    let r = spec(
        &frame,
        true,
        true,
        PortWalk::new(1000, 1003),
        PortWalk::new(9, 9),
    )
    .restore;
    let mut covered = [0u8; OFF_SEQ];
    for &(off, n, _) in &r {
        for b in &mut covered[off as usize..off as usize + n as usize] {
            *b += 1;
        }
    }
    for (i, c) in covered.iter().enumerate() {
        let written = [OFF_IP_ID, OFF_IP_CSUM, OFF_UDP_SPORT, OFF_UDP_CSUM]
            .iter()
            .any(|&o| (o..o + 2).contains(&i));
        assert_eq!(*c, u8::from(!written), "byte {i}");
    }
    // 4-byte stores where the fields leave room.
    assert!(r.len() <= 13, "{r:?}");
}

#[test]
fn port_ranges_are_walked_half_open() {
    for csum in [false, true] {
        check(
            60,
            true,
            csum,
            PortWalk::new(1000, 1003),
            PortWalk::new(9, 9),
            0,
        );
        check(
            60,
            true,
            csum,
            PortWalk::new(65530, 65535),
            PortWalk::new(1, 8),
            0,
        );
    }
}

#[test]
fn sequence_and_ip_id_wrap() {
    // The IPv4 id wraps at 2^16 and the sequence number at 2^32, as in the stream.
    check(
        60,
        true,
        true,
        PortWalk::new(9, 9),
        PortWalk::new(9, 9),
        65_530,
    );
    check(
        60,
        false,
        true,
        PortWalk::new(9, 9),
        PortWalk::new(9, 9),
        u64::from(u32::MAX) - 5,
    );
}

#[test]
fn plain_program_only_counts_and_redirects() {
    let t = template(60, true);
    let frame = prepared(&t, PortWalk::new(9, 9), PortWalk::new(9, 9));
    let mut s = spec(&frame, true, true, PortWalk::new(9, 9), PortWalk::new(9, 9));
    s.plain = true;
    let prog = xdp_program(&s, STATE_FD).unwrap();
    assert!(prog.len() <= 10, "{} instructions", prog.len());
    let mut st = State::default().to_bytes();
    let mut world = World::default();
    let mut page = frame.clone();
    for _ in 0..5 {
        let rc = Vm::on(&mut page, &mut st, &mut world).run(&prog);
        assert_eq!(rc, XDP_REDIRECT as u64);
    }
    assert_eq!(page, frame, "plain mode writes nothing");
    assert_eq!(State::from_bytes(&st).frames, 5);
    assert_eq!(world.redirects, vec![REDIRECT_TARGET; 5]);
}

/// netif_receive: the same frames, written the same way, then passed to the stack: no
/// redirect is made.
#[test]
fn pass_verdict_writes_the_same_frame_and_redirects_nothing() {
    let (sport, dport) = (PortWalk::new(1000, 1004), PortWalk::new(9, 9));
    for plain in [false, true] {
        let t = template(60, true);
        let frame = prepared(&t, sport, dport);
        // Plain mode walks no port.
        let walked = if plain { PortWalk::new(9, 9) } else { sport };
        let mut redirect = spec(&frame, true, true, walked, dport);
        redirect.plain = plain;
        let pass = Spec {
            verdict: Verdict::Pass,
            ..redirect.clone()
        };
        let mut frames = Vec::new();
        for (s, want_rc) in [(&redirect, XDP_REDIRECT), (&pass, XDP_PASS)] {
            let prog = xdp_program(s, STATE_FD).unwrap();
            let mut st = State::default().to_bytes();
            let mut world = World::default();
            let mut out = Vec::new();
            for _ in 0..6 {
                let mut page = frame.clone();
                let rc = Vm::on(&mut page, &mut st, &mut world).run(&prog);
                assert_eq!(rc, want_rc as u64, "plain {plain}");
                out.push(page);
            }
            let redirects = if want_rc == XDP_PASS { 0 } else { 6 };
            assert_eq!(world.redirects.len(), redirects, "plain {plain}");
            assert_eq!(State::from_bytes(&st).frames, 6);
            frames.push(out);
        }
        assert_eq!(frames[0], frames[1], "plain {plain}");
    }
}

#[test]
fn tracepoint_program_counts_only_the_sending_thread() {
    let prog = devmap_xmit_program(STATE_FD).unwrap();
    let mut m = Driver {
        tid: 4242,
        ..Driver::default()
    }
    .to_bytes();
    let mut world = World {
        tid: (77u64 << 32) | 4242,
        ..World::default()
    };
    let call = |m: &mut [u8], world: &mut World, sent: i64, drops: i64, err: i64| {
        Vm {
            pkt: &mut [0u8; 1],
            map: m,
            ctx: [
                0xffff_8880_0000_0000,
                0xffff_8880_0000_1000,
                sent as u64,
                drops as u64,
                err as u64,
            ],
            world,
        }
        .run(&prog)
    };
    assert_eq!(call(&mut m, &mut world, 64, 0, 0), 0);
    call(&mut m, &mut world, 60, 4, 0);
    call(&mut m, &mut world, 0, 16, -6); // -ENXIO: a veth peer without NAPI
    world.tid = (77u64 << 32) | 999; // another thread: not ours
    call(&mut m, &mut world, 1000, 1000, -100);
    let d = Driver::from_bytes(&m);
    assert_eq!((d.sent, d.drops, d.calls, d.last_err), (124, 20, 3, -6));
}

#[test]
fn state_roundtrips() {
    let s = State {
        frames: 1 << 40,
        rt_offset: 99,
        clock_at: 3,
        tv_sec_raw: 0xdead_beef,
        tv_usec_raw: 7,
        sport: 1,
        dport: 2,
    };
    assert_eq!(State::from_bytes(&s.to_bytes()), s);
    let d = Driver {
        tid: 5,
        last_err: -19,
        sent: 1,
        drops: 2,
        calls: 3,
    };
    assert_eq!(Driver::from_bytes(&d.to_bytes()), d);
}

#[test]
fn every_jump_lands_inside_and_the_program_ends_in_exit() {
    let t = template(60, true);
    for plain in [false, true] {
        for ts in [false, true] {
            let walk = PortWalk::new(10, 20);
            let frame = prepared(&t, walk, walk);
            let mut s = spec(&frame, ts, true, walk, walk);
            s.plain = plain;
            for prog in [xdp_program(&s, 3).unwrap(), devmap_xmit_program(3).unwrap()] {
                assert_eq!(prog.last().unwrap(), &Insn::exit());
                let mut pc = 0;
                while pc < prog.len() {
                    let i = prog[pc];
                    if i.is_ld_imm64() {
                        assert_eq!(i.src(), PSEUDO);
                        assert_eq!(prog[pc + 1].code, 0);
                        pc += 2;
                        continue;
                    }
                    if i.code & 0x07 == op::JMP && !matches!(i.code & 0xf0, op::CALL | op::EXIT) {
                        let to = pc as i64 + 1 + i64::from(i.off);
                        assert!(to > pc as i64 && (to as usize) < prog.len(), "jump at {pc}");
                    }
                    pc += 1;
                }
            }
        }
    }
}

#[test]
fn checksum_bases_in_host_order() {
    // Swapping bytes commutes with the one's-complement sum.
    let be = checksum::sum(&[0x12, 0x34, 0xab, 0xcd]);
    let host = to_native(be);
    let le_words =
        u32::from(u16::from_ne_bytes([0x12, 0x34])) + u32::from(u16::from_ne_bytes([0xab, 0xcd]));
    assert_eq!(u32::from(host), checksum::add(le_words, 0));
}
