//! A validate check compiled once at load, for the engine to run per resource: what `pattern`
//! / `anyPattern` hold and their walk plans, the `foreach` entries, the `podSecurity` body
//! read. `policy` keeps it in [`Validate::compiled`] without looking inside
//! (`crate::policy::RuleCompiler::check`, registered in `crate::kinds::RULES`).

use std::borrow::Cow;
use std::sync::Arc;

use crate::policy::{CompiledCheck, Validate, ValidateCheck};

use super::{ForeachEntry, PatternScan};

/// The compiled form of one validate check (empty parts for the forms that have none).
#[derive(Clone, Debug, Default)]
pub(crate) struct Compiled {
    /// `pattern` / `anyPattern`: their variables, references and walk plans.
    pub patterns: PatternScan,
    /// `foreach`: the entries as the engine runs them.
    pub foreach: Vec<ForeachEntry>,
    /// `podSecurity`: the body as read for evaluation.
    pub pod_security: Option<Box<crate::pss::Body>>,
}

impl CompiledCheck for Compiled {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

fn of(check: &ValidateCheck) -> Compiled {
    let mut out = Compiled::default();
    match check {
        ValidateCheck::Pattern(p) => out.patterns = PatternScan::of(std::slice::from_ref(p)),
        ValidateCheck::AnyPattern(ps) => out.patterns = PatternScan::of(ps),
        ValidateCheck::Foreach(f) => out.foreach = super::compile_foreach(f),
        ValidateCheck::PodSecurity(n) => {
            out.pod_security = Some(Box::new(crate::pss::Body::read(n)))
        }
        ValidateCheck::Deny(_) | ValidateCheck::Cel(_) | ValidateCheck::Manifests(_) => {}
    }
    out
}

/// Compiles a check at load.
pub fn compile(check: &ValidateCheck) -> Arc<dyn CompiledCheck> {
    Arc::new(of(check))
}

/// The rule's compiled check; compiled here when the rule was built by another compiler.
pub(crate) fn compiled(v: &Validate) -> Cow<'_, Compiled> {
    match v.compiled.as_any().downcast_ref::<Compiled>() {
        Some(c) => Cow::Borrowed(c),
        None => Cow::Owned(of(&v.check)),
    }
}
