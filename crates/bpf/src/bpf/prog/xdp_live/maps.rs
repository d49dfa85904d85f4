//! The two maps' layouts (the XDP program's state, the tracepoint program's driver
//! counters) and userspace's copies of them.

/// Layout of the XDP program's state map value (native-endian fields).
pub mod state {
    /// u64: frames the XDP program has run (each one redirected).
    pub const FRAMES: i16 = 0;
    /// u64: CLOCK_REALTIME - CLOCK_MONOTONIC in ns, set by userspace before each run.
    pub const RT_OFFSET: i16 = 8;
    /// u64: value of FRAMES at which the program reads the clock next (userspace sets 0
    /// before each run, so the first frame of a run always reads it).
    pub const CLOCK_AT: i16 = 16;
    /// u32: tv_sec of the last clock reading, as stored in frames (big-endian bytes).
    pub const TV_SEC: i16 = 24;
    /// u32: tv_usec likewise.
    pub const TV_USEC: i16 = 28;
    /// u32: the first walk's next offset from its minimum (the UDP source port's in the
    /// plain stream).
    pub const SPORT: i16 = 32;
    /// u32: the second walk's (the destination port's).
    pub const DPORT: i16 = 36;
    /// The part [`super::State`] holds.
    pub const SIZE: usize = 40;
    /// u64: bytes of the frames the program ran (kept when the size varies).
    pub const BYTES: i16 = 40;
    /// u32: the current flow (FLOW_SEQ).
    pub const CURFL: i16 = 48;
    /// u32 slots of the third and later walks, then IMIX's table of u16 lengths.
    pub const SLOTS: i16 = 52;

    /// Where walk `i` (in the order of [`super::Spec`]'s fields, then the size) keeps its
    /// next offset.
    pub fn slot(i: usize) -> i16 {
        match i {
            0 => SPORT,
            1 => DPORT,
            _ => SLOTS + 4 * (i as i16 - 2),
        }
    }
}

/// Layout of the tracepoint program's map value.
pub mod driver {
    /// u32: thread id whose `ndo_xdp_xmit` calls are counted (set by userspace).
    pub const TID: i16 = 0;
    /// u32: last non-zero error the driver call reported (a negative errno).
    pub const LAST_ERR: i16 = 4;
    /// u64: frames the driver accepted.
    pub const SENT: i16 = 8;
    /// u64: frames the driver refused.
    pub const DROPS: i16 = 16;
    /// u64: driver calls (bulk flushes).
    pub const CALLS: i16 = 24;
    pub const SIZE: usize = 32;
}

fn rd_u32(b: &[u8], off: i16) -> u32 {
    let o = off as usize;
    u32::from_ne_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
}

fn rd_u64(b: &[u8], off: i16) -> u64 {
    let o = off as usize;
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[o..o + 8]);
    u64::from_ne_bytes(w)
}

fn wr_u32(b: &mut [u8], off: i16, v: u32) {
    let o = off as usize;
    b[o..o + 4].copy_from_slice(&v.to_ne_bytes());
}

fn wr_u64(b: &mut [u8], off: i16, v: u64) {
    let o = off as usize;
    b[o..o + 8].copy_from_slice(&v.to_ne_bytes());
}

/// Userspace's copy of the XDP program's state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct State {
    pub frames: u64,
    pub rt_offset: u64,
    pub clock_at: u64,
    pub tv_sec_raw: u32,
    pub tv_usec_raw: u32,
    pub sport: u32,
    pub dport: u32,
}

impl State {
    pub fn to_bytes(&self) -> [u8; state::SIZE] {
        let mut b = [0u8; state::SIZE];
        wr_u64(&mut b, state::FRAMES, self.frames);
        wr_u64(&mut b, state::RT_OFFSET, self.rt_offset);
        wr_u64(&mut b, state::CLOCK_AT, self.clock_at);
        wr_u32(&mut b, state::TV_SEC, self.tv_sec_raw);
        wr_u32(&mut b, state::TV_USEC, self.tv_usec_raw);
        wr_u32(&mut b, state::SPORT, self.sport);
        wr_u32(&mut b, state::DPORT, self.dport);
        b
    }

    pub fn from_bytes(b: &[u8; state::SIZE]) -> State {
        State {
            frames: rd_u64(b, state::FRAMES),
            rt_offset: rd_u64(b, state::RT_OFFSET),
            clock_at: rd_u64(b, state::CLOCK_AT),
            tv_sec_raw: rd_u32(b, state::TV_SEC),
            tv_usec_raw: rd_u32(b, state::TV_USEC),
            sport: rd_u32(b, state::SPORT),
            dport: rd_u32(b, state::DPORT),
        }
    }
}

/// Userspace's copy of the tracepoint program's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Driver {
    pub tid: u32,
    pub last_err: i32,
    pub sent: u64,
    pub drops: u64,
    pub calls: u64,
}

impl Driver {
    pub fn to_bytes(&self) -> [u8; driver::SIZE] {
        let mut b = [0u8; driver::SIZE];
        wr_u32(&mut b, driver::TID, self.tid);
        wr_u32(&mut b, driver::LAST_ERR, self.last_err as u32);
        wr_u64(&mut b, driver::SENT, self.sent);
        wr_u64(&mut b, driver::DROPS, self.drops);
        wr_u64(&mut b, driver::CALLS, self.calls);
        b
    }

    pub fn from_bytes(b: &[u8; driver::SIZE]) -> Driver {
        Driver {
            tid: rd_u32(b, driver::TID),
            last_err: rd_u32(b, driver::LAST_ERR) as i32,
            sent: rd_u64(b, driver::SENT),
            drops: rd_u64(b, driver::DROPS),
            calls: rd_u64(b, driver::CALLS),
        }
    }
}
