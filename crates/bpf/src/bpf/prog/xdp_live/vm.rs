//! A small eBPF interpreter (the subset the programs use) with a pretend kernel around it
//! ([`World`]: the maps, the redirect target): the programs' own tests and the engine's walk
//! tests run them on it, against frames an independent parser reads.

use super::*;

pub const PKT_BASE: u64 = 0x1000_0000;
pub const MAP_BASE: u64 = 0x2000_0000;
pub const CTX_BASE: u64 = 0x3000_0000;
pub const FLOWS_BASE: u64 = 0x4000_0000;
pub const STACK_TOP: u64 = 0x5000_0000;
pub const FLOWS_FD: i32 = 43;
pub const REDIRECT_TARGET: u32 = 7;
pub const STATE_FD: i32 = 42;
pub const SLOTS_FD: i32 = 44;
/// What `ld_imm64` of the slot map's fd loads (the map itself, for bpf_map_lookup_elem).
pub const SLOTS_MAP: u64 = 0x6000_0000;
pub const SLOTS_BASE: u64 = 0x7000_0000;
pub const PATCH_FD: i32 = 45;
pub const PATCH_BASE: u64 = 0x8000_0000;

/// What the interpreter's helpers saw and returned.
#[derive(Default)]
pub struct World {
    /// CLOCK_MONOTONIC the next bpf_ktime_get_ns returns.
    pub mono_ns: u64,
    pub clock_reads: u32,
    pub redirects: Vec<u32>,
    pub tid: u64,
    /// The frame's length after bpf_xdp_adjust_tail (None: the page's).
    pub len: Option<usize>,
    /// The flow map's value.
    pub flows: Vec<u8>,
    pub stack: Vec<u8>,
    /// State of bpf_get_prandom_u32's stand-in (xorshift64; 0 seeds it).
    pub rng: u64,
    /// The slot map's values, one every `slot_stride` bytes (its entries: the length over
    /// the stride).
    pub slots: Vec<u8>,
    pub slot_stride: usize,
    /// The streams program's patch map's value.
    pub patch: Vec<u8>,
}

impl World {
    fn prandom(&mut self) -> u64 {
        if self.rng == 0 {
            self.rng = 0x9e37_79b9_7f4a_7c15;
        }
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng >> 32
    }
}

pub struct Vm<'a> {
    pub pkt: &'a mut [u8],
    pub map: &'a mut [u8],
    pub ctx: [u64; 5],
    pub world: &'a mut World,
}

