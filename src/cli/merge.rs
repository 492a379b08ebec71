//! `kpol merge`: the JSON reports of `kpol check --shard I/N --format json` runs (or their
//! SARIF logs, `--format sarif`: [`sarif`]) joined into the report of the unsharded run, with
//! its exit code.
//!
//! A shard checks a run of consecutive sorted inputs (`Shard::range`), so the shards' results
//! and per-input diagnostics, taken in shard order, are the unsharded order. Every shard
//! repeats the run-wide diagnostics (policies, settings, discovery) at the head of its list:
//! they are kept once. Rule counts and input errors add up (discovery errors are counted by
//! shard 1 only); policy and other errors are the run's, the same in every shard.

use std::io::Write;

use serde_json::{Map, Value};

use super::args::MergeArgs;
use super::exit;

mod sarif;

/// Whether a document is a SARIF log (`$schema` or `runs`) rather than kpol's JSON.
fn is_sarif(doc: &Value) -> bool {
    doc.get("$schema").is_some() || doc.get("runs").is_some()
}

pub fn run(args: MergeArgs) -> u8 {
    let mut shards = Vec::new();
    for path in &args.reports {
        let doc = std::fs::read_to_string(path)
            .map_err(|e| e.to_string())
            .and_then(|t| serde_json::from_str::<Value>(&t).map_err(|e| e.to_string()));
        match doc {
            Ok(doc) => shards.push(doc),
            Err(e) => return fail(&format!("{}: {e}", path.display())),
        }
    }
    let sarif_inputs = shards.iter().filter(|d| is_sarif(d)).count();
    if sarif_inputs > 0 && sarif_inputs < shards.len() {
        return fail(
            "the reports are not all one format: give the JSON reports or the SARIF logs of the shards",
        );
    }
    let (merged, incomplete) = if sarif_inputs > 0 {
        match sarif::merge(shards, super::render::sarif::GITHUB_RESULT_LIMIT) {
            Ok((log, summary, successful)) => {
                let doc = serde_json::json!({ "summary": summary });
                let code = exit_code(&doc, !successful, &args);
                return write(&log, &args).unwrap_or(code);
            }
            Err(e) => return fail(&e),
        }
    } else {
        match merge(shards) {
            Ok(m) => {
                let errors = m
                    .get("diagnostics")
                    .and_then(Value::as_array)
                    .is_some_and(|ds| {
                        ds.iter()
                            .any(|d| d.get("severity") == Some(&Value::from("error")))
                    });
                (m, errors)
            }
            Err(e) => return fail(&e),
        }
    };
    let code = exit_code(&merged, incomplete, &args);
    write(&merged, &args).unwrap_or(code)
}

/// Writes the merged document; `Some(exit code)` when it cannot be.
fn write(merged: &Value, args: &MergeArgs) -> Option<u8> {
    let text = match serde_json::to_string_pretty(merged) {
        Ok(t) => t + "\n",
        Err(e) => return Some(fail(&e.to_string())),
    };
    let written = match &args.output {
        // As `kpol check -o`: a symbolic link at FILE is refused.
        Some(path) => super::write::open_report(path, super::write::Links { follow: false })
            .and_then(|mut f| f.write_all(text.as_bytes())),
        None => std::io::stdout().lock().write_all(text.as_bytes()),
    };
    if let Err(e) = written
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        return Some(fail(&format!("cannot write output: {e}")));
    }
    None
}

fn fail(message: &str) -> u8 {
    eprintln!("kpol merge: {message}");
    exit::INCOMPLETE
}

fn count(v: &Value, key: &str) -> u64 {
    v.get("summary")
        .and_then(|s| s.get(key))
        .and_then(Value::as_u64)
        .unwrap_or(0)
}

