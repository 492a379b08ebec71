//! `kpol check` with a ValidatingAdmissionPolicy, its binding and its params each in a file
//! of its own (testdata/admission-params/), and a ClusterPolicy `validate.cel` rule with
//! params: the binding binds across files and the params come from the policy files' other
//! objects, as admission would see them.

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

mod common;

fn kpol(args: &[&str]) -> (Option<i32>, String, String) {
    common::kpol_in("testdata/admission-params", args)
}

// The binding in binding.yaml binds the VAP of vap.yaml; params.yaml's ConfigMap is its
// param: five replicas over a limit of three fail at the Deployment.
#[test]
fn a_binding_and_params_in_other_files_apply() {
    let (code, out, err) = kpol(&[
        "check",
        "-p",
        "vap.yaml",
        "-p",
        "binding.yaml",
        "-p",
        "params.yaml",
        "manifests",
    ]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(
        out.contains("fail[max-replicas/max-replicas]: too many replicas"),
        "{out}"
    );
    assert!(out.contains("manifests/deploy.yaml:7:13"), "{out}");
}

// Without the binding file the VAP is evaluated unbound (no params): reading `params` is an
// error; with the binding but without the params file, `params` is null: an error too.
#[test]
fn without_binding_or_params_the_vap_errors() {
    let (code, out, err) = kpol(&["check", "-p", "vap.yaml", "-p", "params.yaml", "manifests"]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(out.contains("error[max-replicas/max-replicas]"), "{out}");
    let (code, out, err) = kpol(&["check", "-p", "vap.yaml", "-p", "binding.yaml", "manifests"]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(out.contains("error[max-replicas/max-replicas]"), "{out}");
}

// A validate.cel rule with params reads the same ConfigMap; without it, Deny makes it an
// error naming the missing param.
#[test]
fn validate_cel_params_in_check() {
    let (code, out, err) = kpol(&[
        "check",
        "-p",
        "validate-cel.yaml",
        "-p",
        "params.yaml",
        "manifests",
    ]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(out.contains("too many replicas for the rule"), "{out}");
    let (code, out, err) = kpol(&["check", "-p", "validate-cel.yaml", "manifests"]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(
        out.contains("error in parameterized resource: configmaps \"replica-limits\" not found"),
        "{out}"
    );
}
