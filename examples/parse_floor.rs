//! The parse-only floor of `kpol check` (docs/PERFORMANCE.md): walks the same inputs, reads
//! every file and parses it through kpol's YAML layer (`kpol::yaml::parse_documents`, the call
//! `kpol check` makes first), and does nothing else. No policies, no resources, no output but
//! one summary line. `kpol check` cannot be faster than this.
//!
//! ```text
//! cargo run --release --example parse_floor -- [-j N] PATH...
//! ```
//!
//! The last line is `files=… documents=… bytes=… errors=… threads=…`; exit status 0.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use rayon::prelude::*;

use kpol::yaml::{Limits, parse_documents};

/// The same allocator as the `kpol` binary, so that the floor is the same YAML layer.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// What parsing one file gave.
#[derive(Clone, Copy, Default)]
struct Count {
    files: usize,
    documents: usize,
    bytes: usize,
    errors: usize,
}

impl Count {
    fn add(self, o: Count) -> Count {
        Count {
            files: self.files + o.files,
            documents: self.documents + o.documents,
            bytes: self.bytes + o.bytes,
            errors: self.errors + o.errors,
        }
    }
}

fn main() -> ExitCode {
    let mut jobs: Option<usize> = None;
    let mut paths = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "-j" | "--jobs" => jobs = args.next().and_then(|v| v.parse().ok()),
            _ if a.starts_with("-j") => jobs = a[2..].parse().ok(),
            _ => paths.push(PathBuf::from(a)),
        }
    }
    if paths.is_empty() {
        eprintln!("usage: parse_floor [-j N] PATH...");
        return ExitCode::from(2);
    }
    if let Some(j) = jobs {
        // Fails only when a pool exists already; the default pool is then used.
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(j.max(1))
            .build_global();
    }
    let files = inputs(&paths);
    let total = files
        .par_iter()
        .map(|p| parse_file(p))
        .reduce(Count::default, Count::add);
    println!(
        "files={} documents={} bytes={} errors={} threads={}",
        total.files,
        total.documents,
        total.bytes,
        total.errors,
        rayon::current_num_threads()
    );
    ExitCode::SUCCESS
}

/// The input files in a stable order: `.yaml`, `.yml` and `.json` under each path, as
/// `kpol check` discovers them.
fn inputs(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_file() {
            out.push(p.clone());
            continue;
        }
        let mut found: Vec<PathBuf> = walkdir::WalkDir::new(p)
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_file() && is_manifest(e.path()))
            .map(walkdir::DirEntry::into_path)
            .collect();
        found.sort();
        out.extend(found);
    }
    out
}

fn is_manifest(p: &Path) -> bool {
    matches!(
        p.extension().and_then(|e| e.to_str()),
        Some("yaml" | "yml" | "json")
    )
}

fn parse_file(path: &Path) -> Count {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Count {
            files: 1,
            errors: 1,
            ..Count::default()
        };
    };
    let mut c = Count {
        files: 1,
        bytes: text.len(),
        ..Count::default()
    };
    match parse_documents(&text, Limits::default()) {
        Ok(docs) => c.documents = docs.len(),
        Err(_) => c.errors = 1,
    }
    c
}
