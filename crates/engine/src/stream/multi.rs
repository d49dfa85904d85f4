//! Many streams on one transmit queue as one [`FrameSource`]: the [`Timeline`] says which
//! stream's frame is next and when it is due, each stream's [`StreamFrames`] writes it, and
//! a [`Tally`] counts what each stream handed over (readable from other threads while the
//! run goes on).
//!
//! The send loop paces by [`FrameSource::due_ns`]: frame `k` of the run (counting every
//! stream's frames together) is due at the deadline the timeline gave it ([`Ahead`]).

use super::ahead::Ahead;
use super::build::{StreamFrames, build_signed};
use super::spec::{StreamError, StreamSpec};
use super::timeline::{Due, Timeline};
use super::{FrameSource, Stamp};
pub use crate::tally::Tally;
use std::sync::Arc;

/// How many frames ahead of the one written a stream's data is touched.
const TOUCH_AHEAD: usize = 4;

/// From how many streams on: fewer stay in the cache by themselves.
const TOUCH_STREAMS: usize = 64;

/// A queue's streams, sent in the order of their deadlines.
pub struct MultiStream {
    frames: Vec<StreamFrames>,
    timeline: Ahead,
    cur: Due,
    tally: Arc<Tally>,
    /// Each stream's place in the tally (a queue's streams in a port's tally, which every
    /// queue of the port shares; each place has one writer: its stream's queue).
    slots: Box<[u32]>,
    /// Bytes of every frame advanced to (the Result line's bytes).
    bytes: u64,
    min_len: u32,
    max_len: usize,
}

impl MultiStream {
    /// The streams `specs` (stream `i` signed with id `i`), on a port of `line_bps` when
    /// known; their deadlines count from the start of the send.
    pub fn new(specs: &[StreamSpec], line_bps: Option<f64>) -> Result<MultiStream, StreamError> {
        let ids: Vec<u16> = (0..specs.len()).map(|i| i as u16).collect();
        MultiStream::signed(specs, &ids, line_bps)
    }

    /// [`MultiStream::new`] with stream `i` signed with id `ids[i]` (one id per stream);
    /// the tally still counts stream `i` (the index in `specs`).
    pub fn signed(
        specs: &[StreamSpec],
        ids: &[u16],
        line_bps: Option<f64>,
    ) -> Result<MultiStream, StreamError> {
        let tally = Arc::new(Tally::new(specs.len()));
        let slots: Vec<u32> = (0..specs.len() as u32).collect();
        MultiStream::on_queue(specs, ids, line_bps, tally, &slots)
    }

    /// One transmit queue of a port whose streams several queues send: [`MultiStream::signed`]
    /// with stream `i` counted in `tally` at `slots[i]` (the port's tally, shared by its
    /// queues; a stream is on one queue, so each place still has one writer).
    pub fn on_queue(
        specs: &[StreamSpec],
        ids: &[u16],
        line_bps: Option<f64>,
        tally: Arc<Tally>,
        slots: &[u32],
    ) -> Result<MultiStream, StreamError> {
        assert_eq!(slots.len(), specs.len(), "one tally place per stream");
        let frames = build_signed(specs, ids)?;
        let schedules = specs
            .iter()
            .map(|s| s.schedule(line_bps))
            .collect::<Result<Vec<_>, _>>()?;
        let max_len = frames.iter().map(StreamFrames::max_len).max().unwrap_or(0);
        let min_len = frames.iter().map(StreamFrames::min_len).min().unwrap_or(0) as u32;
        Ok(MultiStream {
            tally,
            slots: slots.into(),
            frames,
            timeline: Ahead::new(Timeline::new(schedules, 0)),
            cur: Due::default(),
            bytes: 0,
            min_len,
            max_len,
        })
    }

    /// The per-stream counts, shared with whoever reads them while the run goes on.
    pub fn tally(&self) -> Arc<Tally> {
        Arc::clone(&self.tally)
    }

