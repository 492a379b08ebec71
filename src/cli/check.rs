//! `kpol check`.

use super::args::CheckArgs;

pub fn run(args: CheckArgs) -> u8 {
    let _ = args;
    super::exit::CLEAN
}
