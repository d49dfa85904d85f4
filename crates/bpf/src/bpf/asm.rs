//! The eBPF assembler: instructions, their encoding, and a tiny assembler with labels.
//!
//! Pure: nothing here makes a syscall. Programs are arrays of 8-byte instructions written
//! in Rust (`src/bpf/prog/`) and loaded by `crate::sys::bpf`, which hands this layout to
//! the kernel as it is (hence `#[repr(C)]`).

/// One eBPF instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C)]
pub struct Insn {
    pub code: u8,
    /// dst_reg in the low nibble, src_reg in the high nibble.
    pub regs: u8,
    pub off: i16,
    pub imm: i32,
}

/// Opcode fields of eBPF instructions (Documentation/bpf/standardization/instruction-set.rst).
pub mod op {
    // Classes.
    pub const LD: u8 = 0x00;
    pub const LDX: u8 = 0x01;
    pub const ST: u8 = 0x02;
    pub const STX: u8 = 0x03;
    pub const ALU: u8 = 0x04;
    pub const JMP: u8 = 0x05;
    pub const ALU64: u8 = 0x07;
    // Sizes (load/store).
    pub const W: u8 = 0x00;
    pub const H: u8 = 0x08;
    pub const B: u8 = 0x10;
    pub const DW: u8 = 0x18;
    // Modes (load/store).
    pub const IMM: u8 = 0x00;
    pub const MEM: u8 = 0x60;
    pub const ATOMIC: u8 = 0xc0;
    // Source operand.
    pub const K: u8 = 0x00;
    pub const X: u8 = 0x08;
    // ALU operations.
    pub const ADD: u8 = 0x00;
    pub const SUB: u8 = 0x10;
    pub const MUL: u8 = 0x20;
    pub const DIV: u8 = 0x30;
    pub const OR: u8 = 0x40;
    pub const AND: u8 = 0x50;
    pub const LSH: u8 = 0x60;
    pub const RSH: u8 = 0x70;
    #[cfg(any(test, feature = "test-support"))]
    pub const MOD: u8 = 0x90;
    pub const XOR: u8 = 0xa0;
    pub const MOV: u8 = 0xb0;
    pub const END: u8 = 0xd0;
    /// With END: convert to big-endian (a byte swap on little-endian hosts).
    pub const TO_BE: u8 = 0x08;
    // Jump operations.
    pub const JA: u8 = 0x00;
    pub const JEQ: u8 = 0x10;
    pub const JGT: u8 = 0x20;
    pub const JGE: u8 = 0x30;
    pub const JNE: u8 = 0x50;
    pub const JLT: u8 = 0xa0;
    pub const JLE: u8 = 0xb0;
    pub const CALL: u8 = 0x80;
    pub const EXIT: u8 = 0x90;
}

/// Helper functions the programs call (`enum bpf_func_id`).
pub mod helper {
    /// `void *bpf_map_lookup_elem(map, key)`.
    pub const MAP_LOOKUP_ELEM: i32 = 1;
    /// `u64 bpf_ktime_get_ns(void)`: CLOCK_MONOTONIC in ns.
    pub const KTIME_GET_NS: i32 = 5;
    /// `u32 bpf_get_prandom_u32(void)`: the kernel's per-CPU pseudo-random generator.
    pub const GET_PRANDOM_U32: i32 = 7;
    /// `u64 bpf_get_current_pid_tgid(void)`: tgid << 32 | thread id.
    pub const GET_CURRENT_PID_TGID: i32 = 14;
    /// `long bpf_redirect(u32 ifindex, u64 flags)`: XDP_REDIRECT to that interface.
    pub const REDIRECT: i32 = 23;
    /// `long bpf_redirect_map(map, u32 key, u64 flags)`: XDP_REDIRECT to the map's entry
    /// `key`, else the action in the low bits of `flags`.
    pub const REDIRECT_MAP: i32 = 51;
    /// `long bpf_xdp_adjust_tail(xdp_md, int delta)`: grows or shrinks the frame at its end.
    pub const XDP_ADJUST_TAIL: i32 = 65;
    /// `long bpf_xdp_store_bytes(xdp_md, u32 offset, void *from, u32 len)` (Linux 5.18):
    /// copies `len` bytes from program memory into the frame at `offset`.
    pub const XDP_STORE_BYTES: i32 = 190;
}

/// `src_reg` of a 16-byte `ld_imm64` whose immediate is a map fd, to be replaced by the
/// map's address (for helpers that take a map).
pub const PSEUDO_MAP_FD: u8 = 1;

/// `src_reg` of a 16-byte `ld_imm64` whose immediate is a map fd, to be replaced by the
/// address of the map's (single) value plus the second half's immediate.
pub const PSEUDO_MAP_VALUE: u8 = 2;

