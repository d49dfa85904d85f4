//! The streams program: each frame copied whole from a slot userspace wrote.
//!
//! A config's streams differ in everything (headers, sizes, patterns), and the timeline
//! decides which stream's frame comes next. So the user side does what it does for the
//! other backends: before each `BPF_PROG_RUN` it writes the next frames due, whole, each
//! into a slot of an mmap-able array map ([`layout`]: the frame's length, then its bytes),
//! and runs the program that many times. Run `i` of the syscall copies slot `i` into its
//! page (`bpf_xdp_store_bytes` from the map value), first setting the page's length to the
//! frame's (`bpf_xdp_adjust_tail` by the difference from the page's current length), and
//! redirects it. Every byte of the frame is written on every run, so neither a recycled
//! page nor what a receiver did to it in place can show through.
//!
//! The state map ([`state`]) holds the frames run (the program counts each, as the walk's
//! program does) and the slot of the next run (userspace sets it before each syscall; the
//! program takes it and moves it on).
//!
//! **The send time** ([`Stamp`]). The sender stamps a batch before the syscall, but a run
//! of many frames starts after the kernel's set-up and lasts a while: so the program
//! stamps again, as the walk's program does, at the first frame of the syscall and then
//! every `batch` frames (`bpf_ktime_get_ns` plus the CLOCK_REALTIME offset userspace
//! stores before each syscall). It replaces the signature's send time in the slot before
//! copying it (a send time of 0, "not stamped", is kept) and corrects the checksum that
//! covers it, incrementally (RFC 1624: `HC' = ~(~HC + ~m + m')` over the four 16-bit
//! words), at the offset the stream's entry in the *patch* map gives ([`patch`]: by the
//! signature's stream id; 0 when no checksum covers it). As in the walk's program, the
//! words are added in the host's byte order (RFC 1071's byte-order independence), and
//! swapped when the send time starts at an odd offset from the checksum's words.

use super::{R0, R1, R2, R3, R4, R5, R6, R7, R8, R9, R10, Verdict, XDP_ABORTED, verdict_tail};
use crate::bpf::asm::{Asm, AsmError, Insn, helper, op};

/// Layout of a slot (a value of the slot map).
pub mod layout {
    /// u32: the frame's length in bytes.
    pub const LEN: usize = 0;
    /// Where the frame's bytes start.
    pub const FRAME: usize = 8;

    /// The value size of slots holding frames of up to `max_len` bytes.
    pub fn value_size(max_len: usize) -> usize {
        FRAME + max_len
    }

    /// Slot `value`'s room for a frame of `len` bytes, the length written: the sender
    /// writes the frame there.
    ///
    /// # Panics
    /// If the slot is shorter than [`value_size`]`(len)`.
    #[inline]
    pub fn frame_mut(value: &mut [u8], len: usize) -> &mut [u8] {
        value[LEN..LEN + 4].copy_from_slice(&(len as u32).to_ne_bytes());
        &mut value[FRAME..FRAME + len]
    }
}

/// Layout of the streams program's state map value (native-endian u64s).
pub mod state {
    /// u64: frames the program has run (each redirected, or passed).
    pub const FRAMES: i16 = 0;
    /// u64: the slot the next run copies (userspace sets it before each syscall).
    pub const NEXT: i16 = 8;
    /// u64: CLOCK_REALTIME - CLOCK_MONOTONIC in ns (userspace sets it before each syscall).
    pub const RT_OFFSET: i16 = 16;
    /// u64: the value of FRAMES at which the program reads the clock next (userspace sets
    /// 0 before each syscall).
    pub const CLOCK_AT: i16 = 24;
    /// u64: the last send time read, as the signature holds it (big-endian bytes).
    pub const TX: i16 = 32;
    pub const SIZE: usize = 40;
}

/// Layout of the patch map: one 8-byte entry per stream id.
pub mod patch {
    /// u16: offset in the frame of the checksum field that covers the signature; 0: none.
    pub const CSUM: i16 = 0;
    /// u8: 1 when it is UDP's (a computed 0 is sent as 0xffff).
    pub const UDP: i16 = 2;
    pub const ENTRY: usize = 8;

