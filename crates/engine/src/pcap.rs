//! Classic libpcap files: a small reader and writer, no dependencies.
//!
//! Layout: a 24-byte file header (magic, version 2.4, thiszone, sigfigs, snaplen, link type)
//! then records of a 16-byte header (seconds, sub-second, captured length, original length)
//! and the captured bytes. The magic says the byte order and the sub-second unit:
//! 0xa1b2c3d4 microseconds, 0xa1b23c4d nanoseconds; the reader takes both in either byte
//! order. The writer writes **nanosecond, little-endian** files (tcpdump, tshark and
//! libpcap 1.5+ read them), link type Ethernet, snaplen 65535.
//!
//! The reader never panics: every length is checked before it is used, and a record's
//! captured length is bounded (by [`MAX_CAPLEN`]) before anything is allocated for it.

use std::fmt;
use std::io::{self, Read, Write};
use std::path::Path;

/// Microsecond timestamps, as written in the file's own byte order.
pub const MAGIC_US: u32 = 0xa1b2_c3d4;
/// Nanosecond timestamps.
pub const MAGIC_NS: u32 = 0xa1b2_3c4d;
/// The first block of a pcapng file (its section header block type).
const PCAPNG_MAGIC: u32 = 0x0a0d_0d0a;
/// LINKTYPE_ETHERNET.
pub const LINKTYPE_ETHERNET: u32 = 1;
/// The snap length the writer declares.
pub const SNAPLEN: u32 = 65535;
/// The largest captured length the reader accepts in a record (libpcap's own bound).
pub const MAX_CAPLEN: u32 = 262_144;

const FILE_HEADER: usize = 24;
const RECORD_HEADER: usize = 16;

/// One record: when, the bytes captured, and the frame's length on the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// Timestamp in ns since the epoch.
    pub ts_ns: u64,
    /// The original frame's length (at least `data.len()`).
    pub orig_len: u32,
    pub data: Vec<u8>,
}

impl Record {
    /// Whether the capture kept fewer bytes than the frame had.
    pub fn is_cut(&self) -> bool {
        (self.orig_len as usize) > self.data.len()
    }
}

/// A whole pcap file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pcap {
    /// Nanosecond timestamps (else microseconds).
    pub nanos: bool,
    /// Big-endian file.
    pub big_endian: bool,
    pub snaplen: u32,
    pub link_type: u32,
    /// Bytes of FCS at the end of every frame (0: none).
    pub fcs_len: u32,
    pub records: Vec<Record>,
}

/// Why a file could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PcapError {
    /// Shorter than the 24-byte file header.
    ShortHeader(usize),
    /// A pcapng file.
    Pcapng,
    BadMagic(u32),
    NotEthernet(u32),
    /// Record `n` (1-based) is cut short by the end of the file.
    Truncated(usize),
    /// Record `n` (1-based) claims more captured bytes than any capture holds.
    HugeRecord(usize, u32),
    /// Reading failed (or the file is over its cap).
    Io(String),
}

impl fmt::Display for PcapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PcapError::ShortHeader(n) => write!(
                f,
                "not a pcap file ({n} bytes, shorter than the 24-byte file header)"
            ),
            PcapError::Pcapng => write!(
                f,
                "a pcapng file: pcapng is not supported; convert with `editcap -F pcap IN OUT`"
            ),
            PcapError::BadMagic(m) => write!(f, "not a pcap file (magic 0x{m:08x})"),
            PcapError::NotEthernet(t) => {
                write!(f, "link type {t} is not Ethernet (LINKTYPE_ETHERNET = 1)")
            }
            PcapError::Truncated(n) => write!(f, "record {n} truncated (the file ends inside it)"),
            PcapError::HugeRecord(n, len) => write!(
                f,
                "record {n}: captured length {len} is more than {MAX_CAPLEN} bytes (a corrupt file?)"
            ),
            PcapError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for PcapError {}

fn u32_at(b: &[u8], at: usize, big: bool) -> Option<u32> {
    let a: [u8; 4] = b.get(at..at + 4)?.try_into().ok()?;
    Some(if big {
        u32::from_be_bytes(a)
    } else {
        u32::from_le_bytes(a)
    })
}

