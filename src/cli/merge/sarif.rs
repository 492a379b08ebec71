//! `kpol merge` of SARIF logs (`kpol check --shard I/N --format sarif`): the log of the
//! unsharded run.
//!
//! A shard's log is the unsharded log's shape over its inputs: one run whose results are its
//! findings (in input order) followed by its error diagnostics shown as results (rules
//! `kpol/input-error`, `kpol/invalid-policy`), whose rules are numbered by first use, and
//! whose notifications start with the run-wide ones every shard repeats. The merged run takes
//! the findings of every shard in shard order, then the diagnostic results (the run-wide ones
//! once), renumbers the rules by first use, joins the notifications (the run-wide ones once),
//! ANDs `executionSuccessful` and recounts GitHub's result limit. `properties.kpolShard` (the
//! shard and its summary counts, which only a shard's log has) gives the order and the exit
//! code, and is left out.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::cli::render::sarif::{INPUT_ERROR, INVALID_POLICY, over_limit};

fn shard_props(log: &Value) -> Option<&Value> {
    log.get("runs")?.get(0)?.get("properties")?.get("kpolShard")
}

fn shard_of(log: &Value) -> Option<(u64, u64)> {
    let s = shard_props(log)?;
    Some((s.get("index")?.as_u64()?, s.get("count")?.as_u64()?))
}

fn array<'a>(v: &'a Value, path: &[&str]) -> &'a [Value] {
    let mut v = v;
    for key in path {
        match v.get(key) {
            Some(next) => v = next,
            None => return &[],
        }
    }
    v.as_array().map_or(&[][..], Vec::as_slice)
}

fn is_diagnostic_result(r: &Value) -> bool {
    matches!(
        r.get("ruleId").and_then(Value::as_str),
        Some(id) if id == INPUT_ERROR || id == INVALID_POLICY
    )
}

/// The note a shard adds past GitHub's result limit: recounted for the merged run.
fn is_limit_note(n: &Value) -> bool {
    n.get("locations").is_none()
        && n.get("message")
            .and_then(|m| m.get("text"))
            .and_then(Value::as_str)
            .is_some_and(|t| {
                t.starts_with("the SARIF report has ") && t.contains("GitHub code scanning shows")
            })
}

/// A result without its `ruleIndex` (the same diagnostic has another index in each shard).
fn without_index(r: &Value) -> Value {
    let mut r = r.clone();
    if let Some(o) = r.as_object_mut() {
        o.remove("ruleIndex");
    }
    r
}

