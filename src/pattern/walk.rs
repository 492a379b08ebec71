//! The pattern walk: a resource tree against a pattern tree (validate.md §3–4,
//! `kyverno/kyverno:pkg/engine/validate/validate.go`, `pkg/engine/anchor/handlers.go`).
//!
//! Errors keep upstream's three Go error types because the walk branches on them: direct
//! anchor errors (`validateAnchorError`), aggregated skips (`*PatternError`) and plain
//! `fmt.Errorf` errors. Like upstream, "is this a skip / a negation" is decided by type for
//! anchor errors and by the message text for the others (`anchor/error.go` `isError`).

use std::rc::Rc;

use super::anchor::{Anchor, AnchorKind, Registry};
use super::messages::{go_sprint, go_type_name};
use super::path::PathNode;
use super::plan::{MapPlan, Plan};
use super::scalar::scalar_match;
use super::wildcards::{Expansions, expand_in_metadata};
use crate::yaml::{Map, Node, Value};

const CONDITIONAL_MSG: &str = "conditional anchor mismatch";
const GLOBAL_MSG: &str = "global anchor mismatch";
const NEGATION_MSG: &str = "negation anchor matched in resource";

static NULL: Value = Value::Null;

/// The Go type of an error raised in the walk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ErrKind {
    /// `validateAnchorError` from a conditional anchor.
    Conditional,
    /// `validateAnchorError` from a global anchor.
    Global,
    /// `validateAnchorError` from a negation anchor.
    Negation,
    /// `*PatternError` wrapping skips of a map or array.
    Aggregated,
    /// Any other error.
    Plain,
}

/// A non-Ok walk result: Go's `(path, error)` pair.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Failure {
    /// The failing path as segments; `None` for Go's empty path (and, as an optimisation,
    /// for failures whose path upstream discards: skips and everything under a condition).
    pub path: Option<Vec<String>>,
    pub kind: ErrKind,
    pub message: String,
}

impl Failure {
    /// `skip()` in validate.go: conditional or global anchor error.
    pub(crate) fn is_skip(&self) -> bool {
        match self.kind {
            ErrKind::Conditional | ErrKind::Global => true,
            ErrKind::Negation => false,
            ErrKind::Aggregated | ErrKind::Plain => {
                self.message.contains(CONDITIONAL_MSG) || self.message.contains(GLOBAL_MSG)
            }
        }
    }

    /// `fail()` in validate.go: negation anchor error.
    pub(crate) fn is_negation(&self) -> bool {
        match self.kind {
            ErrKind::Negation => true,
            ErrKind::Conditional | ErrKind::Global => false,
            ErrKind::Aggregated | ErrKind::Plain => self.message.contains(NEGATION_MSG),
        }
    }

    /// A skip that is not a `*PatternError` suppresses sibling anchor failures (§3.3 step 3).
    fn is_direct(&self) -> bool {
        self.kind != ErrKind::Aggregated
    }
}

type Walk = Result<(), Failure>;

/// State of one `MatchPattern` call.
#[derive(Default)]
pub(crate) struct Walker {
    pub(crate) registry: Registry,
    expansions: Expansions,
    /// Nesting depth inside conditional/global anchor values, where failure paths are never
    /// reported (the anchor turns every failure into a skip), so they are not built.
    conditional_depth: usize,
}

impl Walker {
    fn fail(&self, path: &PathNode<'_>, kind: ErrKind, message: String) -> Failure {
        let path = (self.conditional_depth == 0).then(|| path.segments());
        Failure {
            path,
            kind,
            message,
        }
    }

    /// `validateResourceElement`; `plan` is `pattern`'s, when it was planned at load.
    pub(crate) fn element(
        &mut self,
        resource: &Value,
        pattern: &Value,
        plan: Option<&Plan>,
        path: &PathNode<'_>,
    ) -> Walk {
        match pattern {
            Value::Map(pm) => {
                let Value::Map(rm) = resource else {
                    let msg = format!(
                        "pattern and resource have different structures. Path: {}. Expected {}, found {}",
                        path.render(),
                        go_type_name(pattern),
                        go_type_name(resource)
                    );
                    return Err(self.fail(path, ErrKind::Plain, msg));
                };
                let plan = match plan {
                    Some(Plan::Map(p)) => Some(p),
                    _ => None,
                };
                self.map(rm, pm, plan, path)
            }
            Value::Seq(pa) => {
                let Value::Seq(ra) = resource else {
                    let msg = format!(
                        "validation rule failed at path {}, resource does not satisfy the expected overlay pattern",
                        path.render()
                    );
                    return Err(self.fail(path, ErrKind::Plain, msg));
                };
                self.array(resource, ra, pa, plan.and_then(Plan::items), path)
            }
            _ => {
                if scalar_ok(resource, pattern, plan) {
                    return Ok(());
                }
                let msg = format!(
                    "resource value '{}' does not match '{}' at path {}",
                    go_sprint(resource),
                    go_sprint(pattern),
                    path.render()
                );
                Err(self.fail(path, ErrKind::Plain, msg))
            }
        }
    }

