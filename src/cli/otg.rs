//! `upktgen otg`'s options and help.

use clap::Args;
use std::net::SocketAddr;
use std::time::Duration;

pub const OTG_ABOUT: &str = "Serve the Open Traffic Generator API (open-traffic-generator/models) over HTTP, so \
that snappi and gosnappi scripts drive upktgen unchanged: set_config, get_config, set_control_state (flows start, \
stop, pause, resume; port captures start, stop), get_metrics (port and flow metrics), get_capture (a port's pcap), \
get_version, and the server's own OpenAPI document at /openapi.json. The server stays up and runs any number of \
tests, one at a time, until SIGINT or SIGTERM, which stop the traffic. A config's ports must lie inside what \
--allow names. docs/otg-server.md: pointing snappi at it, the subset, an example.";

pub const OTG_HELP: &str = "Examples:
  upktgen otg --allow 'lab:*'                     # serve on 127.0.0.1:8080, ports in a lab of its own
  upktgen otg --listen 127.0.0.1:8443 --allow veth-tx --allow 'netns:rx/veth-rx'
Then in Python: snappi.api(location=\"http://127.0.0.1:8080\").";

/// `upktgen otg` options.
#[derive(Args, Debug, Clone)]
pub struct OtgArgs {
    /// Listen on this address (port 0: any free port; the address served is printed).
    #[arg(long, default_value = "127.0.0.1:8080", value_name = "ADDR:PORT")]
    pub listen: SocketAddr,

    /// A config's ports may be these (repeatable): IFACE, netns:NAME/IFACE or
    /// ssh://[user@]host[:port]/IFACE, where the namespace's name and the interface's may end
    /// in * (a prefix). With none, no config with a port is taken.
    #[arg(long = "allow", value_name = "PATTERN")]
    pub allow: Vec<String>,

    /// Stop flows that have no end (continuous, endless bursts) when no request has come
    /// for TIME (the client is gone); 0 never. Flows with a duration end by themselves.
    #[arg(long, value_parser = crate::units::parse_duration_or_zero, default_value = "60s", value_name = "TIME")]
    pub watchdog: Duration,

    /// The most bytes a port's capture holds (MiB); beyond, a capture drops its oldest
    /// frames (the model's `overwrite: true`) or the new ones.
    #[arg(long, default_value_t = 64, value_name = "MIB", value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub capture_mib: u32,

    /// Transmit queues per sending port, as `run --config -t N`: a port's flows spread over
    /// N sender threads, each with its own queue, socket and timeline (a flow on one queue
    /// only, the largest rate first onto the least-loaded queue; more than a port's flows:
    /// one per flow; a port sending to several ports: N for each). At most as many as CPUs
    /// this process may run on.
    #[arg(short = 't', long = "threads", default_value_t = 1, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: u16,

    /// Allow -t N above the CPUs this process may run on (threads then share CPUs), as
    /// `run --allow-oversubscribe`.
    #[arg(long)]
    pub allow_oversubscribe: bool,

    /// Run a fake engine that sends nothing: each flow's counters follow its rate and
    /// duration (for trying a client without root or interfaces; hidden).
    #[arg(long, hide = true)]
    pub fake_engine: bool,
}
