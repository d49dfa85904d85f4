//! What the plan refuses, as values: each refusal names the option and says what to do. A
//! caller that needs to tell them apart (an experiment refusing one point of a grid before
//! the first runs) matches on them; everyone else prints them.

/// One refusal of the plan.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error(
        "--dst: required with --dev (the destination IPv4 address to put in the frames; --dst6 for IPv6)"
    )]
    DevNeedsDst,
    #[error(
        "--dst-mac: required with --dev (pktgen's default of 00:00:00:00:00:00 is dropped by every receiver)"
    )]
    DevNeedsDstMac,
    #[error("--start-at: --pcap writes a file and sends nothing: there is no start to time")]
    StartAtWithPcap,
    #[error(
        "--xmit-mode netif_receive: injects into one device's receive path; the DUT lab forwards what a sender transmits (drop --lab dut, or the xmit mode)"
    )]
    InjectInDutLab,
    #[error("no sender to run")]
    NoSender,
    #[error(
        "--{option}: pktgen's frame options do not apply with --config, whose flows describe the frames"
    )]
    ConfigWithPktgen { option: String },
    #[error("{option}: the config's ports say where to send and receive (their `location`)")]
    ConfigWithOption { option: &'static str },
    #[error(
        "--config: port {port:?} sends from {location}: upktgen sends from lab:tx, an interface or netns:NAME/IFACE (to send from another host, run it there)"
    )]
    ConfigTxPort { port: String, location: String },
    #[error(
        "--config: the flows leave from several ports, or from one port to several: `upktgen run` and `upktgen otg` send them, a sender and a receiver for each sending port and port it sends to; this command takes one transmitting port and one receiving port"
    )]
    ConfigPorts,
    #[error(
        "--lab dut: flows both ways between lab:tx and lab:rx run in the pair lab only (the device under test routes one way)"
    )]
    ConfigBothWaysDut,
    #[error(
        "--config-rate {given}: give the flows' total rate in frames per second, at least 1 and at most 1e9"
    )]
    ConfigRate { given: String },
    #[error(
        "--config-rate {total}: the flows at {total} frames per second need {mbps} Mbit/s on the wire, above port {port:?}'s line rate of {line_mbps} Mbit/s"
    )]
    ConfigRateAboveLine {
        total: String,
        mbps: String,
        port: String,
        line_mbps: String,
    },
    #[error(
        "--config-rate: the flows leave from several ports, or from one port to several; their rates are scaled together from one sending port to one receiving port only (not yet across ports)"
    )]
    ConfigRatePorts,
    #[error(
        "--config-rate: stream {stream:?} has no rate in frames per second here (a percentage needs the port's line rate)"
    )]
    ConfigRateUnknown { stream: String },
    #[error(
        "--config: port {port:?} receives at {location}: with a lab:tx sender, the receiving port is lab:rx; else an interface, netns:NAME/IFACE or ssh://host/IFACE"
    )]
    ConfigRxPort { port: String, location: String },
    #[error(
        "--config: the flows are sent from port {tx:?} and received at port {rx:?}, both at {location}: the receiving port must be another one"
    )]
    ConfigSamePort {
        tx: String,
        rx: String,
        location: String,
    },
    #[error(
        "xmit_mode netif_receive: {inject} of the {n} devices inject into the receive path and the others transmit; a start runs one mode (give every device the same xmit_mode)"
    )]
    MixedXmitModes { inject: usize, n: usize },
    #[error(
        "--rx-analyze needs the frames to reach a socket in the receiving namespace: use --lab-rx stack (its default), not drop"
    )]
    RxAnalyzeWithDropReceiver,
    #[error("--lab-rx: chooses the lab's receiver; with --dev there is no lab")]
    LabRxWithDev,
    #[error(
        "--rx-analyze: the receiver runs in the lab's receiving namespace; with --dev run `upktgen rx --dev IFACE` on the receiving host"
    )]
    RxAnalyzeWithDev,
    #[error(
        "--lab-rx drop: with --xmit-mode netif_receive the frames enter veth-rx's receive path after the driver, where the drop receiver's XDP program never sees them; use --lab-rx stack (the default then)"
    )]
    InjectWithDropReceiver,
    #[error(
        "--rx-analyze: with --xmit-mode netif_receive the report counts what veth-rx's receive path did with the frames (its UDP counters); upktgen's receiver is not used"
    )]
    InjectWithRxAnalyze,
    #[error("--xmit-mode netif_receive needs xdp_live, which refuses: {0}")]
    InjectRefused(String),
    #[error("--backend auto: no backend accepts these options ({0})")]
    NoBackend(String),
    #[error("--start-at {0}")]
    StartAt(String),
    #[error("--peer needs --peer-dev, and --rx-dev goes without them")]
    PeerDevPairing,
    #[error(
        "{what}: the far end receives what --dev sends; in the private lab use --rx-analyze (its own receiver) or --lab dut"
    )]
    FarEndWithoutDev { what: &'static str },
    #[error("{what}: --pcap writes a file and sends nothing")]
    FarEndWithPcap { what: &'static str },
    #[error("{what}: {dev:?} is not an interface name")]
    FarDevName { what: &'static str, dev: String },
    #[error(
        "--dut-setup/--dut-setup-file/--dut-setup-timeout: there is a DUT only in the DUT lab (--lab dut)"
    )]
    DutSetupWithoutDut,
    #[error("--dut-delay: the delay line is the DUT lab's (--lab dut)")]
    DutDelayWithoutDut,
    #[error(
        "--dut-delay {0:?}: at most 1s (the lab's receiver waits at most 3 s for the last frames)"
    )]
    DutDelayTooLong(std::time::Duration),
    #[error(
        "--lab dut: the DUT lab is a private lab; --dev sends on an interface of yours instead"
    )]
    DutLabWithDev,
    #[error("--dut-setup-file {0}: no such file")]
    NoDutSetupFile(String),
    /// `what`: what the name is instead ("a directory, not a regular file").
    #[error("--dut-setup-file {file}: {what}")]
    DutSetupFileNotRegular { file: String, what: String },
    #[error("-t/--threads 0: give at least one sender thread")]
    NoThreads,
    #[error(
        "--rx-analyze with -t {0}: the receiver tells sequences apart by address and VLAN, and every thread's sequence starts at 1 from the same address; run one thread, or give threads distinct sources with `upktgen script`"
    )]
    RxAnalyzeWithThreads(usize),
    #[error("-t/--threads {0}: this process may run on no CPU (its affinity mask is empty)")]
    NoCpu(usize),
    #[error(
        "-t/--threads {n}: this process may run on {} CPU{} ({cpus:?}): give at most -t {}, or add --allow-oversubscribe to share CPUs between threads",
        cpus.len(),
        if cpus.len() == 1 { "" } else { "s" },
        cpus.len()
    )]
    TooManyThreads { n: usize, cpus: Vec<usize> },
    #[error(
        "-t/--threads {n} on {on}: {total} sender threads, and this process may run on {} CPU{} ({cpus:?}): give at most -t {}, or add --allow-oversubscribe to share CPUs between threads",
        cpus.len(),
        if cpus.len() == 1 { "" } else { "s" },
        (cpus.len() / legs).max(1)
    )]
    PortsTooManyThreads {
        n: usize,
        /// `2 sending ports`, or `3 legs of 2 sending ports (...)`.
        on: String,
        legs: usize,
        total: usize,
        cpus: Vec<usize>,
    },
    #[error(
        "--backend af_xdp: port {port:?} sends to {legs} ports from {location}, each leg's senders on transmit queues of their own ({senders} in all: an AF_XDP socket binds a queue no other may), and the interface has {queues}: give it more queues (a veth: `ip link add ... numtxqueues N numrxqueues N`; a NIC: `ethtool -L`), fewer senders (-t), or --backend af_packet or tx_ring"
    )]
    LegQueues {
        port: String,
        location: String,
        legs: usize,
        senders: usize,
        queues: usize,
    },
    #[error("--cpu {cpu}: not a CPU this process may run on (allowed: {cpus:?})")]
    NotAllowedCpu { cpu: usize, cpus: Vec<usize> },
    #[error("--replay-speed: scales the file's gaps; it goes with --replay-timing file")]
    ReplaySpeedWithoutTiming,
    #[error(
        "--{0}: --replay-timing file paces the frames by the file's timestamps; give one or the other"
    )]
    PacingWithFileTiming(String),
    #[error(
        "--rate: with --replay the frames' sizes are the file's; give the rate in packets per second (--ratep) or as a gap (--delay)"
    )]
    RateWithReplay,
    #[error(
        "--{name}: --replay sends the file's frames as recorded; frame parameters do not apply (with --replay: {allowed})"
    )]
    FrameParamWithReplay { name: String, allowed: String },
    #[error("{path}: {why}")]
    ReplayTiming { path: String, why: String },
    #[error(
        "--pcap: count 0 means \"until stopped\"; give --pcap-count N (or --count N) for the number of frames to write"
    )]
    PcapCountZero,
    #[error("--pcap: delay {0} never sends: there is nothing to write")]
    PcapNeverSends(u64),
}
