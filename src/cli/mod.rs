//! The command-line side of kpol: argument parsing, file discovery, rendering, exit codes.

mod apiserver;
mod args;
mod baseline;
mod check;
mod color;
mod command_report;
mod config;
mod coverage;
mod discover;
mod exit;
mod explain;
mod generate;
mod jp;
mod known_kinds;
mod lsp;
mod merge;
mod migrate;
mod migrate_verify;
mod mutate;
mod namespaces;
mod old;
mod ordered;
mod policies;
mod policies_cmd;
mod render;
mod report;
mod session;
mod suppressions;
mod test;
mod write;

use std::process::ExitCode;

use clap::Parser;

use args::{Args, Command};

pub fn run() -> ExitCode {
    let args = match Args::try_parse() {
        Ok(a) => a,
        Err(e) => {
            let code = if e.use_stderr() {
                exit::INCOMPLETE
            } else {
                exit::CLEAN
            };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    if let Some(j) = args.jobs {
        // A second initialisation can only fail if the pool exists already; either way the
        // run goes on.
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(j.max(1))
            .build_global();
    }
    let code = match args.command {
        Command::Check(a) => check::run(a),
        Command::Apply(a) => check::run(a.into()),
        Command::Merge(a) => merge::run(a),
        Command::Report(a) => report::run(a),
        Command::Test(a) => test::run(a),
        Command::Generate(a) => generate::run(a),
        Command::Mutate(a) => mutate::run(a),
        Command::Jp(a) => jp::run(a),
        Command::Explain(a) => explain::run(a),
        Command::Policies(a) => policies_cmd::run(a),
        Command::Lsp(a) => lsp::run(a),
        Command::Migrate(a) => migrate::run(a),
    };
    ExitCode::from(code)
}
