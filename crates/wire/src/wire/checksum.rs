//! The Internet checksum (RFC 1071) and its incremental form.
//!
//! Frames are built with their varying fields set to zero and the one's-complement sum of
//! everything else kept as a *base*; per packet, the sum of the varying 16-bit words is
//! added to the base and folded. That is exact (one's-complement addition is associative
//! and commutative) and touches only the bytes that change.

/// One's-complement sum of `data` as big-endian 16-bit words (odd tail padded with 0),
/// not folded: callers keep adding and fold once.
#[inline]
pub fn sum(data: &[u8]) -> u32 {
    let mut acc: u64 = 0;
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        acc += u64::from(u16::from_be_bytes([c[0], c[1]]));
    }
    if let [last] = chunks.remainder() {
        acc += u64::from(*last) << 8;
    }
    fold64(acc)
}

/// Adds a 32-bit value as two 16-bit words.
#[inline]
pub fn add_u32(acc: u32, v: u32) -> u32 {
    add(add(acc, v >> 16), v & 0xffff)
}

/// Adds to a partial sum without losing carries (the result stays below 2^17).
#[inline]
pub fn add(acc: u32, v: u32) -> u32 {
    let s = u64::from(acc) + u64::from(v);
    fold64(s)
}

#[inline]
fn fold64(mut s: u64) -> u32 {
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    s as u32
}

/// Folds a partial sum to 16 bits and complements it: the value to store in a header.
#[inline]
pub fn finish(acc: u32) -> u16 {
    !(fold64(u64::from(acc)) as u16)
}

/// UDP's rule: a computed checksum of 0 is sent as 0xffff (0 means "no checksum").
#[inline]
pub fn finish_udp(acc: u32) -> u16 {
    match finish(acc) {
        0 => 0xffff,
        c => c,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc1071_example() {
        // RFC 1071 section 3: words 0001 f203 f4f5 f6f7 sum to 0xddf2 (folded).
        let d = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        assert_eq!(sum(&d), 0xddf2);
        assert_eq!(finish(sum(&d)), !0xddf2);
    }

    #[test]
    fn known_ipv4_header() {
        // A header whose checksum is 0xb861 (a classic worked example).
        let h = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        assert_eq!(finish(sum(&h)), 0xb861);
    }

    #[test]
    fn incremental_equals_full() {
        let mut data: Vec<u8> = (0..64u8).map(|i| i.wrapping_mul(37)).collect();
        data[10..14].fill(0);
        let base = sum(&data);
        let v = 0xdead_beefu32;
        data[10..14].copy_from_slice(&v.to_be_bytes());
        assert_eq!(finish(add_u32(base, v)), finish(sum(&data)));
    }

    #[test]
    fn odd_length_pads_with_zero() {
        assert_eq!(sum(&[0x12]), 0x1200);
        assert_eq!(sum(&[0xff, 0xff, 0xff, 0xff]), 0xffff);
    }

    #[test]
    fn udp_zero_becomes_ffff() {
        assert_eq!(finish_udp(0xffff), 0xffff);
        assert_eq!(finish_udp(0x1234), !0x1234);
    }
}
