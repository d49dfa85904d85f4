//! The programs run on a small eBPF interpreter (the subset they use), against frames an
//! independent parser reads, and against the userspace frame writer.

use super::*;
use crate::wire::udp4::{OFF_IP_CSUM, OFF_IP_ID, OFF_SEQ, OFF_UDP_CSUM, OFF_UDP_SPORT};
use crate::wire::{FrameSpec, PacketFields, PktgenHdr, Udp4Template};
use etherparse::{NetSlice, SlicedPacket, TransportSlice};
use std::net::Ipv4Addr;

const PKT_BASE: u64 = 0x1000_0000;
const MAP_BASE: u64 = 0x2000_0000;
const CTX_BASE: u64 = 0x3000_0000;
const FLOWS_BASE: u64 = 0x4000_0000;
const STACK_TOP: u64 = 0x5000_0000;
const FLOWS_FD: i32 = 43;
const REDIRECT_TARGET: u32 = 7;
const STATE_FD: i32 = 42;

/// What the interpreter's helpers saw and returned.
#[derive(Default)]
struct World {
    /// CLOCK_MONOTONIC the next bpf_ktime_get_ns returns.
    mono_ns: u64,
    clock_reads: u32,
    redirects: Vec<u32>,
    tid: u64,
    /// The frame's length after bpf_xdp_adjust_tail (None: the page's).
    len: Option<usize>,
    /// The flow map's value.
    flows: Vec<u8>,
    stack: Vec<u8>,
    /// State of bpf_get_prandom_u32's stand-in (xorshift64; 0 seeds it).
    rng: u64,
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

struct Vm<'a> {
    pkt: &'a mut [u8],
    map: &'a mut [u8],
    ctx: [u64; 5],
    world: &'a mut World,
}

impl Vm<'_> {
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
    fn run(&mut self, prog: &[Insn]) -> u64 {
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
        let rc = Vm {
            pkt: page,
            map: &mut st,
            ctx: [0; 5],
            world: &mut world,
        }
        .run(&prog);
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
        let rc = Vm {
            pkt: &mut page,
            map: &mut st,
            ctx: [0; 5],
            world: &mut world,
        }
        .run(&prog);
        assert_eq!(rc, XDP_REDIRECT as u64);
    }
    assert_eq!(page, frame, "plain mode writes nothing");
    assert_eq!(State::from_bytes(&st).frames, 5);
    assert_eq!(world.redirects, vec![REDIRECT_TARGET; 5]);
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

/// The program compiled from a general walk ([`crate::backend::xdp_live::walk_spec`]) run
/// on recycled pages, against the walk itself ([`crate::pg::generate`]).
mod walk {
    use super::*;
    use crate::backend::xdp_live::{XdpLiveConfig, walk_spec};
    use crate::pg::generate::{DeviceInfo, Generator, Layout};
    use crate::pg::{DevConfig, Flag};
    use crate::stream::{FrameSource, PgFrames};
    use etherparse::{NetSlice, SlicedPacket, TransportSlice};
    use std::collections::BTreeMap;

    fn config(cmds: &[&str]) -> DevConfig {
        let mut c = DevConfig::new("veth0");
        c.command("dst_mac 02:00:00:99:00:02").unwrap();
        let v6 = cmds.iter().any(|c| c.contains("IPV6"));
        if !v6
            && !cmds
                .iter()
                .any(|c| c.starts_with("dst ") || c.starts_with("dst_min"))
        {
            c.command("dst 10.99.0.2").unwrap();
        }
        for cmd in cmds {
            c.command(cmd).unwrap_or_else(|e| panic!("{cmd}: {e}"));
        }
        c
    }

    fn info() -> DeviceInfo {
        DeviceInfo {
            mac: "02:00:00:99:00:01".parse().unwrap(),
            ipv4: Some("10.99.0.1".parse().unwrap()),
            tx_queues: 1,
        }
    }

    /// A run of `n` frames: what the program made and what the walk writes for the same
    /// packets (stamped with the program's timestamps).
    struct Run {
        spec: Spec,
        got: Vec<Vec<u8>>,
        want: Vec<Vec<u8>>,
    }

