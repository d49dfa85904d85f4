//! Reports: the seed-style run report and its JSON ([`run`]), the device under test's
//! account ([`dut`]), a receive path's account in netif_receive mode ([`receive`]). Their lines come from below:
//! pktgen's Result line ([`crate::sender::PktgenResult`]) and top's Cpu(s) line
//! ([`crate::sample::CpuShares`]).

pub mod dut;
pub(crate) mod receive;
pub(crate) mod run;
pub mod streams;

pub use crate::host::{VERSION, hostname};
