//! The hand-assembled BPF programs of the `xdp_live` backend (written with the assembler
//! of [`crate::bpf::asm`]).
//!
//! Two programs share one single-entry array map (the *state*, [`State`]):
//!
//! * the XDP program, run by `BPF_PROG_RUN` with live frames on copies of one prepared
//!   frame. It counts itself in the state, writes the per-packet fields and returns
//!   `bpf_redirect(ifindex, 0)`. Pages are recycled from a page pool without being
//!   re-initialised, so every field that varies is written whole on every run — never
//!   patched relative to what the page held before. And whatever received the frame may
//!   have changed the page in place (a forwarding DUT rewrites the Ethernet addresses and
//!   decrements the TTL; a NAT rewrites addresses and ports): so the program also writes
//!   back every constant byte of the headers ([`Spec::restore`]), and each frame leaves
//!   exactly as prepared whatever its page went through.
//! * a raw tracepoint program on `xdp:xdp_devmap_xmit`, which the kernel fires after each
//!   bulk of redirected frames is handed to the driver's `ndo_xdp_xmit`, with the number
//!   the driver took (`sent`) and refused (`drops`). It counts, into its own map
//!   ([`Driver`]), only the calls made from the sending thread.
//!
//! Checksums are computed in the host's byte order: the one's-complement sum of 16-bit
//! words read in either byte order is the byte swap of the other (RFC 1071, 2(B)), so the
//! program adds the words as loaded, folds, complements and stores without swapping; the
//! constant bases are converted once in userspace ([`to_native`]).

use crate::bpf::asm::{Asm, Insn, helper, op};
use crate::wire::checksum;
use crate::wire::udp4::{
    OFF_IP, OFF_IP_CSUM, OFF_IP_ID, OFF_SEQ, OFF_TV_SEC, OFF_TV_USEC, OFF_UDP, OFF_UDP_CSUM,
    OFF_UDP_DPORT, OFF_UDP_SPORT,
};

pub use super::{XDP_ABORTED, XDP_PASS, XDP_REDIRECT};

// Registers.
const R0: u8 = 0;
const R1: u8 = 1;
const R2: u8 = 2;
const R5: u8 = 5;
const R6: u8 = 6;
const R7: u8 = 7;
const R8: u8 = 8;

/// Layout of the XDP program's state map value (native-endian fields).
pub mod state {
    /// u64: frames the XDP program has run (each one redirected).
    pub const FRAMES: i16 = 0;
    /// u64: CLOCK_REALTIME - CLOCK_MONOTONIC in ns, set by userspace before each run.
    pub const RT_OFFSET: i16 = 8;
    /// u64: value of FRAMES at which the program reads the clock next (userspace sets 0
    /// before each run, so the first frame of a run always reads it).
    pub const CLOCK_AT: i16 = 16;
    /// u32: tv_sec of the last clock reading, as stored in frames (big-endian bytes).
    pub const TV_SEC: i16 = 24;
    /// u32: tv_usec likewise.
    pub const TV_USEC: i16 = 28;
    /// u32: offset of the next UDP source port from the range's minimum.
    pub const SPORT: i16 = 32;
    /// u32: likewise for the destination port.
    pub const DPORT: i16 = 36;
    pub const SIZE: usize = 40;
}

/// Layout of the tracepoint program's map value.
pub mod driver {
    /// u32: thread id whose `ndo_xdp_xmit` calls are counted (set by userspace).
    pub const TID: i16 = 0;
    /// u32: last non-zero error the driver call reported (a negative errno).
    pub const LAST_ERR: i16 = 4;
    /// u64: frames the driver accepted.
    pub const SENT: i16 = 8;
    /// u64: frames the driver refused.
    pub const DROPS: i16 = 16;
    /// u64: driver calls (bulk flushes).
    pub const CALLS: i16 = 24;
    pub const SIZE: usize = 32;
}

fn rd_u32(b: &[u8], off: i16) -> u32 {
    let o = off as usize;
    u32::from_ne_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
}

fn rd_u64(b: &[u8], off: i16) -> u64 {
    let o = off as usize;
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[o..o + 8]);
    u64::from_ne_bytes(w)
}

fn wr_u32(b: &mut [u8], off: i16, v: u32) {
    let o = off as usize;
    b[o..o + 4].copy_from_slice(&v.to_ne_bytes());
}