/// Reads as much of `buf` as `r` holds; the count read (less than `buf.len()` at the end).
fn fill(r: &mut impl Read, buf: &mut [u8]) -> Result<usize, PcapError> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(PcapError::Io(crate::input::ReadError::from(e).to_string())),
        }
    }
    Ok(got)
}

/// A pcap file read as a stream: the file header is read and checked by [`Reader::new`]
/// before any record, then [`Reader::next_record`] reads one record at a time, its captured
/// length checked against [`MAX_CAPLEN`] before anything is allocated for it.
pub struct Reader<R> {
    r: R,
    pub nanos: bool,
    pub big_endian: bool,
    pub snaplen: u32,
    pub link_type: u32,
    /// Bytes of FCS at the end of every frame, when the header says so (its link-type
    /// field's FCS-length bits); 0 otherwise.
    pub fcs_len: u32,
    /// Records read so far.
    n: usize,
}

impl<R: Read> Reader<R> {
    /// Reads and checks the 24-byte file header.
    pub fn new(mut r: R) -> Result<Self, PcapError> {
        let mut b = [0u8; FILE_HEADER];
        let got = fill(&mut r, &mut b)?;
        if got >= 4 && u32_at(&b, 0, false) == Some(PCAPNG_MAGIC) {
            return Err(PcapError::Pcapng);
        }
        if got < FILE_HEADER {
            return Err(PcapError::ShortHeader(got));
        }
        let le = u32_at(&b, 0, false).unwrap_or(0);
        let (nanos, big_endian) = match (le, le.swap_bytes()) {
            (MAGIC_US, _) => (false, false),
            (MAGIC_NS, _) => (true, false),
            (_, MAGIC_US) => (false, true),
            (_, MAGIC_NS) => (true, true),
            _ => {
                return Err(PcapError::BadMagic(u32::from_be_bytes([
                    b[0], b[1], b[2], b[3],
                ])));
            }
        };
        let snaplen = u32_at(&b, 16, big_endian).unwrap_or(0);
        // The upper bits of the link-type field carry FCS information, not the type.
        let field = u32_at(&b, 20, big_endian).unwrap_or(0);
        let link_type = field & 0x03ff_ffff;
        let fcs_len = fcs_bytes(field);
        if link_type != LINKTYPE_ETHERNET {
            return Err(PcapError::NotEthernet(link_type));
        }
        Ok(Reader {
            r,
            nanos,
            big_endian,
            snaplen,
            link_type,
            fcs_len,
            n: 0,
        })
    }

    /// The next record, None at the end of the file.
    pub fn next_record(&mut self) -> Result<Option<Record>, PcapError> {
        let n = self.n + 1;
        let mut h = [0u8; RECORD_HEADER];
        match fill(&mut self.r, &mut h)? {
            0 => return Ok(None),
            RECORD_HEADER => {}
            _ => return Err(PcapError::Truncated(n)),
        }
        let field = |i: usize| u32_at(&h, 4 * i, self.big_endian).unwrap_or(0);
        let (sec, sub, caplen, orig_len) = (field(0), field(1), field(2), field(3));
        if caplen > MAX_CAPLEN {
            return Err(PcapError::HugeRecord(n, caplen));
        }
        let mut data = vec![0u8; caplen as usize];
        if fill(&mut self.r, &mut data)? < data.len() {
            return Err(PcapError::Truncated(n));
        }
        self.n = n;
        let unit: u64 = if self.nanos { 1 } else { 1000 };
        Ok(Some(Record {
            ts_ns: u64::from(sec) * 1_000_000_000 + u64::from(sub) * unit,
            orig_len: orig_len.max(caplen),
            data,
        }))
    }

    /// Every remaining record, as a [`Pcap`].
    pub fn into_pcap(mut self) -> Result<Pcap, PcapError> {
        let mut records = Vec::new();
        while let Some(r) = self.next_record()? {
            records.push(r);
        }
        Ok(Pcap {
            nanos: self.nanos,
            big_endian: self.big_endian,
            snaplen: self.snaplen,
            link_type: self.link_type,
            fcs_len: self.fcs_len,
            records,
        })
    }
}

