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
use super::discover::{Input, discover, exclude_set, io_reason};
use super::exit;
use super::policies;
use super::render::print_diagnostic_line;

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
                    if let Err(d) = write_atomic(path, &fm.text, Some(fm.source.text())) {
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
            let target = match input {
                Input::File(path) => dir.join(mirror_path(path, &args.paths)),
                Input::Stdin => dir.join("stdin.yaml"),
            };
            if let Err(d) = write_new(&target, &fm.text) {
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
            eprintln!("would change: {}", super::render::printable(f));
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
        let p = super::render::printable;
        eprintln!(
            "{}{pos}: error: {} {}/{}: {}",
            p(fm.source.name()),
            p(&f.resource),
            p(&f.policy),
            p(&f.response.rule),
            p(&f.response.message)
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

fn io_error(path: &Path, what: &str, e: &std::io::Error) -> Diagnostic {
    Diagnostic::error(
        kpol::diagnostic::Code::Io,
        format!("cannot {what} {}: {}", path.display(), io_reason(e)),
        Some(kpol::diagnostic::Location::file(path.display().to_string())),
    )
}

/// Writes a temporary file beside `path` and renames it over `path`; the original is intact
/// whatever fails. With `expected`, the file must still hold what was read: one that was
/// edited or deleted meanwhile is left alone (its new state is somebody else's work). A
/// read-only file is refused (a rename would replace it whatever its mode), and the new file
/// keeps the old one's permissions.
fn write_atomic(path: &Path, text: &str, expected: Option<&str>) -> Result<(), Diagnostic> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map_or_else(|| "kpol".to_owned(), |n| n.to_string_lossy().into_owned());
    // A fixed name beside the file: a temporary left by a crash is reused, never piled up.
    let tmp = dir.join(format!(".{name}.kpol.tmp"));
    let result = (|| {
        if std::fs::metadata(path).is_ok_and(|m| m.permissions().readonly()) {
            return Err(std::io::Error::other("the file is read-only"));
        }
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        if let Ok(meta) = std::fs::metadata(path) {
            std::fs::set_permissions(&tmp, meta.permissions())?;
        }
        if let Some(expected) = expected {
            match std::fs::read(path) {
                Ok(now) if now == expected.as_bytes() => {}
                Ok(_) => return Err(std::io::Error::other("it changed since kpol read it")),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    return Err(std::io::Error::other("it was removed since kpol read it"));
                }
                Err(e) => return Err(e),
            }
        }
        std::fs::rename(&tmp, path)
    })();
    result.map_err(|e| {
        if tmp.is_file() {
            let _ = std::fs::remove_file(&tmp);
        }
        io_error(path, "write", &e)
    })
}

fn write_new(path: &Path, text: &str) -> Result<(), Diagnostic> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| io_error(parent, "create", &e))?;
    }
    write_atomic(path, text, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file edited or deleted between reading and writing is left as it is now.
    #[test]
    fn write_refuses_files_changed_or_removed_since_read() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.yaml");
        std::fs::write(&p, "new: edit\n").unwrap();
        let e = write_atomic(&p, "patched\n", Some("old\n")).unwrap_err();
        assert!(e.message.contains("changed since"), "{}", e.message);
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new: edit\n");
        std::fs::remove_file(&p).unwrap();
        let e = write_atomic(&p, "patched\n", Some("old\n")).unwrap_err();
        assert!(e.message.contains("removed since"), "{}", e.message);
        assert!(!p.exists());
        assert!(!dir.path().join(".a.yaml.kpol.tmp").exists());
        std::fs::write(&p, "old\n").unwrap();
        write_atomic(&p, "patched\n", Some("old\n")).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "patched\n");
    }
}
