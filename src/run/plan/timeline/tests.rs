use super::*;
use crate::run::plan::{RunPlan, fill_lab_destination};

/// A script's device in the lab: `name` (`veth-tx@N`) on thread `cpu`, with `cmds`.
fn dev(name: &str, cpu: usize, cmds: &[&str]) -> SenderSpec {
    let mut cfg = DevConfig::new(name);
    fill_lab_destination(&mut cfg);
    for c in cmds {
        cfg.command(c).unwrap();
    }
    SenderSpec {
        cfg,
        cpu: Some(cpu),
    }
}

fn places(g: &[Group]) -> Vec<Vec<usize>> {
    g.iter().map(|g| g.places.clone()).collect()
}

#[test]
fn one_threads_devices_on_one_interface_share_a_sender() {
    let specs = vec![
        dev("eth0@0", 0, &["ratep 1000"]),
        dev("eth1@0", 0, &["ratep 1000"]),
        dev("eth0@1", 0, &["ratep 3000", "pkt_size 500"]),
        dev("eth0@2", 1, &["ratep 1000"]),
    ];
    let g = groups(specs, None);
    // eth0@0 and eth0@1 (thread 0, eth0); eth1 is another interface, CPU 1 another thread.
    assert_eq!(places(&g), [vec![0, 2], vec![1], vec![3]]);
    assert_eq!(g[0].specs[1].cfg.ifname, "eth0@1");
    assert_eq!(
        g[0].specs[1].cfg.min_pkt_size, 500,
        "each keeps its own parameters"
    );
}

#[test]
fn devices_that_cannot_share_a_timeline_keep_a_sender_each() {
    let specs = || {
        vec![
            dev("eth0@0", 0, &["ratep 1000"]),
            dev("eth0@1", 0, &[]),
            dev("eth0@2", 0, &["ratep 2000"]),
            dev("eth0@3", 0, &[]),
            dev("eth0@4", 0, &["delay 2147483647"]),
            dev("eth0@5", 0, &["ratep 1000", "xmit_mode queue_xmit"]),
            dev("eth0@6", 0, &["ratep 1000", "skb_priority 3"]),
        ]
    };
    // Paced with paced, unpaced with unpaced; never-sending, another socket's settings: alone.
    assert_eq!(
        places(&groups(specs(), Some(BackendKind::AfPacket))),
        [vec![0, 2], vec![1, 3], vec![4], vec![5], vec![6]]
    );
    // xdp_live's program rewrites one device's frame: every device alone.
    assert_eq!(groups(specs(), Some(BackendKind::XdpLive)).len(), 7);
    // Injecting into a receive path (xdp_live's too): alone.
    let inj = vec![
        dev("eth0@0", 0, &["xmit_mode netif_receive"]),
        dev("eth0@1", 0, &["xmit_mode netif_receive"]),
    ];
    assert_eq!(groups(inj, None).len(), 2);
}

#[test]
fn run_threads_stay_apart() {
    let g = alone(vec![dev("eth0@0", 0, &[]), dev("eth0@1", 0, &[])]);
    assert_eq!(places(&g), [vec![0], vec![1]]);
}

#[test]
fn a_script_start_plans_one_sender_per_timeline() {
    let specs = vec![
        dev("veth-tx@0", 0, &["count 100", "ratep 1000"]),
        dev("veth-tx@1", 0, &["count 300", "ratep 3000", "pkt_size 500"]),
        dev("veth-tx@2", 1, &["count 5"]),
    ];
    let a = crate::run::plan::tests::script_args(&["--lab"]);
    let p = RunPlan::from_script(&a, specs).unwrap();
    assert_eq!(p.senders.len(), 2);
    let s = &p.senders[0];
    assert_eq!(s.places, [0, 1]);
    assert_eq!(s.spec.cfg.count, 100);
    assert_eq!(s.joined.len(), 1);
    assert_eq!(s.joined[0].cfg.count, 300);
    assert_eq!(s.joined[0].cfg.delay, 333_333);
    assert!(p.senders[1].joined.is_empty());
    assert_eq!(p.senders[1].places, [2]);
    // One queue of the lab per sender.
    assert!(matches!(p.in_lab(), Some(l) if l.queues == 2));
}

#[test]
fn auto_passes_xdp_live_for_a_shared_timeline_and_says_why() {
    let specs = vec![
        dev("veth-tx@0", 0, &["ratep 1000"]),
        dev("veth-tx@1", 0, &["ratep 1000"]),
    ];
    let a = crate::run::plan::tests::script_args(&["--lab", "--backend", "auto"]);
    let p = RunPlan::from_script(&a, specs).unwrap();
    let s = &p.senders[0];
    assert!(!s.backends.is_empty());
    assert!(s.backends.iter().all(|b| b.kind() != BackendKind::XdpLive));
    assert!(
        s.ruled_out
            .iter()
            .any(|r| r.starts_with("xdp_live ruled out")),
        "{:?}",
        s.ruled_out
    );
    // Alone, a device keeps xdp_live among auto's candidates.
    let one = RunPlan::from_script(&a, vec![dev("veth-tx@0", 0, &[])]).unwrap();
    assert_eq!(one.senders[0].backends[0].kind(), BackendKind::XdpLive);
}
