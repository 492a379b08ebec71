//! `kpol test`: runs the Kyverno CLI's own test files (`kyverno-test.yaml`) unchanged, as
//! `kyverno test` does (cli-compat.md §2–10).
//!
//! Test files are found (sorted), evaluated in parallel, and reported in path order, so the
//! output does not depend on the thread count. Exit codes: 0 every row ok; 1 a row failed;
//! 2 a path, test file or test input could not be used (the rest still ran).

mod authz;
mod file;
mod findings;
mod generated;
mod load;
mod policies;
pub(crate) mod report;
pub(crate) mod rows;
mod select;

pub use kpol::testfile::LoadError;
pub use load::{read_cluster_files, read_context, read_user_info, read_values_file};

use std::io::Write as _;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::args::{TestArgs, TestFormat as Format};
use super::exit;
use super::render::test::{human, json, output};
use report::Totals;
pub use report::{FileReport, LoadedRule};

pub fn run(args: TestArgs) -> u8 {
    let mut missing = Vec::new();
    let mut paths = Vec::new();
    for p in &args.paths {
        match discover(p, &args.file_name) {
            Ok(found) => paths.extend(found),
            Err(e) => missing.push(e),
        }
    }
    let selector = select::Selector::parse(&args.test_case_selector);
    if !selector.errors.is_empty() {
        eprintln!("Filter errors:");
        for e in &selector.errors {
            eprintln!("  Error: {e}");
        }
    }
    if paths.is_empty() && args.require_tests {
        missing.push("no tests found".to_owned());
    }
    let mut files: Vec<FileReport> = paths
        .par_iter()
        .map(|p| file::run_file(p, &selector))
        .collect();
    if args.strict {
        for row in files
            .iter_mut()
            .flat_map(|f| f.tests.iter_mut())
            .flat_map(|t| t.rows.iter_mut())
        {
            rows::strict(row);
        }
    }
    let totals = Totals::of(&files);
    let text = match (args.output_format, args.format) {
        // One document on stdout; the errors and the summary on stderr.
        (Some(o), _) => {
            for e in files.iter().flat_map(FileReport::error_lines) {
                eprintln!("{}", crate::cli::render::printable(&e));
            }
            eprintln!("{}", human::summary_line(&totals, args.fail_only));
            output::render(o, &files, args.fail_only, args.detailed_results)
        }
        (None, format) => match format {
            Format::Json => json::render(&files, &totals, args.detailed_results),
            Format::Concise | Format::Github | Format::Sarif => {
                let ci = match format {
                    Format::Concise => super::args::CheckFormat::Concise,
                    Format::Github => super::args::CheckFormat::Github,
                    _ => super::args::CheckFormat::Sarif,
                };
                let renderer = super::render::renderer(ci, super::render::Layout::default(), None);
                let mut out = Vec::new();
                // Writing into memory does not fail.
                let _ = super::command_report::write(
                    renderer.as_ref(),
                    &findings::report(&files),
                    &mut out,
                );
                String::from_utf8_lossy(&out).into_owned()
            }
            Format::Human => {
                let mut t = String::new();
                if files.is_empty() && missing.is_empty() {
                    t.push_str("No test yamls available\n");
                }
                t.push_str(&human::render(
                    &files,
                    &totals,
                    args.fail_only,
                    args.detailed_results,
                ));
                t
            }
        },
    };
    // A closed pipe is not a failure of the run.
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    for m in &missing {
        eprintln!("Error: {m}");
    }
    let incomplete = files.iter().filter(|f| f.incomplete()).count();
    if !missing.is_empty() || incomplete > 0 {
        eprintln!(
            "Error: found {} errors after loading tests",
            incomplete + missing.len()
        );
        return exit::INCOMPLETE;
    }
    if totals.fail > 0 {
        eprintln!("Error: {} tests failed", totals.fail);
        return exit::FINDINGS;
    }
    exit::CLEAN
}

/// Every test file under `paths` (as `kpol test` finds them) run, in path order: what
/// `kpol policies --coverage` reads. `Err` lists the paths that could not be walked.
pub fn run_all(paths: &[PathBuf]) -> (Vec<FileReport>, Vec<String>) {
    let mut missing = Vec::new();
    let mut found = Vec::new();
    for p in paths {
        match discover(p, "kyverno-test.yaml") {
            Ok(f) => found.extend(f),
            Err(e) => missing.push(e),
        }
    }
    let selector = select::Selector::parse("policy=*,rule=*,resource=*");
    let files = found
        .par_iter()
        .map(|p| file::run_file(p, &selector))
        .collect();
    (files, missing)
}

/// The test files under `path` (recursively, in file-name order, hidden directories included:
/// the library keeps its tests in `.kyverno-test/`), or `path` itself when it is a file.
fn discover(path: &Path, file_name: &str) -> Result<Vec<PathBuf>, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if meta.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(path).sort_by_file_name() {
        let entry = entry.map_err(|e| format!("{}: {e}", path.display()))?;
        if entry.file_type().is_file() && entry.file_name() == file_name {
            out.push(entry.into_path());
        }
    }
    Ok(out)
}
