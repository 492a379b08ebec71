//! The workspace a server serves: the `.kpol.yaml` found from its root (as `kpol check` finds
//! it from the working directory), the policies and exceptions it names (kpol's embedded
//! defaults without any) loaded and compiled once into an [`Engine`], its excludes and the
//! request. Built again when a policy file, an exception file or the config changes.

use std::path::{Path, PathBuf};

use kpol::diagnostic::{Diagnostic, Severity};
use kpol::engine::Engine;
use kpol::request::Request;

use super::super::config;
use super::super::discover::Exclude;
use super::super::session::{Fallback, Session, Spec};

/// What every analysis of the workspace shares (read-only; the worker holds it in an `Arc`).
pub struct Workspace {
    /// The config file in use.
    pub config_file: Option<PathBuf>,
    /// The config's `policies` (empty: the embedded defaults are in use).
    pub policy_paths: Vec<PathBuf>,
    /// The config's `exceptions`.
    pub exception_paths: Vec<PathBuf>,
    pub engine: Engine,
    pub request: Request,
    exclude: Exclude,
    /// Errors and warnings of loading the config, the policies and the request: shown once as
    /// a message, and each in the policy file it is about when that file is open.
    pub problems: Vec<Diagnostic>,
}

impl Workspace {
    /// Loads the workspace rooted at `root` (the current directory without one).
    pub fn load(root: Option<PathBuf>) -> Self {
        let start = root.clone().unwrap_or_else(|| PathBuf::from("."));
        let config_file = config::find(&start);
        let mut problems = Vec::new();
        let config = match &config_file {
            Some(p) => config::load(p).unwrap_or_else(|d| {
                problems.push(d);
                config::Config::default()
            }),
            None => config::Config::default(),
        };
        let policy_paths = config.policies.clone();
        let exception_paths = config.exceptions.clone();
        let spec = Spec {
            command: "lsp",
            paths: Vec::new(),
            policies: config.policies,
            exceptions: config.exceptions,
            exclude_base: Some(config.base.clone()),
            exclude: config.exclude,
            values: config.values,
            set: Vec::new(),
            userinfo: None,
            cluster_resources: Vec::new(),
            max_bytes: super::super::policies::DEFAULT_MAX_FILE_MIB * 1024 * 1024,
            fallback: Fallback::Embedded,
        };
        let exclude = super::super::session::exclude(&spec).unwrap_or_else(|d| {
            problems.push(d);
            Exclude::none()
        });
        // `kpol check`'s selection: a policy with `spec.admission: false` is left out.
        let session = Session::new(spec, |p, notes| super::super::check::runs(p, false, notes));
        let (engine, request) = match session {
            Ok(s) => {
                problems.extend(s.policy_diagnostics);
                let request = match s.request {
                    Ok((r, _warnings)) => r,
                    Err(d) => {
                        problems.push(d);
                        Request::default()
                    }
                };
                (s.engine, request)
            }
            Err(d) => {
                problems.push(d);
                (Engine::new(Vec::new()), Request::default())
            }
        };
        problems.retain(|d| d.severity != Severity::Info);
        Self {
            config_file,
            policy_paths,
            exception_paths,
            engine,
            request,
            exclude,
            problems,
        }
    }

    /// Whether the config's excludes leave `path` out (no diagnostics for it).
    pub fn excludes(&self, path: &Path) -> bool {
        self.exclude.excludes(path)
    }

    /// Whether a change to `path` changes what the server loaded: the config file, or a file
    /// at or below one of its `policies` or `exceptions` paths.
    pub fn is_input(&self, path: &Path) -> bool {
        let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let path = real(path);
        let named = |p: &PathBuf| path.starts_with(real(p));
        self.config_file.iter().any(named)
            || self.policy_paths.iter().any(named)
            || self.exception_paths.iter().any(named)
            || path.file_name().is_some_and(|n| n == config::FILE_NAME)
    }

    /// Whether the embedded default policies are in use (no `policies` in the config).
    pub fn embedded(&self) -> bool {
        self.policy_paths.is_empty()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// The config found from the workspace root decides the policies and the excludes, as for
    /// `kpol check`; a policy file named there, or the config itself, is an input to reload on.
    #[test]
    fn the_config_of_the_root_is_used() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::write(
            root.join(".kpol.yaml"),
            "version: 1\npolicies:\n  - limits.yaml\nexclude:\n  - vendor/**\n",
        )
        .unwrap();
        let policy = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/policies/require-resource-limits.yaml"
        );
        std::fs::copy(policy, root.join("limits.yaml")).unwrap();
        let ws = Workspace::load(Some(root.clone()));
        assert!(!ws.embedded());
        let names: Vec<&str> = ws
            .engine
            .policies()
            .iter()
            .map(|p| p.name.as_str())
            .collect();
        assert_eq!(names, vec!["require-resource-limits"]);
        assert!(ws.problems.is_empty(), "{:?}", ws.problems);
        assert!(ws.excludes(&root.join("vendor/x/a.yaml")));
        assert!(!ws.excludes(&root.join("apps/a.yaml")));
        assert!(ws.is_input(&root.join("limits.yaml")));
        assert!(ws.is_input(&root.join(".kpol.yaml")));
        assert!(!ws.is_input(&root.join("apps/a.yaml")));
        // An excluded document gets no diagnostics.
        let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\nspec:\n  containers:\n    - name: c\n      image: nginx\n";
        let excluded = root.join("vendor/x/a.yaml");
        let a = super::super::analysis::analyze(&ws, Some(&excluded), "a.yaml", pod);
        assert!(a.diagnostics.is_empty());
        let kept = root.join("apps/a.yaml");
        let a = super::super::analysis::analyze(&ws, Some(&kept), "a.yaml", pod);
        assert_eq!(a.diagnostics.len(), 1);
    }
}
