//! The compiled ClusterPolicy / Policy `validate.cel` rule body: its CEL programs, compiled
//! once at load (crate::vpol::cel_rule evaluates them), and the Kubernetes validation entry
//! that the CEL policy kinds share.

use crate::cel::{Program, SyntaxError, compile};
use crate::yaml::Node;

/// One Kubernetes CEL validation (`expression`, `message`, `messageExpression`).
#[derive(Debug)]
pub struct Validation {
    pub expression: Program,
    pub message: Option<String>,
    pub message_expression: Option<Program>,
}

/// A compiled `validate.cel` block.
#[derive(Debug)]
pub struct CelRule {
    pub validations: Vec<Validation>,
    pub variables: Vec<(String, Program)>,
    pub audit_annotations: Vec<Program>,
    /// The rule's `celPreconditions` expressions, compiled once with the rule.
    pub preconditions: Vec<Program>,
    /// `(paramKind, paramRef)` when both are set: the rule is evaluated once per param.
    pub params: Option<(Node, Node)>,
    /// Syntax errors: `(node, error)` for the policy loader's diagnostics.
    pub syntax_errors: Vec<(Node, SyntaxError)>,
}

impl CelRule {
    /// Compiles every expression of the `validate.cel` node.
    pub fn compile(cel: &Node) -> Self {
        let mut syntax_errors = Vec::new();
        let mut program = |n: &Node| {
            let (p, e) = compile(n.as_str().unwrap_or(""), n.span);
            if let Some(e) = e {
                syntax_errors.push((n.clone(), e));
            }
            p
        };
        let seq = |k: &str| cel.get(k).and_then(Node::as_seq).unwrap_or(&[]).to_vec();
        let params = match (cel.get("paramKind"), cel.get("paramRef")) {
            (Some(k), Some(r)) if !k.is_null() && !r.is_null() => Some((k.clone(), r.clone())),
            _ => None,
        };
        // Kubernetes' environment (Kyverno's `validate_cel.go`): `params` with both fields,
        // `authorizer` in the validations.
        let declared = crate::cel::k8s_env::Optional {
            params: params.is_some(),
            authorizer: true,
        };
        let validations = seq("expressions")
            .iter()
            .map(|v| Validation {
                expression: {
                    let mut p = program(v.get("expression").unwrap_or(&Node::null()));
                    crate::cel::k8s_env::in_kubernetes_env(&mut p, declared);
                    p
                },
                message: v.get("message").and_then(Node::as_str).map(str::to_owned),
                // Compiled without `authorizer` (Kyverno's `expressionOptionalVars`).
                message_expression: v.get("messageExpression").map(|m| {
                    let mut p = program(m);
                    let without = crate::cel::k8s_env::Optional {
                        authorizer: false,
                        ..declared
                    };
                    crate::cel::k8s_env::in_kubernetes_env(&mut p, without);
                    p
                }),
            })
            .collect();
        let variables = seq("variables")
            .iter()
            .map(|v| {
                let name = v
                    .get("name")
                    .and_then(Node::as_str)
                    .unwrap_or("")
                    .to_owned();
                (name, program(v.get("expression").unwrap_or(&Node::null())))
            })
            .collect();
        let audit_annotations = seq("auditAnnotations")
            .iter()
            .filter_map(|a| a.get("valueExpression").map(&mut program))
            .collect();
        Self {
            validations,
            variables,
            audit_annotations,
            preconditions: Vec::new(),
            params,
            syntax_errors,
        }
    }

    /// Compiles the rule's `celPreconditions` (a list of `{name, expression}`). A syntax
    /// error stays in the program and fails the rule when evaluated, as before.
    pub(crate) fn set_preconditions(&mut self, node: Option<&Node>) {
        self.preconditions = node
            .and_then(Node::as_seq)
            .unwrap_or(&[])
            .iter()
            .map(|pre| {
                let expr = pre.get("expression").unwrap_or(&Node::null()).clone();
                compile(expr.as_str().unwrap_or(""), expr.span).0
            })
            .collect();
    }
}
