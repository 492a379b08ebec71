//! Writes and reads on the file system: links, FIFOs, where output may go.

#[allow(unused_imports)]
use super::*;