    /// `validateMap`.
    fn map(&mut self, rm: &Map, pm: &Map, plan: Option<&MapPlan>, path: &PathNode<'_>) -> Walk {
        let entries = pm.entries();
        // A map without a plan from load is planned here, without its values (they are
        // planned as the walk meets them).
        let unplanned;
        let plan = match plan {
            Some(p) => p,
            None => {
                unplanned = MapPlan::new(pm, |i| &entries[i].value.value, false);
                &unplanned
            }
        };
        let expanded: Option<(usize, Rc<Value>)> =
            expand_in_metadata(pm, plan.metadata, rm, &mut self.expansions);
        let value = |i: usize| -> &Value {
            match &expanded {
                Some((idx, v)) if *idx == i => v,
                _ => &entries[i].value.value,
            }
        };
        // A map whose metadata the expansion replaced is planned again with it (the order of
        // its keys depends on the anchors the new value holds).
        let replanned;
        let plan = match expanded {
            Some(_) => {
                replanned = MapPlan::new(pm, value, false);
                &replanned
            }
            None => plan,
        };
        // Conditional and existence keys are recorded as they are met (`CheckAnchorInResource`).
        for step in plan.recorded() {
            let key = &entries[step.entry].key;
            if let Some(a) = step.anchor(key) {
                self.registry.record(key, rm.contains_key(a.key));
            }
        }

        // Phase 1: anchors in byte order: conditions, equality, negation, existence.
        let mut skips: Vec<Failure> = Vec::new();
        let mut applied = 0usize;
        for step in plan.phase_one() {
            let (i, key) = (step.entry, &entries[step.entry].key);
            match self.handle(key, step.anchor(key), value(i), step.child(), rm, path) {
                Ok(()) => applied += 1,
                Err(f) if f.is_skip() => skips.push(f),
                Err(f) => {
                    if !skips.iter().any(Failure::is_direct) {
                        return Err(f);
                    }
                }
            }
        }
        if !skips.is_empty() && (applied == 0 || skips.iter().any(Failure::is_direct)) {
            return Err(aggregate(&skips));
        }

        // Phase 2: global anchors and keys holding anchors, then the rest; the first non-Ok
        // result wins.
        for step in plan.phase_two() {
            let (i, key) = (step.entry, &entries[step.entry].key);
            self.handle(key, step.anchor(key), value(i), step.child(), rm, path)?;
        }
        Ok(())
    }

    /// `CreateElementHandler(key, pattern, path).Handle(...)`; `anchor` is `key` parsed.
    fn handle(
        &mut self,
        key: &str,
        anchor: Option<Anchor<'_>>,
        pattern: &Value,
        plan: Option<&Plan>,
        rm: &Map,
        path: &PathNode<'_>,
    ) -> Walk {
        let Some(anchor) = anchor.filter(|a| a.kind != AnchorKind::AddIfNotPresent) else {
            return self.plain_key(key, pattern, plan, rm, path);
        };
        let child = path.key(anchor.key);
        let present = rm.get(anchor.key);
        match anchor.kind {
            AnchorKind::Condition | AnchorKind::Global => {
                let (kind, prefix) = if anchor.kind == AnchorKind::Condition {
                    (ErrKind::Conditional, CONDITIONAL_MSG)
                } else {
                    (ErrKind::Global, GLOBAL_MSG)
                };
                let Some(value) = present else {
                    if anchor.kind == AnchorKind::Global {
                        return Ok(());
                    }
                    return Err(Failure {
                        path: None,
                        kind,
                        message: format!(
                            "{prefix}: conditional anchor key doesn't exist in the resource"
                        ),
                    });
                };
                self.conditional_depth += 1;
                let result = self.element(&value.value, pattern, plan, &child);
                self.conditional_depth -= 1;
                result.map_err(|f| Failure {
                    path: None,
                    kind,
                    message: format!("{prefix}: {}", f.message),
                })
            }
            AnchorKind::Equality => match present {
                Some(value) => self.element(&value.value, pattern, plan, &child),
                None => Ok(()),
            },
            AnchorKind::Negation => match present {
                Some(_) => {
                    let msg = format!("{NEGATION_MSG}: {} is not allowed", child.render());
                    Err(self.fail(&child, ErrKind::Negation, msg))
                }
                None => Ok(()),
            },
            AnchorKind::Existence => match present {
                Some(value) => self.existence(&value.value, pattern, plan, &child),
                None => Ok(()),
            },
            AnchorKind::AddIfNotPresent => self.plain_key(key, pattern, plan, rm, path),
        }
    }

