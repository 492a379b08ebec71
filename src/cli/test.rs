//! `kpol test`.

use super::args::TestArgs;

pub fn run(args: TestArgs) -> u8 {
    let _ = args;
    super::exit::CLEAN
}
