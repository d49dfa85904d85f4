//! upktgen: a userspace packet generator for Linux with the kernel pktgen's vocabulary.
//!
//! Data flows one way: parameters -> frame stream -> transmit queue -> backend -> wire,
//! with samplers of /proc around it and reports after it. See DESIGN notes in the README.

pub mod report;
pub mod sample;
pub mod sim;
pub mod txq;
