//! The sending interface as the run sees it, probed once: by a packet socket in its
//! namespace for a run that sends ([`Device::probe`]), or from sysfs without privileges for
//! `--pcap` ([`Device::unprivileged`]); its counters ([`NetDevReader`]); and whether the
//! frames fit it ([`check_frame_fits`]).

use crate::pg::generate::DeviceInfo;
use crate::pg::{DevConfig, Flag};
use crate::sample::{IfaceCounters, NetDevSnapshot};
use crate::sys::{self, netns, packet::PacketSocket};
use crate::wire::MacAddr;
use anyhow::{Context, Result, anyhow, bail};
use std::fs::File;
use std::io::{Read, Seek};
use std::path::{Path, PathBuf};

/// The sending interface, probed in its namespace.
#[derive(Debug, Clone)]
pub struct Device {
    pub name: String,
    pub netns: Option<PathBuf>,
    pub ifindex: u32,
    pub mtu: u32,
    /// What the frames take from it: MAC, IPv4 address, TX queues (from sysfs when the
    /// device is in this namespace, the lab's queues in the lab; else 1).
    pub info: DeviceInfo,
}

impl Device {
    /// Opens a packet socket on `name` (in `ns`) and reads its index, flags, MTU, MAC and
    /// IPv4 address; refuses an interface that is down.
    pub fn probe(name: &str, ns: Option<&Path>) -> Result<Device> {
        let owned = name.to_string();
        let probe = move || -> std::io::Result<(Device, u32)> {
            let ifindex = sys::if_nametoindex(&owned)?;
            // A packet socket is the handle for the interface ioctls; it is closed right away.
            let sock = PacketSocket::open(ifindex)?;
            let flags = sock.if_flags(&owned)?;
            // In another namespace, asked of the driver from inside it (sysfs shows the one it
            // was mounted in); a driver that does not say has one.
            let tx_queues = sys::xsk_rx::tx_queues(&owned)
                .ok()
                .flatten()
                .map_or(1, |n| u16::try_from(n).unwrap_or(u16::MAX));
            let dev = Device {
                mtu: sock.if_mtu(&owned)?,
                info: DeviceInfo {
                    mac: MacAddr(sock.if_hwaddr(&owned)?),
                    ipv4: sock.if_addr4(&owned)?,
                    tx_queues,
                },
                name: owned,
                netns: None,
                ifindex,
            };
            Ok((dev, flags))
        };
        let r = match ns {
            Some(p) => netns::in_netns(p, probe),
            None => probe(),
        };
        let (mut dev, flags) = r.map_err(|e| match e.raw_os_error() {
            Some(libc::ENODEV) | Some(libc::ENXIO) => anyhow!("--dev {name}: no such interface"),
            Some(libc::EPERM) | Some(libc::EACCES) => {
                anyhow!("--dev {name}: opening a packet socket needs CAP_NET_RAW: run as root")
            }
            _ => anyhow!("--dev {name}: {e}"),
        })?;
        if flags & libc::IFF_UP as u32 == 0 {
            bail!("--dev {name}: the interface is down (bring it up with `ip link set {name} up`)");
        }
        dev.netns = ns.map(Path::to_path_buf);
        if ns.is_none() {
            // sysfs shows the namespace it was mounted in: trusted for our own.
            dev.info.tx_queues = sysfs_tx_queues(name).unwrap_or(1);
        }
        Ok(dev)
    }