impl Insn {
    /// Any instruction from its fields.
    pub const fn new(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> Insn {
        Insn {
            code,
            regs: (dst & 0x0f) | (src << 4),
            off,
            imm,
        }
    }

    pub const fn dst(&self) -> u8 {
        self.regs & 0x0f
    }

    pub const fn src(&self) -> u8 {
        self.regs >> 4
    }

    /// `r{dst} = imm` (64-bit move of a sign-extended 32-bit immediate).
    pub const fn mov64_imm(dst: u8, imm: i32) -> Insn {
        Insn::new(op::ALU64 | op::MOV | op::K, dst, 0, 0, imm)
    }

    /// `r{dst} = r{src}`.
    pub const fn mov64_reg(dst: u8, src: u8) -> Insn {
        Insn::new(op::ALU64 | op::MOV | op::X, dst, src, 0, 0)
    }

    /// `w{dst} = w{src}`: keeps the low 32 bits, zeroes the high ones.
    pub const fn mov32_reg(dst: u8, src: u8) -> Insn {
        Insn::new(op::ALU | op::MOV | op::X, dst, src, 0, 0)
    }

    /// `r{dst} OP= imm` (64-bit; `alu` is one of the `op` ALU operations).
    pub const fn alu64_imm(alu: u8, dst: u8, imm: i32) -> Insn {
        Insn::new(op::ALU64 | alu | op::K, dst, 0, 0, imm)
    }

    /// `r{dst} OP= r{src}` (64-bit).
    pub const fn alu64_reg(alu: u8, dst: u8, src: u8) -> Insn {
        Insn::new(op::ALU64 | alu | op::X, dst, src, 0, 0)
    }

    /// `r{dst} = htobe{bits}(r{dst})` (bits 16, 32 or 64); the result is zero-extended.
    pub const fn to_be(dst: u8, bits: i32) -> Insn {
        Insn::new(op::ALU | op::END | op::TO_BE, dst, 0, 0, bits)
    }

    /// `r{dst} = *(size *)(r{src} + off)`.
    pub const fn ldx(size: u8, dst: u8, src: u8, off: i16) -> Insn {
        Insn::new(op::LDX | op::MEM | size, dst, src, off, 0)
    }

    /// `*(size *)(r{dst} + off) = r{src}`.
    pub const fn stx(size: u8, dst: u8, off: i16, src: u8) -> Insn {
        Insn::new(op::STX | op::MEM | size, dst, src, off, 0)
    }

    /// `*(size *)(r{dst} + off) = imm`.
    pub const fn st_imm(size: u8, dst: u8, off: i16, imm: i32) -> Insn {
        Insn::new(op::ST | op::MEM | size, dst, 0, off, imm)
    }

    /// `lock *(u64 *)(r{dst} + off) += r{src}` (atomic add).
    pub const fn atomic_add64(dst: u8, off: i16, src: u8) -> Insn {
        Insn::new(op::STX | op::ATOMIC | op::DW, dst, src, off, op::ADD as i32)
    }

    /// `if r{dst} OP imm goto pc + 1 + off` (64-bit unsigned compare).
    pub const fn jmp_imm(jop: u8, dst: u8, imm: i32, off: i16) -> Insn {
        Insn::new(op::JMP | jop | op::K, dst, 0, off, imm)
    }

    /// `if r{dst} OP r{src} goto pc + 1 + off` (64-bit unsigned compare).
    pub const fn jmp_reg(jop: u8, dst: u8, src: u8, off: i16) -> Insn {
        Insn::new(op::JMP | jop | op::X, dst, src, off, 0)
    }

    /// `goto pc + 1 + off`.
    pub const fn ja(off: i16) -> Insn {
        Insn::new(op::JMP | op::JA, 0, 0, off, 0)
    }

    /// `call helper` (arguments in r1..r5, result in r0; r1..r5 are clobbered).
    pub const fn call(helper: i32) -> Insn {
        Insn::new(op::JMP | op::CALL, 0, 0, 0, helper)
    }

    /// `exit` (return r0).
    pub const fn exit() -> Insn {
        Insn::new(op::JMP | op::EXIT, 0, 0, 0, 0)
    }

    /// `r{dst} = &value_of(map) + offset`: a two-slot `ld_imm64` whose map fd the kernel
    /// replaces by the address of the value of a single-entry array map.
    pub const fn ld_map_value(dst: u8, map_fd: i32, offset: i32) -> [Insn; 2] {
        [
            Insn::new(op::LD | op::IMM | op::DW, dst, PSEUDO_MAP_VALUE, 0, map_fd),
            Insn::new(0, 0, 0, 0, offset),
        ]
    }

    /// `r{dst} = &map`: a two-slot `ld_imm64` whose map fd the kernel relocates at load time.
    pub const fn ld_map_fd(dst: u8, map_fd: i32) -> [Insn; 2] {
        [
            Insn::new(op::LD | op::IMM | op::DW, dst, PSEUDO_MAP_FD, 0, map_fd),
            Insn::new(0, 0, 0, 0, 0),
        ]
    }

    /// `r{dst} = imm64`: a two-slot `ld_imm64`.
    pub const fn ld_imm64(dst: u8, imm: u64) -> [Insn; 2] {
        [
            Insn::new(op::LD | op::IMM | op::DW, dst, 0, 0, imm as u32 as i32),
            Insn::new(0, 0, 0, 0, (imm >> 32) as u32 as i32),
        ]
    }

    /// Whether this is the first slot of a 16-byte `ld_imm64`.
    pub const fn is_ld_imm64(&self) -> bool {
        self.code == op::LD | op::IMM | op::DW
    }
}

/// A label in an [`Asm`] program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Label(usize);

/// A minimal assembler: instructions plus forward/backward jumps to labels.
#[derive(Debug, Default)]
pub struct Asm {
    insns: Vec<Insn>,
    labels: Vec<Option<usize>>,
    /// (index of a jump instruction, its target)
    fixups: Vec<(usize, Label)>,
}

impl Asm {
    pub fn new() -> Asm {
        Asm::default()
    }

