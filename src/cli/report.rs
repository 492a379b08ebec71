//! `kpol report`: the HTML report (`--format html`) of a saved `kpol check --format json`
//! result, so that a run checked in shards and joined by `kpol merge` is reported too.
//!
//! The page is the one `kpol check --format html` writes for the same run (both are built
//! by `render::html::model::Page`); the exit code says only whether it was written: 0, or
//! 2 when the result cannot be read or the report cannot be written.

use std::io::{Read as _, Write as _};

use super::args::ReportArgs;
use super::exit;
use super::render::html;

pub fn run(args: ReportArgs) -> u8 {
    let name = args.result.display().to_string();
    let text = if name == "-" {
        let mut t = String::new();
        std::io::stdin().read_to_string(&mut t).map(|_| t)
    } else {
        std::fs::read_to_string(&args.result)
    };
    let text = match text {
        Ok(t) => t,
        Err(e) => return fail(&format!("{name}: {e}")),
    };
    let page = match html::model::Page::from_json(&text, super::check::timestamp()) {
        Ok(p) => p,
        Err(e) => return fail(&format!("{name}: {e}")),
    };
    let base = html::base_of(args.output.as_deref());
    let page = html::write_page(&page, base.as_deref());
    let written = match &args.output {
        // As `kpol check -o`: a symbolic link at FILE is refused.
        Some(path) => super::write::open_report(path, super::write::Links { follow: false })
            .and_then(|mut f| f.write_all(page.as_bytes())),
        None => std::io::stdout().lock().write_all(page.as_bytes()),
    };
    match written {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            fail(&format!("cannot write output: {e}"))
        }
        _ => exit::CLEAN,
    }
}

fn fail(message: &str) -> u8 {
    eprintln!("kpol report: {message}");
    exit::INCOMPLETE
}
