//! Unit tests of the conversion, one per construct.
