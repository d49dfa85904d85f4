//! The agent's control protocol: JSON-RPC 2.0, one JSON object per line, over the agent's
//! standard input (requests) and standard output (responses). docs/agent.md has one example
//! exchange per method.

use crate::sys::clock::ClockSync;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::io::{self, BufRead};

/// The protocol's version: both ends must speak the same one (2: `rx.stats` takes
/// `streams_from` and answers a chunk of stream rows; `rx.streams` reads the rest of a
/// stopped receiver's stream summaries).
pub const PROTOCOL: u32 = 2;
/// This build's version, exchanged in `hello` (the far end must run the same release).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// `upktgen agent --watchdog`'s default: with a receiver running, the agent ends the
/// session when no request has come for this long. A controller calls at least every
/// [`crate::agent::far::KEEPALIVE`] while it sends.
pub const WATCHDOG: &str = "30s";

/// The longest request line an agent reads (requests are small).
pub const MAX_REQUEST: usize = 1 << 20;
/// The longest response line a controller reads (a receiver's report with its whole
/// latency histogram and many flows stays well below this).
pub const MAX_RESPONSE: usize = 16 << 20;

/// JSON-RPC error codes: the standard ones and the agent's own (-32000 and below).
pub mod code {
    pub const PARSE_ERROR: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const INVALID_PARAMS: i64 = -32602;
    /// The method ran and failed (its message says why).
    pub const FAILED: i64 = -32000;
    /// `hello` with another version or protocol.
    pub const VERSION_MISMATCH: i64 = -32001;
    /// A method other than `hello` before `hello`.
    pub const NOT_INTRODUCED: i64 = -32002;
}

/// A request. `schema` ([`crate::schema::AGENT`]) is optional on input (a request typed by
/// hand may leave it out); the controller always sends it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Request {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    pub jsonrpc: String,
    pub id: Value,
    pub method: String,
    #[serde(default)]
    pub params: Value,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
}

/// A response; `schema` is [`crate::schema::AGENT`] (absent from an agent older than it).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Response {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    pub jsonrpc: String,
    pub id: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<RpcError>,
}

impl Response {
    pub fn ok(id: Value, result: Value) -> Self {
        Response {
            schema: Some(crate::schema::AGENT.into()),
            jsonrpc: "2.0".into(),
            id,
            result: Some(result),
            error: None,
        }
    }

    pub fn err(id: Value, code: i64, message: impl Into<String>) -> Self {
        Response {
            schema: Some(crate::schema::AGENT.into()),
            jsonrpc: "2.0".into(),
            id,
            result: None,
            error: Some(RpcError {
                code,
                message: message.into(),
            }),
        }
    }
}

/// `hello`: the controller introduces itself; the agent answers with what it is and has.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Hello {
    pub version: String,
    pub protocol: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HelloReply {
    pub version: String,
    pub protocol: u32,
    pub hostname: String,
    pub kernel: String,
    pub pid: u32,
    /// The agent's network namespace (the inode of /proc/self/ns/net).
    pub netns_inode: u64,
    /// Effective uid 0.
    pub root: bool,
    /// The methods this agent answers.
    pub methods: Vec<String>,
    /// Receive backends it can try.
    pub rx_backends: Vec<String>,
    /// Its clock's synchronisation as adjtimex reports it (None: adjtimex failed).
    pub clock: Option<ClockSync>,
}

/// `clock`: the agent's clocks when it answered.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct ClockReply {
    pub realtime_ns: u64,
    pub monotonic_ns: u64,
}

/// `counters`: interface counters (/proc/net/dev of the agent's namespace).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct CountersParams {
    pub devs: Vec<String>,
}

/// `rx.start`: a receiver, with `upktgen rx`'s own options as its command line would give
/// them (`["--dev", "veth-rx", "--rx-backend", "af_xdp"]`): the same words, the same checks,
/// the same defaults. Output options (`--json`, `--live`, ...) have no effect here.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RxStart {
    pub args: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RxStarted {
    pub id: u32,
    /// af_xdp or af_packet.
    pub backend: String,
    /// With rx_backend auto: which backend was taken and why.
    pub choice: Option<String>,
}

/// `rx.stats` / `rx.stop`: which receiver.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct RxId {
    pub id: u32,
}

/// `rx.stats`: which receiver, and the first stream id whose figures to send (none sent
/// without it).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct RxStatsParams {
    pub id: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streams_from: Option<u32>,
}

