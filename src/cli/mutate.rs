//! `kpol mutate`: the mutate rules applied to every input, printed (default), shown as a
//! unified diff (`--diff`), written in place (`--write`), checked (`--check`) or mirrored
//! into a directory (`-o DIR`). Patches are byte edits of the original text, so nothing
//! outside the patched nodes changes.

use std::io::Write;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use kpol::diagnostic::{Diagnostic, Severity};
use kpol::engine::Engine;
use kpol::engine::file::{FileMutation, mutate_file};
use kpol::mutate::udiff;
use kpol::report::Status;
use kpol::request::Request;
use kpol::source::Source;

use super::args::MutateArgs;
use super::discover::Input;
use super::exit;
use super::ordered;
use super::policies;
use super::render::mutate as render;
use super::render::print_diagnostic_line;
use super::session::{Applying, Spec, open_applying};
use super::write;

pub fn run(args: MutateArgs) -> u8 {
    let spec = super::config::locate(args.config.as_deref(), args.no_config).map(|config| {
        Spec::from_flags(
            "mutate",
            config,
            args.paths.clone(),
            args.policies.clone(),
            args.exceptions.clone(),
            args.exclude.clone(),
            args.request.clone(),
            args.max_file_size,
        )
    });
    let Applying {
        inputs,
        mut diagnostics,
        engine,
        request,
        max_bytes,
    } = match open_applying(spec, |_| {}) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let links = write::Links {
        follow: args.follow_symlinks,
    };
    // Each input is read, mutated and (for --diff) diffed by a worker, and handed on in input
    // order as soon as it and every earlier one are done (src/cli/ordered.rs): memory stays
    // flat in the number of files (docs/PERFORMANCE.md).
    // `--context-file`, else `--cluster-resources`: what CEL library calls read. A context
    // file that does not read stops the run before any file is written.
    let file = super::check::context_file(args.context_file.as_deref(), &mut diagnostics);
    if args.context_file.is_some() && file.is_none() {
        diagnostics.iter().for_each(print_diagnostic_line);
        return exit::INCOMPLETE;
    }
    let cel = super::check::cel_data(&request, file);
    let work = |input: &Input| {
        kpol::cel::context::with_context(cel.clone(), || {
            mutate_one(&engine, &request, input, max_bytes, &args)
        })
    };
    let mut incomplete = false;
    let mut errors = false;
    let mut would_change = Vec::new();
    let mut stdout = std::io::stdout().lock();
    // Whether the previous printed file ended without a line break (None: nothing printed).
    let mut last_unterminated: Option<bool> = None;
    ordered::for_each_until(&inputs, work, |done| {
        let Done {
            input,
            diagnostics: diags,
            mutated,
        } = done;
        diagnostics.extend(diags);
        let Some(m) = mutated else {
            return ControlFlow::Continue(());
        };
        for line in &m.rule_errors {
            eprintln!("{line}");
        }
        errors |= m.has_errors;
        if m.changed {
            would_change.push(input.display());
        }
        let out = if let Some(d) = &m.diff {
            write!(stdout, "{d}")
        } else if args.write {
            match &input {
                Input::File(path) if m.changed => {
                    let expected = Some(m.source.text().as_bytes());
                    if let Err(d) = write::replace(path, m.text.as_bytes(), expected, links) {
                        diagnostics.push(d);
                        incomplete = true;
                    }
                    Ok(())
                }
                Input::Stdin => write!(stdout, "{}", m.text),
                Input::File(_) => Ok(()),
            }
        } else if args.check {
            Ok(())
        } else if let Some(dir) = &args.output {
            let rel = match &input {
                Input::File(path) => mirror_path(path, &args.paths),
                Input::Stdin => PathBuf::from("stdin.yaml"),
            };
            let written = write::confined_path(dir, &rel, links)
                .and_then(|target| write::replace(&target, m.text.as_bytes(), None, links));
            if let Err(d) = written {
                diagnostics.push(d);
                incomplete = true;
            }
            Ok(())
        } else {
            // Files are joined as documents of one stream.
            let sep = match last_unterminated {
                None => "",
                Some(true) => "\n---\n",
                Some(false) if m.text.starts_with("---") => "",
                Some(false) => "---\n",
            };
            last_unterminated = Some(!m.text.ends_with('\n') && !m.text.is_empty());
            write!(stdout, "{sep}{}", m.text)
        };
        // A closed pipe is the reader's choice: the run stops there.
        if out.is_err() {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    });
    let _ = stdout.flush();
    for d in &diagnostics {
        print_diagnostic_line(d);
    }
    incomplete |= diagnostics.iter().any(|d| d.severity == Severity::Error);
    if args.check {
        for f in &would_change {
            eprintln!("{}", render::would_change_line(f));
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

/// What a worker hands on for one input.
struct Done {
    input: Input,
    /// Problems reading the file, or applying a patch to its text.
    diagnostics: Vec<Diagnostic>,
    /// `None` when the file could not be read.
    mutated: Option<Mutated>,
}

/// The part of a file's mutation the output needs (not the resources themselves).
struct Mutated {
    source: Source,
    /// The new text (empty for `--check` and `--diff`, which do not need it).
    text: String,
    changed: bool,
    has_errors: bool,
    /// Rule error lines for standard error.
    rule_errors: Vec<String>,
    /// The unified diff, for `--diff`.
    diff: Option<String>,
}

fn mutate_one(
    engine: &Engine,
    request: &Request,
    input: &Input,
    max_bytes: u64,
    args: &MutateArgs,
) -> Done {
    let fm = match policies::read(input, max_bytes) {
        Ok(text) => mutate_file(
            engine,
            request,
            &input.display(),
            text,
            super::discover::input_limits(),
        ),
        Err(d) => {
            return Done {
                input: input.clone(),
                diagnostics: vec![d],
                mutated: None,
            };
        }
    };
    let changed = fm.changed();
    let diff = args.diff.then(|| {
        let display = input.display();
        let name = display.trim_start_matches("./").trim_start_matches('/');
        udiff::unified(
            fm.source.text(),
            &fm.text,
            &format!("a/{name}"),
            &format!("b/{name}"),
        )
    });
    let needs_text = !(args.diff || args.check);
    Done {
        input: input.clone(),
        mutated: Some(Mutated {
            changed,
            has_errors: fm.has_errors(),
            rule_errors: rule_errors(&fm),
            diff,
            text: if needs_text { fm.text } else { String::new() },
            source: fm.source,
        }),
        diagnostics: fm.diagnostics,
    }
}

/// Rule errors for standard error, with the rule and the resource's line.
fn rule_errors(fm: &FileMutation) -> Vec<String> {
    fm.findings
        .iter()
        .filter(|f| f.response.status == Status::Error)
        .map(|f| render::rule_error_line(fm.source.name(), f))
        .collect()
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
