//! The AF_XDP receiver's XDP program: redirect each IPv4/UDP frame to the socket of its RX
//! queue, pass every other frame to the stack (ARP, TCP, ... keep working on a watched
//! device), and count per CPU what was redirected and what was passed, and why.
//!
//! ```text
//!   r6 = r1                                    ctx
//!   r7 = XDP_PASS; key = NOT_UDP
//!   r2 = ctx->data; r3 = ctx->data_end
//!   if r2 + 34 > r3 goto count                 Ethernet + IPv4 header
//!   if *(u16 *)(r2 + 12) != htons(0x0800) goto count
//!   if *(u8 *)(r2 + 23) != IPPROTO_UDP goto count
//!   r2 = ctx->rx_queue_index
//!   r1 = xskmap (ld_imm64, BPF_PSEUDO_MAP_FD)
//!   r3 = XDP_PASS                              action when the queue has no socket
//!   r7 = bpf_redirect_map(r1, r2, r3)          XDP_REDIRECT or XDP_PASS
//!   key = r7 == XDP_REDIRECT ? REDIRECTED : NO_SOCKET
//! count:
//!   r0 = bpf_map_lookup_elem(counters, &key)   (ld_imm64, BPF_PSEUDO_MAP_FD)
//!   if r0 != 0: *(u64 *)r0 += 1                (this CPU's slot: no atomics)
//!   r0 = r7; exit
//! ```
//! With these counters the report can say "redirected by XDP N, received on the socket M,
//! dropped by the socket K" and name what is left over.

use super::{XDP_PASS, XDP_REDIRECT};
use crate::bpf::asm::{Insn, helper, op};
/// Offset of `rx_queue_index` in `struct xdp_md`.
const RX_QUEUE_INDEX: i16 = 16;
/// Keys of the per-CPU counter map.
pub const REDIRECTED: i32 = 0;
/// IPv4/UDP frames on a queue whose XSKMAP slot is empty: passed to the stack.
pub const NO_SOCKET: i32 = 1;
/// Frames that are not IPv4/UDP: passed to the stack.
pub const NOT_UDP: i32 = 2;
pub const COUNTERS: u32 = 3;

/// Index of the `count:` label in [`program`].
const COUNT_AT: usize = 21;

/// The program for the XSKMAP `xskmap_fd` and the per-CPU counter map `counters_fd`
/// ([`COUNTERS`] entries).
pub fn program(xskmap_fd: i32, counters_fd: i32) -> Vec<Insn> {
    // A forward jump from instruction `at` to `COUNT_AT`.
    let to_count = |at: usize| (COUNT_AT - at - 1) as i16;
    let mut p = vec![
        Insn::mov64_reg(6, 1),
        Insn::mov64_imm(7, XDP_PASS),
        Insn::st_imm(op::W, 10, -4, NOT_UDP),
        Insn::ldx(op::W, 2, 6, 0),
        Insn::ldx(op::W, 3, 6, 4),
        Insn::mov64_reg(4, 2),
        Insn::alu64_imm(op::ADD, 4, 34),
        Insn::jmp_reg(op::JGT, 4, 3, to_count(7)),
        Insn::ldx(op::H, 4, 2, 12),
        Insn::jmp_imm(op::JNE, 4, i32::from(0x0800u16.to_be()), to_count(9)),
        Insn::ldx(op::B, 4, 2, 23),
        Insn::jmp_imm(op::JNE, 4, 17, to_count(11)),
        Insn::ldx(op::W, 2, 6, RX_QUEUE_INDEX),
    ];
    p.extend(Insn::ld_map_fd(1, xskmap_fd));
    p.extend([
        Insn::mov64_imm(3, XDP_PASS),
        Insn::call(helper::REDIRECT_MAP),
        Insn::mov64_reg(7, 0),
        Insn::st_imm(op::W, 10, -4, NO_SOCKET),
        Insn::jmp_imm(op::JNE, 7, XDP_REDIRECT, 1),
        Insn::st_imm(op::W, 10, -4, REDIRECTED),
    ]);
    debug_assert_eq!(p.len(), COUNT_AT);
    p.extend([Insn::mov64_reg(2, 10), Insn::alu64_imm(op::ADD, 2, -4)]);
    p.extend(Insn::ld_map_fd(1, counters_fd));
    p.extend([
        Insn::call(helper::MAP_LOOKUP_ELEM),
        Insn::jmp_imm(op::JEQ, 0, 0, 3),
        Insn::ldx(op::DW, 1, 0, 0),
        Insn::alu64_imm(op::ADD, 1, 1),
        Insn::stx(op::DW, 0, 0, 1),
        Insn::mov64_reg(0, 7),
        Insn::exit(),
    ]);
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_fds_are_relocatable_ld_imm64s() {
        let p = program(11, 12);
        assert_eq!(p.len(), 32);
        let lds: Vec<(usize, &Insn)> = p
            .iter()
            .enumerate()
            .filter(|(_, i)| i.is_ld_imm64())
            .collect();
        assert_eq!(lds.len(), 2);
        for (&(at, i), (want_at, fd)) in lds.iter().zip([(13, 11), (23, 12)]) {
            assert_eq!(at, want_at);
            // opcode 0x18 (LD|IMM|DW), dst r1, src_reg = BPF_PSEUDO_MAP_FD (1), fd in imm
            assert_eq!((i.code, i.dst(), i.src(), i.imm), (0x18, 1, 1, fd));
            // the second half of the 16-byte instruction is all zero
            assert_eq!(p[at + 1], Insn::new(0, 0, 0, 0, 0));
        }
    }

    #[test]
    fn filter_redirect_and_count() {
        let p = program(3, 4);
        let target = |at: usize| at + 1 + p[at].off as usize;
        // the three filter branches all land on `count:` (r2 = r10)
        for at in [7, 9, 11] {
            assert_eq!(target(at), COUNT_AT, "branch at {at}");
        }
        assert_eq!(p[COUNT_AT], Insn::mov64_reg(2, 10));
        // ethertype compared as loaded from the wire (big-endian 0x0800 read natively)
        assert_eq!(p[9].imm, i32::from(u16::from_ne_bytes([0x08, 0x00])));
        assert_eq!((p[10].code, p[10].off, p[11].imm), (0x71, 23, 17));
        // r2 = ctx->rx_queue_index (LDX|MEM|W = 0x61, from r6 at offset 16)
        assert_eq!(
            (p[12].code, p[12].dst(), p[12].src(), p[12].off),
            (0x61, 2, 6, 16)
        );
        // fallback action XDP_PASS in r3, then call bpf_redirect_map (helper 51)
        assert_eq!(p[15], Insn::mov64_imm(3, 2));
        assert_eq!((p[16].code, p[16].imm), (0x85, 51));
        // JNE r7, XDP_REDIRECT, +1 skips the REDIRECTED key store
        assert_eq!(
            (p[19].code, p[19].dst(), p[19].imm, p[19].off),
            (0x55, 7, 4, 1)
        );
        assert_eq!(p[20].imm, REDIRECTED);
        // a failed lookup jumps to `r0 = r7`
        assert_eq!(target(26), p.len() - 2);
        assert_eq!(p[p.len() - 2], Insn::mov64_reg(0, 7));
        assert_eq!(p[p.len() - 1], Insn::exit());
    }
}