    fn run(cmds: &[&str], n: usize) -> Run {
        let c = config(cmds);
        let layout = Layout::new(&c);
        let g = Generator::new(&c, &info(), 1).unwrap();
        let mut pg = PgFrames::new(layout, g, c.max_frame_len(), 0);
        let frame = pg.prefill();
        let cfg = XdpLiveConfig {
            ifindex: REDIRECT_TARGET,
            batch: 4,
            plain: false,
            timestamps: !c.has(Flag::NoTimestamp),
            udp_csum: c.has(Flag::Udpcsum),
            udp_src: (0, 0),
            udp_dst: (0, 0),
        };
        let spec = walk_spec(pg.generator().unwrap(), pg.layout(), &cfg, &frame);
        let prog = xdp_program_with_flows(&spec, STATE_FD, FLOWS_FD).unwrap();
        let mut st = spec.initial_state();
        st[state::RT_OFFSET as usize..state::RT_OFFSET as usize + 8]
            .copy_from_slice(&(1_700_000_000_000_000_000u64 - 5_000_000_000).to_ne_bytes());
        let mut world = World {
            mono_ns: 5_000_000_000 + 123_456_789,
            flows: vec![0; spec.flows_size()],
            ..World::default()
        };
        let mut pages = vec![frame.clone(); 3];
        let mut buf = frame.clone();
        let (mut got, mut want) = (Vec::new(), Vec::new());
        let tv = spec.at.tv_sec();
        for k in 0..n {
            if k == n / 2 {
                world.mono_ns += 1_500_000_000;
                st[state::CLOCK_AT as usize..state::CLOCK_AT as usize + 8].fill(0);
            }
            let page = &mut pages[k % 3];
            world.len = None; // each run starts from the prepared length (reset_ctx)
            let rc = Vm {
                pkt: page,
                map: &mut st,
                ctx: [0; 5],
                world: &mut world,
            }
            .run(&prog);
            assert_eq!(rc, XDP_REDIRECT as u64, "frame {k}");
            let out = page[..world.len.unwrap_or(frame.len())].to_vec();
            let be = |o: usize| u32::from_be_bytes(out[o..o + 4].try_into().unwrap());
            let len = pg.advance();
            pg.write(&mut buf[..len], (be(tv), be(tv + 4)));
            pg.sent();
            want.push(buf[..len].to_vec());
            got.push(out);
        }
        Run { spec, got, want }
    }

    /// Every frame equal byte for byte to the walk's.
    fn same(cmds: &[&str], n: usize) -> Run {
        let r = run(cmds, n);
        for (k, (g, w)) in r.got.iter().zip(&r.want).enumerate() {
            assert_eq!(g, w, "{cmds:?}: frame {k}");
            parse(g, k);
        }
        assert!(!r.spec.draws_random(), "{cmds:?}");
        r
    }

    struct Parsed {
        vids: Vec<u16>,
        src_port: u16,
        dst_port: u16,
        src_ip: Vec<u8>,
        dst_ip: Vec<u8>,
        tclass: Option<u8>,
    }

