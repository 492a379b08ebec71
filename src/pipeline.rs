//! The rule pipeline of the ClusterPolicy / Policy rule kinds (validate, mutate, generate),
//! written once (#21): selection (match/exclude) → context → preconditions → exceptions, then
//! the kind's body, then the response. Each kind keeps only its body; where Kyverno's handlers
//! of the kinds differ, the difference is a field of [`How`] (named after what Kyverno does).
//!
//! The namespaced-policy scope ([`Policy::in_scope`]) is asked once per policy, before its
//! rules, by the engine's entry (`Engine::reaching`) or, for the mutate rules, by their own
//! loop over the policies; `applyRules: One` through [`How::stops`].

use crate::conditions::evaluate_block;
use crate::exception::{self, PolicyException};
use crate::policy::{Policy, Rule};
use crate::report::{RuleResponse, RuleType, Status};
use crate::request::Request;
use crate::resource::Resource;
use crate::validate::{self, Verdict};
use crate::variables::Context;
use crate::yaml::Node;

/// One rule of one policy, to be evaluated against one resource.
pub(crate) struct Subject<'a, 'r> {
    pub policy: &'a Policy,
    pub rule: &'a Rule,
    pub resource: &'r Resource,
    pub request: &'a Request,
    pub exceptions: &'a [PolicyException],
}

/// How one kind's rules go through the shared steps.
pub(crate) struct How<'f> {
    /// The rule type every response of the kind carries.
    pub rule_type: RuleType,
    /// Where the kind looks up its PolicyExceptions.
    pub exceptions: Exceptions<'f>,
    /// What a rule whose context fails to load gives.
    pub context_error: ContextError,
    /// How the rule's preconditions answer.
    pub preconditions: Preconditions,
    /// Which responses stop a policy with `applyRules: One` (match.md §3.4).
    pub one_stops_at: OneStopsAt,
}

/// Where a kind looks its PolicyExceptions up.
pub(crate) enum Exceptions<'f> {
    /// After the preconditions, with the rule's context for the exceptions' conditions (one
    /// is built for them when the rule has none): Kyverno's engine handlers for validate and
    /// mutate rules (match.md §3, exceptions.md §5, §6.2).
    AfterPreconditions,
    /// Before the rule's own match, by the kind's own lookup (`Some`: the skip response):
    /// Kyverno's background controller for generate rules (`filterRule`, which reads the
    /// trigger's Namespace from the cluster).
    BeforeMatch(&'f dyn Fn() -> Option<RuleResponse>),
    /// By the kind's own early answer at [`Stage::Selected`]: `verifyImages` rules, which
    /// kpol reports unsupported when an exception covers them (crate::verify_images).
    Early,
}

/// What a rule whose context fails to load gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ContextError {
    /// The load error's verdict (`failed to load context: …`, an error): Kyverno's engine.
    Respond,
    /// No response: the background controller drops the rule (generate).
    Silent,
}

/// How a rule's preconditions answer when they do not hold or fail to evaluate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Preconditions {
    /// `preconditions not met[; <message>]` (skip), `failed to evaluate preconditions: <e>`
    /// (error): Kyverno's engine (validate, mutate).
    Engine,
    /// A skip without a message, `failed to evaluate conditions: <e>` (error): the background
    /// check the Kyverno CLI runs for generate rules.
    Background,
}

/// Which rule responses stop a policy with `applyRules: One`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OneStopsAt {
    /// A pass or a fail (validate).
    PassOrFail,
    /// A pass: the rule patched the resource (mutate).
    Pass,
    /// Anything but a skip (generate).
    NotSkip,
}

impl How<'_> {
    /// Whether a policy with `applyRules: One` stops after a rule that gave `statuses`.
    pub(crate) fn stops(
        &self,
        policy: &Policy,
        mut statuses: impl Iterator<Item = Status>,
    ) -> bool {
        policy.apply_one()
            && statuses.any(|s| match self.one_stops_at {
                OneStopsAt::PassOrFail => matches!(s, Status::Pass | Status::Fail),
                OneStopsAt::Pass => s == Status::Pass,
                OneStopsAt::NotSkip => s != Status::Skip,
            })
    }

    /// The response of a rule of this kind from a verdict (a body's, or one of the shared
    /// steps'): its status, message and where it points.
    pub(crate) fn respond(&self, rule: &Rule, verdict: Verdict) -> RuleResponse {
        let mut r = RuleResponse::new(&rule.name, verdict.status, verdict.message);
        r.rule_type = self.rule_type;
        r.path = verdict.path;
        r.span = verdict.span;
        r
    }
}

