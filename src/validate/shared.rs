//! One variable context per resource, shared by the rules that need one (Kyverno's engine
//! does the same: one policy context, `Checkpoint` before a rule, `Restore` after). The
//! context borrows the resource as `request.object`; building it once per resource instead of
//! once per rule still saves the request map, the images and each rule's bookkeeping
//! (docs/PERFORMANCE.md).

use super::{Verdict, apply_rule_context};
use crate::policy::{Policy, Rule};
use crate::request::Request;
use crate::resource::Resource;
use crate::variables::Context;

/// The lazily built context of one resource under one request (and its pod, for
/// podSecurity rules).
pub(crate) struct Contexts<'a> {
    resource: &'a Resource,
    request: &'a Request,
    base: Option<Context<'a>>,
    /// Whether `base` holds a rule's checkpoint that `release` must undo.
    lent: bool,
    /// The resource's pod, decoded once for all podSecurity rules.
    pub(crate) pods: crate::pss::PodCache,
    /// The resource's CEL values, converted once for all CEL rules and policies.
    pub(crate) cel: crate::cel::ResourceValues,
}

impl<'a> Contexts<'a> {
    pub(crate) fn new(resource: &'a Resource, request: &'a Request) -> Self {
        Self {
            resource,
            request,
            base: None,
            lent: false,
            pods: Default::default(),
            cel: Default::default(),
        }
    }

    /// The rule's context: the resource's context with the rule's values and `context`
    /// entries on top, undone by the next `release`.
    pub(crate) fn for_rule(
        &mut self,
        policy: &Policy,
        rule: &Rule,
    ) -> Result<&mut Context<'a>, Verdict> {
        self.release();
        let (resource, request) = (self.resource, self.request);
        let ctx = self
            .base
            .get_or_insert_with(|| Context::for_resource(resource, request));
        ctx.checkpoint();
        self.lent = true;
        apply_rule_context(ctx, policy, rule, resource, request)?;
        Ok(ctx)
    }

    /// Undoes what the last rule added (no-op when nothing is lent).
    pub(crate) fn release(&mut self) {
        if std::mem::take(&mut self.lent)
            && let Some(ctx) = self.base.as_mut()
        {
            ctx.reset();
        }
    }
}
