//! A script's devices on one kpktgend thread, as the kernel's thread loop serves them: the
//! devices of one thread that send on one interface become one sender with one timeline
//! (`crate::stream::devices`), each device a stream of it with its own parameters,
//! sequence numbers and count. Which devices can share a sender is decided here, from the
//! settings alone:
//!
//! - the same thread (CPU) and the same interface (`eth0@0` and `eth0@1`; `eth1@0` on the
//!   same thread is another sender, with its own socket);
//! - one socket's settings: the same `xmit_mode` (through the qdisc or not) and
//!   `skb_priority`;
//! - paced devices (`delay`, `rate`, `ratep`) share one timeline and devices without a
//!   delay another (on one timeline the unpaced would take the thread from the paced);
//! - a device that never sends (`delay` at its maximum), one that injects into a receive
//!   path (`xmit_mode netif_receive`, xdp_live's) and every device when `--backend
//!   xdp_live` is asked for (its program rewrites one device's frame) keep a sender each.

use super::SenderSpec;
use crate::backend::BackendKind;
use crate::choice::Choice;
use crate::pg::{DevConfig, XmitMode};

/// Devices that share one sender: their places among the start's devices (in order) and
/// their specs.
#[derive(Debug, Clone, Default)]
pub struct Group {
    pub places: Vec<usize>,
    pub specs: Vec<SenderSpec>,
}

/// What devices must share to be one sender's streams; None: the device keeps its own.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Key<'a> {
    cpu: Option<usize>,
    device: &'a str,
    xmit_mode: Option<XmitMode>,
    priority: u32,
    paced: bool,
}

fn key(s: &SenderSpec, backend: Option<BackendKind>) -> Option<Key<'_>> {
    let c: &DevConfig = &s.cfg;
    let alone = backend.is_some_and(|k| !k.writes_each_frame())
        || c.delay == u64::MAX
        || super::injects(c)
        || s.cpu.is_none();
    (!alone).then_some(Key {
        cpu: s.cpu,
        device: c.device(),
        xmit_mode: c.xmit_mode,
        priority: c.skb_priority,
        paced: c.delay != 0,
    })
}

/// The senders of a script's devices `specs` (in the start's order) with `--backend`'s
/// `backend`: each group in the order of its first device.
pub fn groups(specs: Vec<SenderSpec>, backend: Option<BackendKind>) -> Vec<Group> {
    let keys: Vec<Option<Key>> = specs.iter().map(|s| key(s, backend)).collect();
    let mut of: Vec<usize> = Vec::with_capacity(specs.len());
    let mut n = 0;
    for (i, k) in keys.iter().enumerate() {
        let joins = k
            .as_ref()
            .and_then(|k| (0..i).find(|&j| keys[j].as_ref() == Some(k)));
        of.push(match joins {
            Some(j) => of[j],
            None => {
                n += 1;
                n - 1
            }
        });
    }
    let mut out = vec![Group::default(); n];
    for (i, (s, g)) in specs.into_iter().zip(of).enumerate() {
        out[g].places.push(i);
        out[g].specs.push(s);
    }
    out
}

/// Each device a sender of its own (`run -t N`'s threads, which split one rate).
pub fn alone(specs: Vec<SenderSpec>) -> Vec<Group> {
    specs
        .into_iter()
        .enumerate()
        .map(|(i, s)| Group {
            places: vec![i],
            specs: vec![s],
        })
        .collect()
}

/// A sender of several devices: `auto`'s candidates that cannot send them (xdp_live, whose
/// program rewrites one device's frame), said as `auto` says why it passed a candidate.
pub fn rule_out_one_frame_backends(
    backends: &mut Vec<crate::backend::BackendPlan>,
    ruled_out: &mut Vec<String>,
) -> Result<(), super::Refusal> {
    for b in backends.iter().filter(|b| !b.kind().writes_each_frame()) {
        ruled_out.push(format!(
            "{} ruled out: its program rewrites one device's frame, and this thread's devices share one timeline",
            b.kind().name()
        ));
    }
    backends.retain(|b| b.kind().writes_each_frame());
    if backends.is_empty() {
        return Err(super::Refusal::NoBackend(ruled_out.join("; ")));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