fn wr_u64(b: &mut [u8], off: i16, v: u64) {
    let o = off as usize;
    b[o..o + 8].copy_from_slice(&v.to_ne_bytes());
}

/// Userspace's copy of the XDP program's state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct State {
    pub frames: u64,
    pub rt_offset: u64,
    pub clock_at: u64,
    pub tv_sec_raw: u32,
    pub tv_usec_raw: u32,
    pub sport: u32,
    pub dport: u32,
}

impl State {
    pub fn to_bytes(&self) -> [u8; state::SIZE] {
        let mut b = [0u8; state::SIZE];
        wr_u64(&mut b, state::FRAMES, self.frames);
        wr_u64(&mut b, state::RT_OFFSET, self.rt_offset);
        wr_u64(&mut b, state::CLOCK_AT, self.clock_at);
        wr_u32(&mut b, state::TV_SEC, self.tv_sec_raw);
        wr_u32(&mut b, state::TV_USEC, self.tv_usec_raw);
        wr_u32(&mut b, state::SPORT, self.sport);
        wr_u32(&mut b, state::DPORT, self.dport);
        b
    }

    pub fn from_bytes(b: &[u8; state::SIZE]) -> State {
        State {
            frames: rd_u64(b, state::FRAMES),
            rt_offset: rd_u64(b, state::RT_OFFSET),
            clock_at: rd_u64(b, state::CLOCK_AT),
            tv_sec_raw: rd_u32(b, state::TV_SEC),
            tv_usec_raw: rd_u32(b, state::TV_USEC),
            sport: rd_u32(b, state::SPORT),
            dport: rd_u32(b, state::DPORT),
        }
    }
}

/// Userspace's copy of the tracepoint program's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Driver {
    pub tid: u32,
    pub last_err: i32,
    pub sent: u64,
    pub drops: u64,
    pub calls: u64,
}

impl Driver {
    pub fn to_bytes(&self) -> [u8; driver::SIZE] {
        let mut b = [0u8; driver::SIZE];
        wr_u32(&mut b, driver::TID, self.tid);
        wr_u32(&mut b, driver::LAST_ERR, self.last_err as u32);
        wr_u64(&mut b, driver::SENT, self.sent);
        wr_u64(&mut b, driver::DROPS, self.drops);
        wr_u64(&mut b, driver::CALLS, self.calls);
        b
    }

    pub fn from_bytes(b: &[u8; driver::SIZE]) -> Driver {
        Driver {
            tid: rd_u32(b, driver::TID),
            last_err: rd_u32(b, driver::LAST_ERR) as i32,
            sent: rd_u64(b, driver::SENT),
            drops: rd_u64(b, driver::DROPS),
            calls: rd_u64(b, driver::CALLS),
        }
    }
}

/// A UDP port walk `[min, min + span)`; `span` 1 is a fixed port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortWalk {
    pub min: u16,
    pub span: u32,
}

impl PortWalk {
    /// pktgen's `[min, max)`, or just `min` when `max <= min` (as [`crate::stream::PortRange`]).
    pub fn new(min: u16, max: u16) -> PortWalk {
        let span = if max > min { u32::from(max - min) } else { 1 };
        PortWalk { min, span }
    }

    pub fn varies(&self) -> bool {
        self.span > 1
    }
}

/// What the XDP program returns once the frame is written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Verdict {
    /// `bpf_redirect(ifindex, 0)`: the frame is transmitted by device `ifindex`.
    #[default]
    Redirect,
    /// `XDP_PASS`: the kernel builds an skb and hands it to the receive path of the run's
    /// ingress device (pktgen's `xmit_mode netif_receive`).
    Pass,
}

