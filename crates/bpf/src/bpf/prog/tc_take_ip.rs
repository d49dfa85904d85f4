//! The delay line's ingress filter: a tc (tcx) program on the DUT's ingress that drops
//! every IPv4 and IPv6 frame, so that the kernel does not forward what the delay line
//! (which read it first through an AF_PACKET tap) forwards itself, and lets every other
//! frame (ARP, anything else) go on.
//!
//! ```text
//!   r2 = *(u32 *)(r1 + 16)            __sk_buff.protocol (network byte order)
//!   r0 = TCX_DROP
//!   if r2 == htons(0x0800) goto out
//!   if r2 == htons(0x86dd) goto out
//!   r0 = TCX_NEXT                     not ours: the next program, or the stack
//! out:
//!   exit
//! ```

use crate::bpf::asm::{Insn, op};
use crate::wire::ethernet::ethertype;

/// tcx verdicts (`enum tcx_action_base`): go on to the next program or the stack; drop.
pub const TCX_NEXT: i32 = -1;
pub const TCX_DROP: i32 = 2;

/// The offset of `protocol` in `struct __sk_buff` (after len, pkt_type, mark, queue_mapping).
const SKB_PROTOCOL: i16 = 16;

/// The program. `protocol` holds the ethertype as it is on the wire, read as a host-order
/// u32: the constants are byte-swapped here, for the host the program is loaded on.
pub fn program() -> Vec<Insn> {
    let be = |t: u16| i32::from(t.to_be());
    vec![
        Insn::ldx(op::W, 2, 1, SKB_PROTOCOL),
        Insn::mov64_imm(0, TCX_DROP),
        Insn::new(op::JMP | op::JEQ | op::K, 2, 0, 2, be(ethertype::IPV4)),
        Insn::new(op::JMP | op::JEQ | op::K, 2, 0, 1, be(ethertype::IPV6)),
        Insn::mov64_imm(0, TCX_NEXT),
        Insn::exit(),
    ]
}

/// What the program returns for a frame of `protocol` (as `__sk_buff.protocol` holds it),
/// read off its instructions: the tests' check of the branches.
#[cfg(test)]
fn verdict_for(p: &[Insn], protocol: u32) -> i32 {
    let (mut r0, mut r2, mut pc) = (0i64, 0u32, 0usize);
    loop {
        let i = p[pc];
        match i.code {
            c if c == op::LDX | op::MEM | op::W => {
                assert_eq!((i.dst(), i.src(), i.off), (2, 1, SKB_PROTOCOL));
                r2 = protocol;
            }
            c if c == op::ALU64 | op::MOV | op::K => r0 = i64::from(i.imm),
            c if c == op::JMP | op::JEQ | op::K => {
                if r2 == i.imm as u32 {
                    pc = (pc as i64 + 1 + i64::from(i.off)) as usize;
                    continue;
                }
            }
            c if c == op::JMP | op::EXIT => return r0 as i32,
            c => panic!("unexpected instruction {c:#x}"),
        }
        pc += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ip_is_dropped_the_rest_goes_on() {
        let p = program();
        let wire = |t: u16| u32::from(t.to_be());
        assert_eq!(verdict_for(&p, wire(ethertype::IPV4)), TCX_DROP);
        assert_eq!(verdict_for(&p, wire(ethertype::IPV6)), TCX_DROP);
        assert_eq!(verdict_for(&p, wire(ethertype::ARP)), TCX_NEXT);
        assert_eq!(verdict_for(&p, wire(ethertype::VLAN)), TCX_NEXT);
        // Host order is not the wire's: 0x0800 as a host number is some other protocol.
        if cfg!(target_endian = "little") {
            assert_eq!(verdict_for(&p, 0x0800), TCX_NEXT);
        }
    }
}