/// The stages of the shared steps at which a kind may answer first ([`gate`]'s `early`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stage {
    /// The rule selects the resource; its context is not loaded yet.
    Selected,
    /// The rule's context is loaded (or not needed); its preconditions come next.
    ContextLoaded,
}

/// A kind's own answer at a [`Stage`], ending the rule there.
pub(crate) enum Early {
    /// The rule gives no response.
    Silent,
    /// The rule gives this response.
    Respond(RuleResponse),
}

/// Where a rule stands once the shared steps before its body are done.
pub(crate) enum Gate<C> {
    /// The rule gives no response (it does not select the resource, or the kind gives none).
    Silent,
    /// The rule ends with this response (an exception, a precondition, a context error, or
    /// the kind's early answer).
    Respond(RuleResponse),
    /// The body runs, with the rule's context (`None`: the rule reads none).
    Body(Option<C>),
}

/// A rule's variable context as the kind holds it: its own, or one lent by the resource's
/// shared contexts (validate, [`validate::Contexts`]).
pub(crate) trait RuleContext<'r> {
    fn context(&mut self) -> &mut Context<'r>;
}

impl<'r> RuleContext<'r> for Context<'r> {
    fn context(&mut self) -> &mut Context<'r> {
        self
    }
}

impl<'r> RuleContext<'r> for &mut Context<'r> {
    fn context(&mut self) -> &mut Context<'r> {
        self
    }
}

/// The shared steps before a rule's body, in order: exceptions (when the kind looks them up
/// before the match), selection (skipped when `selected`: the caller knows the rule selects
/// every resource of the kind), the kind's early answer at [`Stage::Selected`], the context
/// (`context` loads it, `None` when the rule reads none), the early answer at
/// [`Stage::ContextLoaded`], the preconditions, then the exceptions (when the kind looks them
/// up after the preconditions).
pub(crate) fn gate<'r, C: RuleContext<'r>>(
    s: &Subject<'_, 'r>,
    how: &How<'_>,
    selected: bool,
    mut early: impl FnMut(Stage) -> Option<Early>,
    context: impl FnOnce() -> Option<Result<C, Verdict>>,
) -> Gate<C> {
    let rule = s.rule;
    if let Exceptions::BeforeMatch(lookup) = &how.exceptions
        && let Some(r) = lookup()
    {
        return Gate::Respond(r);
    }
    if !selected && !rule.matches(s.resource, s.request) {
        return Gate::Silent;
    }
    let answer = |e: Early| match e {
        Early::Silent => Gate::Silent,
        Early::Respond(r) => Gate::Respond(r),
    };
    if let Some(e) = early(Stage::Selected) {
        return answer(e);
    }
    let mut ctx = match context() {
        None => None,
        Some(Ok(c)) => Some(c),
        Some(Err(verdict)) => {
            return match how.context_error {
                ContextError::Respond => Gate::Respond(how.respond(rule, verdict)),
                ContextError::Silent => Gate::Silent,
            };
        }
    };
    if let Some(e) = early(Stage::ContextLoaded) {
        return answer(e);
    }
    if let Some(c) = ctx.as_mut()
        && let Some(verdict) = preconditions(how.preconditions, rule, c.context())
    {
        return Gate::Respond(how.respond(rule, verdict));
    }
    if let Exceptions::AfterPreconditions = how.exceptions {
        // The exceptions' conditions see the rule's context (exceptions.md §5); a rule that
        // reads none gets one built for them.
        let mut own = None;
        let mut holds = |conds: &Node| -> bool {
            let c = match ctx.as_mut() {
                Some(c) => Some(c.context()),
                None => {
                    if own.is_none() {
                        own = validate::rule_context(s.policy, rule, s.resource, s.request).ok();
                    }
                    own.as_mut()
                }
            };
            c.is_some_and(|c| evaluate_block(conds, c).is_ok_and(|r| r.holds))
        };
        if let Some(mut r) = exception::response(
            s.exceptions,
            s.policy,
            rule,
            s.resource,
            s.request,
            &mut holds,
        ) {
            r.rule_type = how.rule_type;
            return Gate::Respond(r);
        }
    }
    Gate::Body(ctx)
}

