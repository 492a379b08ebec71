//! `kpol mutate`: the mutate rules applied to every input, printed (default), shown as a
//! unified diff (`--diff`), written in place (`--write`), checked (`--check`) or mirrored
//! into a directory (`-o DIR`). Patches are byte edits of the original text, so nothing
//! outside the patched nodes changes.

use std::io::Write;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use kpol::diagnostic::{Diagnostic, Severity};
use kpol::engine::Engine;
use kpol::mutate::file::{FileMutation, mutate_file};
use kpol::mutate::udiff;
use kpol::report::Status;
use kpol::request::Request;

use super::args::MutateArgs;
use super::discover::{Input, discover, exclude_set};
use super::exit;
use super::policies;
use super::render::print_diagnostic_line;
use super::write;

pub fn run(args: MutateArgs) -> u8 {
    let exclude = match exclude_set(&args.exclude) {
        Ok(e) => e,
        Err(d) => {
            print_diagnostic_line(&d);
            return exit::INCOMPLETE;
        }
    };
    let (inputs, mut diagnostics) = discover(&args.paths, &exclude);
    let max_bytes = args.max_file_size.saturating_mul(1024 * 1024);
    // PolicyExceptions found among the policies, and from `--exceptions`.
    let set = policies::load(&args.policies, &args.exceptions, max_bytes);
    diagnostics.extend(set.diagnostics);
    let engine = Engine::new(set.policies).with_exceptions(set.exceptions);
    let request = Request::default();
    let links = write::Links {
        follow: args.follow_symlinks,
    };
    let results: Vec<(Input, Result<FileMutation, Diagnostic>)> = inputs
        .into_par_iter()
        .map(|input| {
            let r = policies::read(&input, max_bytes)
                .map(|text| mutate_file(&engine, &request, &input.display(), text));
            (input, r)
        })
        .collect();

    let mut incomplete = false;
    let mut errors = false;
    let mut would_change = Vec::new();
    let mut stdout = std::io::stdout().lock();
    let mut last_printed: Option<String> = None;
    for (input, result) in &results {
        let fm = match result {
            Ok(fm) => fm,
            Err(d) => {
                diagnostics.push(d.clone());
                continue;
            }
        };
        diagnostics.extend(fm.diagnostics.iter().cloned());
        report_findings(fm);
        errors |= fm.has_errors();
        if fm.changed() {
            would_change.push(input.display());
        }
        let out = if args.diff {
            let display = input.display();
            let name = display.trim_start_matches("./").trim_start_matches('/');
            let d = udiff::unified(
                fm.source.text(),
                &fm.text,
                &format!("a/{name}"),
                &format!("b/{name}"),
            );
            write!(stdout, "{d}")
        } else if args.write {
            match input {
                Input::File(path) if fm.changed() => {
                    let expected = Some(fm.source.text().as_bytes());
                    if let Err(d) = write::replace(path, fm.text.as_bytes(), expected, links) {
                        diagnostics.push(d);
                        incomplete = true;
                    }
                    Ok(())
                }
                Input::Stdin => write!(stdout, "{}", fm.text),
                Input::File(_) => Ok(()),
            }
        } else if args.check {
            Ok(())
        } else if let Some(dir) = &args.output {
            let rel = match input {
                Input::File(path) => mirror_path(path, &args.paths),
                Input::Stdin => PathBuf::from("stdin.yaml"),
            };
            let written = write::confined_path(dir, &rel, links)
                .and_then(|target| write::replace(&target, fm.text.as_bytes(), None, links));
            if let Err(d) = written {
                diagnostics.push(d);
                incomplete = true;
            }
            Ok(())
        } else {
            // Files are joined as documents of one stream.
            let sep = match &last_printed {
                None => "",
                Some(prev) if !prev.ends_with('\n') && !prev.is_empty() => "\n---\n",
                Some(_) if fm.text.starts_with("---") => "",
                Some(_) => "---\n",
            };
            last_printed = Some(fm.text.clone());
            write!(stdout, "{sep}{}", fm.text)
        };
        if out.is_err() {
            // A closed pipe is the reader's choice.
            break;
        }
    }
    let _ = stdout.flush();
    for d in &diagnostics {
        print_diagnostic_line(d);
    }
    incomplete |= diagnostics.iter().any(|d| d.severity == Severity::Error);
    if args.check {
        for f in &would_change {
            eprintln!("would change: {f}");
        }
    }
    if incomplete {
        exit::INCOMPLETE
    } else if errors || (args.check && !would_change.is_empty()) {
        exit::FINDINGS
    } else {
        exit::CLEAN
    }
}

/// Rule errors on standard error, with the rule and the resource's line.
fn report_findings(fm: &FileMutation) {
    for f in &fm.findings {
        if f.response.status != Status::Error {
            continue;
        }
        let pos = f
            .start
            .map_or(String::new(), |lc| format!(":{}:{}", lc.line, lc.column));
        eprintln!(
            "{}{pos}: error: {} {}/{}: {}",
            fm.source.name(),
            f.resource,
            f.policy,
            f.response.rule,
            f.response.message
        );
    }
}

/// The path of `file` relative to the input argument it was found under.
fn mirror_path(file: &Path, roots: &[PathBuf]) -> PathBuf {
    for root in roots {
        if root.is_dir()
            && let Ok(rel) = file.strip_prefix(root)
        {
            return rel.to_path_buf();
        }
    }
    file.file_name()
        .map_or_else(|| file.to_path_buf(), PathBuf::from)
}