/// What the XDP program writes per packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    /// Redirect target.
    pub ifindex: u32,
    /// Redirect to `ifindex`, or pass to the receive path.
    pub verdict: Verdict,
    /// No per-packet writes: only the frame counter and the redirect.
    pub plain: bool,
    /// Write tv_sec/tv_usec (false: NO_TIMESTAMP, the prepared zeros stay).
    pub timestamps: bool,
    /// Frames between clock reads (the clock is also read at the first frame of each run).
    pub clock_every: u32,
    /// Compute the UDP checksum (UDPCSUM).
    pub udp_csum: bool,
    pub sport: PortWalk,
    pub dport: PortWalk,
    /// Partial sum of the IPv4 header with id and checksum zero (host byte order).
    pub ip_base: u16,
    /// Partial sum of the UDP pseudo-header and segment with every written field zero
    /// (host byte order).
    pub udp_base: u16,
    /// The constant header bytes to write back on every run: (offset, 2 or 4 bytes, their
    /// value as the host loads them). See [`restore_stores`].
    pub restore: Vec<(i16, u8, i32)>,
}

/// The stores that write back every byte of the headers and pktgen's magic (bytes
/// `0..OFF_SEQ` of `frame`) that the program does not write per packet, in as few 4- and
/// 2-byte stores as the written fields leave room for: (offset, size in bytes, value).
pub fn restore_stores(
    frame: &[u8],
    sport_varies: bool,
    dport_varies: bool,
    udp_csum: bool,
) -> Vec<(i16, u8, i32)> {
    let mut written = [false; OFF_SEQ];
    let mut mark = |at: usize, n: usize| written[at..at + n].iter_mut().for_each(|w| *w = true);
    mark(OFF_IP_ID, 2);
    mark(OFF_IP_CSUM, 2);
    if sport_varies {
        mark(OFF_UDP_SPORT, 2);
    }
    if dport_varies {
        mark(OFF_UDP_DPORT, 2);
    }
    if udp_csum {
        mark(OFF_UDP_CSUM, 2);
    }
    let mut out = Vec::new();
    let mut i = 0;
    // Every written field is 2-byte aligned and 2 long: constant bytes come in pairs.
    while i < OFF_SEQ {
        if written[i] {
            i += 2;
            continue;
        }
        if i + 4 <= OFF_SEQ && !written[i + 2] {
            let v = u32::from_ne_bytes(frame[i..i + 4].try_into().expect("4 bytes"));
            out.push((i as i16, 4, v as i32));
            i += 4;
        } else {
            let v = u16::from_ne_bytes(frame[i..i + 2].try_into().expect("2 bytes"));
            out.push((i as i16, 2, i32::from(v)));
            i += 2;
        }
    }
    out
}

/// A folded big-endian partial checksum in the host's byte order (see the module docs).
pub fn to_native(be_sum: u32) -> u16 {
    let folded = checksum::add(be_sum, 0) as u16;
    u16::from_ne_bytes(folded.to_be_bytes())
}

/// The checksum bases of `frame` (a frame of [`crate::wire::Udp4Template`]'s layout), in
/// the host's byte order: (IPv4 header, UDP pseudo-header + segment), with every field the
/// program writes counted as zero.
pub fn bases(frame: &[u8], sport_varies: bool, dport_varies: bool) -> (u16, u16) {
    let mut f = frame.to_vec();
    f[OFF_IP_ID..OFF_IP_ID + 2].fill(0);
    f[OFF_IP_CSUM..OFF_IP_CSUM + 2].fill(0);
    let ip = checksum::sum(&f[OFF_IP..OFF_UDP]);
    for (off, len) in [
        (OFF_UDP_CSUM, 2),
        (OFF_SEQ, 4),
        (OFF_TV_SEC, 4),
        (OFF_TV_USEC, 4),
    ] {
        f[off..off + len].fill(0);
    }
    if sport_varies {
        f[OFF_UDP_SPORT..OFF_UDP_SPORT + 2].fill(0);
    }
    if dport_varies {
        f[OFF_UDP_DPORT..OFF_UDP_DPORT + 2].fill(0);
    }
    let udp_len = u16::from_be_bytes([f[OFF_UDP + 4], f[OFF_UDP + 5]]);
    let mut udp = checksum::sum(&f[OFF_IP + 12..OFF_IP + 20]); // source and destination
    udp = checksum::add(udp, 17);
    udp = checksum::add(udp, u32::from(udp_len));
    udp = checksum::add(udp, checksum::sum(&f[OFF_UDP..]));
    (to_native(ip), to_native(udp))
}

