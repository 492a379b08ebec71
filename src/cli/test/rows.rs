//! Result entries → rows, as `kyverno test` builds them (cli-compat.md §8,
//! `cli/commands/test/output.go`): resource keys selected by name or `ns/name` (all of them
//! when none matches), one row per selected rule response, `Excluded` when a policy's response
//! has none, `Invalid Policy` / `Not found` when the policy gave no response at all.
//!
//! kpol adds one reason: `unsupported: <feature>` — a row kpol cannot decide, never a pass.
//! Generate rules give one row per generated resource, compared with the entry's
//! `generatedResource` first (super::generated).

use serde::Serialize;

use kpol::engine::test_run::{ResourceRun, Response, RuleOutcome};
use kpol::report::Status;
use kpol::testfile::ResultEntry;

/// How a row counts in the summary (§8.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Count {
    Pass,
    Skip,
    Fail,
}

/// One row of a test's table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    /// The entry's `policy`, as written.
    pub policy: String,
    /// The rule response's name (the entry's `rule` for Excluded / Not found / Invalid rows).
    pub rule: String,
    /// `<apiVersion>/<Kind>/<namespace>/<name>`, empty when no resource was involved.
    pub resource: String,
    /// The resource's kind (the entry's `kind` when no resource was involved).
    pub kind: String,
    pub expected: String,
    /// `pass|fail|warn|error|skip`, or `excluded`, `not found`, `invalid policy`,
    /// `unsupported`.
    pub actual: String,
    pub ok: bool,
    pub count: Count,
    /// `Ok`, `Want <x>, got <y>`, `Excluded`, `Not found`, `Invalid Policy`,
    /// `unsupported: <feature>`.
    pub reason: String,
    /// The rule message (`--detailed-results`).
    pub message: String,
    /// Where the row's result entry starts in the test file.
    #[serde(skip)]
    pub at: Option<kpol::source::LineCol>,
}

impl Row {
    /// The RESULT column.
    pub fn result_word(&self) -> &'static str {
        match (self.ok, self.actual.as_str()) {
            (true, "invalid policy") => "Skip",
            (true, _) => "Pass",
            (false, _) => "Fail",
        }
    }
}

/// What the matcher knows besides the runs.
pub struct Context<'a> {
    /// Names of policies not evaluated because they are invalid, with the reason.
    pub invalid: &'a [(String, String)],
    /// Names of policies kpol cannot evaluate, with the `unsupported:` feature.
    pub unsupported: &'a [(String, String)],
    /// Test-level inputs kpol does not use yet: every row is unsupported.
    pub unsupported_inputs: &'a [&'static str],
    /// Names of the policies kpol evaluates.
    pub evaluated: &'a [String],
    /// Expected generated resources, by file (super::generated).
    pub expected: &'a [(String, Result<Vec<serde_json::Value>, String>)],
}

/// `--strict` (not upstream): an Excluded row expected to fail, warn or error — a row that
/// passes only because the policy did not apply (kyverno#11519) — fails.
pub fn strict(row: &mut Row) {
    if row.actual == "excluded" && matches!(row.expected.as_str(), "fail" | "warn" | "error") {
        row.ok = false;
        row.count = Count::Fail;
        row.reason = format!("Want {}, got excluded (--strict)", row.expected);
    }
}