/// Parses a whole pcap file held in memory.
pub fn parse(b: &[u8]) -> Result<Pcap, PcapError> {
    Reader::new(b)?.into_pcap()
}

/// The most bytes of a pcap file read for `--replay` (which keeps its frames in memory to
/// loop over them), and by [`read_file`].
pub const MAX_REPLAY: u64 = 256 << 20;

/// A pcap file that could not be read: the file, then why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {error}", path.display())]
pub struct FileError {
    pub path: std::path::PathBuf,
    pub error: PcapError,
}

impl FileError {
    fn new(path: &Path, error: PcapError) -> Self {
        FileError {
            path: path.to_path_buf(),
            error,
        }
    }
}

/// Opens `path` as a stream capped at [`MAX_REPLAY`] and reads its file header; errors
/// start with the file's name.
pub fn open(path: &Path) -> Result<Reader<impl Read>, FileError> {
    let r = crate::input::open(path, MAX_REPLAY, "a pcap file to replay")
        .map_err(|e| FileError::new(path, PcapError::Io(e.to_string())))?;
    Reader::new(r).map_err(|e| FileError::new(path, e))
}

/// Reads and parses a file (as a stream, at most [`MAX_REPLAY`] bytes); errors start with
/// the file's name.
pub fn read_file(path: &Path) -> Result<Pcap, FileError> {
    open(path)?.into_pcap().map_err(|e| FileError::new(path, e))
}

/// Writes a nanosecond, little-endian, Ethernet pcap file.
pub struct PcapWriter<W: Write> {
    out: W,
    records: u64,
}

/// The link-type field's flag that its top bits give the FCS length (libpcap's
/// `LT_FCS_LENGTH_PRESENT`), and where that length is (in units of 16 bits).
const FCS_PRESENT: u32 = 0x0400_0000;
const FCS_SHIFT: u32 = 28;

/// The FCS bytes a link-type field announces.
fn fcs_bytes(field: u32) -> u32 {
    if field & FCS_PRESENT != 0 {
        (field >> FCS_SHIFT) * 2
    } else {
        0
    }
}

impl<W: Write> PcapWriter<W> {
    /// Writes the file header.
    pub fn new(out: W) -> io::Result<Self> {
        Self::with_fcs(out, 0)
    }

