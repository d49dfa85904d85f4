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
//! The state map holds two u64s ([`state`]): the frames run (the program counts each, as
//! the walk's program does) and the slot of the next run (userspace sets it before each
//! syscall; the program takes it and moves it on).

use super::{R0, R1, R2, R3, R4, R6, R7, R8, R9, R10, Verdict, XDP_ABORTED, verdict_tail};
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
    pub const SIZE: usize = 16;
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

#[cfg(test)]
mod tests;
