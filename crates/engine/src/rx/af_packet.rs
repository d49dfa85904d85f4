//! The AF_PACKET receive backend: a TPACKET_V3 ring ([`crate::sys::rx_ring`]) on one
//! interface, after tc and nftables ingress (with `all_frames`, ETH_P_ALL: a tap).

use super::backend::{FrameSink, RecvBackend, RxKind, RxStats};
use crate::sys::rx_ring::{RxRing, RxRingConfig};
use std::io;

/// An open TPACKET_V3 receive ring.
pub struct AfPacketRx {
    ring: RxRing,
    cfg: RxRingConfig,
}

impl AfPacketRx {
    /// Opens the ring on `ifindex` (in the calling thread's network namespace); frames are
    /// received from here on.
    pub fn open(ifindex: u32, cfg: RxRingConfig) -> io::Result<AfPacketRx> {
        Ok(AfPacketRx {
            ring: RxRing::open(ifindex, cfg)?,
            cfg,
        })
    }
}

impl<S: FrameSink> RecvBackend<S> for AfPacketRx {
    fn kind(&self) -> RxKind {
        RxKind::AfPacket
    }

    fn mode(&self) -> String {
        if self.cfg.all_frames {
            "af_packet TPACKET_V3, ETH_P_ALL (a tap: before tc/nftables ingress)"
        } else {
            "af_packet TPACKET_V3, ETH_P_IP (after tc/nftables ingress)"
        }
        .to_string()
    }

    fn buffer_bytes(&self) -> u64 {
        self.ring.bytes() as u64
    }

    fn wait(&self, timeout_ms: i32) -> io::Result<bool> {
        self.ring.wait(timeout_ms)
    }

    /// Whole ring blocks: a block is handed back to the kernel only once read.
    fn drain(&mut self, budget: usize, sink: &mut S) -> usize {
        let mut total = 0;
        while total < budget
            && let Some(n) = self.ring.next_block(|data, meta| sink.frame(data, meta))
        {
            total += n;
        }
        total
    }

    fn stats(&mut self, _read: u64) -> io::Result<RxStats> {
        Ok(RxStats {
            ring: self.ring.stats()?,
            xdp: None,
        })
    }
}
