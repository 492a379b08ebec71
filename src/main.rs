//! The `kpol` binary: arguments in, files read, engine run, results rendered, exit code out.

mod cli;

use std::process::ExitCode;

/// mimalloc: kpol allocates many small tree nodes per document (docs/PERFORMANCE.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    cli::run()
}
