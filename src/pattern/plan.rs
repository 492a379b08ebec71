//! Walk plans: what the pattern walk derives from a pattern map alone — each key's anchor,
//! the order its keys are visited in (§3.3), where its `metadata` key is — made once per rule
//! at load instead of once per map, per array element and per resource (docs/PERFORMANCE.md).
//!
//! A pattern with `{{ }}` variables or `$(…)` references is only known per resource: the walk
//! then plans each map as it meets it ([`MapPlan::new`] without children), the same way.

use std::ops::Range;

use super::anchor::{Anchor, AnchorKind, parse_anchor};
use super::scalar::StringPattern;
use crate::yaml::{Map, Value};

/// The plan of one pattern value.
#[derive(Clone, Debug, Default)]
pub(crate) enum Plan {
    Map(MapPlan),
    Seq(Vec<Plan>),
    /// A string: its expression parsed.
    String(StringPattern),
    /// Another scalar: nothing to plan.
    #[default]
    Leaf,
}

impl Plan {
    /// Plans `pattern` and everything below it.
    pub(crate) fn of(pattern: &Value) -> Plan {
        match pattern {
            Value::Map(m) => Plan::Map(MapPlan::new(m, |i| &m.entries()[i].value.value, true)),
            Value::Seq(items) => Plan::Seq(items.iter().map(|i| Plan::of(&i.value)).collect()),
            Value::Str(s) => Plan::String(StringPattern::new(s)),
            _ => Plan::Leaf,
        }
    }

    /// The plans of a sequence's items.
    pub(crate) fn items(&self) -> Option<&[Plan]> {
        match self {
            Plan::Seq(items) => Some(items),
            _ => None,
        }
    }
}

/// The plan of one pattern map: its keys in visiting order, each with what the walk needs
/// of it. perf: one array read front to back; a step's anchor and value plan sit beside its
/// entry index (docs/PERFORMANCE.md).
#[derive(Clone, Debug)]
pub(crate) struct MapPlan {
    /// Phase one (condition, equality, negation and existence keys, in byte order), then
    /// phase two: global anchors and keys holding anchors in reverse byte order, then the
    /// other keys in byte order (`getSortedNestedAnchorResource`).
    steps: Vec<Step>,
    /// How many of `steps` are phase one.
    phase_one: usize,
    /// Condition and existence keys in entry order, as positions in `steps`: recorded in the
    /// registry on each visit.
    recorded: Vec<usize>,
    /// The entry `getPatternValue("metadata")` finds, for wildcard expansion.
    pub(crate) metadata: Option<usize>,
    /// Whether that expansion can change the pattern ([`super::wildcards::may_rewrite`]).
    pub(crate) rewrites: bool,
}

/// One key of a pattern map.
#[derive(Clone, Debug)]
pub(crate) struct Step {
    /// The entry's position in the map.
    pub(crate) entry: usize,
    /// The entry's anchor: its kind and the byte range of the inner key.
    anchor: Option<(AnchorKind, u32, u32)>,
    /// The plan of the entry's value; `None` for a map planned during a walk (whose values
    /// are then planned as the walk meets them).
    child: Option<Plan>,
}

impl Step {
    /// The step's anchor, `key` being its entry's key.
    pub(crate) fn anchor<'k>(&self, key: &'k str) -> Option<Anchor<'k>> {
        self.anchor.map(|(kind, start, end)| Anchor {
            kind,
            key: &key[start as usize..end as usize],
        })
    }

    /// The plan of the entry's value, when the map was planned with its values.
    pub(crate) fn child(&self) -> Option<&Plan> {
        self.child.as_ref()
    }
}

impl MapPlan {
    /// Plans `map` whose entry `i` holds `value(i)` (a wildcard expansion replaces one);
    /// `deep` plans the values too.
    pub(crate) fn new<'v>(map: &'v Map, value: impl Fn(usize) -> &'v Value, deep: bool) -> Self {
        let entries = map.entries();
        let anchors: Vec<Option<(AnchorKind, Range<usize>)>> = entries
            .iter()
            .map(|e| {
                parse_anchor(&e.key).map(|a| {
                    let start = a.key.as_ptr() as usize - e.key.as_ptr() as usize;
                    (a.kind, start..start + a.key.len())
                })
            })
            .collect();
        let kind = |i: usize| anchors[i].as_ref().map(|(k, _)| *k);
        let by_key = |a: &usize, b: &usize| entries[*a].key.cmp(&entries[*b].key);
        let (mut order, mut plain): (Vec<usize>, Vec<usize>) =
            (0..entries.len()).partition(|&i| kind(i).is_some_and(AnchorKind::is_phase_one));
        order.sort_unstable_by(by_key);
        plain.sort_unstable_by(by_key);
        let phase_one = order.len();
        let front = |i: usize| kind(i) == Some(AnchorKind::Global) || has_nested_anchors(value(i));
        order.extend(plain.iter().rev().copied().filter(|&i| front(i)));
        order.extend(plain.iter().copied().filter(|&i| !front(i)));
        let recorded = (0..entries.len())
            .filter(|&i| matches!(kind(i), Some(AnchorKind::Condition | AnchorKind::Existence)))
            .filter_map(|i| order.iter().position(|&o| o == i))
            .collect();
        // `getPatternValue("metadata")`, from the anchors just parsed.
        let metadata = (0..entries.len()).find(|&i| {
            entries[i].key == "metadata"
                || anchors[i]
                    .as_ref()
                    .is_some_and(|(_, r)| &entries[i].key[r.clone()] == "metadata")
        });
        let rewrites = metadata.is_some_and(|i| super::wildcards::may_rewrite(value(i)));
        // Keys are YAML scalars, far below 4 GiB.
        let to_u32 = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        let steps = order
            .iter()
            .map(|&i| Step {
                entry: i,
                anchor: anchors[i]
                    .as_ref()
                    .map(|(k, r)| (*k, to_u32(r.start), to_u32(r.end))),
                child: deep.then(|| Plan::of(value(i))),
            })
            .collect();
        MapPlan {
            steps,
            phase_one,
            recorded,
            metadata,
            rewrites,
        }
    }

    /// Every step, in visiting order.
    pub(crate) fn steps(&self) -> &[Step] {
        &self.steps
    }

    /// Phase one's steps.
    pub(crate) fn phase_one(&self) -> &[Step] {
        &self.steps[..self.phase_one]
    }

    /// Phase two's steps.
    pub(crate) fn phase_two(&self) -> &[Step] {
        &self.steps[self.phase_one..]
    }

    /// The condition and existence keys' steps, in entry order.
    pub(crate) fn recorded(&self) -> impl Iterator<Item = &Step> {
        self.recorded.iter().map(|&s| &self.steps[s])
    }
}

/// `hasNestedAnchors`: any condition/existence/equality/negation/global anchor key at any
/// depth of a pattern value.
pub(crate) fn has_nested_anchors(pattern: &Value) -> bool {
    match pattern {
        Value::Map(m) => m.iter().any(|(k, v)| {
            parse_anchor(k).is_some_and(|a| a.kind != AnchorKind::AddIfNotPresent)
                || has_nested_anchors(&v.value)
        }),
        Value::Seq(items) => items.iter().any(|i| has_nested_anchors(&i.value)),
        _ => false,
    }
}