    /// The largest frame of any stream.
    pub fn max_len(&self) -> usize {
        self.max_len
    }

    /// Each stream's signature id and the checksum that covers its signature
    /// ([`StreamFrames::signature_checksum`]).
    pub fn signature_checksums(&self) -> Vec<(u16, Option<(usize, bool)>)> {
        self.frames
            .iter()
            .map(|f| (f.id(), f.signature_checksum()))
            .collect()
    }

    /// The smallest frame of any stream.
    pub fn min_len(&self) -> usize {
        self.min_len as usize
    }
}

impl FrameSource for MultiStream {
    fn prefill(&self) -> Vec<u8> {
        // Every frame is written whole (a buffer may hold another stream's frame before).
        vec![0; self.max_len]
    }

    #[inline]
    fn advance(&mut self) -> usize {
        // The loop asks only for frames it was told are due (due_ns, or the run's count
        // when every stream ends by a count): none left is a frame it will not send.
        let d = self.timeline.take().unwrap_or(Due {
            len: self.min_len,
            ..self.cur
        });
        self.cur = d;
        // A frame a few places on (the loop has looked at its batch's due times): touch its
        // stream's data now, so with many streams it is in the cache when written.
        if self.frames.len() >= TOUCH_STREAMS
            && let Some(next) = self.timeline.queued(TOUCH_AHEAD)
        {
            self.frames[next.stream as usize].touch();
        }
        d.len as usize
    }

    #[inline]
    fn write(&mut self, buf: &mut [u8], stamp: Stamp) {
        let d = self.cur;
        self.frames[d.stream as usize].write(d.seq, d.len as usize, stamp.ns, buf);
    }

    #[inline]
    fn sent(&mut self) {
        // One writer (this sender's thread): a load and a store, no locked add.
        let d = self.cur;
        self.tally
            .add(self.slots[d.stream as usize] as usize, u64::from(d.len));
        self.bytes += u64::from(d.len);
    }

    fn pkt_size(&self) -> u32 {
        self.min_len
    }

    fn imix_bytes(&self) -> Option<u64> {
        Some(self.bytes)
    }

    fn size_range(&self) -> Option<(u32, u32)> {
        let hi = self.max_len as u32;
        (self.min_len != hi).then_some((self.min_len, hi))
    }