/// The rows of one result entry against the runs of its operation and the test's target
/// keys (`targets`, kpol::engine::test_run::TestRuns::targets).
pub fn rows_for(
    entry: &ResultEntry,
    runs: &[ResourceRun],
    targets: &[ResourceRun],
    cx: &Context<'_>,
) -> Vec<Row> {
    let keys = select(entry, runs, targets);
    let policy_name = entry.policy.rsplit('/').next().unwrap_or("");
    let feature = if let Some(f) = cx.unsupported_inputs.first() {
        Some((*f).to_owned())
    } else if let Some(kind) = entry
        .cel_kind
        .filter(|_| !cx.evaluated.iter().any(|n| n == policy_name))
    {
        Some(format!("cel ({kind})"))
    } else if !cx.evaluated.iter().any(|n| n == policy_name) {
        cx.unsupported
            .iter()
            .find(|(n, _)| n == policy_name)
            .map(|(_, f)| f.clone())
    } else {
        None
    };
    if let Some(feature) = feature {
        if keys.is_empty() {
            return vec![unsupported_row(entry, None, &entry.rule, &feature)];
        }
        return keys
            .iter()
            .map(|k| unsupported_row(entry, Some(k), &entry.rule, &feature))
            .collect();
    }
    let mut rows = Vec::new();
    for run in keys {
        let before = rows.len();
        // A row dropped because its resource is not in `patchedResources` (`resourceSkipped`).
        let mut skipped = false;
        let trigger = runs.iter().find(|r| same_key(r, run));
        for resp in trigger
            .into_iter()
            .flat_map(|r| &r.responses)
            .filter(|r| r.policy == policy_name)
        {
            for outcome in resp
                .rules
                .iter()
                .filter(|o| resp.ruleless || selects(&entry.rule, &o.rule))
            {
                match &outcome.generated {
                    Some(generated) if outcome.unsupported.is_none() => {
                        rows.extend(generation_rows(entry, run, resp, outcome, generated, cx));
                    }
                    _ => match outcome_row(entry, run, resp, outcome, false) {
                        Some(row) => rows.push(row),
                        None => skipped = true,
                    },
                }
            }
            if rows.len() == before && !skipped {
                rows.push(fixed_row(
                    entry,
                    Some(run),
                    "excluded",
                    true,
                    "Excluded",
                    "Excluded",
                ));
            }
        }
        // The target's responses, whatever their policy and rule (`output.go`): a target
        // missing from `patchedResources` fails the row.
        for resp in targets
            .iter()
            .filter(|t| same_key(t, run))
            .flat_map(|t| &t.responses)
        {
            for outcome in &resp.rules {
                rows.extend(outcome_row(entry, run, resp, outcome, true));
            }
        }
        if rows.len() == before && !skipped {
            rows.push(match cx.invalid.iter().find(|(n, _)| n == policy_name) {
                Some((_, why)) => fixed_row(
                    entry,
                    Some(run),
                    "invalid policy",
                    true,
                    "Invalid Policy",
                    why,
                ),
                None => fixed_row(
                    entry,
                    Some(run),
                    "not found",
                    false,
                    "Not found",
                    "Not found",
                ),
            });
        }
    }
    rows
}

/// Whether two runs have the same resource key (`apiVersion,kind,namespace,name`).
fn same_key(a: &ResourceRun, b: &ResourceRun) -> bool {
    (&a.api_version, &a.kind, &a.namespace, &a.name)
        == (&b.api_version, &b.kind, &b.namespace, &b.name)
}

/// §8.1–8.2: keys named by `resources` (`name` or `ns/name`), else all keys; the target keys
/// are looked at first, then the trigger keys. As upstream, a key that is both a target and a
/// trigger is selected twice (its rows then appear twice).
fn select<'r>(
    entry: &ResultEntry,
    runs: &'r [ResourceRun],
    targets: &'r [ResourceRun],
) -> Vec<&'r ResourceRun> {
    let mut out: Vec<&ResourceRun> = Vec::new();
    for wanted in &entry.resources {
        for run in targets.iter().chain(runs) {
            // A payload is named by its path as written; a name of three or more
            // `/`-separated parts selects nothing there (`output.go` compares only
            // `name` and `ns/name`), so every key is then checked.
            let hit = match wanted.split_once('/') {
                _ if run.is_payload() => wanted.matches('/').count() < 2 && run.name == *wanted,
                Some((ns, name)) => run.namespace == ns && run.name == name,
                None => run.name == *wanted,
            };
            if hit && !out.iter().any(|o| std::ptr::eq(*o, run)) {
                out.push(run);
            }
        }
    }
    // `resourceSpecs` (only with a `resources` key, §15): apiVersion, namespace and name.
    let specs = entry
        .resource_specs
        .iter()
        .filter(|_| entry.resources_given);
    for (group, version, ns, name) in specs {
        for run in targets.iter().chain(runs) {
            let api_version = if group.is_empty() {
                version.clone()
            } else {
                format!("{group}/{version}")
            };
            let hit = run.api_version == api_version && run.namespace == *ns && run.name == *name;
            if hit && !out.iter().any(|o| std::ptr::eq(*o, run)) {
                out.push(run);
            }
        }
    }
    if out.is_empty() {
        out = targets.iter().chain(runs).collect();
    }
    out
}

/// `rule: x` selects `x`, `autogen-x` and `autogen-cronjob-x` (match.md §8.8).
fn selects(wanted: &str, rule: &str) -> bool {
    wanted.is_empty()
        || rule == wanted
        || rule.strip_prefix("autogen-") == Some(wanted)
        || rule.strip_prefix("autogen-cronjob-") == Some(wanted)
}

