//! The receive side: a receive backend, frame classification, sequences and latency, report.
//!
//! ```text
//! backend::RecvBackend: af_packet (TPACKET_V3 ring, src/sys/rx_ring.rs)
//!                     | af_xdp (AF_XDP sockets + the redirect program of src/bpf/prog/)
//!   -> recv::Receiver (selection, the receive loop)
//!   -> frame::classify (Ethernet / VLAN / IPv4 / UDP / pktgen header)
//!   -> sink::Sink (per-flow sequence tracking, latency histogram)
//!   -> streams::StreamTable (per-stream counting from the signature at a frame's end)
//!   -> report::RxReport (text, JSON)
//! ```
//! `frame`, `sink`, `streams` and `report` are pure logic, tested without privileges;
//! `recv` selects and drives a backend; `cli` is `upktgen rx`. The lab runs a [`Receiver`] on
//! its veth-rx (`crate::lab::receiver`) through the names re-exported here.

pub mod af_packet;
pub mod af_xdp;
pub mod backend;
pub mod background;
pub mod frame;
pub mod recv;
pub mod report;
pub mod sink;
pub mod streams;

pub use af_xdp::DEFAULT_FRAMES as DEFAULT_XSK_FRAMES;
pub use recv::{Receiver, RxBackend, RxConfig, RxProgress};
pub use report::{RxReport, RxStop};
pub use sink::FlowKeyMode;