    /// `defaultHandler`: a plain key; `"*"` only requires a present, non-null value.
    fn plain_key(
        &mut self,
        key: &str,
        pattern: &Value,
        plan: Option<&Plan>,
        rm: &Map,
        path: &PathNode<'_>,
    ) -> Walk {
        let value = rm.get(key).map_or(&NULL, |n| &n.value);
        if matches!(pattern, Value::Str(s) if s == "*") {
            if *value != Value::Null {
                return Ok(());
            }
            // Upstream reports the parent map's path (and prints a double slash).
            let msg = format!("{}/{key} not found", path.render());
            return Err(self.fail(path, ErrKind::Plain, msg));
        }
        self.element(value, pattern, plan, &path.key(key))
    }

    /// `existenceHandler`: each pattern map needs one matching resource element.
    fn existence(
        &mut self,
        resource: &Value,
        pattern: &Value,
        plan: Option<&Plan>,
        path: &PathNode<'_>,
    ) -> Walk {
        let Value::Seq(items) = resource else {
            let msg = format!(
                "invalid resource type {}: Existence ^ () anchor can be used only on list/array type resource",
                go_type_name(resource)
            );
            return Err(self.fail(path, ErrKind::Plain, msg));
        };
        let Value::Seq(patterns) = pattern else {
            let msg = format!(
                "invalid pattern type {}: Pattern has to be of list to compare against resource",
                go_type_name(pattern)
            );
            return Err(self.fail(path, ErrKind::Plain, msg));
        };
        let plans = plan.and_then(Plan::items);
        for (j, p) in patterns.iter().enumerate() {
            if !matches!(p.value, Value::Map(_)) {
                let msg = format!(
                    "invalid pattern type {}: Pattern has to be of type map to compare against items in resource",
                    go_type_name(pattern)
                );
                return Err(self.fail(path, ErrKind::Plain, msg));
            }
            let mut found = false;
            for (i, item) in items.iter().enumerate() {
                let plan = plans.and_then(|ps| ps.get(j));
                if self
                    .element(&item.value, &p.value, plan, &path.index(i))
                    .is_ok()
                {
                    found = true;
                    break;
                }
            }
            if !found {
                let msg = format!(
                    "existence anchor validation failed at path {}",
                    path.render()
                );
                return Err(self.fail(path, ErrKind::Plain, msg));
            }
        }
        Ok(())
    }

    /// `validateArray`: the first pattern element decides the mode (§3.4).
    fn array(
        &mut self,
        resource: &Value,
        ra: &[Node],
        pa: &[Node],
        plans: Option<&[Plan]>,
        path: &PathNode<'_>,
    ) -> Walk {
        let plan = |j: usize| plans.and_then(|ps| ps.get(j));
        let Some(first) = pa.first() else {
            return Err(self.fail(path, ErrKind::Plain, "pattern Array empty".to_owned()));
        };
        match &first.value {
            Value::Map(_) => {
                // Array of maps: the first pattern map against every element.
                let mut skips = Vec::new();
                let mut applied = 0usize;
                for (i, item) in ra.iter().enumerate() {
                    match self.element(&item.value, &first.value, plan(0), &path.index(i)) {
                        Ok(()) => applied += 1,
                        Err(f) if f.is_skip() => skips.push(f),
                        Err(f) => return Err(f),
                    }
                }
                if applied == 0 && !skips.is_empty() {
                    return Err(aggregate(&skips));
                }
                Ok(())
            }
            Value::Seq(_) => {
                // Nested arrays are positional.
                if ra.len() < pa.len() {
                    return Err(Failure {
                        path: None,
                        kind: ErrKind::Plain,
                        message: format!(
                            "validate Array failed, array length mismatch, resource Array len is {} and pattern Array len is {}",
                            ra.len(),
                            pa.len()
                        ),
                    });
                }
                let mut skips = Vec::new();
                let mut applied = 0usize;
                for (i, (item, p)) in ra.iter().zip(pa).enumerate() {
                    match self.element(&item.value, &p.value, plan(i), &path.index(i)) {
                        Ok(()) => applied += 1,
                        Err(f) if f.is_skip() => skips.push(f),
                        Err(f) => return Err(f),
                    }
                }
                if applied == 0 && !skips.is_empty() {
                    return Err(aggregate(&skips));
                }
                Ok(())
            }
            // A scalar first element applies to every resource element.
            scalar => self.element(resource, scalar, None, path),
        }
    }
}