/// Folds r{reg} (< 2^36) to 16 bits, using r{tmp}.
fn fold(a: &mut Asm, reg: u8, tmp: u8, times: usize) {
    for _ in 0..times {
        a.emit(Insn::mov64_reg(tmp, reg))
            .emit(Insn::alu64_imm(op::RSH, tmp, 16))
            .emit(Insn::alu64_imm(op::AND, reg, 0xffff))
            .emit(Insn::alu64_reg(op::ADD, reg, tmp));
    }
}

/// Writes one port of a walk: r1 = min + next, next advances and wraps.
fn port(a: &mut Asm, w: PortWalk, slot: i16, frame_off: usize, csum: bool) {
    let keep = a.label();
    a.emit(Insn::ldx(op::W, R1, R7, slot))
        .emit(Insn::mov64_reg(R2, R1))
        .emit(Insn::alu64_imm(op::ADD, R2, 1))
        .jmp_imm(op::JNE, R2, w.span as i32, keep)
        .emit(Insn::mov64_imm(R2, 0));
    a.bind(keep);
    a.emit(Insn::stx(op::W, R7, slot, R2))
        .emit(Insn::alu64_imm(op::ADD, R1, i32::from(w.min)))
        .emit(Insn::to_be(R1, 16))
        .emit(Insn::stx(op::H, R6, frame_off as i16, R1));
    if csum {
        a.emit(Insn::alu64_reg(op::ADD, R5, R1));
    }
}

