//! Captures: the config's `captures` (which ports, how many bytes of each frame, what to do
//! when the buffer is full), a bounded buffer of frames per port, and the pcap file that
//! `get_capture` answers. [`live`] fills the buffer from a port's interface.

pub mod live;

use std::collections::VecDeque;

use serde_json::Value;

use super::model::{Capture, CaptureFormat};
use crate::otg::{Config, Path, Refusal};
use crate::pcap::PcapWriter;

/// A capture of the config, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct CaptureSpec {
    /// As the client wrote it (for `get_config`).
    pub model: Capture,
}

impl CaptureSpec {
    /// Bytes kept of each frame.
    pub fn snaplen(&self) -> usize {
        self.model.packet_size.map_or(usize::MAX, |n| n as usize)
    }
}

/// Reads `Config.captures` (absent: none) for the checked config `cfg`: every port named is
/// a port of the config, each port in at most one capture, names unique among the ports,
/// flows and captures; filters are refused (upktgen keeps every frame), and so is pcapng.
pub fn parse(v: Option<&Value>, cfg: &Config) -> Result<Vec<CaptureSpec>, Refusal> {
    let at = Path::root().key("captures");
    let list = match v {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(a)) => a,
        Some(_) => return Err(Refusal::bad(at, "expected an array")),
    };
    if list.len() > crate::otg::MAX_PORTS {
        return Err(Refusal::bad(
            at,
            format!("more than {} captures", crate::otg::MAX_PORTS),
        ));
    }
    let mut out: Vec<CaptureSpec> = Vec::new();
    for (i, v) in list.iter().enumerate() {
        let at = at.index(i);
        let model: Capture = serde_json::from_value(v.clone())
            .map_err(|e| Refusal::bad(at.clone(), e.to_string()))?;
        if !model.filters.is_empty() {
            return Err(Refusal::unsupported_because(
                at.key("filters"),
                "upktgen keeps every frame; filter the pcap afterwards",
            ));
        }
        if model.format == CaptureFormat::Pcapng {
            return Err(Refusal::unsupported_because(
                at.key("format"),
                "upktgen writes pcap",
            ));
        }
        if model.packet_size == Some(0) || model.packet_size.is_some_and(|n| n > 65535) {
            return Err(Refusal::bad(
                at.key("packet_size"),
                "out of range (1 to 65535)",
            ));
        }
        let taken = cfg.ports.iter().any(|p| p.name == model.name)
            || cfg.flows.iter().any(|f| f.name == model.name)
            || out.iter().any(|c| c.model.name == model.name);
        if taken || model.name.is_empty() {
            return Err(Refusal::bad(
                at.key("name"),
                format!(
                    "{:?} is empty or already the name of a port, flow or capture",
                    model.name
                ),
            ));
        }
        for (j, p) in model.port_names.iter().enumerate() {
            let pat = at.key("port_names").index(j);
            if cfg.port(p).is_none() {
                return Err(Refusal::bad(pat, format!("no port named {p:?}")));
            }
            if out.iter().any(|c| c.model.port_names.contains(p)) {
                return Err(Refusal::bad(
                    pat,
                    format!("port {p:?} is in another capture already"),
                ));
            }
        }
        out.push(CaptureSpec { model });
    }
    Ok(out)
}

/// One captured frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// CLOCK_REALTIME, ns.
    pub ts_ns: u64,
    /// The bytes kept (the snap length's first of the frame as the wire carries it).
    pub data: Vec<u8>,
    /// The frame's whole length as the wire carries it, FCS included.
    pub orig_len: usize,
}

/// The frames a port's capture holds: at most `cap` bytes of frame data (and a small
/// record each). Full, it drops the oldest frames (`overwrite`) or the new ones.
#[derive(Debug)]
pub struct Buffer {
    frames: VecDeque<Frame>,
    bytes: usize,
    cap: usize,
    overwrite: bool,
    snaplen: usize,
    /// Frames dropped because the buffer was full.
    pub dropped: u64,
}

/// What a frame costs in the buffer beyond its bytes.
const RECORD_COST: usize = 32;