    /// An independent parser's reading of frame `k`: the checksums it computes hold and
    /// pktgen's sequence number is k + 1.
    fn parse(f: &[u8], k: usize) -> Parsed {
        // etherparse stops at MPLS: the IP header follows the bottom-of-stack entry.
        let s = if f[12..14] == [0x88, 0x47] {
            let mut p = 14;
            while f[p + 2] & 1 == 0 {
                p += 4;
            }
            SlicedPacket::from_ip(&f[p + 4..])
        } else {
            SlicedPacket::from_ethernet(f)
        }
        .unwrap_or_else(|e| panic!("frame {k}: {e}"));
        let vids = s.vlan_ids().iter().map(|v| v.value()).collect();
        let Some(TransportSlice::Udp(u)) = &s.transport else {
            panic!("frame {k}: not UDP: {f:02x?}")
        };
        let (src_ip, dst_ip, want_csum, tclass) = match &s.net {
            Some(NetSlice::Ipv4(ip)) => {
                let h = ip.header().to_header();
                assert_eq!(h.header_checksum, h.calc_header_checksum(), "frame {k}");
                let l3 = ip.header().slice().as_ptr() as usize - f.as_ptr() as usize;
                assert_eq!(
                    usize::from(h.total_len) + l3,
                    f.len(),
                    "frame {k}: IPv4 length"
                );
                let c = u.to_header().calc_checksum_ipv4(&h, u.payload()).unwrap();
                (h.source.to_vec(), h.destination.to_vec(), c, None)
            }
            Some(NetSlice::Ipv6(ip)) => {
                let h = ip.header().to_header();
                let c = u.to_header().calc_checksum_ipv6(&h, u.payload()).unwrap();
                (
                    h.source.to_vec(),
                    h.destination.to_vec(),
                    c,
                    Some(h.traffic_class),
                )
            }
            _ => panic!("frame {k}: not IP"),
        };
        let l4 = u.slice().as_ptr() as usize - f.as_ptr() as usize;
        assert_eq!(
            usize::from(u.length()) + l4,
            f.len(),
            "frame {k}: UDP length"
        );
        if u.checksum() != 0 {
            assert_eq!(u.checksum(), want_csum, "frame {k}: UDP checksum");
        }
        let h = PktgenHdr::parse(u.payload()).unwrap();
        assert_eq!(h.seq, k as u32 + 1, "frame {k}");
        Parsed {
            vids,
            src_port: u.source_port(),
            dst_port: u.destination_port(),
            src_ip,
            dst_ip,
            tclass,
        }
    }

    #[test]
    fn vlan_qinq_and_mpls_frames_equal_the_walk() {
        same(
            &[
                "vlan_id 100",
                "vlan_p 3",
                "vlan_cfi 1",
                "udp_src_min 1000",
                "udp_src_max 1005",
            ],
            40,
        );
        same(
            &[
                "vlan_id 100",
                "svlan_id 200",
                "svlan_p 5",
                "udp_dst_min 10",
                "udp_dst_max 20",
                "flag UDPCSUM",
            ],
            40,
        );
        same(
            &[
                "mpls 0001000a,0002000a,0003000a",
                "flag UDPCSUM",
                "udp_src_min 7",
                "udp_src_max 9",
            ],
            40,
        );
    }

    #[test]
    fn ipv6_frames_equal_the_walk() {
        let r = same(
            &[
                "flag IPV6",
                "dst6 fd00::2",
                "src6 fd00::1",
                "traffic_class 2a",
                "flag UDPCSUM",
                "udp_src_min 1000",
                "udp_src_max 1010",
                "pkt_size 100",
            ],
            40,
        );
        assert_eq!(parse(&r.got[0], 0).tclass, Some(0x2a));
        same(
            &[
                "flag IPV6",
                "dst6 fd00::2",
                "vlan_id 5",
                "flag NO_TIMESTAMP",
            ],
            10,
        );
    }

    #[test]
    fn ipv4_address_ranges_and_mac_counts_equal_the_walk() {
        let r = same(
            &[
                "src_min 10.0.0.1",
                "src_max 10.0.0.5",
                "dst_min 10.1.0.250",
                "dst_max 10.1.1.4",
                "flag UDPCSUM",
            ],
            30,
        );
        assert_eq!(parse(&r.got[0], 0).dst_ip, [10, 1, 0, 251]);
        assert_eq!(
            parse(&r.got[6], 6).dst_ip,
            [10, 1, 1, 1],
            "carries into the third byte"
        );
        // Counts carry across bytes (…:ff:fe + 0..4); the first byte never changes.
        let r = same(
            &[
                "src_mac_count 3",
                "dst_mac 02:00:00:00:ff:fe",
                "dst_mac_count 5",
            ],
            12,
        );
        assert_eq!(r.got[3][..6], [2, 0, 0, 1, 0, 1]);
        // The whole IPv4 space, u32 arithmetic at its edge.
        same(&["dst_min 255.255.255.254", "dst_max 255.255.255.255"], 5);
    }