/// `rx.stats`: running totals.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct RxStats {
    pub frames: u64,
    pub bytes: u64,
    pub lost: u64,
    pub drops: u64,
    /// False once the receiver has ended (an error, or it was stopped).
    pub running: bool,
    /// Asked with `streams_from` of a receiver counting streams: at most
    /// [`STATS_CHUNK`] streams' live figures from that id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streams: Option<StreamsChunk>,
}

/// `rx.streams`: which stopped receiver, and the index of the first stream summary wanted.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct RxStreamsParams {
    pub id: u32,
    pub from: u32,
}

/// Stream summaries one answer carries at most: `rx.stop`'s report holds the first this
/// many and `rx.streams` the others, this many a call. A summary is under 1 KB of JSON but
/// for its name, and all the names together came in one request (at most
/// [`MAX_REQUEST`]), so an answer stays under 5 MiB: the 65,536 streams a signature can name
/// come whole in 16 answers, where one line held about 28,800.
pub const REPORT_CHUNK: usize = 4096;
const _: () = assert!(REPORT_CHUNK * 1024 + MAX_REQUEST < MAX_RESPONSE);

/// Streams one `rx.stats` answer carries at most: a row is at most about 2.3 KB of JSON
/// (4 counters and 80 buckets of 20 digits), so an answer stays within 9.5 MiB, under
/// [`MAX_RESPONSE`], whatever the figures.
pub const STATS_CHUNK: usize = 4096;
const _: () = assert!(STATS_CHUNK * 2400 < MAX_RESPONSE);

/// Some streams' live figures: those of ids `from` to `from + rows.len() - 1` of `total`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct StreamsChunk {
    pub from: u32,
    pub total: u32,
    pub rows: Vec<StatsRow>,
}

/// One stream's live figures, compact (a JSON array): frames, bytes, open holes, the sum
/// of the latencies (ns), and the latency buckets that hold something as
/// `[bucket, count]` pairs, by ascending bucket ([`crate::rx::streams::live`]: 80
/// quarter-octave buckets from 256 ns, the same the lab's receiver keeps, so a far end's
/// live p50/p99 and latency histogram are read as a local receiver's).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct StatsRow(pub u64, pub u64, pub u64, pub u64, pub Vec<(u8, u64)>);

/// Why a far end's stream row cannot be true.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadRow {
    #[error("latency bucket {at}, beyond the last ({})", crate::rx::streams::live::LAT_BUCKETS - 1)]
    BucketBeyond { at: u8 },
    #[error("latency bucket {at} after bucket {prev}: not in ascending order")]
    BucketOrder { at: u8, prev: u8 },
}

impl StatsRow {
    pub fn of(r: &crate::rx::streams::LiveRow) -> StatsRow {
        StatsRow(r.frames, r.bytes, r.lost, r.lat_sum_ns, r.lat.sparse())
    }

    /// The row's figures, or why a far end cannot have sent them: a bucket beyond the
    /// last, or buckets not in ascending order (one given twice). Counts are not checked
    /// against each other: a reading's fields are each exact but read one after the other
    /// ([`crate::rx::streams::live`]), so an honest row may count a latency whose frame it
    /// does not yet; sums of them saturate where they are added up.
    pub fn live(&self) -> Result<crate::rx::streams::LiveRow, BadRow> {
        use crate::rx::streams::live::LAT_BUCKETS;
        let mut prev: Option<u8> = None;
        for &(i, _) in &self.4 {
            if usize::from(i) >= LAT_BUCKETS {
                return Err(BadRow::BucketBeyond { at: i });
            }
            if let Some(p) = prev.filter(|&p| p >= i) {
                return Err(BadRow::BucketOrder { at: i, prev: p });
            }
            prev = Some(i);
        }
        Ok(crate::rx::streams::LiveRow {
            frames: self.0,
            bytes: self.1,
            lost: self.2,
            lat_sum_ns: self.3,
            lat: crate::rx::streams::LatBuckets::from_sparse(&self.4),
        })
    }
}

impl StreamsChunk {
    /// The figures of `t`'s streams from id `from`, at most [`STATS_CHUNK`] of them (none
    /// from beyond the table).
    pub fn of(t: &crate::rx::streams::LiveTable, from: u32) -> StreamsChunk {
        let start = (from as usize).min(t.len());
        let end = (start + STATS_CHUNK).min(t.len());
        StreamsChunk {
            from: start as u32,
            total: t.len() as u32,
            rows: (start..end).map(|i| StatsRow::of(&t.row(i))).collect(),
        }
    }
}

