//! System samplers (being written).