    /// A new, not yet placed label.
    pub fn label(&mut self) -> Label {
        self.labels.push(None);
        Label(self.labels.len() - 1)
    }

    /// Places `l` at the next instruction.
    pub fn bind(&mut self, l: Label) {
        self.labels[l.0] = Some(self.insns.len());
    }

    pub fn emit(&mut self, i: Insn) -> &mut Asm {
        self.insns.push(i);
        self
    }

    pub fn emit2(&mut self, i: [Insn; 2]) -> &mut Asm {
        self.insns.extend_from_slice(&i);
        self
    }

    /// `if r{dst} OP imm goto l`.
    pub fn jmp_imm(&mut self, jop: u8, dst: u8, imm: i32, l: Label) -> &mut Asm {
        self.fixups.push((self.insns.len(), l));
        self.emit(Insn::jmp_imm(jop, dst, imm, 0))
    }

    /// `if r{dst} OP r{src} goto l`.
    pub fn jmp_reg(&mut self, jop: u8, dst: u8, src: u8, l: Label) -> &mut Asm {
        self.fixups.push((self.insns.len(), l));
        self.emit(Insn::jmp_reg(jop, dst, src, 0))
    }

    /// Resolves the jumps. Fails on an unplaced label or a jump out of range.
    pub fn finish(mut self) -> Result<Vec<Insn>, AsmError> {
        for &(at, l) in &self.fixups {
            let target = self.labels[l.0].ok_or(AsmError::NotPlaced(l.0))?;
            if target >= self.insns.len() {
                return Err(AsmError::PastTheEnd(l.0));
            }
            let off = target as i64 - at as i64 - 1;
            self.insns[at].off = i16::try_from(off).map_err(|_| AsmError::TooFar { at, target })?;
        }
        Ok(self.insns)
    }
}

/// A program whose jumps cannot be resolved (a mistake in the program's code).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AsmError {
    #[error("label {0} not placed")]
    NotPlaced(usize),
    #[error("label {0} placed past the last instruction")]
    PastTheEnd(usize),
    /// From instruction `at` to `target`: beyond an i16 offset.
    #[error("jump from {at} to {target} too far")]
    TooFar { at: usize, target: usize },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instruction_encoding() {
        assert_eq!(std::mem::size_of::<Insn>(), 8);
        let i = Insn::mov64_imm(0, 1);
        assert_eq!((i.code, i.regs, i.off, i.imm), (0xb7, 0, 0, 1));
        assert_eq!(Insn::exit().code, 0x95);
    }

