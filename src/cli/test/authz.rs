//! A test's `httpPayloads` and `envoyPayloads` (kyverno-authz authorization requests), read:
//! each file is one request, answered by every ValidatingPolicy of its mode
//! (`kpol::engine::test_run`, `kpol::vpol::authz`), as `kyverno test` does
//! (`commands/test/test.go`). A request's rows
//! are keyed by its path joined to the test's directory (the CLI's full path; an absolute
//! path as written), and live only in the default run. A file that does not read as a
//! request of its kind aborts the test, as upstream.

use std::path::Path;

use kpol::engine::test_run::AuthzRequest;
use kpol::testfile::{LoadError, TestSpec};
use kpol::vpol::authz::AuthzMode;

/// Reads the test's authorization payloads.
pub fn load(dir: &Path, spec: &TestSpec) -> Result<Vec<AuthzRequest>, LoadError> {
    let mut out: Vec<AuthzRequest> = Vec::new();
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
            if out.iter().any(|r| r.path == full && r.mode == mode) {
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
            out.push(AuthzRequest {
                path: full,
                mode,
                object,
            });
        }
    }
    Ok(out)
}