    /// For `--pcap`, without privileges: the lab's sending end (no `dev`), or `dev`'s MAC
    /// and MTU from sysfs and its IPv4 address when a packet socket may be opened. Returns
    /// what the frames take, the MTU and the name; a note on standard error says what is
    /// unknown.
    pub fn unprivileged(dev: Option<&str>, cfg: &DevConfig) -> (DeviceInfo, u32, String) {
        let lab_info = super::plan::lab_sender();
        let Some(name) = dev else {
            return (lab_info, crate::lab::MTU, crate::lab::TX_IF.to_string());
        };
        let mtu = sysfs(name, "mtu").and_then(|s| s.trim().parse::<u32>().ok());
        let (Some(mac), Some(mtu)) = (sysfs_mac(name), mtu) else {
            crate::errln!(
                "upktgen: note: --dev {name}: no such interface here; the source MAC and IPv4 address default to the lab's ({}, {}) unless --src-mac/--src give them",
                crate::lab::TX_MAC,
                crate::lab::TX_IP
            );
            return (lab_info, crate::lab::MTU, name.to_string());
        };
        let ipv4 = sys::if_nametoindex(name)
            .and_then(PacketSocket::open)
            .and_then(|s| s.if_addr4(name))
            .ok()
            .flatten();
        if ipv4.is_none() && cfg.src_min.is_empty() && !cfg.has(Flag::Ipv6) {
            crate::errln!(
                "upktgen: note: --dev {name}: its IPv4 address is unknown (none, or reading it needs CAP_NET_RAW): the source address is 0.0.0.0 unless --src gives one"
            );
        }
        (
            DeviceInfo {
                mac,
                ipv4,
                tx_queues: 1,
            },
            mtu,
            name.to_string(),
        )
    }
}

fn sysfs(name: &str, file: &str) -> Option<String> {
    std::fs::read_to_string(format!("/sys/class/net/{name}/{file}")).ok()
}

/// An interface's MAC address from sysfs (this namespace's interfaces).
pub fn sysfs_mac(name: &str) -> Option<MacAddr> {
    sysfs(name, "address").and_then(|s| s.trim().parse().ok())
}

/// An interface's TX queues from sysfs (this namespace's interfaces).
pub(crate) fn sysfs_tx_queues(name: &str) -> Option<u16> {
    let rd = std::fs::read_dir(format!("/sys/class/net/{name}/queues")).ok()?;
    let n = rd
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("tx-"))
        .count();
    Some(u16::try_from(n).unwrap_or(u16::MAX).max(1))
}

/// Refuses frames the device cannot carry: the largest frame, less its VLAN tags, must fit
/// the MTU plus the Ethernet header.
pub fn check_frame_fits(cfg: &DevConfig, mtu: u32, dev: &str) -> Result<()> {
    let tags = cfg.vlan_tag_bytes();
    let max = cfg.max_frame_len();
    let room = mtu as usize + crate::wire::ETH_HLEN + tags;
    if max > room {
        bail!(
            "frames of up to {max} bytes (pkt_size/max_pkt_size/imix_weights, with headers) do not fit {dev}: {mtu} MTU + 14-byte Ethernet header{} = {room}",
            if tags > 0 { " + VLAN tags" } else { "" }
        );
    }
    Ok(())
}

/// Reads an interface's counters from /proc/net/dev of one network namespace. The file is
/// opened by a thread inside the namespace and stays bound to it.
pub struct NetDevReader {
    file: File,
}

impl NetDevReader {
    pub fn open(ns: Option<&Path>) -> Result<Self> {
        let open = || File::open("/proc/thread-self/net/dev");
        let file = match ns {
            Some(p) => netns::in_netns(p, open),
            None => open(),
        }
        .context("opening /proc/net/dev")?;
        Ok(NetDevReader { file })
    }

    pub fn read(&mut self, iface: &str) -> Result<IfaceCounters> {
        let mut s = String::new();
        self.file.rewind()?;
        self.file
            .read_to_string(&mut s)
            .context("reading /proc/net/dev")?;
        let snap = NetDevSnapshot::parse(&s).map_err(|e| anyhow!("parsing /proc/net/dev: {e}"))?;
        snap.get(iface)
            .cloned()
            .ok_or_else(|| anyhow!("{iface} vanished from /proc/net/dev during the run"))
    }

    /// The sum of several interfaces' counters.
    pub fn read_sum<'a>(&mut self, ifaces: impl Iterator<Item = &'a str>) -> Result<IfaceCounters> {
        let mut sum = IfaceCounters::default();
        for i in ifaces {
            sum = sum.plus(&self.read(i)?);
        }
        Ok(sum)
    }
}