/// The merged log, the unsharded run's summary (as `--format json`'s `summary`) and whether
/// every shard ran to completion; or why the logs are not the shards of one run.
pub fn merge(
    mut logs: Vec<Value>,
    limit: usize,
) -> Result<(Value, Map<String, Value>, bool), String> {
    for log in &logs {
        if array(log, &["runs"]).len() != 1 {
            return Err("a SARIF log of kpol check has one run".to_owned());
        }
        if shard_of(log).is_none() {
            return Err(
                "a SARIF log without `properties.kpolShard`: run kpol check with --shard I/N"
                    .to_owned(),
            );
        }
    }
    super::in_shard_order(&mut logs, shard_of)?;
    let runs: Vec<&Value> = logs
        .iter()
        .filter_map(|l| l.get("runs").and_then(|r| r.get(0)))
        .collect();
    let summaries: Vec<Value> = logs
        .iter()
        .map(|l| {
            let summary = shard_props(l).and_then(|s| s.get("summary")).cloned();
            serde_json::json!({ "summary": summary.unwrap_or(Value::Null) })
        })
        .collect();
    let summary = super::merged_summary(&summaries)?;

    // Results, each with the rules of its shard: findings of every shard, then diagnostics.
    let mut findings: Vec<(usize, &Value)> = Vec::new();
    let mut diagnostics: Vec<Vec<Value>> = Vec::new();
    let mut diagnostic_refs: Vec<Vec<&Value>> = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        let results = array(run, &["results"]);
        findings.extend(
            results
                .iter()
                .filter(|r| !is_diagnostic_result(r))
                .map(|r| (i, r)),
        );
        let ds: Vec<&Value> = results.iter().filter(|r| is_diagnostic_result(r)).collect();
        diagnostics.push(ds.iter().map(|r| without_index(r)).collect());
        diagnostic_refs.push(ds);
    }
    let lists: Vec<&[Value]> = diagnostics.iter().map(Vec::as_slice).collect();
    let head = super::common_prefix(&lists);
    let mut ordered = findings;
    for (i, ds) in diagnostic_refs.iter().enumerate() {
        let skip = if i == 0 { 0 } else { head };
        ordered.extend(ds.iter().skip(skip).map(|r| (i, *r)));
    }
    let mut rules: Vec<Value> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut results = Vec::with_capacity(ordered.len());
    for (i, r) in ordered {
        let id = r.get("ruleId").and_then(Value::as_str).unwrap_or("");
        let at = match index.get(id) {
            Some(at) => *at,
            None => {
                let shard_rules = runs
                    .get(i)
                    .map_or(&[][..], |run| array(run, &["tool", "driver", "rules"]));
                let rule = r
                    .get("ruleIndex")
                    .and_then(Value::as_u64)
                    .and_then(|k| shard_rules.get(usize::try_from(k).ok()?))
                    .filter(|d| d.get("id").and_then(Value::as_str) == Some(id))
                    .or_else(|| {
                        shard_rules
                            .iter()
                            .find(|d| d.get("id").and_then(Value::as_str) == Some(id))
                    })
                    .ok_or_else(|| format!("a result of rule {id} without its rule descriptor"))?;
                rules.push(rule.clone());
                index.insert(id.to_owned(), rules.len() - 1);
                rules.len() - 1
            }
        };
        let mut r = r.clone();
        if let Some(o) = r.as_object_mut() {
            o.insert("ruleIndex".to_owned(), Value::from(at));
        }
        results.push(r);
    }

    // Notifications: the run-wide ones once, then each shard's own; the limit note recounted.
    let notes: Vec<Vec<Value>> = runs
        .iter()
        .map(|run| {
            array(run, &["invocations"])
                .first()
                .map(|inv| array(inv, &["toolExecutionNotifications"]))
                .unwrap_or_default()
                .iter()
                .filter(|n| !is_limit_note(n))
                .cloned()
                .collect()
        })
        .collect();
    let lists: Vec<&[Value]> = notes.iter().map(Vec::as_slice).collect();
    let head = super::common_prefix(&lists);
    let mut notifications = Vec::new();
    for (i, ns) in notes.into_iter().enumerate() {
        let skip = if i == 0 { 0 } else { head };
        notifications.extend(ns.into_iter().skip(skip));
    }
    if results.len() > limit {
        let line = over_limit(results.len(), limit);
        eprintln!("{line}");
        notifications.push(serde_json::json!({
            "level": "warning",
            "message": { "text": line.trim_start_matches("kpol: warning: ") },
        }));
    }
    let successful = runs.iter().all(|run| {
        array(run, &["invocations"])
            .iter()
            .all(|inv| inv.get("executionSuccessful").and_then(Value::as_bool) != Some(false))
    });

    let mut log = logs.first().cloned().ok_or("no report")?;
    let run = log
        .get_mut("runs")
        .and_then(|r| r.get_mut(0))
        .and_then(Value::as_object_mut)
        .ok_or("a SARIF log of kpol check has one run")?;
    run.remove("properties");
    if let Some(driver) = run
        .get_mut("tool")
        .and_then(|t| t.get_mut("driver"))
        .and_then(Value::as_object_mut)
    {
        driver.insert("rules".to_owned(), Value::Array(rules));
    }
    let mut invocation = Map::new();
    invocation.insert("executionSuccessful".to_owned(), Value::from(successful));
    invocation.insert(
        "toolExecutionNotifications".to_owned(),
        Value::Array(notifications),
    );
    run.insert(
        "invocations".to_owned(),
        Value::Array(vec![Value::Object(invocation)]),
    );
    run.insert("results".to_owned(), Value::Array(results));
    Ok((log, summary, successful))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn shard(index: u64, rule: &str, notes: Vec<Value>) -> Value {
        json!({
            "$schema": "s", "version": "2.1.0",
            "runs": [{
                "tool": {"driver": {"name": "kpol", "rules": [{"id": "kpol/invalid-policy"}, {"id": rule}]}},
                "invocations": [{"executionSuccessful": index != 2, "toolExecutionNotifications": notes}],
                "results": [
                    {"ruleId": rule, "ruleIndex": 1},
                    {"ruleId": "kpol/invalid-policy", "ruleIndex": 0, "message": {"text": "bad"}}
                ],
                "columnKind": "unicodeCodePoints",
                "properties": {"kpolShard": {"index": index, "count": 2,
                    "summary": {"fail": 1, "pass": index, "policyErrors": 1}}}
            }]
        })
    }

    /// Rules renumbered by first use (findings before kpol's own), the run-wide diagnostic
    /// and notification once, the result limit recounted for the whole run, success ANDed.
    #[test]
    fn shards_join_into_one_run() {
        let note = json!({"level": "error", "message": {"text": "policy p is invalid"}});
        let limit = json!({"level": "warning", "message": {"text": over_limit(2, 1).trim_start_matches("kpol: warning: ")}});
        let logs = vec![
            shard(2, "b/r", vec![note.clone(), limit.clone()]),
            shard(1, "a/r", vec![note.clone(), limit]),
        ];
        let (log, summary, ok) = merge(logs, 2).unwrap();
        assert!(!ok);
        assert_eq!(summary["pass"], 3);
        assert_eq!(summary["fail"], 2);
        assert_eq!(summary["policyErrors"], 1);
        let run = &log["runs"][0];
        assert!(run.get("properties").is_none());
        let ids: Vec<&str> = run["tool"]["driver"]["rules"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["a/r", "b/r", "kpol/invalid-policy"]);
        let results: Vec<(String, u64)> = run["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["ruleId"].as_str().unwrap().to_owned(),
                    r["ruleIndex"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            results,
            [
                ("a/r".to_owned(), 0),
                ("b/r".to_owned(), 1),
                ("kpol/invalid-policy".to_owned(), 2)
            ]
        );
        // Three results over a limit of two: one warning, counting the whole run.
        let notes = run["invocations"][0]["toolExecutionNotifications"]
            .as_array()
            .unwrap();
        assert_eq!(notes.len(), 2);
        assert_eq!(notes[0], note);
        let text = notes[1]["message"]["text"].as_str().unwrap();
        assert!(text.starts_with("the SARIF report has 3 results"), "{text}");
        assert_eq!(run["invocations"][0]["executionSuccessful"], false);

        let missing = merge(vec![shard(1, "a/r", vec![])], 2).err().unwrap();
        assert!(missing.contains("not shards 1/1"), "{missing}");
    }
}