    #[test]
    fn sequential_flows_equal_the_walk() {
        same(
            &[
                "dst_min 10.1.0.1",
                "dst_max 10.1.0.200",
                "flows 8",
                "flowlen 3",
                "flag FLOW_SEQ",
                "flag UDPCSUM",
            ],
            100,
        );
    }

    #[test]
    fn size_walks_equal_the_walk() {
        let r = same(&["min_pkt_size 60", "max_pkt_size 70", "flag UDPCSUM"], 30);
        let lens: Vec<usize> = r.got.iter().map(Vec::len).take(12).collect();
        assert_eq!(lens, [61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 60, 61]);
        // Below the headers a frame keeps them (IPv6's smallest frame is 78 bytes).
        let r = same(
            &[
                "flag IPV6",
                "dst6 fd00::2",
                "min_pkt_size 70",
                "max_pkt_size 90",
                "flag UDPCSUM",
            ],
            25,
        );
        assert_eq!(r.got[0].len(), 78);
        same(
            &[
                "vlan_id 7",
                "svlan_id 8",
                "min_pkt_size 100",
                "max_pkt_size 1500",
            ],
            20,
        );
    }

    /// Frames with random fields: each parses with right checksums and sequence numbers.
    fn random(cmds: &[&str], n: usize) -> Run {
        let r = run(cmds, n);
        assert!(r.spec.draws_random(), "{cmds:?}");
        for (k, g) in r.got.iter().enumerate() {
            parse(g, k);
        }
        r
    }

    /// Every value in `lo..=hi` and no other.
    fn covers<T: Ord + Clone + std::fmt::Debug>(vals: impl Iterator<Item = T>, all: &[T]) {
        let seen: std::collections::BTreeSet<T> = vals.collect();
        assert_eq!(seen.into_iter().collect::<Vec<_>>(), all);
    }

    #[test]
    fn random_ports_addresses_and_macs_lie_in_range_and_cover_it() {
        let r = random(
            &[
                "udp_src_min 1000",
                "udp_src_max 1008",
                "flag UDPSRC_RND",
                "udp_dst_min 5",
                "udp_dst_max 7",
                "flag UDPDST_RND",
                "flag UDPCSUM",
            ],
            400,
        );
        let p: Vec<Parsed> = r.got.iter().enumerate().map(|(k, f)| parse(f, k)).collect();
        covers(
            p.iter().map(|x| x.src_port),
            &(1000..1008).collect::<Vec<_>>(),
        );
        covers(p.iter().map(|x| x.dst_port), &[5, 6]);
        // Random addresses draw [min, max); random destinations skip 127/8.
        let r = random(
            &[
                "src_min 10.0.0.1",
                "src_max 10.0.0.9",
                "flag IPSRC_RND",
                "dst_min 126.255.255.254",
                "dst_max 128.0.0.2",
                "flag IPDST_RND",
            ],
            500,
        );
        let p: Vec<Parsed> = r.got.iter().enumerate().map(|(k, f)| parse(f, k)).collect();
        covers(p.iter().map(|x| x.src_ip[3]), &(1..9).collect::<Vec<_>>());
        covers(
            p.iter().map(|x| x.dst_ip.clone()),
            &[
                vec![126, 255, 255, 254],
                vec![126, 255, 255, 255],
                vec![128, 0, 0, 0],
                vec![128, 0, 0, 1],
            ],
        );
        let r = random(
            &[
                "src_mac_count 4",
                "flag MACSRC_RND",
                "dst_mac 02:00:00:00:00:fe",
                "dst_mac_count 3",
                "flag MACDST_RND",
            ],
            200,
        );
        covers(r.got.iter().map(|f| f[11]), &[1, 2, 3, 4]);
        covers(
            r.got.iter().map(|f| (f[4], f[5])),
            &[(0, 0xfe), (0, 0xff), (1, 0)],
        );
        for (g, w) in r.got.iter().zip(&r.want) {
            assert_eq!(g[12..], w[12..], "only the MACs are drawn");
        }
    }

