//! The `bpf()` syscall: load a hand-assembled XDP program and attach it with a BPF link.
//!
//! No compiler, no libbpf: programs are arrays of 8-byte instructions written in Rust.
//! A BPF link detaches the program when its last fd closes, so an XDP program attached
//! this way cannot outlive the process.

use super::cvt;
use std::io;
use std::os::fd::{FromRawFd, OwnedFd};

const BPF_PROG_LOAD: libc::c_int = 5;
const BPF_LINK_CREATE: libc::c_int = 28;
const BPF_PROG_TYPE_XDP: u32 = 6;
const BPF_XDP: u32 = 37;
/// Size of the `bpf_attr` prefix we fill; the kernel accepts any size up to its own, and
/// requires the bytes past the fields it knows to be zero.
const ATTR_LEN: usize = 128;

/// One eBPF instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C)]
pub struct Insn {
    pub code: u8,
    /// dst_reg in the low nibble, src_reg in the high nibble.
    pub regs: u8,
    pub off: i16,
    pub imm: i32,
}

impl Insn {
    /// `r{dst} = imm` (64-bit move of a sign-extended 32-bit immediate).
    pub const fn mov64_imm(dst: u8, imm: i32) -> Insn {
        Insn {
            code: 0xb7,
            regs: dst & 0x0f,
            off: 0,
            imm,
        }
    }

    /// `exit` (return r0).
    pub const fn exit() -> Insn {
        Insn {
            code: 0x95,
            regs: 0,
            off: 0,
            imm: 0,
        }
    }
}

fn bpf(cmd: libc::c_int, attr: &mut [u8; ATTR_LEN]) -> io::Result<OwnedFd> {
    // SAFETY: `attr` is a valid, fully initialised buffer of ATTR_LEN bytes laid out as the
    // kernel's bpf_attr for `cmd`; pointers inside it (set by the callers) point to memory
    // that outlives this call.
    let fd = cvt(
        unsafe { libc::syscall(libc::SYS_bpf, cmd, attr.as_mut_ptr(), ATTR_LEN) } as libc::c_int,
    )?;
    // SAFETY: on success bpf() returns a new fd that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn put_u32(a: &mut [u8; ATTR_LEN], off: usize, v: u32) {
    a[off..off + 4].copy_from_slice(&v.to_ne_bytes());
}

fn put_u64(a: &mut [u8; ATTR_LEN], off: usize, v: u64) {
    a[off..off + 8].copy_from_slice(&v.to_ne_bytes());
}

/// Loads an XDP program; on a verifier rejection the error carries the verifier's log.
pub fn load_xdp(name: &str, insns: &[Insn]) -> io::Result<OwnedFd> {
    let license = c"GPL";
    let mut log = vec![0u8; 4096];
    let mut a = [0u8; ATTR_LEN];
    put_u32(&mut a, 0, BPF_PROG_TYPE_XDP);
    put_u32(&mut a, 4, insns.len() as u32);
    put_u64(&mut a, 8, insns.as_ptr() as u64);
    put_u64(&mut a, 16, license.as_ptr() as u64);
    put_u32(&mut a, 24, 1); // log_level
    put_u32(&mut a, 28, log.len() as u32);
    put_u64(&mut a, 32, log.as_mut_ptr() as u64);
    for (d, s) in a[48..63].iter_mut().zip(name.bytes()) {
        *d = s;
    }
    put_u32(&mut a, 68, BPF_XDP); // expected_attach_type
    bpf(BPF_PROG_LOAD, &mut a).map_err(|e| {
        let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
        let text = String::from_utf8_lossy(&log[..end]);
        if text.trim().is_empty() {
            e
        } else {
            io::Error::new(e.kind(), format!("{e}; verifier: {}", text.trim()))
        }
    })
}

/// Attaches `prog` to interface `ifindex` (in the calling thread's network namespace) in
/// native (driver) mode, returning the link: closing it detaches the program.
pub fn attach_xdp_link(prog: &OwnedFd, ifindex: u32) -> io::Result<OwnedFd> {
    use std::os::fd::AsRawFd;
    const XDP_FLAGS_DRV_MODE: u32 = 1 << 2;
    let mut a = [0u8; ATTR_LEN];
    put_u32(&mut a, 0, prog.as_raw_fd() as u32);
    put_u32(&mut a, 4, ifindex);
    put_u32(&mut a, 8, BPF_XDP);
    put_u32(&mut a, 12, XDP_FLAGS_DRV_MODE);
    bpf(BPF_LINK_CREATE, &mut a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instruction_encoding() {
        assert_eq!(std::mem::size_of::<Insn>(), 8);
        let i = Insn::mov64_imm(0, 1);
        assert_eq!((i.code, i.regs, i.off, i.imm), (0xb7, 0, 0, 1));
        assert_eq!(Insn::exit().code, 0x95);
    }
}
