//! The hand-assembled programs, one file each, over [`super::asm`].
//!
//! They live together, below every user (the `xdp_live` backend, the AF_XDP receiver, the
//! lab), so that no layer imports another's programs. A program is a pure function of the
//! map fds it refers to; loading and attaching is [`crate::sys::bpf`]'s.

pub mod tc_take_ip;
pub mod xdp_count;
pub mod xdp_live;
pub mod xsk_redirect;

use super::asm::Insn;

/// XDP return codes (`enum xdp_action`).
pub const XDP_ABORTED: i32 = 0;
pub const XDP_DROP: i32 = 1;
pub const XDP_PASS: i32 = 2;
pub const XDP_REDIRECT: i32 = 4;

/// `r0 = action; exit`: the lab's plain receivers (XDP_DROP, XDP_PASS) and xdp_live's
/// probe.
pub fn verdict(action: i32) -> Vec<Insn> {
    vec![Insn::mov64_imm(0, action), Insn::exit()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdict_returns_the_action() {
        let p = verdict(XDP_PASS);
        // r0 = 2 (ALU64|MOV|K = 0xb7) ; exit (0x95)
        assert_eq!(
            p.iter().map(|i| (i.code, i.imm)).collect::<Vec<_>>(),
            [(0xb7, 2), (0x95, 0)]
        );
    }
}