    #[test]
    fn random_tags_labels_and_ipv6_destinations_lie_in_range() {
        let r = random(
            &[
                "vlan_id 100",
                "vlan_p 6",
                "svlan_id 9",
                "flag VID_RND",
                "flag SVID_RND",
            ],
            3000,
        );
        let mut outer = std::collections::BTreeSet::new();
        for (k, f) in r.got.iter().enumerate() {
            let p = parse(f, k);
            assert_eq!(p.vids.len(), 2);
            assert_eq!(f[18] >> 5, 6, "the inner tag keeps its PCP");
            outer.insert(p.vids[0]);
        }
        assert!(
            outer.len() > 2000,
            "{} of 4096 outer ids in 3000 frames",
            outer.len()
        );
        let r = random(&["mpls 0001000a,0002010a", "flag MPLS_RND"], 200);
        for (k, f) in r.got.iter().enumerate() {
            assert_eq!(
                f[14..18],
                [0, 1, 0, 0x0a],
                "frame {k}: the first label is kept"
            );
            let e = u32::from_be_bytes(f[18..22].try_into().unwrap());
            assert_eq!(e & 0xfff0_0100, 0x100, "frame {k}: {e:#x} bottom of stack");
        }
        covers(r.got.iter().map(|f| f[21] & 1), &[0, 1]);
        let r = random(
            &[
                "flag IPV6",
                "dst6_min fd00::10",
                "dst6_max fd00::ff:1f",
                "flag UDPCSUM",
            ],
            3000,
        );
        for (k, f) in r.got.iter().enumerate() {
            let d = parse(f, k).dst_ip;
            assert_eq!(
                d[..13],
                [0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
                "frame {k}"
            );
            assert_eq!(d[15] & 0x10, 0x10, "frame {k}: min's bits set");
            assert_eq!(d[15] & !0x1f, 0, "frame {k}: max's bits only");
        }
        covers(
            r.got.iter().map(|f| f[14 + 24 + 13]),
            &(0..=0xff).collect::<Vec<u8>>(),
        );
    }

    #[test]
    fn random_sizes_lie_in_range_and_imix_follows_its_weights() {
        let r = random(
            &[
                "min_pkt_size 60",
                "max_pkt_size 64",
                "flag TXSIZE_RND",
                "flag UDPCSUM",
            ],
            200,
        );
        covers(r.got.iter().map(Vec::len), &[60, 61, 62, 63]);
        let n = 12_000;
        let r = random(&["imix_weights 64,7 576,4 1500,1", "flag UDPCSUM"], n);
        let mut h = BTreeMap::new();
        for f in &r.got {
            *h.entry(f.len()).or_insert(0u64) += 1;
        }
        // The kernel's table: 58 slots of 64, 33 of 576, 9 of 1500 (shares rounded down,
        // the last closing at 100). Each count within 5 standard deviations of n * p.
        for (len, slots) in [(64usize, 58u64), (576, 33), (1500, 9)] {
            let p = slots as f64 / 100.0;
            let mean = n as f64 * p;
            let sd = (n as f64 * p * (1.0 - p)).sqrt();
            let got = h.get(&len).copied().unwrap_or(0) as f64;
            assert!(
                (got - mean).abs() < 5.0 * sd,
                "{len}: {got} frames, expected {mean} ± {sd}"
            );
        }
        assert_eq!(h.len(), 3, "{h:?}");
    }

    #[test]
    fn random_flows_keep_their_destination_for_flowlen_packets() {
        let r = random(
            &[
                "dst_min 10.1.0.1",
                "dst_max 10.1.3.255",
                "flows 16",
                "flowlen 4",
                "flag IPDST_RND",
            ],
            2000,
        );
        let dsts: std::collections::BTreeSet<Vec<u8>> = r
            .got
            .iter()
            .enumerate()
            .map(|(k, f)| parse(f, k).dst_ip)
            .collect();
        // 16 flows renewed every 5th packet: hundreds of destinations, each in range.
        assert!(dsts.len() > 200, "{} destinations", dsts.len());
        assert!(dsts.iter().all(|d| d[..2] == [10, 1] && d[2] <= 3));
    }
}