/// `rx.stop`: wait until `expected` frames are in, or the count has not moved for
/// `settle_ms` (at most `max_wait_ms`), then stop and report.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct RxStop {
    pub id: u32,
    #[serde(default)]
    pub expected: u64,
    #[serde(default = "default_settle")]
    pub settle_ms: u64,
    #[serde(default = "default_max_wait")]
    pub max_wait_ms: u64,
}

fn default_settle() -> u64 {
    250
}

fn default_max_wait() -> u64 {
    3000
}

/// A line longer than the limit, or not UTF-8 JSON.
#[derive(Debug)]
pub enum LineError {
    Io(io::Error),
    TooLong(usize),
}

impl std::fmt::Display for LineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LineError::Io(e) => write!(f, "{e}"),
            LineError::TooLong(max) => write!(f, "a message longer than {max} bytes"),
        }
    }
}

/// Reads one line (without its newline) of at most `max` bytes into `buf`; `Ok(false)` at
/// the end of the input. Memory stays bounded by `max` whatever the other end sends.
pub fn read_line(r: &mut impl BufRead, max: usize, buf: &mut Vec<u8>) -> Result<bool, LineError> {
    buf.clear();
    let n = io::Read::take(&mut *r, max as u64 + 1)
        .read_until(b'\n', buf)
        .map_err(LineError::Io)?;
    if n == 0 {
        return Ok(false);
    }
    if buf.last() == Some(&b'\n') {
        buf.pop();
    } else if buf.len() > max {
        return Err(LineError::TooLong(max));
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `rx.stats`' streams come in chunks of at most STATS_CHUNK: 10,000 streams in three,
    /// a start beyond the table none; each row read back as it was.
    #[test]
    fn stream_figures_come_in_bounded_chunks() {
        let n = 10_000;
        let t = crate::rx::streams::LiveTable::new((0..n).map(|i| format!("f{i}")).collect());
        for i in 0..n {
            t.add(i, 100);
            t.set_lost(i, (i % 7) as u64);
            t.add_latency(i, 1_000 + i as u64);
        }
        let mut from = 0;
        let mut sizes = Vec::new();
        loop {
            let c = StreamsChunk::of(&t, from);
            assert_eq!((c.from, c.total), (from, n as u32));
            for (k, r) in c.rows.iter().enumerate() {
                assert_eq!(r.live(), Ok(t.row(from as usize + k)));
            }
            sizes.push(c.rows.len());
            from += c.rows.len() as u32;
            if from as usize >= n {
                break;
            }
        }
        assert_eq!(sizes, [STATS_CHUNK, STATS_CHUNK, n - 2 * STATS_CHUNK]);
        let past = StreamsChunk::of(&t, 20_000);
        assert_eq!((past.from, past.rows.len()), (n as u32, 0));
    }

    /// The largest row there can be (every counter and bucket at 2^64 − 1) times a whole
    /// chunk is within an answer's line.
    #[test]
    fn a_chunk_of_the_largest_rows_fits_a_line() {
        let row = crate::rx::streams::LiveRow {
            frames: u64::MAX,
            bytes: u64::MAX,
            lost: u64::MAX,
            lat_sum_ns: u64::MAX,
            lat: crate::rx::streams::LatBuckets([u64::MAX; crate::rx::streams::live::LAT_BUCKETS]),
        };
        let one = serde_json::to_string(&StatsRow::of(&row)).unwrap();
        assert!(one.len() < 2400, "{} bytes", one.len());
        let c = StreamsChunk {
            from: 0,
            total: 65_536,
            rows: vec![StatsRow::of(&row); STATS_CHUNK],
        };
        let stats = RxStats {
            frames: u64::MAX,
            bytes: u64::MAX,
            lost: u64::MAX,
            drops: u64::MAX,
            running: true,
            streams: Some(c),
        };
        let result = serde_json::to_value(&stats).unwrap();
        let line = serde_json::to_string(&Response::ok(serde_json::json!(1), result)).unwrap();
        assert!(line.len() < MAX_RESPONSE, "{} bytes", line.len());
        // Compact: an empty stream is a handful of bytes.
        let empty = StatsRow::of(&crate::rx::streams::LiveRow::default());
        assert_eq!(serde_json::to_string(&empty).unwrap(), "[0,0,0,0,[]]");
        // Without streams_from, no streams key (as version 2 answered).
        let plain = RxStats {
            streams: None,
            ..stats
        };
        assert!(!serde_json::to_string(&plain).unwrap().contains("streams"));
    }

    /// A row is read back with its latency buckets; one whose buckets cannot be (beyond
    /// the last, out of order, given twice, or not a bucket number at all) is refused.
    #[test]
    fn stats_rows_carry_the_latency_buckets_and_refuse_impossible_ones() {
        use crate::rx::streams::live::{LAT_BUCKETS, bucket_of, middle};
        let t = crate::rx::streams::LiveTable::new(vec!["a".into()]);
        for ns in [300, 4_000, 4_000, 1_000_000, u64::MAX / 2] {
            t.add(0, 64);
            t.add_latency(0, ns);
        }
        let row = StatsRow::of(&t.row(0));
        let json = serde_json::to_string(&row).unwrap();
        let i = bucket_of(4_000);
        assert!(json.contains(&format!("[{i},2]")), "{json}");
        let back: StatsRow = serde_json::from_str(&json).unwrap();
        let live = back.live().unwrap();
        assert_eq!(live, t.row(0));
        assert_eq!(live.lat.quantile(0.5), Some(middle(i)));
        assert_eq!(live.lat.quantile(1.0), Some(middle(LAT_BUCKETS - 1)));
        let refused = |pairs: &str| {
            let r: StatsRow = serde_json::from_str(&format!("[5,320,0,9000,{pairs}]")).unwrap();
            r.live().unwrap_err().to_string()
        };
        assert_eq!(
            refused("[[80,1]]"),
            "latency bucket 80, beyond the last (79)"
        );
        assert_eq!(
            refused("[[255,1]]"),
            "latency bucket 255, beyond the last (79)"
        );
        assert_eq!(
            refused("[[9,1],[4,1]]"),
            "latency bucket 4 after bucket 9: not in ascending order"
        );
        assert_eq!(
            refused("[[9,1],[9,1]]"),
            "latency bucket 9 after bucket 9: not in ascending order"
        );
        // Not a bucket number, a negative count, a pair of three: not a row at all.
        for bad in [
            "[5,320,0,9000,[[256,1]]]",
            "[5,320,0,9000,[[1,-1]]]",
            "[5,320,0,9000,[[1,1,1]]]",
            "[5,320,0,9000]",
        ] {
            assert!(serde_json::from_str::<StatsRow>(bad).is_err(), "{bad}");
        }
        // Counts that add up past 2^64 - 1 saturate where they are summed.
        let r: StatsRow = serde_json::from_str(&format!(
            "[1,1,0,1,[[0,{h}],[1,{h}],[2,{h}]]]",
            h = 1u64 << 63
        ))
        .unwrap();
        let lat = r.live().unwrap().lat;
        assert_eq!(lat.count(), u64::MAX);
        assert_eq!(lat.quantile(0.99), Some(middle(1)));
    }

    #[test]
    fn lines_are_bounded() {
        let mut r = io::Cursor::new(b"abc\n\nxyz".to_vec());
        let mut b = Vec::new();
        assert!(read_line(&mut r, 8, &mut b).unwrap());
        assert_eq!(b, b"abc");
        assert!(read_line(&mut r, 8, &mut b).unwrap());
        assert_eq!(b, b"");
        assert!(read_line(&mut r, 8, &mut b).unwrap());
        assert_eq!(b, b"xyz");
        assert!(!read_line(&mut r, 8, &mut b).unwrap());
        let mut r = io::Cursor::new(vec![b'x'; 100]);
        assert!(matches!(
            read_line(&mut r, 8, &mut b),
            Err(LineError::TooLong(8))
        ));
        assert!(b.len() <= 9);
        // Exactly max bytes and a newline is fine.
        let mut r = io::Cursor::new(b"12345678\n".to_vec());
        assert!(read_line(&mut r, 8, &mut b).unwrap());
    }

    #[test]
    fn responses_carry_either_a_result_or_an_error() {
        let ok = serde_json::to_string(&Response::ok(Value::from(1), Value::from("x"))).unwrap();
        assert_eq!(
            ok,
            r#"{"schema":"upktgen.agent/3","jsonrpc":"2.0","id":1,"result":"x"}"#
        );
        let e =
            serde_json::to_string(&Response::err(Value::Null, code::PARSE_ERROR, "bad")).unwrap();
        assert_eq!(
            e,
            r#"{"schema":"upktgen.agent/3","jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}"#
        );
    }

    #[test]
    fn rx_start_refuses_unknown_fields() {
        let s: RxStart = serde_json::from_str(r#"{"args":["--dev","veth-rx"]}"#).unwrap();
        assert_eq!(s.args, ["--dev", "veth-rx"]);
        assert!(serde_json::from_str::<RxStart>(r#"{"args":[],"bogus":1}"#).is_err());
    }
}
