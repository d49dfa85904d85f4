//! What a driver says of its interface through SIOCETHTOOL: its queues and its link speed.
//! Asked in the calling thread's network namespace (sysfs shows the namespace it was
//! mounted in), so a caller may ask from inside another one.

use super::cvt;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// The number of RX queues of interface `name` (ETHTOOL_GCHANNELS: the larger of the rx
/// and combined counts), or None when the driver does not say.
pub fn rx_queues(name: &str) -> io::Result<Option<u32>> {
    Ok(channels(name)?.map(|(rx, _)| rx).filter(|&n| n > 0))
}

/// The number of TX queues of interface `name` in this thread's network namespace
/// (ETHTOOL_GCHANNELS: the larger of the tx and combined counts), or None when the driver
/// does not say.
pub fn tx_queues(name: &str) -> io::Result<Option<u32>> {
    Ok(channels(name)?.map(|(_, tx)| tx).filter(|&n| n > 0))
}

/// Interface `name`'s RX and TX queues (each the larger of its own and the combined
/// count), or None when the driver does not say.
fn channels(name: &str) -> io::Result<Option<(u32, u32)>> {
    const ETHTOOL_GCHANNELS: u32 = 0x3c;
    let mut ch = Channels {
        cmd: ETHTOOL_GCHANNELS,
        ..Channels::default()
    };
    let asked = ask(name, (&mut ch as *mut Channels).cast())?;
    Ok(asked.then(|| {
        (
            ch.rx_count.max(ch.combined_count),
            ch.tx_count.max(ch.combined_count),
        )
    }))
}

/// Interface `name`'s link speed in Mb/s as its driver reports it (ETHTOOL_GSET, which
/// every kernel answers from the link settings), or None when the driver does not say or
/// does not know (no carrier, a virtual device without a speed).
pub fn link_speed_mbps(name: &str) -> io::Result<Option<u32>> {
    const ETHTOOL_GSET: u32 = 0x1;
    const SPEED_UNKNOWN: u32 = u32::MAX;
    let mut c = Cmd {
        cmd: ETHTOOL_GSET,
        ..Cmd::default()
    };
    let asked = ask(name, (&mut c as *mut Cmd).cast())?;
    let speed = (u32::from(c.speed_hi) << 16) | u32::from(c.speed);
    Ok((asked && speed != 0 && speed != SPEED_UNKNOWN).then_some(speed))
}

/// struct ethtool_channels (36 bytes).
#[repr(C)]
#[derive(Default)]
struct Channels {
    cmd: u32,
    max_rx: u32,
    max_tx: u32,
    max_other: u32,
    max_combined: u32,
    rx_count: u32,
    tx_count: u32,
    other_count: u32,
    combined_count: u32,
}

/// struct ethtool_cmd (44 bytes).
#[repr(C)]
#[derive(Default)]
struct Cmd {
    cmd: u32,
    supported: u32,
    advertising: u32,
    speed: u16,
    duplex: u8,
    port: u8,
    phy_address: u8,
    transceiver: u8,
    autoneg: u8,
    mdio_support: u8,
    maxtxpkt: u32,
    maxrxpkt: u32,
    speed_hi: u16,
    eth_tp_mdix: u8,
    eth_tp_mdix_ctrl: u8,
    lp_advertising: u32,
    reserved: [u32; 2],
}

/// SIOCETHTOOL on interface `name` with `data` (an ethtool struct whose first word is the
/// command, that the kernel fills); false when the driver does not support the command.
fn ask(name: &str, data: *mut libc::c_void) -> io::Result<bool> {
    if name.len() >= libc::IFNAMSIZ {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "interface name too long",
        ));
    }
    // SAFETY: ifreq is plain old data; all-zero is a valid value.
    let mut ifr: libc::ifreq = unsafe { std::mem::zeroed() };
    for (d, s) in ifr.ifr_name.iter_mut().zip(name.bytes()) {
        *d = s as libc::c_char;
    }
    ifr.ifr_ifru.ifru_data = data.cast();
    // SAFETY: plain syscall; the fd is checked and owned right away.
    let raw =
        cvt(unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) })?;
    // SAFETY: `raw` is a new fd nothing else owns.
    let sock = unsafe { OwnedFd::from_raw_fd(raw) };
    // SAFETY: `ifr` is a valid ifreq naming the device; its data pointer is the caller's
    // ethtool struct for the command in its first word, alive across the call, which the
    // kernel fills (both callers pass a struct of the command's full size).
    let r = unsafe { libc::ioctl(sock.as_raw_fd(), libc::SIOCETHTOOL, &mut ifr) };
    if r < 0 {
        let e = io::Error::last_os_error();
        return match e.raw_os_error() {
            Some(libc::EOPNOTSUPP) => Ok(false),
            _ => Err(e),
        };
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_structs_are_the_kernels_sizes() {
        // The kernel copies this many bytes in and out (<linux/ethtool.h>).
        assert_eq!(std::mem::size_of::<Cmd>(), 44);
        assert_eq!(std::mem::size_of::<Channels>(), 36);
    }

    #[test]
    fn loopback_has_no_speed_and_a_long_name_is_refused() {
        assert_eq!(link_speed_mbps("lo").ok().flatten(), None);
        assert!(link_speed_mbps("a-name-longer-than-ifnamsiz").is_err());
    }
}
