//! The `kpol` binary: arguments in, files read, engine run, results rendered, exit code out.

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    cli::run()
}