/// The XDP program for `s`, referring to the state map by fd `state_fd`.
///
/// ```text
///   r2 = *(u32 *)(r1 + 4)              ; data_end
///   r6 = *(u32 *)(r1 + 0)              ; data
///   r1 = r6 ; r1 += 58
///   if r1 > r2 goto abort              ; shorter than the headers (never: the frame is ours)
///   r7 = &state                        ; ld_imm64, BPF_PSEUDO_MAP_VALUE
///   r8 = *(u64 *)(r7 + FRAMES)         ; k = frames before this one
///   r1 = r8 ; r1 += 1
///   *(u64 *)(r7 + FRAMES) = r1
///  [plain: skip to send]
///  [timestamps]
///   r1 = *(u64 *)(r7 + CLOCK_AT)
///   if r8 < r1 goto stamp
///   r1 = r8 ; r1 += clock_every ; *(u64 *)(r7 + CLOCK_AT) = r1
///   call bpf_ktime_get_ns              ; CLOCK_MONOTONIC
///   r1 = *(u64 *)(r7 + RT_OFFSET) ; r0 += r1     ; CLOCK_REALTIME
///   r0 /= 1000                         ; microseconds
///   r1 = r0 ; r1 /= 1000000            ; tv_sec
///   r2 = r1 ; r2 *= 1000000 ; r0 -= r2 ; tv_usec
///   r1 = be32 r1 ; *(u32 *)(r7 + TV_SEC) = r1
///   r0 = be32 r0 ; *(u32 *)(r7 + TV_USEC) = r0
/// stamp:
///   r1 = *(u32 *)(r7 + TV_SEC) ; *(u32 *)(r6 + 50) = r1
///   r2 = *(u32 *)(r7 + TV_USEC) ; *(u32 *)(r6 + 54) = r2
///   r5 = r1 ; r5 += r2                 ; UDP sum (UDPCSUM only; else r5 = 0)
///  [always]
///   r1 = r8 ; r1 += 1 ; r1 = be32 r1   ; sequence number k + 1
///   *(u32 *)(r6 + 46) = r1 ; r5 += r1
///   r1 = r8 ; r1 = be16 r1             ; IPv4 id = k mod 2^16
///   *(u16 *)(r6 + 18) = r1
///   r1 += ip_base ; fold ; r1 ^= 0xffff
///   *(u16 *)(r6 + 24) = r1             ; IPv4 header checksum
///  [port range, per port]
///   r1 = *(u32 *)(r7 + SPORT) ; r2 = r1 + 1 ; if r2 == span: r2 = 0
///   *(u32 *)(r7 + SPORT) = r2
///   r1 += min ; r1 = be16 r1 ; *(u16 *)(r6 + 34) = r1 ; r5 += r1
///  [UDPCSUM]
///   r5 += udp_base ; fold ; r5 ^= 0xffff ; if r5 == 0: r5 = 0xffff
///   *(u16 *)(r6 + 40) = r5
/// send:
///   r1 = ifindex ; r2 = 0
///   call bpf_redirect                  ; XDP_REDIRECT
///   exit
///  [Verdict::Pass instead: r0 = XDP_PASS ; exit]
/// abort:
///   r0 = XDP_ABORTED ; exit
/// ```
pub fn xdp_program(s: &Spec, state_fd: i32) -> Result<Vec<Insn>, String> {
    let mut a = Asm::new();
    let abort = a.label();
    if !s.plain {
        a.emit(Insn::ldx(op::W, R2, R1, 4))
            .emit(Insn::ldx(op::W, R6, R1, 0))
            .emit(Insn::mov64_reg(R1, R6))
            .emit(Insn::alu64_imm(op::ADD, R1, (OFF_TV_USEC + 4) as i32))
            .jmp_reg(op::JGT, R1, R2, abort);
    }
    a.emit2(Insn::ld_map_value(R7, state_fd, 0))
        .emit(Insn::ldx(op::DW, R8, R7, state::FRAMES))
        .emit(Insn::mov64_reg(R1, R8))
        .emit(Insn::alu64_imm(op::ADD, R1, 1))
        .emit(Insn::stx(op::DW, R7, state::FRAMES, R1));
    if !s.plain {
        if s.timestamps {
            let stamp = a.label();
            a.emit(Insn::ldx(op::DW, R1, R7, state::CLOCK_AT))
                .jmp_reg(op::JLT, R8, R1, stamp)
                .emit(Insn::mov64_reg(R1, R8))
                .emit(Insn::alu64_imm(op::ADD, R1, s.clock_every.max(1) as i32))
                .emit(Insn::stx(op::DW, R7, state::CLOCK_AT, R1))
                .emit(Insn::call(helper::KTIME_GET_NS))
                .emit(Insn::ldx(op::DW, R1, R7, state::RT_OFFSET))
                .emit(Insn::alu64_reg(op::ADD, R0, R1))
                .emit(Insn::alu64_imm(op::DIV, R0, 1000))
                .emit(Insn::mov64_reg(R1, R0))
                .emit(Insn::alu64_imm(op::DIV, R1, 1_000_000))
                .emit(Insn::mov64_reg(R2, R1))
                .emit(Insn::alu64_imm(op::MUL, R2, 1_000_000))
                .emit(Insn::alu64_reg(op::SUB, R0, R2))
                .emit(Insn::to_be(R1, 32))
                .emit(Insn::stx(op::W, R7, state::TV_SEC, R1))
                .emit(Insn::to_be(R0, 32))
                .emit(Insn::stx(op::W, R7, state::TV_USEC, R0));
            a.bind(stamp);
            a.emit(Insn::ldx(op::W, R1, R7, state::TV_SEC))
                .emit(Insn::stx(op::W, R6, OFF_TV_SEC as i16, R1))
                .emit(Insn::ldx(op::W, R2, R7, state::TV_USEC))
                .emit(Insn::stx(op::W, R6, OFF_TV_USEC as i16, R2));
            if s.udp_csum {
                a.emit(Insn::mov64_reg(R5, R1))
                    .emit(Insn::alu64_reg(op::ADD, R5, R2));
            }
        } else if s.udp_csum {
            a.emit(Insn::mov64_imm(R5, 0));
        }
        for &(off, size, v) in &s.restore {
            let size = if size == 4 { op::W } else { op::H };
            a.emit(Insn::st_imm(size, R6, off, v));
        }
        a.emit(Insn::mov64_reg(R1, R8))
            .emit(Insn::alu64_imm(op::ADD, R1, 1))
            .emit(Insn::to_be(R1, 32))
            .emit(Insn::stx(op::W, R6, OFF_SEQ as i16, R1));
        if s.udp_csum {
            a.emit(Insn::alu64_reg(op::ADD, R5, R1));
        }
        a.emit(Insn::mov64_reg(R1, R8))
            .emit(Insn::to_be(R1, 16))
            .emit(Insn::stx(op::H, R6, OFF_IP_ID as i16, R1))
            .emit(Insn::alu64_imm(op::ADD, R1, i32::from(s.ip_base)));
        fold(&mut a, R1, R2, 2);
        a.emit(Insn::alu64_imm(op::XOR, R1, 0xffff)).emit(Insn::stx(
            op::H,
            R6,
            OFF_IP_CSUM as i16,
            R1,
        ));
        if s.sport.varies() {
            port(&mut a, s.sport, state::SPORT, OFF_UDP_SPORT, s.udp_csum);
        }
        if s.dport.varies() {
            port(&mut a, s.dport, state::DPORT, OFF_UDP_DPORT, s.udp_csum);
        }
        if s.udp_csum {
            let nonzero = a.label();
            a.emit(Insn::alu64_imm(op::ADD, R5, i32::from(s.udp_base)));
            fold(&mut a, R5, R2, 3);
            a.emit(Insn::alu64_imm(op::XOR, R5, 0xffff))
                .jmp_imm(op::JNE, R5, 0, nonzero)
                .emit(Insn::mov64_imm(R5, 0xffff));
            a.bind(nonzero);
            a.emit(Insn::stx(op::H, R6, OFF_UDP_CSUM as i16, R5));
        }
    }
    if s.verdict == Verdict::Pass {
        a.emit(Insn::mov64_imm(R0, XDP_PASS)).emit(Insn::exit());
    } else {
        a.emit(Insn::mov64_imm(R1, s.ifindex as i32))
            .emit(Insn::mov64_imm(R2, 0))
            .emit(Insn::call(helper::REDIRECT))
            .emit(Insn::exit());
    }
    if !s.plain {
        // Only the full program checks the frame's length (the verifier rejects
        // unreachable instructions, so plain mode has no abort path).
        a.bind(abort);
        a.emit(Insn::mov64_imm(R0, XDP_ABORTED)).emit(Insn::exit());
    }
    a.finish()
}

