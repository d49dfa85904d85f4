//! `upktgen ndr`: the no-drop rate (and the partial-drop rate) of a device per frame size, by
//! a search over real trials (docs/ndr.md).

pub mod search;
