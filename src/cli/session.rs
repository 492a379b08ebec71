//! A run's session, built once from the parsed arguments before a command does its work (as
//! ripgrep builds its high-level arguments once): the config file found and merged, the
//! inputs discovered with its excludes, the policies and exceptions loaded into the
//! [`Engine`], and the request. `kpol check`, `kpol mutate` and `kpol generate` take it, so
//! `.kpol.yaml` means the same to each of them (docs/CONFIG.md). `kpol test` takes none: its
//! test files name their own policies, resources and values.

use std::path::PathBuf;

use kpol::diagnostic::{Code, Diagnostic};
use kpol::engine::Engine;
use kpol::policy::Policy;
use kpol::request::Request;

use super::args::RequestArgs;
use super::config::Config;
use super::discover::{Exclude, Input, discover};
use super::policies;

/// Which policies a command runs when neither `-p` nor the config names any.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fallback {
    /// kpol's embedded default policies (`kpol check`).
    Embedded,
    /// None: the run stops with "nothing to apply" (exit 2). `kpol mutate` and
    /// `kpol generate` change or create resources, which a default set may not choose.
    Refuse,
    /// None: an empty set (`kpol policies --coverage`, whose test suites name their own
    /// policies).
    Empty,
}

/// What a command hands the session: its flags merged with the config.
pub struct Spec {
    pub command: &'static str,
    pub paths: Vec<PathBuf>,
    pub policies: Vec<PathBuf>,
    pub exceptions: Vec<PathBuf>,
    pub exclude: Vec<String>,
    /// `Some(dir)`: `exclude` came from the config in `dir`, relative to it.
    pub exclude_base: Option<PathBuf>,
    pub values: Option<PathBuf>,
    pub set: Vec<String>,
    pub userinfo: Option<PathBuf>,
    /// `--cluster-resources`: the files the virtual cluster is read from.
    pub cluster_resources: Vec<PathBuf>,
    pub max_bytes: u64,
    pub fallback: Fallback,
}

impl Spec {
    /// The session settings of `kpol mutate` and `kpol generate`: their flags over the
    /// config's `policies`, `exceptions`, `exclude` and `values`.
    #[allow(clippy::too_many_arguments)]
    pub fn from_flags(
        command: &'static str,
        config: Config,
        paths: Vec<PathBuf>,
        policies: Vec<PathBuf>,
        exceptions: Vec<PathBuf>,
        exclude: Vec<String>,
        request: RequestArgs,
        max_file_size: u64,
    ) -> Self {
        let or = |flag: Vec<PathBuf>, conf: Vec<PathBuf>| if flag.is_empty() { conf } else { flag };
        let from_config = exclude.is_empty() && !config.exclude.is_empty();
        Self {
            command,
            paths,
            policies: or(policies, config.policies),
            exceptions: or(exceptions, config.exceptions),
            exclude_base: from_config.then(|| config.base.clone()),
            exclude: if from_config { config.exclude } else { exclude },
            values: request.values_file.or(config.values),
            set: request.set,
            userinfo: request.userinfo,
            cluster_resources: request.cluster_resources,
            max_bytes: max_file_size.saturating_mul(1024 * 1024),
            fallback: Fallback::Refuse,
        }
    }
}

impl Spec {
    /// The session settings of a command that lists policies and reads no inputs (`kpol
    /// policies`): its `-p` flags over the config's `policies`.
    pub fn listing(
        command: &'static str,
        config: Config,
        policies: Vec<PathBuf>,
        fallback: Fallback,
    ) -> Self {
        Self {
            command,
            paths: Vec::new(),
            policies: if policies.is_empty() {
                config.policies
            } else {
                policies
            },
            exceptions: Vec::new(),
            exclude: Vec::new(),
            exclude_base: None,
            values: None,
            set: Vec::new(),
            userinfo: None,
            cluster_resources: Vec::new(),
            max_bytes: policies::DEFAULT_MAX_FILE_MIB * 1024 * 1024,
            fallback,
        }
    }
}

