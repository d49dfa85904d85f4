//! eBPF without a compiler: the assembler and every program upktgen loads.
//!
//! ```text
//! asm    instructions, their encoding, labels (pure)
//! prog/  the programs: xdp_live's (transmit), the AF_XDP receiver's redirect, the lab's
//!        receivers (counting drop sink, XDP_PASS / XDP_DROP verdicts)
//! ```
//! Pure logic, tested without privileges; [`crate::sys::bpf`] loads and attaches.

pub mod asm;
pub mod prog;