/// `None`: the resource is not in `patchedResources` and the row is dropped — unless
/// `missing_fails` (a target's row) or `failOnMissingResources`.
fn outcome_row(
    entry: &ResultEntry,
    run: &ResourceRun,
    resp: &Response,
    o: &RuleOutcome,
    missing_fails: bool,
) -> Option<Row> {
    if let Some(feature) = &o.unsupported {
        return Some(unsupported_row(entry, Some(run), &o.rule, feature));
    }
    if let (Some(file), Some(actual)) = (&entry.patched_resources, &o.patched) {
        use kpol::mutate::compare::{PatchedCheck, compare};
        let failed = |reason: &str, message: String| {
            let mut row = fixed_row(entry, Some(run), o.status.as_str(), false, reason, "");
            row.rule = o.rule.clone();
            row.message = message;
            Some(row)
        };
        match std::fs::read_to_string(file) {
            Err(e) => {
                let msg = format!("error: failed to load PatchedResources resource ({e})");
                return failed("Resource error", msg);
            }
            Ok(text) => match compare(file, &text, actual) {
                PatchedCheck::Match => {}
                PatchedCheck::NotFound if entry.fail_on_missing_resources || missing_fails => {
                    let msg = format!(
                        "error: failed to load PatchedResources resource (resource with name {} not found in manifest)",
                        run.name
                    );
                    return failed("Resource error", msg);
                }
                PatchedCheck::NotFound => return None,
                PatchedCheck::LoadError(e) => {
                    let msg = format!("error: failed to load PatchedResources resource ({e})");
                    return failed("Resource error", msg);
                }
                PatchedCheck::Mismatch(diff) => {
                    let msg = format!(
                        "Patched resource didn't match the patched resource in the test result\n{diff}"
                    );
                    return failed("Resource diff", msg);
                }
            },
        }
    }
    let actual = match o.status {
        Status::Fail if resp.unscored => Status::Warn,
        s => s,
    }
    .as_str()
    .to_owned();
    let ok = actual == entry.result;
    let count = match (ok, entry.result.as_str()) {
        (false, _) => Count::Fail,
        (true, "skip") => Count::Skip,
        (true, _) => Count::Pass,
    };
    Some(Row {
        policy: entry.policy.clone(),
        rule: o.rule.clone(),
        resource: run.display(),
        kind: run.kind.clone(),
        expected: entry.result.clone(),
        reason: if ok {
            "Ok".to_owned()
        } else {
            format!("Want {}, got {actual}", entry.result)
        },
        actual,
        ok,
        count,
        message: o.message.clone(),
        at: entry.at,
    })
}

/// A generate rule's rows (`output.go`): with nothing generated, the result alone; else one
/// row per generated resource, named by it, its comparison with the expected file first.
fn generation_rows(
    entry: &ResultEntry,
    run: &ResourceRun,
    resp: &Response,
    o: &RuleOutcome,
    generated: &[(String, serde_json::Value)],
    cx: &Context<'_>,
) -> Vec<Row> {
    if generated.is_empty() {
        return outcome_row(entry, run, resp, o, false)
            .into_iter()
            .collect();
    }
    generated
        .iter()
        .filter_map(|(name, resource)| {
            let mut row = outcome_row(entry, run, resp, o, false)?;
            row.resource = name.clone();
            if let Err((message, reason)) = super::generated::check(entry, cx.expected, resource) {
                row.ok = false;
                row.count = Count::Fail;
                row.reason = reason;
                row.message = message;
            }
            Some(row)
        })
        .collect()
}

fn fixed_row(
    entry: &ResultEntry,
    run: Option<&ResourceRun>,
    actual: &str,
    ok: bool,
    reason: &str,
    message: &str,
) -> Row {
    Row {
        policy: entry.policy.clone(),
        rule: entry.rule.clone(),
        resource: run.map(ResourceRun::display).unwrap_or_default(),
        kind: run.map_or_else(|| entry.kind.clone(), |r| r.kind.clone()),
        expected: entry.result.clone(),
        actual: actual.to_owned(),
        ok,
        // Excluded and Invalid Policy rows count as skipped, whatever was expected (§8.5).
        count: if ok { Count::Skip } else { Count::Fail },
        reason: reason.to_owned(),
        message: message.to_owned(),
        at: entry.at,
    }
}

fn unsupported_row(
    entry: &ResultEntry,
    run: Option<&ResourceRun>,
    rule: &str,
    feature: &str,
) -> Row {
    let mut row = fixed_row(entry, run, "unsupported", false, "", "");
    row.rule = rule.to_owned();
    row.reason = format!("unsupported: {feature}");
    row.message = format!("kpol does not evaluate {feature} yet");
    if run.is_none() {
        row.resource = entry.resources.join(",");
    }
    row
}

#[cfg(test)]
#[path = "rows_tests.rs"]
mod tests;