/// The raw tracepoint program on `xdp:xdp_devmap_xmit(from_dev, to_dev, sent, drops, err)`:
/// adds `sent` and `drops` of the calls made by thread `TID` to the driver map.
///
/// ```text
///   r6 = r1                            ; the tracepoint's arguments, as u64s
///   call bpf_get_current_pid_tgid
///   r7 = &driver                       ; ld_imm64, BPF_PSEUDO_MAP_VALUE
///   r1 = *(u32 *)(r7 + TID)
///   w0 = w0                            ; thread id
///   if r0 != r1 goto out
///   r1 = *(u64 *)(r6 + 16) ; w1 = w1 ; lock *(u64 *)(r7 + SENT) += r1
///   r1 = *(u64 *)(r6 + 24) ; w1 = w1 ; lock *(u64 *)(r7 + DROPS) += r1
///   r1 = 1 ; lock *(u64 *)(r7 + CALLS) += r1
///   r1 = *(u64 *)(r6 + 32) ; if r1 == 0 goto out
///   *(u32 *)(r7 + LAST_ERR) = r1
/// out:
///   r0 = 0 ; exit
/// ```
pub fn devmap_xmit_program(driver_fd: i32) -> Result<Vec<Insn>, String> {
    let mut a = Asm::new();
    let out = a.label();
    a.emit(Insn::mov64_reg(R6, R1))
        .emit(Insn::call(helper::GET_CURRENT_PID_TGID))
        .emit2(Insn::ld_map_value(R7, driver_fd, 0))
        .emit(Insn::ldx(op::W, R1, R7, driver::TID))
        .emit(Insn::mov32_reg(R0, R0))
        .jmp_reg(op::JNE, R0, R1, out)
        .emit(Insn::ldx(op::DW, R1, R6, 16))
        .emit(Insn::mov32_reg(R1, R1))
        .emit(Insn::atomic_add64(R7, driver::SENT, R1))
        .emit(Insn::ldx(op::DW, R1, R6, 24))
        .emit(Insn::mov32_reg(R1, R1))
        .emit(Insn::atomic_add64(R7, driver::DROPS, R1))
        .emit(Insn::mov64_imm(R1, 1))
        .emit(Insn::atomic_add64(R7, driver::CALLS, R1))
        .emit(Insn::ldx(op::DW, R1, R6, 32))
        .jmp_imm(op::JEQ, R1, 0, out)
        .emit(Insn::stx(op::W, R7, driver::LAST_ERR, R1));
    a.bind(out);
    a.emit(Insn::mov64_imm(R0, 0)).emit(Insn::exit());
    a.finish()
}

#[cfg(test)]
mod tests;
