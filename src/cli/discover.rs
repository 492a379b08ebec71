//! Input discovery.
