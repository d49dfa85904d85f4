//! The receive side: classify frames, track sequences and latency, report.
//!
//! ```text
//! receiver (AF_PACKET TPACKET_V3 ring, src/sys/rx_ring.rs)
//!   -> frame::classify (Ethernet / VLAN / IPv4 / UDP / pktgen header)
//!   -> sink::Sink (per-flow sequence tracking, latency histogram)
//!   -> report::RxReport (text, JSON)
//! ```
//! `frame`, `sink` and `report` are pure logic, tested without privileges; `recv` drives the
//! ring of `crate::sys::rx_ring`, `lab` runs it inside the lab, `cli` is `upktgen rx`, and
//! `xdp_count` is the lab's counting XDP drop sink.

pub mod background;
pub mod cli;
pub mod frame;
pub mod lab;
pub mod recv;
pub mod report;
pub mod sink;
pub mod xdp_count;
pub mod xsk;
pub mod xsk_prog;
