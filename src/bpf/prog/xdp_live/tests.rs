//! The programs run on a small eBPF interpreter (the subset they use), against frames an
//! independent parser reads, and against the userspace frame writer.

use super::*;
use crate::wire::udp4::{OFF_IP_CSUM, OFF_IP_ID, OFF_SEQ, OFF_UDP_CSUM, OFF_UDP_SPORT};
use crate::wire::{FrameSpec, PacketFields, PktgenHdr, Udp4Template};
use etherparse::{NetSlice, SlicedPacket, TransportSlice};
use std::net::Ipv4Addr;

pub(crate) const PKT_BASE: u64 = 0x1000_0000;
pub(crate) const MAP_BASE: u64 = 0x2000_0000;
pub(crate) const CTX_BASE: u64 = 0x3000_0000;
pub(crate) const FLOWS_BASE: u64 = 0x4000_0000;
pub(crate) const STACK_TOP: u64 = 0x5000_0000;
pub(crate) const FLOWS_FD: i32 = 43;
pub(crate) const REDIRECT_TARGET: u32 = 7;
pub(crate) const STATE_FD: i32 = 42;

/// What the interpreter's helpers saw and returned.
#[derive(Default)]
pub(crate) struct World {
    /// CLOCK_MONOTONIC the next bpf_ktime_get_ns returns.
    pub(crate) mono_ns: u64,
    pub(crate) clock_reads: u32,
    pub(crate) redirects: Vec<u32>,
    pub(crate) tid: u64,
    /// The frame's length after bpf_xdp_adjust_tail (None: the page's).
    pub(crate) len: Option<usize>,
    /// The flow map's value.
    pub(crate) flows: Vec<u8>,
    pub(crate) stack: Vec<u8>,
    /// State of bpf_get_prandom_u32's stand-in (xorshift64; 0 seeds it).
    pub(crate) rng: u64,
}

impl World {
    fn prandom(&mut self) -> u64 {
        if self.rng == 0 {
            self.rng = 0x9e37_79b9_7f4a_7c15;
        }
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng >> 32
    }
}

pub(crate) struct Vm<'a> {
    pub(crate) pkt: &'a mut [u8],
    pub(crate) map: &'a mut [u8],
    pub(crate) ctx: [u64; 5],
    pub(crate) world: &'a mut World,
}