impl<'a> Vm<'a> {
    /// A machine on `pkt` and the state map `map`, its context registers zero.
    pub fn on(pkt: &'a mut [u8], map: &'a mut [u8], world: &'a mut World) -> Vm<'a> {
        Vm {
            pkt,
            map,
            ctx: [0; 5],
            world,
        }
    }

    fn pkt_len(&self) -> usize {
        self.world.len.unwrap_or(self.pkt.len())
    }

    fn region(&mut self, addr: u64, len: usize) -> &mut [u8] {
        if self.world.stack.is_empty() {
            self.world.stack = vec![0; 512];
        }
        let pkt_len = self.pkt_len();
        let (base, mem): (u64, &mut [u8]) = if (MAP_BASE..MAP_BASE + 0x10_0000).contains(&addr) {
            (MAP_BASE, self.map)
        } else if (PATCH_BASE..PATCH_BASE + 0x100_0000).contains(&addr) {
            (PATCH_BASE, &mut self.world.patch[..])
        } else if (SLOTS_BASE..SLOTS_BASE + 0x100_0000).contains(&addr) {
            (SLOTS_BASE, &mut self.world.slots[..])
        } else if (FLOWS_BASE..FLOWS_BASE + 0x10_0000).contains(&addr) {
            (FLOWS_BASE, &mut self.world.flows[..])
        } else if (STACK_TOP - 512..STACK_TOP).contains(&addr) {
            (STACK_TOP - 512, &mut self.world.stack[..])
        } else if (PKT_BASE..PKT_BASE + 0x1000).contains(&addr) {
            (PKT_BASE, &mut self.pkt[..pkt_len])
        } else {
            panic!("access to {addr:#x} outside the packet and the map");
        };
        let o = (addr - base) as usize;
        assert!(
            o + len <= mem.len(),
            "access {o}+{len} past the end ({})",
            mem.len()
        );
        &mut mem[o..o + len]
    }

    fn load(&mut self, addr: u64, size: usize) -> u64 {
        if (CTX_BASE..CTX_BASE + 64).contains(&addr) {
            // xdp_md (data, data_end as u32) or raw tracepoint arguments (u64).
            let o = (addr - CTX_BASE) as usize;
            return match size {
                4 => [PKT_BASE, PKT_BASE + self.pkt_len() as u64][o / 4],
                8 => self.ctx[o / 8],
                _ => panic!("ctx load of {size} bytes"),
            };
        }
        let m = self.region(addr, size);
        let mut b = [0u8; 8];
        b[..size].copy_from_slice(m);
        match size {
            1 => u64::from(b[0]),
            2 => u64::from(u16::from_ne_bytes([b[0], b[1]])),
            4 => u64::from(u32::from_ne_bytes([b[0], b[1], b[2], b[3]])),
            _ => u64::from_ne_bytes(b),
        }
    }

    fn store(&mut self, addr: u64, size: usize, v: u64) {
        let m = self.region(addr, size);
        match size {
            1 => m[0] = v as u8,
            2 => m.copy_from_slice(&(v as u16).to_ne_bytes()),
            4 => m.copy_from_slice(&(v as u32).to_ne_bytes()),
            _ => m.copy_from_slice(&v.to_ne_bytes()),
        }
    }

    /// Runs `prog` with r1 = ctx and returns r0.
    pub fn run(&mut self, prog: &[Insn]) -> u64 {
        let mut r = [0u64; 11];
        r[1] = CTX_BASE;
        r[10] = STACK_TOP;
        let mut pc = 0usize;
        for _ in 0..10_000 {
            let i = prog[pc];
            let (dst, src) = (i.dst() as usize, i.src() as usize);
            let class = i.code & 0x07;
            pc += 1;
            match class {
                op::ALU | op::ALU64 => {
                    let alu = i.code & 0xf0;
                    if alu == op::END {
                        r[dst] = match i.imm {
                            16 => u64::from((r[dst] as u16).to_be()),
                            32 => u64::from((r[dst] as u32).to_be()),
                            64 => r[dst].to_be(),
                            b => panic!("bad END width {b}"),
                        };
                        continue;
                    }
                    let b = if i.code & op::X != 0 {
                        r[src]
                    } else {
                        i.imm as i64 as u64
                    };
                    let a = r[dst];
                    let v = match alu {
                        op::ADD => a.wrapping_add(b),
                        op::SUB => a.wrapping_sub(b),
                        op::MUL => a.wrapping_mul(b),
                        op::DIV => a.checked_div(b).unwrap_or(0),
                        op::MOD => a.checked_rem(b).unwrap_or(a),
                        op::OR => a | b,
                        op::AND => a & b,
                        op::XOR => a ^ b,
                        op::LSH => a << (b & 63),
                        op::RSH => a >> (b & 63),
                        op::MOV => b,
                        x => panic!("ALU op {x:#x} not in the subset"),
                    };
                    r[dst] = if class == op::ALU { v as u32 as u64 } else { v };
                }
                op::LDX => {
                    let size = size_of(i.code);
                    r[dst] = self.load(r[src].wrapping_add(i.off as i64 as u64), size);
                }
                op::STX => {
                    let size = size_of(i.code);
                    let addr = r[dst].wrapping_add(i.off as i64 as u64);
                    if i.code & 0xe0 == op::ATOMIC {
                        assert_eq!(i.imm, op::ADD as i32, "only atomic add");
                        let old = self.load(addr, size);
                        self.store(addr, size, old.wrapping_add(r[src]));
                    } else {
                        self.store(addr, size, r[src]);
                    }
                }
                op::ST => {
                    let size = size_of(i.code);
                    let addr = r[dst].wrapping_add(i.off as i64 as u64);
                    self.store(addr, size, i.imm as i64 as u64);
                }
                op::LD => {
                    assert!(i.is_ld_imm64());
                    let lo = i.imm as u32 as u64;
                    let hi = prog[pc].imm as u32 as u64;
                    pc += 1;
                    r[dst] = match i.src() {
                        0 => lo | hi << 32,
                        PSEUDO if i.imm == FLOWS_FD => FLOWS_BASE + hi,
                        PSEUDO if i.imm == PATCH_FD => PATCH_BASE + hi,
                        MAP_FD if i.imm == SLOTS_FD => SLOTS_MAP,
                        PSEUDO => MAP_BASE + hi,
                        s => panic!("ld_imm64 src {s}"),
                    };
                }
                op::JMP => {
                    let jop = i.code & 0xf0;
                    match jop {
                        op::EXIT => return r[0],
                        op::CALL => {
                            r[0] = match i.imm {
                                helper::KTIME_GET_NS => {
                                    self.world.clock_reads += 1;
                                    self.world.mono_ns
                                }
                                helper::REDIRECT => {
                                    assert_eq!(r[2], 0, "redirect flags");
                                    self.world.redirects.push(r[1] as u32);
                                    XDP_REDIRECT as u64
                                }
                                helper::GET_CURRENT_PID_TGID => self.world.tid,
                                helper::GET_PRANDOM_U32 => self.world.prandom(),
                                helper::XDP_ADJUST_TAIL => {
                                    assert_eq!(r[1], CTX_BASE, "adjust_tail's ctx");
                                    let delta = r[2] as i32;
                                    let len = self.pkt_len() as i64 + i64::from(delta);
                                    assert!(
                                        (14..=self.pkt.len() as i64).contains(&len),
                                        "adjust_tail to {len}"
                                    );
                                    self.world.len = Some(len as usize);
                                    0
                                }
                                helper::MAP_LOOKUP_ELEM => {
                                    assert_eq!(r[1], SLOTS_MAP, "lookup in the slot map");
                                    let key = self.load(r[2], 4) as usize;
                                    let stride = self.world.slot_stride;
                                    if stride != 0 && key < self.world.slots.len() / stride {
                                        SLOTS_BASE + (key * stride) as u64
                                    } else {
                                        0
                                    }
                                }
                                helper::XDP_STORE_BYTES => {
                                    assert_eq!(r[1], CTX_BASE, "store_bytes' ctx");
                                    let (off, len) = (r[2] as usize, r[4] as usize);
                                    let from = self.region(r[3], len).to_vec();
                                    if off + len <= self.pkt_len() {
                                        self.pkt[off..off + len].copy_from_slice(&from);
                                        0
                                    } else {
                                        (-EFAULT) as u64
                                    }
                                }
                                h => panic!("helper {h} not modelled"),
                            };
                            // r1..r5 are clobbered by calls.
                            for x in &mut r[1..=5] {
                                *x = 0xdead_beef_dead_beef;
                            }
                        }
                        _ => {
                            let b = if i.code & op::X != 0 {
                                r[src]
                            } else {
                                i.imm as i64 as u64
                            };
                            let a = r[dst];
                            let take = match jop {
                                op::JA => true,
                                op::JEQ => a == b,
                                op::JNE => a != b,
                                op::JGT => a > b,
                                op::JGE => a >= b,
                                op::JLT => a < b,
                                op::JLE => a <= b,
                                x => panic!("jump op {x:#x} not in the subset"),
                            };
                            if take {
                                pc = (pc as i64 + i64::from(i.off)) as usize;
                            }
                        }
                    }
                }
                c => panic!("class {c} not in the subset"),
            }
        }
        panic!("the program did not exit");
    }
}

pub const PSEUDO: u8 = crate::bpf::asm::PSEUDO_MAP_VALUE;
pub const MAP_FD: u8 = crate::bpf::asm::PSEUDO_MAP_FD;

/// EFAULT, which the kernel's bpf_xdp_store_bytes returns (negated) past the frame.
const EFAULT: i64 = 14;

pub fn size_of(code: u8) -> usize {
    match code & 0x18 {
        op::W => 4,
        op::H => 2,
        op::B => 1,
        _ => 8,
    }
}
