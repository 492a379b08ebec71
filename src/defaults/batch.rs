//! `batch/v1` defaults, Kubernetes v1.34: `pkg/apis/batch/v1/defaults.go`. A CronJob's
//! `jobTemplate` gets the pod spec defaults only (SetDefaults_Job takes a Job, not a spec).

use super::{Node, Owner, Planner, Value, get, k, s};

pub fn job(p: &mut Planner, root: &Node) {
    let spec = [k("spec")];
    let Some(m) = get(root, &spec).and_then(Node::as_map) else {
        return;
    };
    let absent = |key: &str| m.get(key).is_none_or(Node::is_null);
    if absent("completions") && absent("parallelism") {
        p.set_if_absent(root, &spec, "completions", Value::Int(1));
        p.set_if_absent(root, &spec, "parallelism", Value::Int(1));
    } else if absent("parallelism") {
        p.set_if_absent(root, &spec, "parallelism", Value::Int(1));
    }
    p.set_if_absent(root, &spec, "backoffLimit", Value::Int(6));
    p.set_if_absent(root, &spec, "completionMode", s("NonIndexed"));
    p.set_if_absent(root, &spec, "suspend", Value::Bool(false));
    let replacement = if absent("podFailurePolicy") {
        "TerminatingOrFailed"
    } else {
        "Failed"
    };
    p.set_if_absent(root, &spec, "podReplacementPolicy", s(replacement));
    p.pod_template(root, &[k("spec"), k("template")], Owner::JobTemplate);
}

pub(crate) fn cron_job(p: &mut Planner, root: &Node) {
    let spec = [k("spec")];
    if get(root, &spec).and_then(Node::as_map).is_none() {
        return;
    }
    p.set_if_absent(root, &spec, "concurrencyPolicy", s("Allow"));
    p.set_if_absent(root, &spec, "suspend", Value::Bool(false));
    p.set_if_absent(root, &spec, "successfulJobsHistoryLimit", Value::Int(3));
    p.set_if_absent(root, &spec, "failedJobsHistoryLimit", Value::Int(1));
    p.pod_template(
        root,
        &[k("spec"), k("jobTemplate"), k("spec"), k("template")],
        Owner::JobTemplate,
    );
}