    /// Frame `k` of the run is due at its stream's deadline; after the last frame of every
    /// stream, never (the run ends by its count or duration).
    fn due_ns(&mut self, k: u64) -> Option<u64> {
        Some(self.timeline.due_ns(k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::spec::{Header, Length, Rate, Size, UdpSpec};
    use crate::wire::signature::Signature;

    fn udp(name: &str, pps: f64, packets: u64, size: usize) -> StreamSpec {
        StreamSpec {
            name: name.into(),
            headers: vec![
                Header::Ethernet(Default::default()),
                Header::Ipv4(Default::default()),
                Header::Udp(UdpSpec::default()),
            ],
            size: Size::Fixed(size),
            rate: Rate::Pps(pps),
            length: Length::Packets(packets),
            start_delay_ns: 0,
            fill: Default::default(),
        }
    }

    /// Runs the source as the send loop does: look at the next frame's due time, take it,
    /// write it, mark it sent.
    fn drain(m: &mut MultiStream, n: u64) -> Vec<(u64, Signature, usize)> {
        let mut buf = vec![0u8; m.max_len()];
        (0..n)
            .map(|k| {
                let due = m.due_ns(k).unwrap();
                let len = m.advance();
                m.write(&mut buf[..len], Stamp::at(1_000 + k));
                m.sent();
                (due, Signature::parse(&buf[..len]).unwrap(), len)
            })
            .collect()
    }

    #[test]
    fn frames_come_in_deadline_order_each_signed_by_its_stream() {
        let mut m = MultiStream::new(
            &[udp("slow", 1_000.0, 3, 60), udp("fast", 3_000.0, 9, 100)],
            None,
        )
        .unwrap();
        let got = drain(&mut m, 12);
        let dues: Vec<u64> = got.iter().map(|g| g.0).collect();
        assert!(dues.windows(2).all(|w| w[0] <= w[1]), "{dues:?}");
        // Three fast frames for each slow one, the streams' own sequences from 0.
        let slow: Vec<u32> = got
            .iter()
            .filter(|g| g.1.stream == 0)
            .map(|g| g.1.seq)
            .collect();
        let fast: Vec<u32> = got
            .iter()
            .filter(|g| g.1.stream == 1)
            .map(|g| g.1.seq)
            .collect();
        assert_eq!(slow, [0, 1, 2]);
        assert_eq!(fast, (0..9).collect::<Vec<_>>());
        assert!(
            got.iter()
                .all(|g| g.2 == if g.1.stream == 0 { 60 } else { 100 })
        );
        assert_eq!(got[5].1.tx_ns, 1_005, "the stamp's ns is the signature's");
        // Every frame was counted in its stream, and the Result line's bytes add up.
        let t = m.tally();
        assert_eq!(t.get(0), (3, 180));
        assert_eq!(t.get(1), (9, 900));
        assert_eq!(m.imix_bytes(), Some(1_080));
        // Nothing left: never due again.
        assert_eq!(m.due_ns(12), Some(u64::MAX));
    }

    #[test]
    fn looking_ahead_takes_nothing_and_a_partly_sent_batch_stays_due() {
        let mut m = MultiStream::new(&[udp("a", 1_000.0, 10, 60)], None).unwrap();
        // The loop looks at frames 0..4 before taking any.
        let ahead: Vec<u64> = (0..4).map(|k| m.due_ns(k).unwrap()).collect();
        assert_eq!(ahead, [0, 1_000_000, 2_000_000, 3_000_000]);
        assert_eq!(m.due_ns(0), Some(0), "asking again gives the same answer");
        for _ in 0..3 {
            m.advance();
            m.sent();
        }
        // The backend took only two of the three: frame 2 is asked for again.
        assert_eq!(m.due_ns(2), Some(2_000_000));
        assert_eq!(m.due_ns(3), Some(3_000_000));
    }

    #[test]
    fn queues_of_one_port_count_their_streams_in_its_tally() {
        // Port streams 0..3; queue A sends 0 and 2, queue B sends 1.
        let specs = [
            udp("a", 1_000.0, 2, 60),
            udp("b", 1_000.0, 3, 80),
            udp("c", 1_000.0, 4, 100),
        ];
        let tally = Arc::new(Tally::new(3));
        let mut qa = MultiStream::on_queue(
            &[specs[0].clone(), specs[2].clone()],
            &[10, 12],
            None,
            Arc::clone(&tally),
            &[0, 2],
        )
        .unwrap();
        let mut qb =
            MultiStream::on_queue(&specs[1..2], &[11], None, Arc::clone(&tally), &[1]).unwrap();
        let a = drain(&mut qa, 6);
        let b = drain(&mut qb, 3);
        assert!(a.iter().all(|g| g.1.stream == 10 || g.1.stream == 12));
        assert!(b.iter().all(|g| g.1.stream == 11));
        assert_eq!(tally.get(0), (2, 120));
        assert_eq!(tally.get(1), (3, 240));
        assert_eq!(tally.get(2), (4, 400));
        assert_eq!((qa.imix_bytes(), qb.imix_bytes()), (Some(520), Some(240)));
    }

    #[test]
    fn a_stream_that_cannot_be_built_is_refused_by_name() {
        let e = MultiStream::new(&[udp("tiny", 1_000.0, 1, 40)], None)
            .err()
            .unwrap();
        assert!(e.to_string().contains("tiny"), "{e}");
    }
}
