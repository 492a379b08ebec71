//! Policy validation of match/exclude blocks (match.md §1.4 items 6, 8–10, 12–14):
//! `MatchResources.Validate`, `ResourceDescription.Validate`, `UserInfo.Validate`,
//! `Rule.ValidateMatchExcludeConflict` (`kyverno/kyverno:api/kyverno/v1/`) and
//! `hasUserMatchExclude` (`pkg/validation/policy/background.go`).

use super::{Invalid, PolicyCtx};
use crate::base::wildcard::matches;
use crate::matching::{MatchBlock, ResourceFilter};
use crate::policy::model::{PolicyKind, Rule};

fn user_field(f: &ResourceFilter) -> Option<&'static str> {
    if !f.user.roles.is_empty() {
        Some("roles")
    } else if !f.user.cluster_roles.is_empty() {
        Some("clusterRoles")
    } else if !f.user.subjects.is_empty() {
        Some("subjects")
    } else {
        None
    }
}

/// 14: no roles/clusterRoles/subjects anywhere in background mode.
pub(crate) fn check_no_user_info(rule: &Rule, idx: usize) -> Result<(), Invalid> {
    let blocks = [
        ("match", Some(&rule.match_)),
        ("exclude", rule.exclude.as_ref()),
    ];
    for (name, block) in blocks {
        let Some(b) = block else { continue };
        let lists = [
            ("", std::slice::from_ref(&b.flat)),
            ("any", &b.any[..]),
            ("all", &b.all[..]),
        ];
        for (list, filters) in lists {
            for (i, f) in filters.iter().enumerate() {
                if let Some(field) = user_field(f) {
                    let at = if list.is_empty() {
                        String::new()
                    } else {
                        format!("{list}[{i}]/")
                    };
                    return Err(Invalid::new(
                        format!(
                            "only select variables are allowed in background mode. Set spec.background=false to disable background mode for this policy rule: invalid variable used at path: spec/rules[{idx}]/{name}/{at}{field} "
                        ),
                        f.span,
                    ));
                }
            }
        }
    }
    Ok(())
}

/// `Rule.Validate`'s match/exclude part for the rule at `idx`: the conflict, the match block
/// and the exclude block are checked independently, each failure pushed to `errs`.
pub(crate) fn check_match_exclude(
    ctx: &PolicyCtx,
    rule: &Rule,
    idx: usize,
    errs: &mut Vec<Invalid>,
) {
    errs.extend(check_conflict(rule, idx).err());
    errs.extend(check_block(ctx, &rule.match_, &format!("spec.rules[{idx}].match")).err());
    if let Some(e) = &rule.exclude {
        errs.extend(check_block(ctx, e, &format!("spec.rules[{idx}].exclude")).err());
    }
}

fn check_block(ctx: &PolicyCtx, b: &MatchBlock, path: &str) -> Result<(), Invalid> {
    // 6.
    if !b.any.is_empty() && !b.all.is_empty() {
        return Err(Invalid::new(
            format!("{path}: Invalid value: Can't specify any and all together"),
            b.raw.span,
        ));
    }
    let lists = [("any", &b.any[..]), ("all", &b.all[..])];
    for (list, filters) in lists {
        for (i, f) in filters.iter().enumerate() {
            check_filter(ctx, f, &format!("{path}.{list}[{i}]"))?;
        }
    }
    check_filter(ctx, &b.flat, path)
}

fn check_filter(ctx: &PolicyCtx, f: &ResourceFilter, path: &str) -> Result<(), Invalid> {
    // 13. Subjects and roles.
    for (i, s) in f.user.subjects.iter().enumerate() {
        let p = format!("{path}.subjects[{i}]");
        let msg = if s.kind.is_empty() {
            Some(format!("{p}.kind: Required value"))
        } else if !matches!(s.kind.as_str(), "User" | "Group" | "ServiceAccount") {
            Some(format!(
                "{p}.kind: Invalid value: \"{}\": kind must be 'User', 'Group', or 'ServiceAccount'",
                s.kind
            ))
        } else if s.name.is_empty() {
            Some(format!("{p}.name: Required value"))
        } else if s.kind == "ServiceAccount" && s.namespace.is_empty() {
            Some(format!(
                "{p}.namespace: Required value: namespace is required when Kind is ServiceAccount"
            ))
        } else {
            None
        };
        if let Some(m) = msg {
            return Err(Invalid::new(m, f.span));
        }
    }
    for (i, r) in f.user.roles.iter().enumerate() {
        if r.split(':').count() != 2 {
            return Err(Invalid::new(
                format!(
                    "{path}.roles[{i}]: Invalid value: \"{r}\": Role is expected to be in namespace:name format"
                ),
                f.span,
            ));
        }
    }
    let rd = &f.resources;
    // 8.
    if rd.name.as_deref().is_some_and(|n| !n.is_empty()) && !rd.names.is_empty() {
        return Err(Invalid::new(
            format!("{path}: Invalid value: Both name and names can not be specified together"),
            rd.span,
        ));
    }
    // 9.
    if let Some(sel) = &rd.selector
        && !sel.contains_wildcard()
    {
        match sel.requirements() {
            Err(e) => {
                return Err(Invalid::new(
                    format!("{path}.selector: Invalid value: {e}"),
                    rd.span,
                ));
            }
            Ok(r) if r.is_empty() => {
                return Err(Invalid::new(
                    format!(
                        "{path}.selector: Invalid value: The requirements are not specified in selector"
                    ),
                    rd.span,
                ));
            }
            Ok(_) => {}
        }
    }
    // 10. In mock mode there are no known cluster-scoped kinds, so only namespaces count.
    if ctx.kind == PolicyKind::Policy && !rd.namespaces.is_empty() {
        return Err(Invalid::new(
            format!(
                "{path}.namespaces: Forbidden: Filtering namespaces not allowed in namespaced policies"
            ),
            rd.span,
        ));
    }
    Ok(())
}