/// The rule's preconditions (validate.md §9): `None` to go on, or the skip / error verdict.
fn preconditions(style: Preconditions, rule: &Rule, ctx: &mut Context) -> Option<Verdict> {
    match style {
        Preconditions::Engine => validate::preconditions(rule, ctx),
        Preconditions::Background => {
            let pre = rule.preconditions.as_ref()?;
            match evaluate_block(pre, ctx) {
                Err(e) => Some(Verdict::new(
                    Status::Error,
                    format!("failed to evaluate conditions: {e}"),
                )),
                Ok(r) if r.holds => None,
                Ok(_) => Some(Verdict::new(Status::Skip, String::new())),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{load, resource};

    const POLICY: &str = "\
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata: {name: p}
spec:
  applyRules: One
  rules:
  - name: r
    match: {any: [{resources: {kinds: [ConfigMap]}}]}
    preconditions:
      all:
      - {key: '{{ request.object.data.a }}', operator: Equals, value: 'yes'}
    validate: {pattern: {data: {a: '?*'}}}
";

    fn how(exceptions: Exceptions<'_>, preconditions: Preconditions) -> How<'_> {
        How {
            rule_type: RuleType::Mutation,
            exceptions,
            context_error: ContextError::Respond,
            preconditions,
            one_stops_at: OneStopsAt::Pass,
        }
    }

    /// The gate's answer for a resource of `kind` with `data.a` = `a`: no response, a
    /// response, or `Err` when the body runs.
    fn gated(how: &How<'_>, kind: &str, a: &str) -> Result<Option<RuleResponse>, ()> {
        let policy = load(POLICY).policies.remove(0);
        let r = resource(&format!(
            "apiVersion: v1\nkind: {kind}\nmetadata: {{name: c}}\ndata: {{a: '{a}'}}\n"
        ));
        let request = Request::default();
        let s = Subject {
            policy: &policy,
            rule: &policy.rules()[0],
            resource: &r,
            request: &request,
            exceptions: &[],
        };
        let context = || {
            Some(validate::rule_context(
                s.policy, s.rule, s.resource, s.request,
            ))
        };
        match gate(&s, how, false, |_| None, context) {
            Gate::Silent => Ok(None),
            Gate::Respond(r) => Ok(Some(r)),
            // The body's turn: `Err`, after checking it gets the rule's context.
            Gate::Body(ctx) => {
                assert!(ctx.is_some(), "the rule reads a context");
                Err(())
            }
        }
    }

    /// A rule that does not select the resource gives nothing, unless the kind looks its
    /// exceptions up before the match; preconditions answer in the kind's words, with its
    /// rule type; a rule whose preconditions hold reaches its body with its context.
    #[test]
    fn gate_orders_the_steps_and_keeps_the_kinds_differences() {
        let engine = how(Exceptions::AfterPreconditions, Preconditions::Engine);
        assert_eq!(gated(&engine, "Secret", "yes"), Ok(None));
        let skip = || Some(RuleResponse::new("r", Status::Skip, "excepted"));
        let before = how(Exceptions::BeforeMatch(&skip), Preconditions::Background);
        let r = gated(&before, "Secret", "yes").unwrap().unwrap();
        assert_eq!((r.status, r.message.as_str()), (Status::Skip, "excepted"));

        let r = gated(&engine, "ConfigMap", "no").unwrap().unwrap();
        assert_eq!((r.status, r.rule_type), (Status::Skip, RuleType::Mutation));
        assert_eq!(r.message, "preconditions not met");
        let none = || None;
        let background = how(Exceptions::BeforeMatch(&none), Preconditions::Background);
        let r = gated(&background, "ConfigMap", "no").unwrap().unwrap();
        assert_eq!((r.status, r.message.as_str()), (Status::Skip, ""));

        // The body runs with the rule's context.
        assert_eq!(gated(&engine, "ConfigMap", "yes"), Err(()));
    }

    #[test]
    fn apply_one_stops_where_the_kind_says() {
        let policy = load(POLICY).policies.remove(0);
        let mut h = how(Exceptions::AfterPreconditions, Preconditions::Engine);
        let stops = |h: &How<'_>, s: Status| h.stops(&policy, std::iter::once(s));
        assert!(stops(&h, Status::Pass) && !stops(&h, Status::Fail));
        h.one_stops_at = OneStopsAt::PassOrFail;
        assert!(stops(&h, Status::Fail) && !stops(&h, Status::Error));
        h.one_stops_at = OneStopsAt::NotSkip;
        assert!(stops(&h, Status::Error) && !stops(&h, Status::Skip));
    }
}
