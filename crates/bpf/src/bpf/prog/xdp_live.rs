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

use crate::bpf::asm::{Asm, AsmError, Insn, Label, helper, op};
use crate::wire::{checksum, ethernet, ipv4, ipv6, mpls, pktgen_hdr, udp, vlan};

pub use super::{XDP_ABORTED, XDP_PASS, XDP_REDIRECT};

mod maps;
pub mod slots;
mod spec;
pub use maps::{Driver, State, driver, state};
pub use slots::{SlotSpec, slots_program};
pub use spec::*;

// Registers.
const R0: u8 = 0;
const R1: u8 = 1;
const R2: u8 = 2;
const R3: u8 = 3;
const R4: u8 = 4;
const R5: u8 = 5;
const R6: u8 = 6;
const R7: u8 = 7;
const R8: u8 = 8;
const R9: u8 = 9;
const R10: u8 = 10;

/// A folded big-endian partial checksum in the host's byte order (see the module docs).
pub fn to_native(be_sum: u32) -> u16 {
    let folded = checksum::add(be_sum, 0) as u16;
    u16::from_ne_bytes(folded.to_be_bytes())
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

/// Whether `v` fits an instruction's sign-extended immediate as itself.
fn imm(v: u64) -> Option<i32> {
    i32::try_from(v).ok()
}

/// r{reg} OP= v (a 64-bit constant through r3 when it does not fit an immediate).
fn alu_const(a: &mut Asm, alu: u8, reg: u8, v: u64) {
    match imm(v) {
        Some(i) => {
            a.emit(Insn::alu64_imm(alu, reg, i));
        }
        None => {
            a.emit2(Insn::ld_imm64(R3, v))
                .emit(Insn::alu64_reg(alu, reg, R3));
        }
    }
}

/// if r{reg} OP v goto l (through r3 when `v` does not fit an immediate).
fn jmp_const(a: &mut Asm, jop: u8, reg: u8, v: u64, l: Label) {
    match imm(v) {
        Some(i) => {
            a.jmp_imm(jop, reg, i, l);
        }
        None => {
            a.emit2(Insn::ld_imm64(R3, v)).jmp_reg(jop, reg, R3, l);
        }
    }
}

/// r1 = uniform in 0..span (span <= 2^32): the top half of `prandom * span`.
fn random_below(a: &mut Asm, span: u64) {
    a.emit(Insn::call(helper::GET_PRANDOM_U32))
        .emit(Insn::mov32_reg(R1, R0));
    alu_const(a, op::MUL, R1, span);
    a.emit(Insn::alu64_imm(op::RSH, R1, 32));
}

/// r1 = the draw's next value; `slot` is the state slot of a walk in order.
fn draw(a: &mut Asm, d: &Draw, slot: &mut usize) {
    match *d {
        Draw::Seq { min, span, .. } => {
            let at = state::slot(*slot);
            *slot += 1;
            let keep = a.label();
            a.emit(Insn::ldx(op::W, R1, R7, at))
                .emit(Insn::mov64_reg(R2, R1))
                .emit(Insn::alu64_imm(op::ADD, R2, 1));
            jmp_const(a, op::JNE, R2, span, keep);
            a.emit(Insn::mov64_imm(R2, 0));
            a.bind(keep);
            a.emit(Insn::stx(op::W, R7, at, R2));
            if min != 0 {
                alu_const(a, op::ADD, R1, min);
            }
        }
        Draw::Rnd { min, span } => {
            random_below(a, span);
            if min != 0 {
                alu_const(a, op::ADD, R1, min);
            }
        }
    }
}

/// Stores r1's low `bytes` (2 or 4) big-endian at frame offset `off`.
fn store_be(a: &mut Asm, off: usize, bytes: u8) {
    let (bits, size) = if bytes == 2 { (16, op::H) } else { (32, op::W) };
    a.emit(Insn::to_be(R1, bits))
        .emit(Insn::stx(size, R6, off as i16, R1));
}

/// r1 = the field's value (without storing it).
fn field_value(a: &mut Asm, f: &Field, slot: &mut usize) {
    match f {
        Field::Mac { draw: d, .. } | Field::U16 { draw: d, .. } | Field::U32 { draw: d, .. } => {
            draw(a, d, slot)
        }
        Field::Ipv4Segments { segs, total, .. } => {
            random_below(a, *total);
            let done = a.label();
            for (i, &(lo, hi)) in segs.iter().enumerate() {
                if i + 1 == segs.len() {
                    alu_const(a, op::ADD, R1, u64::from(lo));
                    break;
                }
                let n = u64::from(hi - lo) + 1;
                let next = a.label();
                jmp_const(a, op::JGE, R1, n, next);
                alu_const(a, op::ADD, R1, u64::from(lo));
                a.jmp_imm(op::JA, 0, 0, done);
                a.bind(next);
                alu_const(a, op::SUB, R1, n);
            }
            a.bind(done);
        }
        Field::Ipv6Word { min, max, .. } => {
            a.emit(Insn::call(helper::GET_PRANDOM_U32))
                .emit(Insn::mov32_reg(R1, R0))
                .emit(Insn::alu64_imm(op::OR, R1, i32::from_ne_bytes(*min)))
                .emit(Insn::alu64_imm(op::AND, R1, i32::from_ne_bytes(*max)));
        }
        Field::RandomVid { keep, .. } => {
            a.emit(Insn::call(helper::GET_PRANDOM_U32))
                .emit(Insn::mov64_reg(R1, R0))
                .emit(Insn::alu64_imm(op::AND, R1, i32::from(vlan::VID_MAX)))
                .emit(Insn::alu64_imm(op::OR, R1, i32::from(*keep)));
        }
        Field::RandomMpls { bottom, .. } => {
            let label = mpls::LABEL_MAX & !mpls::BOTTOM_OF_STACK;
            a.emit(Insn::call(helper::GET_PRANDOM_U32))
                .emit(Insn::mov64_reg(R1, R0))
                .emit(Insn::alu64_imm(op::AND, R1, label as i32));
            if *bottom {
                a.emit(Insn::alu64_imm(op::OR, R1, mpls::BOTTOM_OF_STACK as i32));
            }
        }
    }
}

/// Writes r1 (the field's value) into the frame.
fn field_store(a: &mut Asm, f: &Field) {
    match f {
        Field::Mac { off, base, .. } => {
            // Low five bytes: (base + x) mod 2^40; the first byte is base's.
            let low = u64::from_be_bytes([0, 0, 0, base[1], base[2], base[3], base[4], base[5]]);
            alu_const(a, op::ADD, R1, low);
            a.emit(Insn::alu64_imm(op::LSH, R1, 24))
                .emit(Insn::alu64_imm(op::RSH, R1, 24))
                .emit(Insn::mov64_reg(R2, R1))
                .emit(Insn::alu64_imm(op::RSH, R2, 32))
                .emit(Insn::alu64_imm(op::OR, R2, i32::from(base[0]) << 8))
                .emit(Insn::to_be(R2, 16))
                .emit(Insn::stx(op::H, R6, *off as i16, R2));
            store_be(a, off + 2, 4);
        }
        Field::U16 { off, .. } | Field::RandomVid { off, .. } => store_be(a, *off, 2),
        Field::U32 { off, .. }
        | Field::Ipv4Segments { off, .. }
        | Field::RandomMpls { off, .. } => store_be(a, *off, 4),
        // Already in the frame's byte order.
        Field::Ipv6Word { off, .. } => {
            a.emit(Insn::stx(op::W, R6, *off as i16, R1));
        }
    }
}

/// r9 = this packet's flow entry (the flow taken in turn or at random, renewed once it has
/// sent `flowlen` packets — more than `flowlen` when random, the kernel's rule).
fn pick_flow(a: &mut Asm, f: &Flows, flows_fd: i32, abort: Label) {
    let entry = |a: &mut Asm| {
        a.jmp_imm(op::JGE, R1, f.n as i32, abort);
        a.emit(Insn::mov64_reg(R2, R1))
            .emit(Insn::alu64_imm(op::LSH, R2, 3))
            .emit2(Insn::ld_map_value(R9, flows_fd, 0))
            .emit(Insn::alu64_reg(op::ADD, R9, R2));
    };
    let keep = a.label();
    if f.seq {
        a.emit(Insn::ldx(op::W, R1, R7, state::CURFL));
        entry(a);
        a.emit(Insn::ldx(op::W, R2, R9, 4));
        jmp_const(a, op::JLT, R2, u64::from(f.flowlen), keep);
        a.emit(Insn::st_imm(op::DW, R9, 0, 0))
            .emit(Insn::alu64_imm(op::ADD, R1, 1));
        let wrap = a.label();
        a.jmp_imm(op::JNE, R1, f.n as i32, wrap);
        a.emit(Insn::mov64_imm(R1, 0));
        a.bind(wrap);
        a.emit(Insn::stx(op::W, R7, state::CURFL, R1));
        entry(a);
        a.bind(keep);
    } else {
        random_below(a, u64::from(f.n));
        entry(a);
        a.emit(Insn::ldx(op::W, R2, R9, 4));
        jmp_const(a, op::JLE, R2, u64::from(f.flowlen), keep);
        a.emit(Insn::st_imm(op::DW, R9, 0, 0));
        a.bind(keep);
    }
}

/// The flow's destination: drawn (and kept) when the flow is new, else the one it kept;
/// the flow counts the packet.
fn flow_field(a: &mut Asm, fld: &Field, slot: &mut usize) {
    let have = a.label();
    let store = a.label();
    a.emit(Insn::ldx(op::W, R1, R9, 4));
    a.jmp_imm(op::JNE, R1, 0, have);
    field_value(a, fld, slot);
    a.emit(Insn::stx(op::W, R9, 0, R1));
    a.jmp_imm(op::JA, 0, 0, store);
    a.bind(have);
    a.emit(Insn::ldx(op::W, R1, R9, 0));
    a.bind(store);
    a.emit(Insn::ldx(op::W, R2, R9, 4))
        .emit(Insn::alu64_imm(op::ADD, R2, 1))
        .emit(Insn::stx(op::W, R9, 4, R2));
    field_store(a, fld);
}

/// r1 = this packet's frame length, r9 = ctx; shrinks the frame to it; keeps it at r10-8.
fn size(a: &mut Asm, s: &Spec, sz: &Size, slot: &mut usize, abort: Label) {
    match sz {
        Size::Draw(d) => {
            draw(a, d, slot);
            let big = a.label();
            jmp_const(a, op::JGE, R1, s.at.min_frame() as u64, big);
            a.emit(Insn::mov64_imm(R1, s.at.min_frame() as i32));
            a.bind(big);
        }
        Size::Imix(t) => {
            random_below(a, t.len() as u64);
            a.jmp_imm(op::JGE, R1, t.len() as i32, abort);
            a.emit(Insn::alu64_imm(op::LSH, R1, 1))
                .emit(Insn::alu64_reg(op::ADD, R1, R7))
                .emit(Insn::ldx(op::H, R1, R1, s.imix_at() as i16));
        }
    }
    a.emit(Insn::stx(op::DW, R10, -8, R1))
        .emit(Insn::mov64_reg(R2, R1))
        .emit(Insn::alu64_imm(op::SUB, R2, s.max_len as i32))
        .emit(Insn::mov64_reg(R1, R9))
        .emit(Insn::call(helper::XDP_ADJUST_TAIL))
        .jmp_imm(op::JNE, R0, 0, abort);
    a.emit(Insn::mov64_reg(R1, R9))
        .emit(Insn::ldx(op::DW, R2, R7, state::BYTES))
        .emit(Insn::ldx(op::DW, R3, R10, -8))
        .emit(Insn::alu64_reg(op::ADD, R2, R3))
        .emit(Insn::stx(op::DW, R7, state::BYTES, R2));
}

/// The program's verdict, the one place the frame's fate is decided: `bpf_redirect(ifindex,
/// 0)` (XDP_REDIRECT), or XDP_PASS into the ingress device's receive path (netif_receive).
fn verdict_tail(a: &mut Asm, verdict: Verdict, ifindex: u32) {
    match verdict {
        Verdict::Pass => {
            a.emit(Insn::mov64_imm(R0, XDP_PASS)).emit(Insn::exit());
        }
        Verdict::Redirect => {
            a.emit(Insn::mov64_imm(R1, ifindex as i32))
                .emit(Insn::mov64_imm(R2, 0))
                .emit(Insn::call(helper::REDIRECT))
                .emit(Insn::exit());
        }
    }
}

/// The XDP program for `s`, referring to the state map by fd `state_fd` (and, with flows,
/// the flow map by `flows_fd`).
///
/// ```text
///  [size varies]
///   r9 = r1 ; r7 = &state
///   r1 = next length (walk, random, or IMIX table[random % 100]), at least the headers
///   *(u64 *)(r10 - 8) = r1
///   r2 = r1 - max_len ; r1 = r9 ; call bpf_xdp_adjust_tail ; if r0 != 0 goto abort
///   state.bytes += length ; r1 = r9
///   r2 = *(u32 *)(r1 + 4)              ; data_end
///   r6 = *(u32 *)(r1 + 0)              ; data
///   r1 = r6 ; r1 += min_frame
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
///   r0 /= 1000 ; tv_sec = r0 / 1000000 ; tv_usec = r0 - tv_sec * 1000000
///   state.tv_sec = be32 tv_sec ; state.tv_usec = be32 tv_usec
/// stamp:
///   *(u32 *)(r6 + tv_sec) = state.tv_sec ; *(u32 *)(r6 + tv_usec) = state.tv_usec
///  [per field, in order]
///   r1 = min + x                       ; x: the walk's slot (then advanced, wrapping), or
///                                      ; the top half of bpf_get_prandom_u32() * span
///   *(be *)(r6 + off) = r1             ; MACs add the base with carry; flows keep theirs
///  [always]
///   the constant header bytes, stored back as immediates
///   *(u32 *)(r6 + seq) = be32 (k + 1)
///   *(u16 *)(r6 + ip id) = be16 k      ; IPv4
///  [size varies] the IP and UDP lengths from *(u64 *)(r10 - 8)
///   r1 = ip_base + the written IPv4 header words (loaded back) ; fold ; ^= 0xffff ; store
///  [UDPCSUM]
///   r5 = udp_base + the written pseudo-header and segment words ; fold ; ^= 0xffff
///   if r5 == 0: r5 = 0xffff ; store
/// send:
///   r1 = ifindex ; r2 = 0
///   call bpf_redirect                  ; XDP_REDIRECT
///   exit
///  [Verdict::Pass instead: r0 = XDP_PASS ; exit]
/// abort:
///   r0 = XDP_ABORTED ; exit
/// ```
pub fn xdp_program(s: &Spec, state_fd: i32) -> Result<Vec<Insn>, AsmError> {
    xdp_program_with_flows(s, state_fd, -1)
}

/// [`xdp_program`] with the flow map's fd (used when `s.flows` is set).
pub fn xdp_program_with_flows(
    s: &Spec,
    state_fd: i32,
    flows_fd: i32,
) -> Result<Vec<Insn>, AsmError> {
    let at = s.at;
    let mut a = Asm::new();
    let abort = a.label();
    let mut slot = 0usize;
    // The size walk's slot comes after the fields' ([`Spec::seq_walks`]).
    let mut size_slot = s
        .fields
        .iter()
        .filter_map(Field::draw)
        .filter(|d| !d.is_random())
        .count();
    if let Some(sz) = &s.size {
        a.emit(Insn::mov64_reg(R9, R1))
            .emit2(Insn::ld_map_value(R7, state_fd, 0));
        size(&mut a, s, sz, &mut size_slot, abort);
    }
    if !s.plain {
        a.emit(Insn::ldx(op::W, R2, R1, 4))
            .emit(Insn::ldx(op::W, R6, R1, 0))
            .emit(Insn::mov64_reg(R1, R6))
            .emit(Insn::alu64_imm(op::ADD, R1, at.min_frame() as i32))
            .jmp_reg(op::JGT, R1, R2, abort);
    }
    if s.size.is_none() {
        a.emit2(Insn::ld_map_value(R7, state_fd, 0));
    }
    a.emit(Insn::ldx(op::DW, R8, R7, state::FRAMES))
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
                .emit(Insn::stx(op::W, R6, at.tv_sec() as i16, R1))
                .emit(Insn::ldx(op::W, R2, R7, state::TV_USEC))
                .emit(Insn::stx(op::W, R6, at.tv_usec() as i16, R2));
        }
        if let Some(f) = &s.flows {
            pick_flow(&mut a, f, flows_fd, abort);
        }
        for (i, f) in s.fields.iter().enumerate() {
            if s.flows.is_some_and(|fl| fl.field == i) {
                flow_field(&mut a, f, &mut slot);
            } else {
                field_value(&mut a, f, &mut slot);
                field_store(&mut a, f);
            }
        }
        for &(off, size, v) in &s.restore {
            let size = if size == 4 { op::W } else { op::H };
            a.emit(Insn::st_imm(size, R6, off, v));
        }
        a.emit(Insn::mov64_reg(R1, R8))
            .emit(Insn::alu64_imm(op::ADD, R1, 1))
            .emit(Insn::to_be(R1, 32))
            .emit(Insn::stx(op::W, R6, at.seq() as i16, R1));
        if !at.ipv6 {
            a.emit(Insn::mov64_reg(R1, R8))
                .emit(Insn::to_be(R1, 16))
                .emit(Insn::stx(op::H, R6, at.ip_id() as i16, R1));
        }
        if s.size.is_some() {
            let l3 = if at.ipv6 { at.l4() } else { at.l3 };
            a.emit(Insn::ldx(op::DW, R1, R10, -8))
                .emit(Insn::alu64_imm(op::SUB, R1, l3 as i32));
            store_be(&mut a, at.ip_len(), 2);
            a.emit(Insn::ldx(op::DW, R1, R10, -8)).emit(Insn::alu64_imm(
                op::SUB,
                R1,
                at.l4() as i32,
            ));
            store_be(&mut a, at.udp_len(), 2);
        }
        let (ip_loads, udp_loads) = s.sum_loads();
        let sum = |a: &mut Asm, reg: u8, base: u16, loads: &[Load]| {
            a.emit(Insn::mov64_imm(reg, i32::from(base)));
            for &(off, n) in loads {
                let size = if n == 4 { op::W } else { op::H };
                a.emit(Insn::ldx(size, R2, R6, off as i16))
                    .emit(Insn::alu64_reg(op::ADD, reg, R2));
            }
        };
        if !at.ipv6 {
            sum(&mut a, R1, s.ip_base, &ip_loads);
            fold(&mut a, R1, R2, 3);
            a.emit(Insn::alu64_imm(op::XOR, R1, 0xffff)).emit(Insn::stx(
                op::H,
                R6,
                at.ip_csum() as i16,
                R1,
            ));
        }
        if s.udp_csum {
            let nonzero = a.label();
            sum(&mut a, R5, s.udp_base, &udp_loads);
            fold(&mut a, R5, R2, 4);
            a.emit(Insn::alu64_imm(op::XOR, R5, 0xffff))
                .jmp_imm(op::JNE, R5, 0, nonzero)
                .emit(Insn::mov64_imm(R5, 0xffff));
            a.bind(nonzero);
            a.emit(Insn::stx(op::H, R6, at.udp_csum() as i16, R5));
        }
    }
    verdict_tail(&mut a, s.verdict, s.ifindex);
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
pub fn devmap_xmit_program(driver_fd: i32) -> Result<Vec<Insn>, AsmError> {
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
// The eBPF interpreter the program is tested on; the engine's walk tests run it too.
#[cfg(any(test, feature = "test-support"))]
pub mod vm;