    /// Encodings checked against the opcode tables of the eBPF instruction-set document.
    #[test]
    fn encodings_match_the_instruction_set() {
        let f = |i: Insn| (i.code, i.regs, i.off, i.imm);
        // r1 = *(u32 *)(r6 + 4): LDX|MEM|W, dst 1, src 6
        assert_eq!(f(Insn::ldx(op::W, 1, 6, 4)), (0x61, 0x61, 4, 0));
        // *(u16 *)(r6 + 24) = r1: STX|MEM|H
        assert_eq!(f(Insn::stx(op::H, 6, 24, 1)), (0x6b, 0x16, 24, 0));
        // *(u64 *)(r7 + 0) = r1
        assert_eq!(f(Insn::stx(op::DW, 7, 0, 1)), (0x7b, 0x17, 0, 0));
        // *(u32 *)(r1 + 8) = 5
        assert_eq!(f(Insn::st_imm(op::W, 1, 8, 5)), (0x62, 0x01, 8, 5));
        // lock *(u64 *)(r7 + 48) += r1: STX|ATOMIC|DW, imm BPF_ADD
        assert_eq!(f(Insn::atomic_add64(7, 48, 1)), (0xdb, 0x17, 48, 0));
        // r0 /= 1000 ; r1 *= r2 ; r5 ^= 0xffff ; r2 >>= 16 ; r1 &= 0xffff
        assert_eq!(f(Insn::alu64_imm(op::DIV, 0, 1000)), (0x37, 0x00, 0, 1000));
        assert_eq!(f(Insn::alu64_reg(op::MUL, 1, 2)), (0x2f, 0x21, 0, 0));
        assert_eq!(
            f(Insn::alu64_imm(op::XOR, 5, 0xffff)),
            (0xa7, 0x05, 0, 0xffff)
        );
        assert_eq!(f(Insn::alu64_imm(op::RSH, 2, 16)), (0x77, 0x02, 0, 16));
        assert_eq!(
            f(Insn::alu64_imm(op::AND, 1, 0xffff)),
            (0x57, 0x01, 0, 0xffff)
        );
        // r1 = r6 ; w0 = w0
        assert_eq!(f(Insn::mov64_reg(1, 6)), (0xbf, 0x61, 0, 0));
        assert_eq!(f(Insn::mov32_reg(0, 0)), (0xbc, 0x00, 0, 0));
        // r1 = be32 r1 ; r1 = be16 r1
        assert_eq!(f(Insn::to_be(1, 32)), (0xdc, 0x01, 0, 32));
        assert_eq!(f(Insn::to_be(1, 16)), (0xdc, 0x01, 0, 16));
        // if r1 > r2 goto +5 ; if r2 != 7 goto -3 ; if r8 < r1 goto +1 ; goto +2
        assert_eq!(f(Insn::jmp_reg(op::JGT, 1, 2, 5)), (0x2d, 0x21, 5, 0));
        assert_eq!(f(Insn::jmp_imm(op::JNE, 2, 7, -3)), (0x55, 0x02, -3, 7));
        assert_eq!(f(Insn::jmp_reg(op::JLT, 8, 1, 1)), (0xad, 0x18, 1, 0));
        assert_eq!(f(Insn::ja(2)), (0x05, 0, 2, 0));
        // call bpf_redirect
        assert_eq!(f(Insn::call(helper::REDIRECT)), (0x85, 0, 0, 23));
        // r7 = map[fd 5] value + 8: ld_imm64 with src_reg BPF_PSEUDO_MAP_VALUE
        let [a, b] = Insn::ld_map_value(7, 5, 8);
        assert_eq!((f(a), f(b)), ((0x18, 0x27, 0, 5), (0, 0, 0, 8)));
        assert!(a.is_ld_imm64() && !b.is_ld_imm64());
        assert_eq!((a.dst(), a.src()), (7, PSEUDO_MAP_VALUE));
        // r1 = map fd 9: ld_imm64 with src_reg BPF_PSEUDO_MAP_FD, the second half zero
        let [a, b] = Insn::ld_map_fd(1, 9);
        assert_eq!((f(a), f(b)), ((0x18, 0x11, 0, 9), (0, 0, 0, 0)));
        assert_eq!((a.dst(), a.src()), (1, PSEUDO_MAP_FD));
        // call bpf_map_lookup_elem ; call bpf_redirect_map
        assert_eq!(f(Insn::call(helper::MAP_LOOKUP_ELEM)), (0x85, 0, 0, 1));
        assert_eq!(f(Insn::call(helper::REDIRECT_MAP)), (0x85, 0, 0, 51));
        let [a, b] = Insn::ld_imm64(3, 0x1234_5678_9abc_def0);
        assert_eq!((a.imm as u32, b.imm as u32), (0x9abc_def0, 0x1234_5678));
    }

    #[test]
    fn assembler_resolves_labels() {
        let mut a = Asm::new();
        let fwd = a.label();
        let back = a.label();
        a.bind(back);
        a.emit(Insn::mov64_imm(0, 1))
            .jmp_imm(op::JEQ, 0, 1, fwd)
            .jmp_imm(op::JNE, 0, 0, back)
            .emit(Insn::mov64_imm(0, 2));
        a.bind(fwd);
        a.emit(Insn::exit());
        let p = a.finish().unwrap();
        assert_eq!(p[1].off, 2); // 1 -> 4
        assert_eq!(p[2].off, -3); // 2 -> 0
        let mut a = Asm::new();
        let l = a.label();
        a.jmp_imm(op::JEQ, 0, 0, l);
        assert!(a.finish().unwrap_err().to_string().contains("not placed"));
    }
}