impl Buffer {
    pub fn new(cap: usize, overwrite: bool, snaplen: usize) -> Buffer {
        Buffer {
            frames: VecDeque::new(),
            bytes: 0,
            cap,
            overwrite,
            snaplen,
            dropped: 0,
        }
    }

    /// Keeps frame `data` as the wire carries it (padded to 60 bytes and with its FCS,
    /// as the model counts a frame's size), cut to the snap length, if there is room, or
    /// makes room.
    pub fn push(&mut self, ts_ns: u64, data: &[u8]) {
        // What it will cost, known before the frame is copied or its FCS computed.
        let orig_len = data.len().max(crate::wire::fcs::MIN_UNPADDED) + crate::wire::fcs::LEN;
        let cost = orig_len.min(self.snaplen) + RECORD_COST;
        if cost > self.cap || (!self.overwrite && self.bytes + cost > self.cap) {
            self.dropped += 1;
            return;
        }
        while self.bytes + cost > self.cap {
            let Some(old) = self.frames.pop_front() else {
                break;
            };
            self.bytes -= old.data.len() + RECORD_COST;
            self.dropped += 1;
        }
        let mut data = crate::wire::fcs::on_the_wire(data);
        data.truncate(self.snaplen);
        self.bytes += cost;
        self.frames.push_back(Frame {
            ts_ns,
            data,
            orig_len,
        });
    }

    pub fn len(&self) -> usize {
        self.frames.len()
    }

    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// A pcap file of `count` frames from the `start`-th (0-based), all by default; its
    /// header says every frame ends in a 4-byte FCS.
    pub fn pcap(&self, start: usize, count: usize) -> std::io::Result<Vec<u8>> {
        let mut w = PcapWriter::with_fcs(Vec::new(), crate::wire::fcs::LEN as u32)?;
        for f in self.frames.iter().skip(start).take(count) {
            w.write_cut(f.ts_ns, &f.data, f.orig_len)?;
        }
        w.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_kept_as_the_wire_carries_them() {
        let mut b = Buffer::new(1 << 20, true, usize::MAX);
        b.push(1, &[5; 100]);
        b.push(2, &[6; 42]);
        let p = crate::pcap::parse(&b.pcap(0, usize::MAX).unwrap()).unwrap();
        assert_eq!(p.fcs_len, 4);
        // The model's sizes: 100 bytes and their FCS; a short frame padded to 60 first.
        assert_eq!(p.records[0].data.len(), 104);
        assert_eq!(p.records[1].data.len(), 64);
        for r in &p.records {
            let n = r.data.len() - 4;
            let fcs = u32::from_le_bytes(r.data[n..].try_into().unwrap());
            assert_eq!(fcs, crate::wire::fcs::crc32(&r.data[..n]));
        }
    }

    #[test]
    fn a_full_buffer_drops_the_oldest_or_the_newest() {
        let mut b = Buffer::new(3 * (64 + RECORD_COST), true, usize::MAX);
        for i in 0..5u8 {
            b.push(u64::from(i), &[i; 60]);
        }
        assert_eq!(b.len(), 3);
        assert_eq!(b.dropped, 2);
        assert_eq!(b.frames[0].data[0], 2);
        let mut k = Buffer::new(3 * (64 + RECORD_COST), false, usize::MAX);
        for i in 0..5u8 {
            k.push(u64::from(i), &[i; 60]);
        }
        assert_eq!(k.len(), 3);
        assert_eq!(k.frames[2].data[0], 2);
        assert_eq!(k.dropped, 2);
        let mut s = Buffer::new(1000, true, 4);
        s.push(7, &[1; 100]);
        assert_eq!(s.frames[0].data.len(), 4);
        let pcap = crate::pcap::parse(&s.pcap(0, usize::MAX).unwrap()).unwrap();
        assert_eq!(pcap.records.len(), 1);
        assert_eq!(pcap.records[0].ts_ns, 7);
        // Cut, and said to be: its whole length is the frame's with its FCS.
        assert_eq!(pcap.records[0].orig_len, 104);
        assert!(pcap.records[0].is_cut());
        assert_eq!(
            b.pcap(1, 1)
                .map(|p| crate::pcap::parse(&p).unwrap().records[0].data[0])
                .unwrap(),
            3
        );
    }
}
