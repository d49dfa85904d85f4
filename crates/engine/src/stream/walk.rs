//! The full pktgen walk as a frame source: [`PgFrames`] runs [`Generator`] and writes every
//! header of each packet ([`generate::write_frame`]).

use super::FrameSource;
use crate::pg::generate::{self, Generator, Layout};

/// The full pktgen walk, every header written per packet.
pub struct PgFrames {
    layout: Layout,
    walk: Generator,
    max_len: usize,
    len: usize,
    cpu: u16,
}

impl PgFrames {
    /// The walk `walk` written by `layout` into buffers of `max_len` bytes, on CPU `cpu`
    /// (QUEUE_MAP_CPU).
    pub fn new(layout: Layout, walk: Generator, max_len: usize, cpu: u16) -> Self {
        PgFrames {
            layout,
            walk,
            max_len,
            len: 0,
            cpu,
        }
    }

    /// The frames' constant layout.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }
}

impl FrameSource for PgFrames {
    fn prefill(&self) -> Vec<u8> {
        let mut g = self.walk.clone();
        g.advance(self.cpu);
        let mut buf = vec![0u8; self.max_len];
        let len = self.layout.frame_len(&g);
        generate::write_frame(&self.layout, &g, (0, 0), &mut buf[..len]);
        buf
    }

    #[inline]
    fn advance(&mut self) -> usize {
        self.walk.advance(self.cpu);
        self.len = self.layout.frame_len(&self.walk);
        self.len
    }

    #[inline]
    fn write(&mut self, buf: &mut [u8], stamp: super::Stamp) {
        generate::write_frame(&self.layout, &self.walk, stamp.tv, buf);
    }

    #[inline]
    fn sent(&mut self) {
        self.walk.sent_one(self.len);
    }

    fn pkt_size(&self) -> u32 {
        self.walk.cur_pkt_size
    }

    fn imix_bytes(&self) -> Option<u64> {
        // IMIX keeps a count per entry; a walk without IMIX has none.
        (!self.walk.imix_counts.is_empty()).then_some(self.walk.bytes)
    }

    fn generator(&self) -> Option<&Generator> {
        Some(&self.walk)
    }
}
