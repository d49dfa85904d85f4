//! The Ethernet frame check sequence: IEEE 802.3's CRC-32 over the frame from its
//! destination MAC to the end of its payload (padding included), sent least significant
//! byte first. A NIC appends it and strips it on receive, and a veth carries none; the OTG
//! model counts it in every frame size, so a capture that answers in the model's sizes
//! shows each frame as the wire carries it ([`on_the_wire`]).

/// The bytes of the FCS.
pub const LEN: usize = 4;
/// The shortest frame before the FCS: a NIC pads a shorter one with zeros.
pub const MIN_UNPADDED: usize = 60;

/// CRC-32 (reflected, polynomial 0xEDB88320, initial value and final XOR all ones), one
/// table lookup per byte; the table is built at compile time.
pub fn crc32(data: &[u8]) -> u32 {
    !data.iter().fold(!0u32, |c, &b| {
        TABLE[((c ^ u32::from(b)) & 0xff) as usize] ^ (c >> 8)
    })
}

const TABLE: [u32; 256] = {
    let mut t = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
};

/// `frame` as a wire carries it: padded with zeros to [`MIN_UNPADDED`] bytes and followed
/// by its FCS.
pub fn on_the_wire(frame: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(frame.len().max(MIN_UNPADDED) + LEN);
    v.extend_from_slice(frame);
    v.resize(frame.len().max(MIN_UNPADDED), 0);
    let fcs = crc32(&v);
    v.extend_from_slice(&fcs.to_le_bytes());
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_check_value_of_crc32() {
        // The standard check input of CRC-32 (ISO-HDLC) and its check value.
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
    }

    #[test]
    fn a_frame_with_its_fcs_leaves_the_residue() {
        // A receiver running the CRC over a frame and its FCS gets 802.3's fixed residue
        // (0xDEBB20E3 after the final inversion): the FCS is in the right order.
        let f: Vec<u8> = (0..100u8).collect();
        let w = on_the_wire(&f);
        assert_eq!(w.len(), 104);
        assert_eq!(&w[..100], &f[..]);
        assert_eq!(!crc32(&w), 0xDEBB_20E3);
    }

    #[test]
    fn a_short_frame_is_padded_first() {
        let w = on_the_wire(&[0xff; 42]);
        assert_eq!(w.len(), 64);
        assert!(w[42..60].iter().all(|&b| b == 0));
        assert_eq!(!crc32(&w), 0xDEBB_20E3);
    }
}