    /// The entry of a stream whose signature is covered by the checksum at `csum`
    /// (UDP's when `udp`), or by none.
    pub fn entry(csum: Option<(usize, bool)>) -> [u8; ENTRY] {
        let mut e = [0u8; ENTRY];
        if let Some((off, udp)) = csum {
            e[CSUM as usize..CSUM as usize + 2].copy_from_slice(&(off as u16).to_ne_bytes());
            e[UDP as usize] = u8::from(udp);
        }
        e
    }
}

/// The program's own send times: the patch map's fd, its streams, and how often the clock
/// is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    pub patch_fd: i32,
    /// Entries of the patch map (the run's streams).
    pub streams: u32,
    /// Frames between clock readings.
    pub every: u32,
}

/// What the streams program is built for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotSpec {
    /// The device frames are redirected to (with [`Verdict::Redirect`]).
    pub ifindex: u32,
    pub verdict: Verdict,
    /// Slots in the map: a syscall runs at most this many frames.
    pub slots: u32,
    /// The shortest and the longest frame a slot holds (the prepared page is the longest).
    pub min_len: usize,
    pub max_len: usize,
    /// Whether and how the program stamps the frames (None: as the sender wrote them).
    pub stamp: Option<Stamp>,
}

/// The streams program, referring to its state map by fd `state_fd` (a single-entry array
/// of [`state::SIZE`] bytes) and its slot map by `slots_fd` (`spec.slots` values of
/// [`layout::value_size`]`(spec.max_len)` bytes).
///
/// ```text
///   r9 = r1                            ; ctx
///   r7 = &state                        ; ld_imm64, BPF_PSEUDO_MAP_VALUE
///   r8 = *(u64 *)(r7 + NEXT)
///   if r8 >= slots goto abort
///   r1 = r8 ; r1 += 1 ; *(u64 *)(r7 + NEXT) = r1
///   *(u32 *)(r10 - 4) = r8
///   r1 = &slots ; r2 = r10 - 4 ; call bpf_map_lookup_elem
///   if r0 == 0 goto abort
///   r6 = r0                            ; the slot
///   r8 = *(u32 *)(r6 + LEN)
///   if r8 > max_len goto abort ; if r8 < min_len goto abort
///  [stamp]
///   if FRAMES >= CLOCK_AT: CLOCK_AT = FRAMES + every ;
///                          TX = be64 (bpf_ktime_get_ns() + RT_OFFSET)
///   r1 = r6 + r8                       ; the slot's end of frame
///   r2 = *(u64 *)(r1 + FRAME - 8)      ; the send time written
///   if r2 == 0 goto copy
///   *(u64 *)(r1 + FRAME - 8) = TX
///   r4 = be16 *(u16 *)(r1 + FRAME - 14) ; the stream id
///   if r4 >= streams goto abort
///   r5 = &patch[r4] ; r4 = its CSUM ; if r4 == 0 goto copy ; if r4 > max_len - 2 goto abort
///   delta = fold(words(TX) + 4 * 0xffff - words(r2)), swapped if (r8 - r4) is odd
///   c = *(u16 *)(r6 + FRAME + r4) ; c = ~fold(~c + delta) ; UDP: 0 -> 0xffff ; store
/// copy:
///   r2 = *(u32 *)(r9 + 4) ; r1 = *(u32 *)(r9 + 0) ; r2 -= r1      ; the page's length
///   r1 = r8 ; r1 -= r2 ; r2 = r1 ; r1 = r9
///   call bpf_xdp_adjust_tail ; if r0 != 0 goto abort
///   r1 = r9 ; r2 = 0 ; r3 = r6 ; r3 += FRAME ; r4 = r8
///   call bpf_xdp_store_bytes ; if r0 != 0 goto abort
///   r1 = *(u64 *)(r7 + FRAMES) ; r1 += 1 ; *(u64 *)(r7 + FRAMES) = r1
///   r1 = ifindex ; r2 = 0 ; call bpf_redirect ; exit   [Pass: r0 = XDP_PASS ; exit]
/// abort:
///   r0 = XDP_ABORTED ; exit
/// ```
pub fn slots_program(s: &SlotSpec, state_fd: i32, slots_fd: i32) -> Result<Vec<Insn>, AsmError> {
    let mut a = Asm::new();
    let abort = a.label();
    // Beyond i32 (never: a slot map is bounded), the verifier refuses the program.
    let bound = |v: usize| i32::try_from(v).unwrap_or(i32::MAX);
    let (slots, min_len, max_len) = (
        bound(s.slots as usize),
        bound(s.min_len.max(1)),
        bound(s.max_len),
    );
    a.emit(Insn::mov64_reg(R9, R1))
        .emit2(Insn::ld_map_value(R7, state_fd, 0))
        .emit(Insn::ldx(op::DW, R8, R7, state::NEXT))
        .jmp_imm(op::JGE, R8, slots, abort);
    a.emit(Insn::mov64_reg(R1, R8))
        .emit(Insn::alu64_imm(op::ADD, R1, 1))
        .emit(Insn::stx(op::DW, R7, state::NEXT, R1))
        .emit(Insn::stx(op::W, R10, -4, R8))
        .emit2(Insn::ld_map_fd(R1, slots_fd))
        .emit(Insn::mov64_reg(R2, R10))
        .emit(Insn::alu64_imm(op::ADD, R2, -4))
        .emit(Insn::call(helper::MAP_LOOKUP_ELEM))
        .jmp_imm(op::JEQ, R0, 0, abort);
    a.emit(Insn::mov64_reg(R6, R0))
        .emit(Insn::ldx(op::W, R8, R6, layout::LEN as i16))
        .jmp_imm(op::JGT, R8, max_len, abort)
        .jmp_imm(op::JLT, R8, min_len, abort);
    if let Some(st) = &s.stamp {
        restamp(&mut a, st, max_len, abort);
    }
    a.emit(Insn::ldx(op::W, R2, R9, 4))
        .emit(Insn::ldx(op::W, R1, R9, 0))
        .emit(Insn::alu64_reg(op::SUB, R2, R1))
        .emit(Insn::mov64_reg(R1, R8))
        .emit(Insn::alu64_reg(op::SUB, R1, R2))
        .emit(Insn::mov64_reg(R2, R1))
        .emit(Insn::mov64_reg(R1, R9))
        .emit(Insn::call(helper::XDP_ADJUST_TAIL))
        .jmp_imm(op::JNE, R0, 0, abort);
    a.emit(Insn::mov64_reg(R1, R9))
        .emit(Insn::mov64_imm(R2, 0))
        .emit(Insn::mov64_reg(R3, R6))
        .emit(Insn::alu64_imm(op::ADD, R3, layout::FRAME as i32))
        .emit(Insn::mov64_reg(R4, R8))
        .emit(Insn::call(helper::XDP_STORE_BYTES))
        .jmp_imm(op::JNE, R0, 0, abort);
    a.emit(Insn::ldx(op::DW, R1, R7, state::FRAMES))
        .emit(Insn::alu64_imm(op::ADD, R1, 1))
        .emit(Insn::stx(op::DW, R7, state::FRAMES, R1));
    verdict_tail(&mut a, s.verdict, s.ifindex);
    a.bind(abort);
    a.emit(Insn::mov64_imm(R0, XDP_ABORTED)).emit(Insn::exit());
    a.finish()
}