impl<'a> Vm<'a> {
    /// A machine on `pkt` and the state map `map`, its context registers zero.
    pub(crate) fn on(pkt: &'a mut [u8], map: &'a mut [u8], world: &'a mut World) -> Vm<'a> {
        Vm {
            pkt,
            map,
            ctx: [0; 5],
            world,
        }
    }

    fn pkt_len(&self) -> usize {
        self.world.len.unwrap_or(self.pkt.len())
    }

    fn region(&mut self, addr: u64, len: usize) -> &mut [u8] {
        if self.world.stack.is_empty() {
            self.world.stack = vec![0; 512];
        }
        let pkt_len = self.pkt_len();
        let (base, mem): (u64, &mut [u8]) = if (MAP_BASE..MAP_BASE + 0x10_0000).contains(&addr) {
            (MAP_BASE, self.map)
        } else if (FLOWS_BASE..FLOWS_BASE + 0x10_0000).contains(&addr) {
            (FLOWS_BASE, &mut self.world.flows[..])
        } else if (STACK_TOP - 512..STACK_TOP).contains(&addr) {
            (STACK_TOP - 512, &mut self.world.stack[..])
        } else if (PKT_BASE..PKT_BASE + 0x1000).contains(&addr) {
            (PKT_BASE, &mut self.pkt[..pkt_len])
        } else {
            panic!("access to {addr:#x} outside the packet and the map");
        };
        let o = (addr - base) as usize;
        assert!(
            o + len <= mem.len(),
            "access {o}+{len} past the end ({})",
            mem.len()
        );
        &mut mem[o..o + len]
    }

    fn load(&mut self, addr: u64, size: usize) -> u64 {
        if (CTX_BASE..CTX_BASE + 64).contains(&addr) {
            // xdp_md (data, data_end as u32) or raw tracepoint arguments (u64).
            let o = (addr - CTX_BASE) as usize;
            return match size {
                4 => [PKT_BASE, PKT_BASE + self.pkt_len() as u64][o / 4],
                8 => self.ctx[o / 8],
                _ => panic!("ctx load of {size} bytes"),
            };
        }
        let m = self.region(addr, size);
        let mut b = [0u8; 8];
        b[..size].copy_from_slice(m);
        match size {
            1 => u64::from(b[0]),
            2 => u64::from(u16::from_ne_bytes([b[0], b[1]])),
            4 => u64::from(u32::from_ne_bytes([b[0], b[1], b[2], b[3]])),
            _ => u64::from_ne_bytes(b),
        }
    }

    fn store(&mut self, addr: u64, size: usize, v: u64) {
        let m = self.region(addr, size);
        match size {
            1 => m[0] = v as u8,
            2 => m.copy_from_slice(&(v as u16).to_ne_bytes()),
            4 => m.copy_from_slice(&(v as u32).to_ne_bytes()),
            _ => m.copy_from_slice(&v.to_ne_bytes()),
        }
    }

    /// Runs `prog` with r1 = ctx and returns r0.
    pub(crate) fn run(&mut self, prog: &[Insn]) -> u64 {
        let mut r = [0u64; 11];
        r[1] = CTX_BASE;
        r[10] = STACK_TOP;
        let mut pc = 0usize;
        for _ in 0..10_000 {
            let i = prog[pc];
            let (dst, src) = (i.dst() as usize, i.src() as usize);
            let class = i.code & 0x07;
            pc += 1;
            match class {
                op::ALU | op::ALU64 => {
                    let alu = i.code & 0xf0;
                    if alu == op::END {
                        r[dst] = match i.imm {
                            16 => u64::from((r[dst] as u16).to_be()),
                            32 => u64::from((r[dst] as u32).to_be()),
                            64 => r[dst].to_be(),
                            b => panic!("bad END width {b}"),
                        };
                        continue;
                    }
                    let b = if i.code & op::X != 0 {
                        r[src]
                    } else {
                        i.imm as i64 as u64
                    };
                    let a = r[dst];
                    let v = match alu {
                        op::ADD => a.wrapping_add(b),
                        op::SUB => a.wrapping_sub(b),
                        op::MUL => a.wrapping_mul(b),
                        op::DIV => a.checked_div(b).unwrap_or(0),
                        op::MOD => a.checked_rem(b).unwrap_or(a),
                        op::OR => a | b,
                        op::AND => a & b,
                        op::XOR => a ^ b,
                        op::LSH => a << (b & 63),
                        op::RSH => a >> (b & 63),
                        op::MOV => b,
                        x => panic!("ALU op {x:#x} not in the subset"),
                    };
                    r[dst] = if class == op::ALU { v as u32 as u64 } else { v };
                }
                op::LDX => {
                    let size = size_of(i.code);
                    r[dst] = self.load(r[src].wrapping_add(i.off as i64 as u64), size);
                }
                op::STX => {
                    let size = size_of(i.code);
                    let addr = r[dst].wrapping_add(i.off as i64 as u64);
                    if i.code & 0xe0 == op::ATOMIC {
                        assert_eq!(i.imm, op::ADD as i32, "only atomic add");
                        let old = self.load(addr, size);
                        self.store(addr, size, old.wrapping_add(r[src]));
                    } else {
                        self.store(addr, size, r[src]);
                    }
                }
                op::ST => {
                    let size = size_of(i.code);
                    let addr = r[dst].wrapping_add(i.off as i64 as u64);
                    self.store(addr, size, i.imm as i64 as u64);
                }
                op::LD => {
                    assert!(i.is_ld_imm64());
                    let lo = i.imm as u32 as u64;
                    let hi = prog[pc].imm as u32 as u64;
                    pc += 1;
                    r[dst] = match i.src() {
                        0 => lo | hi << 32,
                        PSEUDO if i.imm == FLOWS_FD => FLOWS_BASE + hi,
                        PSEUDO => MAP_BASE + hi,
                        s => panic!("ld_imm64 src {s}"),
                    };
                }
                op::JMP => {
                    let jop = i.code & 0xf0;
                    match jop {
                        op::EXIT => return r[0],
                        op::CALL => {
                            r[0] = match i.imm {
                                helper::KTIME_GET_NS => {
                                    self.world.clock_reads += 1;
                                    self.world.mono_ns
                                }
                                helper::REDIRECT => {
                                    assert_eq!(r[2], 0, "redirect flags");
                                    self.world.redirects.push(r[1] as u32);
                                    XDP_REDIRECT as u64
                                }
                                helper::GET_CURRENT_PID_TGID => self.world.tid,
                                helper::GET_PRANDOM_U32 => self.world.prandom(),
                                helper::XDP_ADJUST_TAIL => {
                                    assert_eq!(r[1], CTX_BASE, "adjust_tail's ctx");
                                    let delta = r[2] as i32;
                                    let len = self.pkt_len() as i64 + i64::from(delta);
                                    assert!(
                                        (14..=self.pkt.len() as i64).contains(&len),
                                        "adjust_tail to {len}"
                                    );
                                    self.world.len = Some(len as usize);
                                    0
                                }
                                h => panic!("helper {h} not modelled"),
                            };
                            // r1..r5 are clobbered by calls.
                            for x in &mut r[1..=5] {
                                *x = 0xdead_beef_dead_beef;
                            }
                        }
                        _ => {
                            let b = if i.code & op::X != 0 {
                                r[src]
                            } else {
                                i.imm as i64 as u64
                            };
                            let a = r[dst];
                            let take = match jop {
                                op::JA => true,
                                op::JEQ => a == b,
                                op::JNE => a != b,
                                op::JGT => a > b,
                                op::JGE => a >= b,
                                op::JLT => a < b,
                                op::JLE => a <= b,
                                x => panic!("jump op {x:#x} not in the subset"),
                            };
                            if take {
                                pc = (pc as i64 + i64::from(i.off)) as usize;
                            }
                        }
                    }
                }
                c => panic!("class {c} not in the subset"),
            }
        }
        panic!("the program did not exit");
    }
}

const PSEUDO: u8 = crate::bpf::asm::PSEUDO_MAP_VALUE;

fn size_of(code: u8) -> usize {
    match code & 0x18 {
        op::W => 4,
        op::H => 2,
        op::B => 1,
        _ => 8,
    }
}

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
