//! `kpol migrate`: ClusterPolicy/Policy files rewritten as the CEL policy kinds
//! (docs/MIGRATE.md). The conversion is the library's (`kpol::migrate`); this file reads the
//! files, prints the refusals at file:line:column and writes the results.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use kpol::migrate::{Migration, migrate_loaded, to_yaml};
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

    /// Evaluate the original and the converted policies side by side on these manifests
    /// (files, or directories searched for `.yaml`/`.yml`/`.json`; a directory holding
    /// kyverno-test.yaml suites gives the resources of the suites that name a POLICY file) and
    /// print every resource whose verdict, message or patch differs; exit 1 on any
    /// difference. Nothing is written.
    #[arg(long, value_name = "MANIFESTS", num_args = 1..)]
    pub verify: Vec<PathBuf>,
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
    let mut sides = super::migrate_verify::Sides {
        original: Vec::new(),
        converted: Vec::new(),
    };
    let mut load_problems = Vec::new();
    // Policies with unconverted rules: not compared (their difference is known).
    let mut skipped_verify: Vec<String> = Vec::new();
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
        let source = Arc::new(SourceFile::new(name.clone(), text));
        let docs = match parse_documents(source.text(), Limits::default()) {
            Ok(d) => d,
            Err(e) => {
                let at = source.line_col(e.offset);
                eprintln!("{name}:{}:{}: error: {}", at.line, at.column, e.message);
                failed = true;
                continue;
            }
        };
        // Read as Kyverno reads it (policy validation, autogen), then converted.
        let loaded = kpol::load_policies(&source, docs);
        let mut out = String::new();
        let mut per_policy = Vec::new();
        for m in migrate_loaded(&loaded) {
            report(&source, &m);
            any_unconverted |= !m.unconverted.is_empty();
            if !m.unconverted.is_empty() {
                skipped_verify.push(m.name.clone());
            }
            if m.policies.is_empty() {
                continue;
            }
            if !out.is_empty() {
                out.push_str("---\n");
            }
            let line = source.line_col(m.span.start).line;
            let yaml = to_yaml(&m, &name, line);
            if m.unconverted.is_empty() {
                per_policy.push((m.name.clone(), yaml.clone()));
            }
            out.push_str(&yaml);
        }
        if !args.verify.is_empty() {
            load_problems.extend(super::migrate_verify::load(
                &name,
                loaded.policies,
                &per_policy,
                &mut sides,
            ));
            continue;
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
    if !args.verify.is_empty() {
        for p in &load_problems {
            eprintln!("error: the conversion does not load cleanly: {p}");
        }
        let mut manifests = Vec::new();
        let originals: Vec<PathBuf> = files.iter().filter_map(|f| f.canonicalize().ok()).collect();
        for p in &args.verify {
            let mut suites = Vec::new();
            find_suites(p, &mut suites);
            if suites.is_empty() {
                collect_manifests(p, &mut manifests);
            }
            for suite in suites {
                suite_resources(&suite, &originals, &mut manifests);
            }
        }
        manifests.sort();
        manifests.dedup();
        if !skipped_verify.is_empty() {
            println!(
                "not compared (rules left unconverted): {}",
                skipped_verify.join(", ")
            );
        }
        let (resources, differing) = super::migrate_verify::compare(sides, &manifests);
        println!("{resources} resources, {differing} with a difference");
        if failed {
            return exit::INCOMPLETE;
        }
        return if differing > 0 || !load_problems.is_empty() || (args.strict && any_unconverted) {
            exit::FINDINGS
        } else {
            exit::CLEAN
        };
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
        let rule = if u.rule.is_empty() {
            String::new()
        } else {
            format!(" rule {}", u.rule)
        };
        eprintln!(
            "{}:{}:{}: not converted: policy {}{rule}: {}",
            source.name(),
            at.line,
            at.column,
            m.name,
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

/// Manifest files under `p` (`.yaml`, `.yml`, `.json`), hidden directories skipped.
fn collect_manifests(p: &Path, out: &mut Vec<PathBuf>) {
    if !p.is_dir() {
        out.push(p.to_path_buf());
        return;
    }
    let Ok(rd) = std::fs::read_dir(p) else {
        return;
    };
    for e in rd.filter_map(|e| e.ok().map(|e| e.path())) {
        let hidden = e
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with('.'));
        if e.is_dir() && !hidden {
            collect_manifests(&e, out);
        } else if e
            .extension()
            .is_some_and(|x| x == "yaml" || x == "yml" || x == "json")
        {
            out.push(e);
        }
    }
}

/// The `kyverno-test.yaml` files under `p` (hidden directories included: suites live in
/// `.kyverno-test/`).
fn find_suites(p: &Path, out: &mut Vec<PathBuf>) {
    if p.is_file() {
        if p.file_name().is_some_and(|n| n == "kyverno-test.yaml") {
            out.push(p.to_path_buf());
        }
        return;
    }
    let Ok(rd) = std::fs::read_dir(p) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for e in entries {
        find_suites(&e, out);
    }
}

/// The resource files of a suite whose `policies` name one of `originals`: the resources the
/// suite's rows are about, evaluated by both sides (the suite's values and mocks are not
/// applied; docs/MIGRATE.md).
fn suite_resources(suite: &Path, originals: &[PathBuf], out: &mut Vec<PathBuf>) {
    let Ok(text) = std::fs::read_to_string(suite) else {
        return;
    };
    let Ok(docs) = parse_documents(&text, Limits::default()) else {
        return;
    };
    let Some(doc) = docs.first() else {
        return;
    };
    let base = suite.parent().unwrap_or(Path::new("."));
    let list = |key: &str| -> Vec<PathBuf> {
        doc.root
            .get(key)
            .map(|n| n.str_items())
            .unwrap_or_default()
            .into_iter()
            .map(|s| base.join(s))
            .collect()
    };
    let names_original = list("policies")
        .iter()
        .filter_map(|p| p.canonicalize().ok())
        .any(|p| originals.contains(&p));
    if names_original {
        out.extend(list("resources"));
    }
}