/// r{dst} = the sum of the four 16-bit words of r{src} (using r1).
fn words(a: &mut Asm, dst: u8, src: u8) {
    a.emit(Insn::mov64_imm(dst, 0));
    for i in 0..4 {
        a.emit(Insn::mov64_reg(R1, src))
            .emit(Insn::alu64_imm(op::RSH, R1, 16 * i))
            .emit(Insn::alu64_imm(op::AND, R1, 0xffff))
            .emit(Insn::alu64_reg(op::ADD, dst, R1));
    }
}

/// The send time of the frame in slot r6 (its length r8) from the program's clock, and
/// the checksum that covers it corrected (see the module docs). r7 is the state.
fn restamp(a: &mut Asm, st: &Stamp, max_len: i32, abort: crate::bpf::asm::Label) {
    use layout::FRAME;
    let (have, copy, even, store) = (a.label(), a.label(), a.label(), a.label());
    let sig_tx = FRAME as i16 - 8;
    let sig_stream = FRAME as i16 - 14;
    a.emit(Insn::ldx(op::DW, R3, R7, state::FRAMES))
        .emit(Insn::ldx(op::DW, R4, R7, state::CLOCK_AT))
        .jmp_reg(op::JLT, R3, R4, have);
    a.emit(Insn::alu64_imm(op::ADD, R3, st.every.max(1) as i32))
        .emit(Insn::stx(op::DW, R7, state::CLOCK_AT, R3))
        .emit(Insn::call(helper::KTIME_GET_NS))
        .emit(Insn::ldx(op::DW, R1, R7, state::RT_OFFSET))
        .emit(Insn::alu64_reg(op::ADD, R0, R1))
        .emit(Insn::to_be(R0, 64))
        .emit(Insn::stx(op::DW, R7, state::TX, R0));
    a.bind(have);
    a.emit(Insn::mov64_reg(R1, R6))
        .emit(Insn::alu64_reg(op::ADD, R1, R8))
        .emit(Insn::ldx(op::DW, R2, R1, sig_tx))
        .jmp_imm(op::JEQ, R2, 0, copy);
    a.emit(Insn::ldx(op::DW, R3, R7, state::TX))
        .emit(Insn::stx(op::DW, R1, sig_tx, R3))
        .emit(Insn::ldx(op::H, R4, R1, sig_stream))
        .emit(Insn::to_be(R4, 16))
        .jmp_imm(op::JGE, R4, st.streams as i32, abort);
    a.emit(Insn::alu64_imm(op::LSH, R4, 3))
        .emit2(Insn::ld_map_value(R5, st.patch_fd, 0))
        .emit(Insn::alu64_reg(op::ADD, R5, R4))
        .emit(Insn::ldx(op::H, R4, R5, patch::CSUM))
        .jmp_imm(op::JEQ, R4, 0, copy)
        .jmp_imm(op::JGT, R4, max_len - 2, abort);
    a.emit(Insn::ldx(op::B, R0, R5, patch::UDP))
        .emit(Insn::stx(op::DW, R10, -16, R0));
    // delta = words(new) + 4 * 0xffff - words(old), folded.
    words(a, R5, R3);
    words(a, R0, R2);
    a.emit(Insn::alu64_imm(op::ADD, R5, 4 * 0xffff))
        .emit(Insn::alu64_reg(op::SUB, R5, R0));
    super::fold(a, R5, R1, 3);
    a.emit(Insn::mov64_reg(R1, R8))
        .emit(Insn::alu64_reg(op::SUB, R1, R4))
        .emit(Insn::alu64_imm(op::AND, R1, 1))
        .jmp_imm(op::JEQ, R1, 0, even);
    a.emit(Insn::mov64_reg(R1, R5))
        .emit(Insn::alu64_imm(op::RSH, R1, 8))
        .emit(Insn::alu64_imm(op::LSH, R5, 8))
        .emit(Insn::alu64_imm(op::AND, R5, 0xff00))
        .emit(Insn::alu64_reg(op::OR, R5, R1));
    a.bind(even);
    a.emit(Insn::mov64_reg(R2, R6))
        .emit(Insn::alu64_reg(op::ADD, R2, R4))
        .emit(Insn::ldx(op::H, R3, R2, FRAME as i16))
        .emit(Insn::alu64_imm(op::XOR, R3, 0xffff))
        .emit(Insn::alu64_reg(op::ADD, R3, R5));
    super::fold(a, R3, R1, 2);
    a.emit(Insn::alu64_imm(op::XOR, R3, 0xffff))
        .jmp_imm(op::JNE, R3, 0, store);
    a.emit(Insn::ldx(op::DW, R1, R10, -16))
        .jmp_imm(op::JEQ, R1, 0, store);
    a.emit(Insn::mov64_imm(R3, 0xffff));
    a.bind(store);
    a.emit(Insn::stx(op::H, R2, FRAME as i16, R3));
    a.bind(copy);
}

#[cfg(test)]
mod tests;
