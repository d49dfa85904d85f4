//! The lab's receivers on veth-rx: XDP programs attached by BPF link (detached when the
//! link's fd closes, or with the namespace).
//!
//! The programs themselves are pure and live with the others in [`crate::bpf::prog`]; here
//! are the maps they use and the attaching.

use super::LabError;
use crate::bpf::asm::Insn;
use crate::bpf::prog::{self, xdp_count};
use crate::sys::{self, bpf, netns};
use std::os::fd::OwnedFd;
use std::path::Path;

/// The receiver programs the lab attaches to veth-rx.
#[derive(Debug, Clone, Copy)]
pub enum RxVerdict {
    /// XDP_DROP: count the frame at the interface, go no further.
    Drop,
    /// XDP_PASS: hand it to the stack; the program's presence gives veth-rx the NAPI that
    /// frames redirected by XDP into veth-tx need.
    Pass,
}

/// The drop receiver's per-CPU counter, which its program ([`xdp_count`]) bumps for every
/// frame.
#[derive(Debug)]
pub(super) struct XdpCounter {
    map: bpf::PerCpuCounter,
}

impl XdpCounter {
    pub(super) fn new() -> std::io::Result<XdpCounter> {
        Ok(XdpCounter {
            map: bpf::PerCpuCounter::create("upktgen_rxcount")?,
        })
    }

    /// The counting program, referring to this counter.
    pub(super) fn program(&self) -> Vec<Insn> {
        xdp_count::program(self.map.raw_fd())
    }

    /// Frames counted so far (all CPUs).
    pub(super) fn count(&self) -> std::io::Result<u64> {
        self.map.sum()
    }
}

/// Attaches `r0 = verdict; exit`, or `insns` when given (the drop receiver's counter).
pub(super) fn attach_rx_program(
    ns: &Path,
    ifname: &'static str,
    verdict: RxVerdict,
    insns: Option<Vec<Insn>>,
) -> Result<OwnedFd, LabError> {
    netns::in_netns(ns, move || {
        let idx = sys::if_nametoindex(ifname)?;
        let (name, action) = match verdict {
            RxVerdict::Drop => ("upktgen_drop", prog::XDP_DROP),
            RxVerdict::Pass => ("upktgen_pass", prog::XDP_PASS),
        };
        let prog = bpf::load_xdp(name, &insns.unwrap_or_else(|| prog::verdict(action)))?;
        bpf::attach_xdp_link(&prog, idx)
    })
    .map_err(|err| LabError::Attach {
        verdict,
        ifname,
        err,
    })
}
