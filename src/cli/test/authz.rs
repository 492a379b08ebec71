//! A test's `httpPayloads` and `envoyPayloads` (kyverno-authz authorization requests): each
//! file is one request, answered by every ValidatingPolicy of its mode
//! (`kpol::vpol::authz`), as `kyverno test` does (`commands/test/test.go`). A request's rows
//! are keyed by its path joined to the test's directory (the CLI's full path; an absolute
//! path as written), and live only in the default run. A file that does not read as a
//! request of its kind aborts the test, as upstream.

use std::path::Path;

use super::evaluate::{ResourceRun, Response, RuleOutcome};
use kpol::engine::Engine;
use kpol::testfile::{LoadError, TestSpec};
use kpol::vpol::authz::{self, AuthzMode};

/// The requests of one test: (full path, mode, the CEL `object`).
pub struct Requests(Vec<(String, AuthzMode, cel::Value)>);

/// Reads the test's authorization payloads.
pub fn load(dir: &Path, spec: &TestSpec) -> Result<Requests, LoadError> {
    let mut out: Vec<(String, AuthzMode, cel::Value)> = Vec::new();
    let kinds = [
        (AuthzMode::Http, &spec.http_payloads, "HTTP"),
        (AuthzMode::Envoy, &spec.envoy_payloads, "Envoy"),
    ];
    for (mode, files, what) in kinds {
        for name in files {
            let full = if Path::new(name).is_absolute() {
                kpol::testfile::clean_path(name)
            } else {
                kpol::testfile::clean_path(&format!("{}/{name}", dir.display()))
            };
            if out.iter().any(|(p, m, _)| *p == full && *m == mode) {
                continue;
            }
            let fail = |why: String| {
                LoadError::in_file(
                    &full,
                    format!("failed to load {what} payloads from path {full} ({why})"),
                )
            };
            let text = std::fs::read_to_string(&full).map_err(|e| fail(e.to_string()))?;
            let object = match mode {
                AuthzMode::Http => kpol::vpol::authz_request::http_request(&text),
                AuthzMode::Envoy => kpol::vpol::authz_request::envoy_request(&text),
            }
            .map_err(fail)?;
            out.push((full, mode, object));
        }
    }
    Ok(Requests(out))
}

/// One run per request, with the response of every policy of its mode.
pub fn runs(engine: &Engine, requests: &Requests) -> Vec<ResourceRun> {
    requests
        .0
        .iter()
        .map(|(path, mode, object)| {
            let responses = engine
                .policies()
                .iter()
                .filter_map(|p| {
                    let cel = kpol::vpol::cel_policy(p)?;
                    let r = authz::evaluate(cel, *mode, object.clone())?;
                    Some(Response {
                        policy: p.name.clone(),
                        unscored: p
                            .annotations
                            .get("policies.kyverno.io/scored")
                            .is_some_and(|v| v == "false"),
                        ruleless: true,
                        rules: vec![RuleOutcome::from(r)],
                    })
                })
                .collect();
            ResourceRun {
                api_version: String::new(),
                kind: String::new(),
                namespace: String::new(),
                name: path.clone(),
                responses,
            }
        })
        .collect()
}