/// The policies of a command that lists them (`kpol policies`), loaded as [`Session::new`]
/// loads them, from the config lookup and [`Spec::listing`]; the set's diagnostics are the
/// loader's. Nothing is evaluated, so nothing about inputs or exceptions is checked. A problem
/// that stops the run is printed here; the error is then the exit code.
pub fn open_listing(spec: Result<Spec, Diagnostic>) -> Result<policies::PolicySet, u8> {
    let stop = |d: Diagnostic| {
        super::render::print_diagnostic_line(&d);
        super::exit::INCOMPLETE
    };
    let spec = spec.map_err(stop)?;
    refuse_empty(&spec).map_err(stop)?;
    Ok(load_policies(&spec))
}

/// A session opened for a command that applies every policy it is given (`kpol mutate`,
/// `kpol generate`): the request built, and the problems so far in one list.
pub struct Applying {
    pub inputs: Vec<Input>,
    /// Discovery problems, then policy problems, then the request's warnings.
    pub diagnostics: Vec<Diagnostic>,
    pub engine: Engine,
    pub request: Request,
    pub max_bytes: u64,
}

/// [`Session::new`] for `kpol mutate` and `kpol generate`, from the config lookup and their
/// flags merged by [`Spec::from_flags`]. `loaded` looks at the policies once they are loaded,
/// before the request is built. A problem that stops the run is printed here; the error is
/// then the exit code.
pub fn open_applying(
    spec: Result<Spec, Diagnostic>,
    loaded: impl FnOnce(&Engine),
) -> Result<Applying, u8> {
    let stop = |d: Diagnostic| {
        super::render::print_diagnostic_line(&d);
        super::exit::INCOMPLETE
    };
    let session = spec
        .and_then(|spec| Session::new(spec, |_, _| true))
        .map_err(stop)?;
    let mut diagnostics = session.discovery;
    diagnostics.extend(session.policy_diagnostics);
    loaded(&session.engine);
    let (request, warnings) = session.request.map_err(stop)?;
    for w in warnings {
        diagnostics.push(Diagnostic::warning(Code::InvalidTest, w, None));
    }
    Ok(Applying {
        inputs: session.inputs,
        diagnostics,
        engine: session.engine,
        request,
        max_bytes: session.max_bytes,
    })
}

/// Everything a command needs before it reads its first input.
pub struct Session {
    pub max_bytes: u64,
    /// How many policies were loaded, before `select` left any out.
    pub loaded: usize,
    pub inputs: Vec<Input>,
    /// Problems finding the inputs.
    pub discovery: Vec<Diagnostic>,
    /// Problems loading the policies and exceptions, then the notes of `select`.
    pub policy_diagnostics: Vec<Diagnostic>,
    pub engine: Engine,
    /// The request with the warnings reading its files gave, or why it could not be built.
    pub request: Result<(Request, Vec<String>), Diagnostic>,
}

impl Session {
    /// Builds the session; `select` keeps the policies the command evaluates (pushing a note
    /// for each one left out). An invalid exclude glob, or no policies where the command has
    /// no fallback, is an error: the run stops there (exit 2).
    pub fn new(
        spec: Spec,
        select: impl FnMut(&Policy, &mut Vec<Diagnostic>) -> bool,
    ) -> Result<Self, Diagnostic> {
        let mut select = select;
        let exclude = exclude(&spec)?;
        refuse_empty(&spec)?;
        let (inputs, discovery) = discover(&spec.paths, &exclude);
        let mut set = load_policies(&spec);
        let mut policy_diagnostics = set.diagnostics;
        unknown_policies(&set.policies, &set.exceptions, &mut policy_diagnostics);
        super::known_kinds::check(
            &set.policies,
            &set.exception_kinds,
            &inputs,
            spec.max_bytes,
            &mut policy_diagnostics,
        );
        let loaded = set.policies.len();
        set.policies.retain(|p| select(p, &mut policy_diagnostics));
        let engine = Engine::new(set.policies).with_exceptions(set.exceptions);
        // The other objects of the policy files are the params bindings and `validate.cel`
        // rules look up (docs/KINDS.md).
        let params = std::sync::Arc::new(set.params);
        let request = super::check::build_request(
            spec.values.as_deref(),
            &spec.set,
            spec.userinfo.as_deref(),
            &spec.cluster_resources,
        )
        .map(|(mut r, w)| {
            r.params = params;
            (r, w)
        });
        Ok(Self {
            max_bytes: spec.max_bytes,
            loaded,
            inputs,
            discovery,
            policy_diagnostics,
            engine,
            request,
        })
    }
}

