//! The streams program on the interpreter: each run copies its slot's frame whole, at its
//! length, whatever the page held before; a bad slot aborts.

use super::super::vm::*;
use super::*;
use crate::bpf::prog::XDP_REDIRECT;

const MAX: usize = 300;

fn spec(slots: u32) -> SlotSpec {
    SlotSpec {
        ifindex: REDIRECT_TARGET,
        verdict: Verdict::Redirect,
        slots,
        min_len: 60,
        max_len: MAX,
        stamp: None,
    }
}

/// A world whose slot map holds `frames` (slot i: frames[i]).
fn world(frames: &[Vec<u8>]) -> World {
    let stride = layout::value_size(MAX).next_multiple_of(8);
    let mut slots = vec![0u8; stride * frames.len()];
    for (i, f) in frames.iter().enumerate() {
        let s = &mut slots[i * stride..];
        layout::frame_mut(s, f.len()).copy_from_slice(f);
    }
    World {
        slots,
        slot_stride: stride,
        ..World::default()
    }
}

fn frame(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

fn state(frames: u64, next: u64) -> Vec<u8> {
    let mut m = vec![0u8; state::SIZE];
    m[state::FRAMES as usize..][..8].copy_from_slice(&frames.to_ne_bytes());
    m[state::NEXT as usize..][..8].copy_from_slice(&next.to_ne_bytes());
    m
}

fn u64_at(m: &[u8], off: i16) -> u64 {
    u64::from_ne_bytes(m[off as usize..][..8].try_into().unwrap())
}

#[test]
fn each_run_copies_its_slot_whole_at_its_length() {
    let frames = [frame(60, 1), frame(MAX, 2), frame(137, 3), frame(60, 4)];
    let mut w = world(&frames);
    let prog = slots_program(&spec(frames.len() as u32), STATE_FD, SLOTS_FD).unwrap();
    let mut m = state(10, 0);
    // One page, recycled: it keeps what the last run left (a longer frame's bytes).
    let mut page = vec![0xeeu8; MAX];
    for (i, want) in frames.iter().enumerate() {
        // The kernel hands each run the page at the prepared frame's length.
        w.len = None;
        let r = Vm::on(&mut page, &mut m, &mut w).run(&prog);
        assert_eq!(r, XDP_REDIRECT as u64, "run {i}");
        let len = w.len.expect("the length is set");
        assert_eq!(&page[..len], &want[..], "run {i}");
        assert_eq!(u64_at(&m, state::NEXT), i as u64 + 1);
    }
    assert_eq!(u64_at(&m, state::FRAMES), 14, "every run counted");
    assert_eq!(w.redirects, vec![REDIRECT_TARGET; 4]);
}

#[test]
fn a_page_left_short_grows_back_to_the_frame() {
    let frames = [frame(MAX, 9)];
    let mut w = world(&frames);
    let prog = slots_program(&spec(1), STATE_FD, SLOTS_FD).unwrap();
    let mut m = state(0, 0);
    let mut page = vec![0u8; MAX];
    w.len = Some(60);
    let r = Vm::on(&mut page, &mut m, &mut w).run(&prog);
    assert_eq!(r, XDP_REDIRECT as u64);
    assert_eq!(w.len, Some(MAX));
    assert_eq!(page, frames[0]);
}

#[test]
fn past_the_slots_or_a_bad_length_aborts_uncounted() {
    let mut w = world(&[frame(60, 0), frame(59, 0), frame(MAX + 1, 0)]);
    // The map holds three slots; the program is told of two: slot 2 is never reached.
    let prog = slots_program(&spec(2), STATE_FD, SLOTS_FD).unwrap();
    let mut page = vec![0u8; MAX + 8];
    for next in [1, 2, 3] {
        let mut m = state(5, next);
        w.len = Some(MAX);
        let r = Vm::on(&mut page, &mut m, &mut w).run(&prog);
        assert_eq!(r, XDP_ABORTED as u64, "slot {next}");
        assert_eq!(u64_at(&m, state::FRAMES), 5, "slot {next}: not counted");
    }
    assert!(w.redirects.is_empty());
}

#[test]
fn passing_returns_xdp_pass() {
    let frames = [frame(80, 5)];
    let mut w = world(&frames);
    let s = SlotSpec {
        verdict: Verdict::Pass,
        ..spec(1)
    };
    let prog = slots_program(&s, STATE_FD, SLOTS_FD).unwrap();
    let mut m = state(0, 0);
    let mut page = vec![0u8; MAX];
    let r = Vm::on(&mut page, &mut m, &mut w).run(&prog);
    assert_eq!(r, crate::bpf::prog::XDP_PASS as u64);
    assert_eq!(&page[..80], &frames[0][..]);
}
