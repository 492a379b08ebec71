//! The exception step of a CEL policy's pipeline, the one every CEL evaluator that takes
//! `policies.kyverno.io` exceptions Kyverno's way runs (ValidatingPolicy, MutatingPolicy,
//! GeneratingPolicy; cel.md §3.3): after the match constraints, before `variables` and the
//! policy's matchConditions. A full exemption that matches is the policy's response (skip, or
//! pass with `reportResult: pass`); otherwise the partial ones widen `exceptions.allowedImages`
//! / `exceptions.allowedValues`, bound for the rest of the pipeline.

use super::{Outcome, PolicyException, Subject, apply, apply_every_cel};
use crate::cel::convert::{map_of, strings};
use crate::cel::{Activation, Program};
use crate::report::RuleResponse;
use crate::request::Request;
use crate::resource::Resource;

/// The CEL exceptions the step asks.
pub(crate) enum CelRefs<'a> {
    /// Those whose `policyRefs` name the policy (`kind` as written, e.g. `ValidatingPolicy`);
    /// with `ignore_failures` (`failurePolicy: Ignore`) one whose match conditions fail to
    /// evaluate does not match.
    Policy {
        kind: &'a str,
        name: &'a str,
        ignore_failures: bool,
    },
    /// Every one, whatever its `policyRefs` ([`apply_every_cel`]).
    Every,
}

/// What the step decided.
pub(crate) enum Decided {
    /// The policy goes on, with `exceptions` bound.
    GoOn,
    /// An exemption's response (rule `exception`, skip or pass).
    Respond(RuleResponse),
    /// A match condition of an exception could not be evaluated: the policy's error.
    Error(String),
}

/// Runs the exception step in `act` (the admission values bound, `variables` not yet);
/// when the policy goes on, `exceptions` is bound in `act`.
pub(crate) fn cel_step(
    act: &mut Activation,
    exceptions: &[PolicyException],
    refs: CelRefs<'_>,
    resource: &Resource,
    request: &Request,
) -> Decided {
    let outcome = {
        let probe = &*act;
        let mut eval = |p: &Program| probe.eval_bool(p);
        match refs {
            CelRefs::Policy {
                kind,
                name,
                ignore_failures,
            } => {
                let subject = Subject::Cel {
                    kind,
                    name,
                    ignore_failures,
                    eval: &mut eval,
                };
                apply(exceptions, subject, resource, request)
            }
            CelRefs::Every => apply_every_cel(exceptions, &mut eval),
        }
    };
    match outcome {
        Outcome::Respond(r) => Decided::Respond(r),
        Outcome::Error(e) => Decided::Error(e),
        Outcome::Evaluate {
            allowed_images,
            allowed_values,
        } => {
            act.set(
                "exceptions",
                map_of([
                    (
                        "allowedImages",
                        strings(allowed_images.iter().map(String::as_str)),
                    ),
                    (
                        "allowedValues",
                        strings(allowed_values.iter().map(String::as_str)),
                    ),
                ]),
            );
            Decided::GoOn
        }
    }
}