/// perf: whether the walk of `pattern` over `resource` ([`Walker::element`]) is certainly
/// `Ok`, found without building paths, errors or skip lists. It follows the walk where every
/// step is a plain yes or no — plain keys, `"*"`, equality, negation, condition and global
/// anchors, arrays, scalars — and gives up (`false`) on anything else: a failure, an
/// existence or add anchor, a map without a plan, a metadata expansion that may rewrite the
/// pattern. `false` means "not known": the full walk then decides, and it is `Ok` whenever
/// this is `true`. Most rules pass on most resources, and skip the full walk
/// (docs/PERFORMANCE.md).
pub(crate) fn surely_passes(resource: &Value, pattern: &Value, plan: Option<&Plan>) -> bool {
    match pattern {
        Value::Map(pm) => match (resource, plan) {
            (Value::Map(rm), Some(Plan::Map(mp))) => map_passes(rm, pm, mp),
            _ => false,
        },
        Value::Seq(pa) => match resource {
            Value::Seq(ra) => array_passes(resource, ra, pa, plan.and_then(Plan::items)),
            _ => false,
        },
        _ => scalar_ok(resource, pattern, plan),
    }
}

/// Whether `resource` satisfies the scalar `pattern` (with its parsed string pattern, when
/// planned). A scalar pattern applies to every element of an array (a failure then names the
/// array).
fn scalar_ok(resource: &Value, pattern: &Value, plan: Option<&Plan>) -> bool {
    let matches = |v: &Value| match plan {
        Some(Plan::String(p)) => p.matches(v),
        _ => scalar_match(v, pattern),
    };
    match resource {
        Value::Seq(items) => items.iter().all(|i| matches(&i.value)),
        _ => matches(resource),
    }
}

/// [`surely_passes`] for `Walker::map`: every key, in any order (all must be `Ok`).
fn map_passes(rm: &Map, pm: &Map, plan: &MapPlan) -> bool {
    if plan.rewrites {
        return false;
    }
    let entries = pm.entries();
    plan.steps().iter().all(|step| {
        let entry = &entries[step.entry];
        let (pattern, child) = (&entry.value.value, step.child());
        let Some(anchor) = step.anchor(&entry.key) else {
            // `defaultHandler`.
            let value = rm.get(&entry.key).map_or(&NULL, |n| &n.value);
            if matches!(pattern, Value::Str(s) if s == "*") {
                return *value != Value::Null;
            }
            return surely_passes(value, pattern, child);
        };
        let present = rm.get(anchor.key);
        match anchor.kind {
            AnchorKind::Equality | AnchorKind::Global => {
                present.is_none_or(|v| surely_passes(&v.value, pattern, child))
            }
            AnchorKind::Condition => {
                present.is_some_and(|v| surely_passes(&v.value, pattern, child))
            }
            AnchorKind::Negation => present.is_none(),
            AnchorKind::Existence | AnchorKind::AddIfNotPresent => false,
        }
    })
}

/// [`surely_passes`] for `Walker::array`: every element `Ok` (the walk also passes some
/// arrays with skipped elements; those are left to it).
fn array_passes(resource: &Value, ra: &[Node], pa: &[Node], plans: Option<&[Plan]>) -> bool {
    let plan = |j: usize| plans.and_then(|ps| ps.get(j));
    let Some(first) = pa.first() else {
        return false;
    };
    match &first.value {
        Value::Map(_) => ra
            .iter()
            .all(|item| surely_passes(&item.value, &first.value, plan(0))),
        Value::Seq(_) => {
            ra.len() >= pa.len()
                && ra
                    .iter()
                    .zip(pa)
                    .enumerate()
                    .all(|(i, (item, p))| surely_passes(&item.value, &p.value, plan(i)))
        }
        scalar => surely_passes(resource, scalar, None),
    }
}

/// A `*PatternError` skip combining `skips` (multierr joins messages with `"; "`).
fn aggregate(skips: &[Failure]) -> Failure {
    let message = skips
        .iter()
        .map(|f| f.message.as_str())
        .collect::<Vec<_>>()
        .join("; ");
    Failure {
        path: None,
        kind: ErrKind::Aggregated,
        message,
    }
}