/// The merged document, or why the shards do not make one run (a shard missing or twice,
/// counts that disagree, not kpol's JSON).
fn merge(mut shards: Vec<Value>) -> Result<Value, String> {
    let shard_of = |v: &Value| {
        let s = v.get("shard")?;
        Some((s.get("index")?.as_u64()?, s.get("count")?.as_u64()?))
    };
    for s in &shards {
        if s.get("version").and_then(Value::as_u64) != Some(1) {
            return Err("not a kpol check --format json report (schema version 1)".to_owned());
        }
        if shard_of(s).is_none() {
            return Err("a report without `shard`: run kpol check with --shard I/N".to_owned());
        }
    }
    in_shard_order(&mut shards, shard_of)?;
    let head = leading_diagnostics(&shards);
    let mut results = Vec::new();
    let mut diagnostics: Vec<Value> = Vec::new();
    for (i, s) in shards.iter().enumerate() {
        if let Some(r) = s.get("results").and_then(Value::as_array) {
            results.extend(r.iter().cloned());
        }
        let ds = s.get("diagnostics").and_then(Value::as_array);
        let skip = if i == 0 { 0 } else { head };
        diagnostics.extend(ds.into_iter().flatten().skip(skip).cloned());
    }
    let first = shards.first().ok_or("no report")?;
    let summary = merged_summary(&shards)?;
    let mut doc = Map::new();
    doc.insert("version".to_owned(), Value::from(1));
    doc.insert("results".to_owned(), Value::Array(results));
    doc.insert("diagnostics".to_owned(), Value::Array(diagnostics));
    doc.insert("summary".to_owned(), Value::Object(summary));
    // The policies are the run's, the same in every shard.
    if let Some(policies) = first.get("policies") {
        doc.insert("policies".to_owned(), policies.clone());
    }
    Ok(Value::Object(doc))
}

/// Sorts the shards by index; an error unless they are 1/N … N/N, each once.
fn in_shard_order(
    shards: &mut [Value],
    shard_of: impl Fn(&Value) -> Option<(u64, u64)>,
) -> Result<(), String> {
    shards.sort_by_key(|s| shard_of(s).unwrap_or((0, 0)));
    let n = shards.len() as u64;
    for (i, s) in shards.iter().enumerate() {
        match shard_of(s) {
            Some((index, count)) if index == i as u64 + 1 && count == n => {}
            _ => {
                return Err(format!(
                    "the reports are not shards 1/{n} … {n}/{n} of one run, each once"
                ));
            }
        }
    }
    Ok(())
}

/// The unsharded run's summary from the shards' (each document's `summary`).
fn merged_summary(shards: &[Value]) -> Result<Map<String, Value>, String> {
    let first = shards.first().ok_or("no report")?;
    let mut summary = Map::new();
    for key in ["pass", "fail", "warn", "error", "skip", "inputErrors"] {
        let total: u64 = shards.iter().map(|s| count(s, key)).sum();
        summary.insert(key.to_owned(), Value::from(total));
    }
    // Present only when not zero (docs/SUPPRESSIONS.md).
    for key in ["suppressed", "baselined", "baselineStale"] {
        let total: u64 = shards.iter().map(|s| count(s, key)).sum();
        if total > 0 {
            summary.insert(key.to_owned(), Value::from(total));
        }
    }
    for key in ["policyErrors", "otherErrors"] {
        if shards.iter().any(|s| count(s, key) != count(first, key)) {
            return Err(format!("the shards disagree on summary.{key}: not one run"));
        }
        summary.insert(key.to_owned(), Value::from(count(first, key)));
    }
    Ok(summary)
}

/// How many items every list starts with alike (the run-wide ones every shard repeats).
fn common_prefix(lists: &[&[Value]]) -> usize {
    let Some(first) = lists.first() else {
        return 0;
    };
    if lists.len() < 2 {
        return 0;
    }
    (0..first.len())
        .take_while(|&i| lists.iter().all(|l| l.get(i) == first.get(i)))
        .count()
}

/// How many diagnostics every shard starts with alike: the run-wide ones. A per-input
/// diagnostic names its input, which only one shard checks.
fn leading_diagnostics(shards: &[Value]) -> usize {
    let lists: Vec<&[Value]> = shards
        .iter()
        .map(|s| {
            s.get("diagnostics")
                .and_then(Value::as_array)
                .map_or(&[][..], Vec::as_slice)
        })
        .collect();
    common_prefix(&lists)
}

/// The unsharded run's exit code, from the merged summary and whether an error made the
/// run incomplete (Kyverno's order, as `kpol check`).
fn exit_code(doc: &Value, errors: bool, args: &MergeArgs) -> u8 {
    let incomplete = errors
        || ["inputErrors", "policyErrors", "otherErrors"]
            .iter()
            .any(|k| count(doc, k) > 0);
    if incomplete {
        return exit::INCOMPLETE;
    }
    let policy = exit::WarnPolicy {
        warn_exit_code: args.warn_exit_code,
        warn_no_pass: args.warn_no_pass,
    };
    let n = |k| count(doc, k) as usize;
    let (code, note) = policy.code(n("pass"), n("fail"), n("warn"), n("error"));
    if let Some(note) = note {
        eprintln!("{note}");
    }
    code
}
