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
use kpol::report::{FailureAction, RuleType, Status};
use kpol::request::Request;
use kpol::source::Source;

use super::args::MutateArgs;
use super::check::{FileReport, Finding};
use super::command_report;
use super::discover::Input;
use super::exit;
use super::ordered;
use super::policies;
use super::render::mutate as render;
use super::render::print_diagnostic_line;
use super::session::{Applying, Spec, open_applying};
use super::write;

pub fn run(args: MutateArgs) -> u8 {
    // `--format`: the report takes standard output, which must then carry no documents.
    let stdin_written = args.write && args.paths.iter().any(|p| p.as_os_str() == "-");
    if args.format.is_some()
        && (!(args.check || args.write || args.output.is_some()) || stdin_written)
    {
        eprintln!(
            "error: --format writes the report on standard output, which would carry the \
             documents: use it with --check, --write (on files) or -o DIR"
        );
        return exit::INCOMPLETE;
    }
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
    let renderer = args
        .format
        .map(|f| super::render::renderer(f, super::render::Layout::default(), None));
    let list_passing = renderer.as_ref().is_some_and(|r| r.lists_passing(false));
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
            mutate_one(&engine, &request, input, max_bytes, &args, list_passing)
        })
    };
    let mut incomplete = false;
    let mut errors = false;
    let mut would_change = Vec::new();
    let mut files: Vec<FileReport> = Vec::new();
    // For the report: the problems that are not one input's.
    let mut run_wide = diagnostics.clone();
    let mut stdout = std::io::stdout().lock();
    // Whether the previous printed file ended without a line break (None: nothing printed).
    let mut last_unterminated: Option<bool> = None;
    ordered::for_each_until(&inputs, work, |done| {
        let Done {
            input,
            diagnostics: diags,
            mutated,
        } = done;
        let Some(m) = mutated else {
            if renderer.is_some() {
                files.push(FileReport {
                    diagnostics: diags.clone(),
                    findings: Vec::new(),
                    unlisted: Default::default(),
                });
            }
            diagnostics.extend(diags);
            return ControlFlow::Continue(());
        };
        if renderer.is_some() {
            files.push(FileReport {
                diagnostics: diags.clone(),
                ..m.report
            });
        } else {
            eprint!("{}", m.rule_errors);
        }
        diagnostics.extend(diags);
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
                        run_wide.push(d.clone());
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
                run_wide.push(d.clone());
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
    incomplete |= diagnostics.iter().any(|d| d.severity == Severity::Error);
    if let Some(renderer) = &renderer {
        // The run-wide problems (the session's, a file that could not be written); each
        // input's own are in its file's report.
        let report = command_report::report(&engine, run_wide, files);
        let mut out = std::io::BufWriter::new(&mut stdout);
        let written =
            command_report::write(renderer.as_ref(), &report, &mut out).and_then(|()| out.flush());
        if let Err(e) = written
            && e.kind() != std::io::ErrorKind::BrokenPipe
        {
            eprintln!("kpol: cannot write output: {e}");
            return exit::INCOMPLETE;
        }
    }
    // The problems reach standard error unless a format for people carries them.
    if !args.format.is_some_and(for_people) {
        for d in &diagnostics {
            print_diagnostic_line(d);
        }
    }
    if args.check && renderer.is_none() {
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
    /// Rule error lines for standard error (without `--format`).
    rule_errors: String,
    /// The findings for `--format`'s report (its diagnostics are the `Done`'s).
    report: FileReport,
    /// The unified diff, for `--diff`.
    diff: Option<String>,
}

fn mutate_one(
    engine: &Engine,
    request: &Request,
    input: &Input,
    max_bytes: u64,
    args: &MutateArgs,
    list_passing: bool,
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
    let (rule_errors, report) = if args.format.is_some() {
        let findings = findings(engine, &fm, args.check, |_| true);
        (
            String::new(),
            command_report::file_report(Vec::new(), findings, list_passing),
        )
    } else {
        let errors = findings(engine, &fm, false, |s| s == Status::Error);
        (
            command_report::stderr_lines(errors),
            command_report::file_report(Vec::new(), [], false),
        )
    };
    Done {
        input: input.clone(),
        mutated: Some(Mutated {
            changed,
            has_errors: fm.has_errors(),
            rule_errors,
            report,
            diff,
            text: if needs_text { fm.text } else { String::new() },
            source: fm.source,
        }),
        diagnostics: fm.diagnostics,
    }
}

/// Every rule response of the file as a finding at its resource (or the field the engine
/// placed it at). `check` (`--check`): a mutation that changed a resource written back is a
/// failure, `would change this resource`, so that the CI formats flag it.
/// Only the responses whose status `keep` takes are made findings (the stderr lines need
/// only the errors).
fn findings(
    engine: &Engine,
    fm: &FileMutation,
    check: bool,
    keep: impl Fn(Status) -> bool,
) -> Vec<Finding> {
    fm.findings
        .iter()
        .filter(|f| keep(f.response.status))
        .filter_map(|f| {
            let (resource, patched) = fm.mutations.get(f.resource_index)?;
            let policy = engine.policies().get(f.policy_index)?;
            let mut response = f.response.clone();
            if check
                && patched.is_some()
                && response.status == Status::Pass
                && response.rule_type == RuleType::Mutation
            {
                response.status = Status::Fail;
                response.failure_action = FailureAction::Enforce;
                response.message = "would change this resource".to_owned();
            }
            Some(super::check::finding(
                policy,
                f.policy_index,
                resource,
                response,
                false,
            ))
        })
        .collect()
}

/// Whether a `--format` is one for people, which shows the run's problems itself.
fn for_people(format: super::args::CheckFormat) -> bool {
    matches!(
        format,
        super::args::CheckFormat::Human | super::args::CheckFormat::Concise
    )
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
