//! The cheapest sink: an XDP program that counts every frame in a per-CPU map and drops it.
//!
//! ```text
//!   *(u32 *)(r10 - 4) = 0              key
//!   r2 = r10; r2 += -4
//!   r1 = map (ld_imm64, BPF_PSEUDO_MAP_FD)
//!   call bpf_map_lookup_elem
//!   if r0 == 0 goto out
//!   r1 = *(u64 *)(r0 + 0); r1 += 1; *(u64 *)(r0 + 0) = r1   (this CPU's slot: no atomics)
//! out:
//!   r0 = XDP_DROP; exit
//! ```
//! upktgen reads the counter by summing the CPUs' slots. The lab's `drop` receiver is this
//! program (`crate::lab`), so every run reports what the sink counted beside veth-rx's
//! rx_packets.

use super::XDP_DROP;
use crate::bpf::asm::{Insn, helper, op};

/// The counting program for the counter whose fd is `map_fd`.
pub fn program(map_fd: i32) -> Vec<Insn> {
    let mut p = vec![
        Insn::st_imm(op::W, 10, -4, 0),
        Insn::mov64_reg(2, 10),
        Insn::alu64_imm(op::ADD, 2, -4),
    ];
    // ld_imm64 r1, map: src = BPF_PSEUDO_MAP_FD (1), the fd in the first imm.
    p.extend(Insn::ld_map_fd(1, map_fd));
    p.extend([
        Insn::call(helper::MAP_LOOKUP_ELEM),
        // if r0 == 0 skip the 3 instructions of the increment
        Insn::new(op::JMP | op::JEQ | op::K, 0, 0, 3, 0),
        Insn::ldx(op::DW, 1, 0, 0),
        Insn::alu64_imm(op::ADD, 1, 1),
        Insn::stx(op::DW, 0, 0, 1),
        Insn::mov64_imm(0, XDP_DROP),
        Insn::exit(),
    ]);
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn program_shape() {
        let p = program(7);
        assert_eq!(p.len(), 12);
        assert!(p[3].is_ld_imm64());
        assert_eq!((p[3].imm, p[3].src()), (7, 1));
        // The branch lands on `r0 = XDP_DROP`.
        assert_eq!(6 + 1 + p[6].off as usize, 10);
        assert_eq!(p[10], Insn::mov64_imm(0, XDP_DROP));
    }
}