/// No policies where the command has no fallback: the run stops (exit 2).
fn refuse_empty(spec: &Spec) -> Result<(), Diagnostic> {
    if spec.policies.is_empty() && spec.fallback == Fallback::Refuse {
        return Err(nothing_to_apply(spec.command));
    }
    Ok(())
}

/// The policies and exceptions of `spec`: its files, else its fallback (nothing at all for
/// [`Fallback::Empty`]).
fn load_policies(spec: &Spec) -> policies::PolicySet {
    if spec.policies.is_empty() && spec.fallback == Fallback::Empty {
        return policies::PolicySet::default();
    }
    policies::load(&spec.policies, &spec.exceptions, spec.max_bytes)
}

/// The exclude matcher of `spec`: flag globs as paths are found, config globs relative to
/// the config file's directory.
pub fn exclude(spec: &Spec) -> Result<Exclude, Diagnostic> {
    match &spec.exclude_base {
        Some(base) => Exclude::rooted(&spec.exclude, base),
        None => Exclude::typed(&spec.exclude),
    }
}

/// A warning for each PolicyException entry that can never apply: its `policyName` names no
/// loaded policy, or none of its `ruleNames` matches a rule of that policy (autogen rules
/// included). Most likely a typo or a stale name.
fn unknown_policies(
    policies: &[Policy],
    exceptions: &[kpol::exception::PolicyException],
    out: &mut Vec<Diagnostic>,
) {
    let by_key: std::collections::HashMap<String, &Policy> =
        policies.iter().map(|p| (p.key(), p)).collect();
    for e in exceptions {
        for (i, (name, rules)) in e.entries.iter().enumerate() {
            let why = match by_key.get(name) {
                None => format!("policyName {name} names no loaded policy"),
                Some(policy) => match rule_names(policy) {
                    Some(known)
                        if !rules
                            .iter()
                            .any(|r| known.iter().any(|k| kpol::wildcard_matches(r, k))) =>
                    {
                        format!(
                            "no rule of policy {name} matches ruleNames [{}]",
                            rules.join(", ")
                        )
                    }
                    _ => continue,
                },
            };
            out.push(Diagnostic::warning(
                Code::InvalidPolicy,
                format!(
                    "PolicyException {}: {why}; the exception never applies",
                    e.qualified_name()
                ),
                e.entry_locations.get(i).cloned(),
            ));
        }
    }
}

/// The rule names of a classic policy: as written, autogen ones for the whole controller set
/// and for each controller kind. `None` for a policy without rules (the CEL kinds).
fn rule_names(policy: &Policy) -> Option<Vec<String>> {
    let set = policy.rule_set()?;
    let mut names: Vec<String> = set.rules.iter().map(|r| r.name.clone()).collect();
    for entry in &set.autogen.by_kind {
        names.extend(
            policy
                .validate_rules(&entry.kind)
                .iter()
                .map(|r| r.name.clone()),
        );
    }
    Some(names)
}

/// The error of `kpol mutate`/`kpol generate` without any policy.
fn nothing_to_apply(command: &str) -> Diagnostic {
    Diagnostic::error(
        Code::Io,
        format!(
            "nothing to apply: kpol {command} needs policies (-p PATH, or `policies` in \
             .kpol.yaml); kpol's embedded policies are used by kpol check only"
        ),
        None,
    )
}
