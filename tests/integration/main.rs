//! Every integration test of upktgen in one binary (fewer links, one summary): the pure checks
//! of the source tree and the documents, and the end-to-end tests that make their own network
//! namespaces and send real packets. `harness.rs` says how a test that cannot run is reported.

mod common;
mod harness;

mod agent;
mod ansible;
mod cli;
mod dut;
mod far_hostile;
mod fleet;
mod layers;
mod live;
mod manual;
mod metrics;
mod metrics_hostile;
mod ndr;
mod netif_receive;
mod otg_server;
mod output;
mod params;
mod pcap;
mod peer;
mod refused;
mod resume;
mod rfc2544;
mod rings;
mod run;
mod rx;
mod rx_live;
mod safe_io;
mod schema;
mod schemas;
mod script;
mod selftest;
mod stack;
mod standards;
mod streams;
mod sweep;
mod xdp_live;

fn main() {
    harness::main(&[
        ("agent", agent::TESTS),
        ("ansible", ansible::TESTS),
        ("cli", cli::TESTS),
        ("dut", dut::TESTS),
        ("far_hostile", far_hostile::TESTS),
        ("fleet", fleet::TESTS),
        ("layers", layers::TESTS),
        ("live", live::TESTS),
        ("manual", manual::TESTS),
        ("metrics", metrics::TESTS),
        ("metrics_hostile", metrics_hostile::TESTS),
        ("ndr", ndr::TESTS),
        ("rfc2544", rfc2544::TESTS),
        ("otg_server", otg_server::TESTS),
        ("netif_receive", netif_receive::TESTS),
        ("output", output::TESTS),
        ("params", params::TESTS),
        ("pcap", pcap::TESTS),
        ("peer", peer::TESTS),
        ("refused", refused::TESTS),
        ("resume", resume::TESTS),
        ("rings", rings::TESTS),
        ("run", run::TESTS),
        ("rx", rx::TESTS),
        ("rx_live", rx_live::TESTS),
        ("safe_io", safe_io::TESTS),
        ("schema", schema::TESTS),
        ("schemas", schemas::TESTS),
        ("script", script::TESTS),
        ("selftest", selftest::TESTS),
        ("streams", streams::TESTS),
        ("stack", stack::TESTS),
        ("standards", standards::TESTS),
        ("sweep", sweep::TESTS),
        ("xdp_live", xdp_live::TESTS),
    ])
}
