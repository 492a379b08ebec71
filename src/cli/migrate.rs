//! `kpol migrate`: ClusterPolicy/Policy files rewritten as the CEL policy kinds
//! (docs/MIGRATE.md). The conversion is the library's (`kpol::migrate`); this file reads the
//! files, prints the refusals at file:line:column and writes the results.

use std::path::{Path, PathBuf};

use kpol::migrate::{Migration, migrate_policy, to_yaml};
use kpol::source::SourceFile;
use kpol::yaml::{Limits, parse_documents};

use super::exit;

/// `kpol migrate POLICY… [-o DIR | --write] [--strict]`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit status: 0 converted; 1 with --strict when a rule was left unconverted; 2 the run failed (unreadable or invalid input)."
)]
pub struct MigrateArgs {
    /// ClusterPolicy/Policy files, or directories searched for `.yaml`/`.yml` files.
    #[arg(required = true, value_name = "POLICY")]
    pub policies: Vec<PathBuf>,

    /// Write each converted file into DIR (same file name) instead of standard output.
    #[arg(short, long, value_name = "DIR", conflicts_with = "write")]
    pub output: Option<PathBuf>,

    /// Replace each source file with its converted policies.
    #[arg(long)]
    pub write: bool,

    /// Fail (exit 1) when any rule could not be converted faithfully.
    #[arg(long)]
    pub strict: bool,
}

pub fn run(args: MigrateArgs) -> u8 {
    let mut files = Vec::new();
    for p in &args.policies {
        collect(p, &mut files);
    }
    files.sort();
    let mut any_unconverted = false;
    let mut failed = false;
    let mut stdout = String::new();
    for path in &files {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("error: cannot read {}: {e}", path.display());
                failed = true;
                continue;
            }
        };
        let name = path.display().to_string();
        let source = SourceFile::new(name.clone(), text);
        let docs = match parse_documents(source.text(), Limits::default()) {
            Ok(d) => d,
            Err(e) => {
                let at = source.line_col(e.offset);
                eprintln!("{name}:{}:{}: error: {}", at.line, at.column, e.message);
                failed = true;
                continue;
            }
        };
        let mut out = String::new();
        for doc in &docs {
            let Some(m) = migrate_policy(&doc.root) else {
                continue;
            };
            report(&source, &m);
            any_unconverted |= !m.unconverted.is_empty();
            if m.policies.is_empty() {
                continue;
            }
            if !out.is_empty() {
                out.push_str("---\n");
            }
            let line = source.line_col(doc.root.span.start).line;
            out.push_str(&to_yaml(&m, &name, line));
        }
        if out.is_empty() {
            continue;
        }
        let target = match (&args.output, args.write) {
            (Some(dir), _) => Some(dir.join(path.file_name().unwrap_or_default())),
            (None, true) => Some(path.clone()),
            (None, false) => None,
        };
        match target {
            Some(t) => {
                if let Some(parent) = t.parent()
                    && let Err(e) = std::fs::create_dir_all(parent)
                {
                    eprintln!("error: cannot create {}: {e}", parent.display());
                    failed = true;
                    continue;
                }
                if let Err(e) = std::fs::write(&t, out) {
                    eprintln!("error: cannot write {}: {e}", t.display());
                    failed = true;
                }
            }
            None => {
                if !stdout.is_empty() {
                    stdout.push_str("---\n");
                }
                stdout.push_str(&out);
            }
        }
    }
    print!("{stdout}");
    if failed {
        exit::INCOMPLETE
    } else if args.strict && any_unconverted {
        exit::FINDINGS
    } else {
        exit::CLEAN
    }
}

/// Prints each unconverted rule at its construct.
fn report(source: &SourceFile, m: &Migration) {
    for u in &m.unconverted {
        let at = source.line_col(u.span.start);
        eprintln!(
            "{}:{}:{}: not converted: policy {} rule {}: {}",
            source.name(),
            at.line,
            at.column,
            m.name,
            u.rule,
            u.reason
        );
    }
}

fn collect(p: &Path, out: &mut Vec<PathBuf>) {
    if p.is_dir() {
        let Ok(rd) = std::fs::read_dir(p) else {
            out.push(p.to_path_buf());
            return;
        };
        let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
        entries.sort();
        for e in entries {
            let hidden = e
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with('.'));
            if e.is_dir() && !hidden {
                collect(&e, out);
            } else if e.extension().is_some_and(|x| x == "yaml" || x == "yml") {
                out.push(e);
            }
        }
    } else {
        out.push(p.to_path_buf());
    }
}
