//! Reports: the seed-style run report and its JSON ([`run`]). Its lines come from below:
//! pktgen's Result line ([`crate::sender::PktgenResult`]) and top's Cpu(s) line
//! ([`crate::sample::CpuShares`]).

pub mod run;
