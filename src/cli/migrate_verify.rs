//! `kpol migrate --verify`: the original policies and their conversions evaluated side by
//! side on the same manifests. A resource is reported when a policy's verdict differs (pass,
//! fail, skip, error), when a failing conversion's message is not among the original's
//! messages, or when the mutated resource differs.

use std::collections::BTreeMap;
use std::sync::Arc;

use kpol::engine::Engine;
use kpol::manifest::read_manifests;
use kpol::policy::Policy;
use kpol::report::{PolicyResponse, Status};
use kpol::request::Request;
use kpol::resource::Resource;
use kpol::source::SourceFile;
use kpol::yaml::{Limits, parse_documents};

/// One side's verdict for one policy on one resource.
#[derive(Clone, Debug, PartialEq)]
struct Verdict {
    status: &'static str,
    messages: Vec<String>,
}

/// The original policies and the converted ones (by original name).
pub struct Sides {
    pub original: Vec<Policy>,
    pub converted: Vec<(String, Policy)>,
}

/// Takes the original policies (`originals`, as loaded from `name`) that have a conversion
/// in `converted`, and loads the conversions, with their load problems returned as messages
/// (a conversion must load cleanly).
pub fn load(
    name: &str,
    originals: Vec<Policy>,
    converted: &[(String, String)],
    sides: &mut Sides,
) -> Vec<String> {
    let mut problems = Vec::new();
    let keep = |p: &Policy| converted.iter().any(|(n, _)| *n == p.name);
    sides.original.extend(originals.into_iter().filter(keep));
    for (original, yaml) in converted {
        let cname = format!("{name} (converted {original})");
        let source = Arc::new(SourceFile::new(cname.clone(), yaml.clone()));
        match parse_documents(yaml, Limits::default()) {
            Ok(docs) => {
                let loaded = kpol::load_policies(&source, docs);
                for d in &loaded.diagnostics {
                    problems.push(format!("{cname}: {}", d.message));
                }
                for i in &loaded.invalid {
                    problems.push(format!("{cname}: invalid {}: {}", i.name, i.reason));
                }
                for p in loaded.policies {
                    sides.converted.push((original.clone(), p));
                }
            }
            Err(e) => problems.push(format!("{cname}: {}", e.message)),
        }
    }
    problems
}

fn status_name(s: Status) -> &'static str {
    match s {
        Status::Pass => "pass",
        Status::Fail => "fail",
        Status::Warn => "warn",
        Status::Error => "error",
        Status::Skip => "skip",
    }
}

/// A policy's responses folded into one verdict: fail, else error, else pass, else skip.
fn fold(responses: &[&PolicyResponse]) -> Verdict {
    let mut statuses = Vec::new();
    let mut messages = Vec::new();
    for r in responses {
        for rule in &r.rules {
            statuses.push(rule.status);
            if matches!(rule.status, Status::Fail | Status::Error) {
                messages.push(rule.message.clone());
            }
        }
    }
    let status = [Status::Fail, Status::Error, Status::Pass, Status::Warn]
        .into_iter()
        .find(|s| statuses.contains(s))
        .map_or("skip", status_name);
    Verdict { status, messages }
}

/// Compares both sides on every resource of `manifests`; prints each difference and returns
/// how many resources differ.
pub fn compare(sides: Sides, manifests: &[std::path::PathBuf]) -> (usize, usize) {
    let names: Vec<String> = sides.original.iter().map(|p| p.name.clone()).collect();
    let conv_names: Vec<String> = sides.converted.iter().map(|(o, _)| o.clone()).collect();
    let original = Engine::new(sides.original);
    let converted = Engine::new(sides.converted.into_iter().map(|(_, p)| p).collect());
    let request = Request::default();
    let mut differing = 0usize;
    let mut resources = 0usize;
    for path in manifests {
        let Ok(text) = std::fs::read_to_string(path) else {
            eprintln!("error: cannot read {}", path.display());
            continue;
        };
        let source = Arc::new(SourceFile::new(path.display().to_string(), text));
        let m = read_manifests(&source, Limits::default());
        for resource in &m.resources {
            resources += 1;
            let diffs = differences(
                &original,
                &converted,
                &names,
                &conv_names,
                resource,
                &request,
            );
            if !diffs.is_empty() {
                differing += 1;
                println!(
                    "{}: {}/{} {}{}:",
                    path.display(),
                    resource.api_version,
                    resource.kind,
                    if resource.namespace.is_empty() {
                        String::new()
                    } else {
                        format!("{}/", resource.namespace)
                    },
                    resource.name
                );
                for d in diffs {
                    println!("  {d}");
                }
            }
        }
    }
    (resources, differing)
}

fn differences(
    original: &Engine,
    converted: &Engine,
    names: &[String],
    conv_names: &[String],
    resource: &Resource,
    request: &Request,
) -> Vec<String> {
    let mut out = Vec::new();
    // The mutate phase's verdicts count too: Kyverno skips a mutate rule whose patch changes
    // nothing, where a MutatingPolicy that matched passes.
    let (o_patched, o_mut) = original.mutate_responses(resource, request);
    let (c_patched, c_mut) = converted.mutate_responses(resource, request);
    let mut o = original.validate(resource, request);
    let mut c = converted.validate(resource, request);
    o.extend(o_mut.into_iter().map(|m| m.response));
    c.extend(c_mut.into_iter().map(|m| m.response));
    let mut by_name: BTreeMap<&str, (Vec<&PolicyResponse>, Vec<&PolicyResponse>)> = BTreeMap::new();
    for n in conv_names {
        by_name.entry(n.as_str()).or_default();
    }
    for r in &o {
        if let Some(n) = names.get(r.policy) {
            by_name.entry(n.as_str()).or_default().0.push(r);
        }
    }
    for r in &c {
        if let Some(n) = conv_names.get(r.policy) {
            by_name.entry(n.as_str()).or_default().1.push(r);
        }
    }
    for (name, (ors, crs)) in by_name {
        if !conv_names.iter().any(|n| n == name) {
            continue;
        }
        let ov = fold(&ors);
        let cv = fold(&crs);
        if ov.status != cv.status {
            out.push(format!(
                "policy {name}: original {} {:?}, converted {} {:?}",
                ov.status, ov.messages, cv.status, cv.messages
            ));
        } else if cv.status == "fail"
            && !cv
                .messages
                .iter()
                .all(|m| ov.messages.iter().any(|om| om.contains(m.as_str())))
        {
            out.push(format!(
                "policy {name}: messages differ: original {:?}, converted {:?}",
                ov.messages, cv.messages
            ));
        }
    }
    let om = o_patched.map(|r| r.root.to_json());
    let cm = c_patched.map(|r| r.root.to_json());
    if om != cm {
        out.push(format!(
            "patch differs: original {}, converted {}",
            om.map_or("no change".to_owned(), |v| v.to_string()),
            cm.map_or("no change".to_owned(), |v| v.to_string())
        ));
    }
    out
}