    /// Writes the header of a file whose every frame ends in `fcs_len` bytes of FCS (0, 2
    /// or 4), which the header says, so a reader knows them from the payload.
    pub fn with_fcs(mut out: W, fcs_len: u32) -> io::Result<Self> {
        let units = fcs_len / 2;
        if !fcs_len.is_multiple_of(2) || units > 0xf {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("an FCS of {fcs_len} bytes cannot be said in a pcap header"),
            ));
        }
        let link = if units == 0 {
            LINKTYPE_ETHERNET
        } else {
            LINKTYPE_ETHERNET | FCS_PRESENT | (units << FCS_SHIFT)
        };
        let mut h = Vec::with_capacity(FILE_HEADER);
        h.extend_from_slice(&MAGIC_NS.to_le_bytes());
        h.extend_from_slice(&2u16.to_le_bytes());
        h.extend_from_slice(&4u16.to_le_bytes());
        h.extend_from_slice(&0i32.to_le_bytes()); // thiszone: UTC
        h.extend_from_slice(&0u32.to_le_bytes()); // sigfigs
        h.extend_from_slice(&SNAPLEN.to_le_bytes());
        h.extend_from_slice(&link.to_le_bytes());
        out.write_all(&h)?;
        Ok(PcapWriter { out, records: 0 })
    }

    /// Writes one frame stamped `ts_ns` (ns since the epoch); frames longer than the snap
    /// length are kept to its first 65535 bytes with their original length recorded.
    pub fn write(&mut self, ts_ns: u64, frame: &[u8]) -> io::Result<()> {
        self.write_cut(ts_ns, frame, frame.len())
    }

    /// Writes the first bytes of a frame of `orig_len` bytes that a capture kept, `kept`
    /// (at most the snap length of them), with its original length, so a reader sees it
    /// was cut.
    pub fn write_cut(&mut self, ts_ns: u64, kept: &[u8], orig_len: usize) -> io::Result<()> {
        let cap = kept.len().min(SNAPLEN as usize);
        let orig_len = orig_len.max(kept.len());
        let mut h = [0u8; RECORD_HEADER];
        let sec = u32::try_from(ts_ns / 1_000_000_000).unwrap_or(u32::MAX);
        h[0..4].copy_from_slice(&sec.to_le_bytes());
        h[4..8].copy_from_slice(&((ts_ns % 1_000_000_000) as u32).to_le_bytes());
        h[8..12].copy_from_slice(&(cap as u32).to_le_bytes());
        h[12..16].copy_from_slice(&u32::try_from(orig_len).unwrap_or(u32::MAX).to_le_bytes());
        self.out.write_all(&h)?;
        self.out.write_all(&kept[..cap])?;
        self.records += 1;
        Ok(())
    }

    /// Records written so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Flushes and returns the output.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(frames: &[(u64, Vec<u8>)]) -> Vec<u8> {
        let mut w = PcapWriter::new(Vec::new()).unwrap();
        for (t, f) in frames {
            w.write(*t, f).unwrap();
        }
        assert_eq!(w.records(), frames.len() as u64);
        w.finish().unwrap()
    }

    /// A file written by hand in any of the four flavours.
    fn handmade(magic: u32, big: bool, link: u32, recs: &[(u32, u32, &[u8], u32)]) -> Vec<u8> {
        let w = |v: u32| {
            if big {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            }
        };
        let w16 = |v: u16| {
            if big {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            }
        };
        let mut b = Vec::new();
        b.extend_from_slice(&w(magic));
        b.extend_from_slice(&w16(2));
        b.extend_from_slice(&w16(4));
        b.extend_from_slice(&w(0));
        b.extend_from_slice(&w(0));
        b.extend_from_slice(&w(65535));
        b.extend_from_slice(&w(link));
        for (sec, sub, data, orig) in recs {
            b.extend_from_slice(&w(*sec));
            b.extend_from_slice(&w(*sub));
            b.extend_from_slice(&w(data.len() as u32));
            b.extend_from_slice(&w(*orig));
            b.extend_from_slice(data);
        }
        b
    }

    #[test]
    fn a_file_whose_frames_end_in_an_fcs_says_so_in_its_header() {
        let mut w = PcapWriter::with_fcs(Vec::new(), 4).unwrap();
        w.write(1, &[7; 64]).unwrap();
        let b = w.finish().unwrap();
        // libpcap's layout: type 1, the FCS-length flag, 2 units of 16 bits.
        assert_eq!(
            u32::from_le_bytes(b[20..24].try_into().unwrap()),
            0x2400_0001
        );
        let p = parse(&b).unwrap();
        assert_eq!((p.link_type, p.fcs_len), (1, 4));
        assert_eq!(p.records[0].data.len(), 64);
        assert_eq!(parse(&write(&[(1, vec![0; 60])])).unwrap().fcs_len, 0);
        assert!(PcapWriter::with_fcs(Vec::new(), 3).is_err());
    }

    #[test]
    fn round_trip() {
        let frames: Vec<(u64, Vec<u8>)> = (0..5u8)
            .map(|i| {
                (
                    1_700_000_000_123_456_789 + u64::from(i),
                    vec![i; 60 + usize::from(i)],
                )
            })
            .collect();
        let b = write(&frames);
        assert_eq!(
            &b[..4],
            &[0x4d, 0x3c, 0xb2, 0xa1],
            "nanosecond, little-endian"
        );
        assert_eq!(
            b.len(),
            24 + frames.iter().map(|f| 16 + f.1.len()).sum::<usize>()
        );
        let p = parse(&b).unwrap();
        assert!(p.nanos && !p.big_endian);
        assert_eq!((p.snaplen, p.link_type), (65535, 1));
        let back: Vec<(u64, Vec<u8>)> = p
            .records
            .iter()
            .map(|r| {
                assert!(!r.is_cut());
                (r.ts_ns, r.data.clone())
            })
            .collect();
        assert_eq!(back, frames);
    }

    #[test]
    fn both_magics_both_byte_orders() {
        let frame: &[u8] = &[0xaa; 64];
        for big in [false, true] {
            for (magic, sub, want_ns) in [(MAGIC_US, 250_000, 250_000_000), (MAGIC_NS, 7, 7)] {
                let b = handmade(magic, big, 1, &[(10, sub, frame, 64)]);
                let p = parse(&b).unwrap_or_else(|e| panic!("{magic:x} big={big}: {e}"));
                assert_eq!(p.big_endian, big);
                assert_eq!(p.nanos, magic == MAGIC_NS);
                assert_eq!(p.records.len(), 1);
                assert_eq!(p.records[0].ts_ns, 10_000_000_000 + want_ns);
                assert_eq!(p.records[0].data, frame);
            }
        }
    }

    #[test]
    fn zero_records() {
        let p = parse(&write(&[])).unwrap();
        assert!(p.records.is_empty());
    }

    #[test]
    fn truncation_names_the_record() {
        let b = write(&[(1, vec![1; 60]), (2, vec![2; 60]), (3, vec![3; 60])]);
        // Inside the third record's data, then inside its header.
        for cut in [b.len() - 1, 24 + 2 * 76 + 5] {
            assert_eq!(
                parse(&b[..cut]),
                Err(PcapError::Truncated(3)),
                "cut at {cut}"
            );
        }
        assert_eq!(parse(&b[..24 + 76]).unwrap().records.len(), 1);
        assert_eq!(parse(&b[..10]), Err(PcapError::ShortHeader(10)));
    }

    #[test]
    fn huge_caplen_is_refused_without_allocating() {
        let mut b = handmade(MAGIC_US, false, 1, &[(1, 0, &[0; 60], 60)]);
        // Record 1's caplen: past the snaplen, and far past any capture.
        b[24 + 8..24 + 12].copy_from_slice(&0xffff_fff0u32.to_le_bytes());
        assert_eq!(parse(&b), Err(PcapError::HugeRecord(1, 0xffff_fff0)));
        // Past the snaplen but within libpcap's bound: read if the bytes are there, else
        // truncated.
        let big = vec![0x55u8; 70_000];
        let b = handmade(MAGIC_US, false, 1, &[(1, 0, &big, 70_000)]);
        assert_eq!(parse(&b).unwrap().records[0].data.len(), 70_000);
        assert_eq!(parse(&b[..b.len() - 1]), Err(PcapError::Truncated(1)));
    }

    #[test]
    fn a_stream_is_read_record_by_record_within_its_cap() {
        // A good header then endless zeros: record 1 comes back (0 bytes) without the rest
        // being read; an endless stream of zeros is refused at its header.
        let head = write(&[]);
        let mut r = Reader::new(head.as_slice().chain(io::repeat(0))).unwrap();
        assert_eq!(r.next_record().unwrap().unwrap().data.len(), 0);
        assert_eq!(
            Reader::new(io::repeat(0)).err(),
            Some(PcapError::BadMagic(0))
        );
        // 60-byte records without end, through a capped reader: refused at the cap, named.
        let rec = write(&[(1, vec![7; 60])])[24..].to_vec();
        let endless = head
            .as_slice()
            .chain(rec.as_slice())
            .chain(io::repeat(0x41));
        let capped = crate::input::Capped::new(endless, 24 + 76 + 100, "a test capture");
        let mut r = Reader::new(capped).unwrap();
        assert_eq!(r.next_record().unwrap().unwrap().data, vec![7; 60]);
        // The next "record" claims 0x41414141 bytes: refused before allocating.
        assert_eq!(r.next_record(), Err(PcapError::HugeRecord(2, 0x4141_4141)));
        // Good records without end: the cap ends the stream, named.
        let one = write(&[(1, vec![7; 60])])[24..].to_vec();
        let body: Vec<u8> = one.iter().copied().cycle().take(76 * 100).collect();
        let capped = crate::input::Capped::new(
            head.as_slice().chain(body.as_slice()),
            24 + 76 * 10,
            "a test capture",
        );
        let mut r = Reader::new(capped).unwrap();
        for _ in 0..10 {
            assert!(r.next_record().unwrap().is_some());
        }
        assert_eq!(
            r.next_record().unwrap_err().to_string(),
            "more than 784 bytes, the most a test capture may hold"
        );
    }

    #[test]
    fn cut_frames_are_seen() {
        let b = handmade(MAGIC_US, false, 1, &[(1, 0, &[0; 96], 1514)]);
        let r = &parse(&b).unwrap().records[0];
        assert!(r.is_cut());
        assert_eq!(r.orig_len, 1514);
        // The writer keeps at most the snap length.
        let p = parse(&write(&[(0, vec![9; 70_000])])).unwrap();
        assert_eq!(p.records[0].data.len(), 65535);
        assert_eq!(p.records[0].orig_len, 70_000);
    }

    #[test]
    fn clear_errors() {
        let e = parse(&handmade(MAGIC_US, false, 113, &[])).unwrap_err();
        assert_eq!(
            e.to_string(),
            "link type 113 is not Ethernet (LINKTYPE_ETHERNET = 1)"
        );
        // FCS bits above the link type are not part of it.
        assert!(parse(&handmade(MAGIC_US, true, 0x1000_0001, &[])).is_ok());
        let mut b = write(&[]);
        b[..4].copy_from_slice(b"GIF8");
        assert_eq!(
            parse(&b).unwrap_err().to_string(),
            "not a pcap file (magic 0x47494638)"
        );
        let ng = [
            0x0a, 0x0d, 0x0d, 0x0a, 0x1c, 0, 0, 0, 0x4d, 0x3c, 0x2b, 0x1a,
        ];
        let e = parse(&ng).unwrap_err().to_string();
        assert!(
            e.contains("pcapng is not supported") && e.contains("editcap -F pcap"),
            "{e}"
        );
        let e = read_file(Path::new("/nonexistent/x.pcap"))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("/nonexistent/x.pcap: "), "{e}");
    }

    /// The crate's generator, with the test's own fixed state.
    struct Rng(crate::rng::Rng);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0.next_u64()
        }
        fn below(&mut self, n: usize) -> usize {
            self.0.index(n)
        }
    }

    /// Random bytes, and valid files with random bytes changed, cut or inserted: the reader
    /// answers Ok or Err, never panics, and what it accepts it reads within the input.
    #[test]
    fn fuzz_never_panics() {
        let mut rng = Rng(crate::rng::Rng::from_state(0x9e37_79b9_7f4a_7c15));
        let base = write(&[
            (5, vec![1; 60]),
            (6, vec![2; 1514]),
            (7, vec![3; 14]),
            (8, vec![]),
        ]);
        let (mut ok, mut err) = (0, 0);
        for i in 0..20_000 {
            let input: Vec<u8> = if i % 4 == 0 {
                let n = rng.below(200);
                (0..n).map(|_| rng.next() as u8).collect()
            } else {
                let mut b = base.clone();
                for _ in 0..1 + rng.below(6) {
                    match rng.below(4) {
                        0 if !b.is_empty() => {
                            let at = rng.below(b.len());
                            b[at] = rng.next() as u8;
                        }
                        1 => b.truncate(rng.below(b.len() + 1)),
                        2 => {
                            let at = rng.below(b.len() + 1);
                            b.insert(at, rng.next() as u8);
                        }
                        _ if b.len() >= 4 => {
                            // A random 32-bit field, where lengths live.
                            let at = rng.below(b.len() - 3);
                            b[at..at + 4].copy_from_slice(&(rng.next() as u32).to_le_bytes());
                        }
                        _ => {}
                    }
                }
                b
            };
            match parse(&input) {
                Ok(p) => {
                    ok += 1;
                    let held: usize = p.records.iter().map(|r| 16 + r.data.len()).sum();
                    assert_eq!(24 + held, input.len(), "every byte accounted for");
                }
                Err(e) => {
                    err += 1;
                    assert!(!e.to_string().is_empty());
                }
            }
        }
        assert!(
            ok > 100 && err > 100,
            "both outcomes exercised: {ok} ok, {err} err"
        );
    }
}
