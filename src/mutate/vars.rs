//! The hook for variables (`{{ }}`), JMESPath lists, `context` and `preconditions` in mutate
//! rules. The conditions layer (branch `cond`) implements [`Variables`]; until it is merged,
//! [`NoVariables`] evaluates what needs no JMESPath (plain `request.object.a.b` lists, rules
//! without `{{ }}`) and answers everything else with an `unsupported: variables` error.

use crate::request::Operation;
use crate::yaml::{Node, Value};

/// What a variable-using rule sees (mutate.md §3, §6.4).
#[derive(Clone, Debug)]
pub struct VarContext {
    /// `request.object`: the resource as the rule (or the foreach entry) sees it.
    pub object: Node,
    pub operation: Operation,
    /// `element<N>` / `elementIndex<N>` from the outermost loop inwards.
    pub elements: Vec<(Node, usize)>,
}

/// Why a variable-using part could not be evaluated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VarError {
    /// kpol does not evaluate this yet (the feature's name).
    Unsupported(&'static str),
    /// Substitution or a query failed (`variable substitution failed: …`).
    Failed(String),
}

/// Variables, queries, context and conditions for the mutate layer.
pub trait Variables: Sync {
    /// Substitutes `{{ }}` in a patch (strings and map keys).
    fn substitute(&self, node: &Node, ctx: &VarContext) -> Result<Node, VarError>;
    /// Evaluates a JMESPath expression (a foreach `list`).
    fn query(&self, expr: &str, ctx: &VarContext) -> Result<Node, VarError>;
    /// Loads `context:` entries into the context.
    fn load_context(&self, entries: &Node, ctx: &mut VarContext) -> Result<(), VarError>;
    /// Evaluates a `preconditions:` block.
    fn preconditions(&self, block: &Node, ctx: &VarContext) -> Result<bool, VarError>;
}

/// The stand-in until the conditions layer lands.
pub struct NoVariables;

/// Whether a tree has a `{{` in any string or key.
pub fn has_variables(n: &Node) -> bool {
    match &n.value {
        Value::Str(s) => s.contains("{{"),
        Value::Seq(items) => items.iter().any(has_variables),
        Value::Map(m) => m.iter().any(|(k, v)| k.contains("{{") || has_variables(v)),
        _ => false,
    }
}

impl Variables for NoVariables {
    fn substitute(&self, node: &Node, _: &VarContext) -> Result<Node, VarError> {
        if has_variables(node) {
            Err(VarError::Unsupported("variables"))
        } else {
            Ok(node.clone())
        }
    }

    fn query(&self, expr: &str, ctx: &VarContext) -> Result<Node, VarError> {
        let expr = expr.trim();
        let expr = expr.strip_suffix("[]").unwrap_or(expr);
        let rest = expr
            .strip_prefix("request.object.")
            .ok_or(VarError::Unsupported("variables"))?;
        let mut node = &ctx.object;
        for seg in rest.split('.') {
            let plain =
                !seg.is_empty() && seg.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !plain {
                return Err(VarError::Unsupported("variables"));
            }
            match node.get(seg) {
                Some(n) => node = n,
                None => return Ok(Node::null()),
            }
        }
        Ok(node.clone())
    }

    fn load_context(&self, _: &Node, _: &mut VarContext) -> Result<(), VarError> {
        Err(VarError::Unsupported("context"))
    }

    fn preconditions(&self, _: &Node, _: &VarContext) -> Result<bool, VarError> {
        Err(VarError::Unsupported("preconditions"))
    }
}