fn same_filter(a: &ResourceFilter, b: &ResourceFilter) -> bool {
    let (x, y) = (&a.resources, &b.resources);
    x.kind_strings() == y.kind_strings()
        && x.name == y.name
        && x.names == y.names
        && x.namespaces == y.namespaces
        && x.annotations == y.annotations
        && x.selector == y.selector
        && x.namespace_selector == y.namespace_selector
        && x.operations == y.operations
        && a.user.roles == b.user.roles
        && a.user.cluster_roles == b.user.cluster_roles
        && a.user.subjects == b.user.subjects
}

fn subset(exclude: &[String], matched: &[String]) -> bool {
    matched.iter().all(|m| exclude.contains(m))
}

/// 12. `ValidateMatchExcludeConflict`: match minus exclude provably empty.
fn check_conflict(rule: &Rule, idx: usize) -> Result<(), Invalid> {
    let Some(ex) = &rule.exclude else {
        return Ok(());
    };
    let empty = || {
        Err(Invalid::new(
            format!("spec.rules[{idx}]: Invalid value: Rule is matching an empty set"),
            ex.raw.span,
        ))
    };
    let m = &rule.match_;
    if !ex.all.is_empty() || !m.all.is_empty() {
        return Ok(());
    }
    if !m.any.is_empty() && !ex.any.is_empty() {
        if m.any
            .iter()
            .any(|a| ex.any.iter().any(|b| same_filter(a, b)))
        {
            return empty();
        }
        return Ok(());
    }
    if ex.is_empty() {
        return Ok(());
    }
    let (mf, ef) = (&m.flat, &ex.flat);
    let (mr, er) = (&mf.resources, &ef.resources);
    if !ef.user.roles.is_empty()
        && (mf.user.roles.is_empty() || !subset(&ef.user.roles, &mf.user.roles))
    {
        return Ok(());
    }
    if !ef.user.cluster_roles.is_empty()
        && (mf.user.cluster_roles.is_empty()
            || !subset(&ef.user.cluster_roles, &mf.user.cluster_roles))
    {
        return Ok(());
    }
    if !ef.user.subjects.is_empty()
        && (mf.user.subjects.is_empty()
            || !mf
                .user
                .subjects
                .iter()
                .all(|s| ef.user.subjects.contains(s)))
    {
        return Ok(());
    }
    if let Some(en) = er.name.as_deref().filter(|n| !n.is_empty())
        && !matches(en, mr.name.as_deref().unwrap_or(""))
    {
        return Ok(());
    }
    if !er.names.is_empty() {
        if mr.names.is_empty() {
            return Ok(());
        }
        if mr
            .names
            .iter()
            .any(|m| er.names.iter().any(|e| matches(e, m)))
        {
            return empty();
        }
        return Ok(());
    }
    if !er.namespaces.is_empty()
        && (mr.namespaces.is_empty() || !subset(&er.namespaces, &mr.namespaces))
    {
        return Ok(());
    }
    let (ek, mk): (Vec<String>, Vec<String>) = (
        er.kind_strings().iter().map(|s| (*s).to_owned()).collect(),
        mr.kind_strings().iter().map(|s| (*s).to_owned()).collect(),
    );
    if !ek.is_empty() && (mk.is_empty() || !subset(&ek, &mk)) {
        return Ok(());
    }
    for (ms, es) in [
        (&mr.selector, &er.selector),
        (&mr.namespace_selector, &er.namespace_selector),
    ] {
        if let (Some(ms), Some(es)) = (ms, es) {
            if !es.match_expressions.is_empty()
                && (ms.match_expressions.is_empty()
                    || !ms
                        .match_expressions
                        .iter()
                        .all(|e| es.match_expressions.contains(e)))
            {
                return Ok(());
            }
            if !es.match_labels.is_empty()
                && (ms.match_labels.is_empty()
                    || !ms
                        .match_labels
                        .iter()
                        .all(|(k, v)| es.match_labels.iter().any(|(ek, ev)| ek == k && ev == v)))
            {
                return Ok(());
            }
        }
        if ms.is_some() != es.is_some() {
            return Ok(());
        }
    }
    match (&mr.annotations, &er.annotations) {
        (Some(a), Some(b)) if a != b => return Ok(()),
        (None, Some(_)) | (Some(_), None) => return Ok(()),
        _ => {}
    }
    empty()
}
