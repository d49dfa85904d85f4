//! Unit tests: the server on loopback with the fake engine.
