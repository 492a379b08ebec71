//! `kpol check`'s side of inline suppressions (the grammar and what an entry covers are
//! `kpol::suppress`): today's date, refused and expired entries as diagnostics, and the
//! findings an entry turns into skips (docs/SUPPRESSIONS.md).

use chrono::NaiveDate;
use kpol::diagnostic::{Code, Diagnostic, Location};
use kpol::report::Status;
use kpol::resource::Resource;
use kpol::source::{LineCol, Source};
use kpol::suppress::scan::{Directive, Origin};

use super::check::Finding;

/// The variable that fixes today's date, for tests and reproducible runs.
pub const TODAY_VAR: &str = "KPOL_TODAY";

/// Why a result is a skip: the suppression that covers it.
#[derive(Clone, Debug)]
pub struct Suppressed {
    pub reason: String,
    /// The entry as written.
    pub entry: String,
    pub origin: Origin,
    pub until: Option<NaiveDate>,
    /// Where the entry is written.
    pub at: Option<LineCol>,
    /// The result before it was suppressed (fail, warn or error).
    pub was: Status,
}

/// Today in UTC, or `KPOL_TODAY=YYYY-MM-DD`.
pub fn today() -> Result<NaiveDate, Diagnostic> {
    match std::env::var(TODAY_VAR) {
        Ok(v) if !v.is_empty() => kpol::suppress::parse_date(v.trim()).ok_or_else(|| {
            Diagnostic::error(
                Code::InvalidSuppression,
                format!("{TODAY_VAR}={v} is not a date written YYYY-MM-DD"),
                None,
            )
        }),
        _ => Ok(chrono::Utc::now().date_naive()),
    }
}

/// The suppressions of one file that are in force on `today`, per resource, with the
/// diagnostics of the entries refused (errors) and expired (warnings).
pub fn scan(
    source: &Source,
    resources: &[Resource],
    today: NaiveDate,
) -> (Vec<Vec<Directive>>, Vec<Diagnostic>) {
    let roots: Vec<&kpol::yaml::Node> = resources.iter().map(|r| &r.root).collect();
    let found = kpol::suppress::scan::in_file(source.text(), &roots);
    let mut diagnostics: Vec<Diagnostic> = found
        .refused
        .iter()
        .map(|r| {
            Diagnostic::error(
                Code::InvalidSuppression,
                r.message.clone(),
                Some(Location::at(source, r.at)),
            )
        })
        .collect();
    let mut per_resource = found.per_resource;
    for directives in &mut per_resource {
        directives.retain(|d| {
            let expired = d.entry.expired(today);
            if expired {
                diagnostics.push(Diagnostic::warning(
                    Code::ExpiredSuppression,
                    format!(
                        "suppression `{}` expired on {} (today is {today}); its findings are reported again",
                        d.entry.selector(),
                        d.entry.until.map_or_else(String::new, |u| u.to_string()),
                    ),
                    Some(Location::at(source, d.at)),
                ));
            }
            !expired
        });
    }
    (per_resource, diagnostics)
}

/// Turns each failure, warning or error of `findings` (about `resource`) that a directive
/// covers into a skip that says why; an info note (`-v`) for each directive that covered
/// nothing, so that stale suppressions can be found.
pub fn apply(
    findings: &mut [Finding],
    resource: &Resource,
    directives: &[Directive],
) -> Vec<Diagnostic> {
    if directives.is_empty() {
        return Vec::new();
    }
    let mut used = vec![false; directives.len()];
    for f in findings {
        if !matches!(f.status, Status::Fail | Status::Warn | Status::Error) {
            continue;
        }
        let span = f.response.span.unwrap_or(resource.root.span);
        // A namespaced Policy is named without its namespace.
        let policy = f.policy.rsplit('/').next().unwrap_or(&f.policy);
        let Some(i) = directives
            .iter()
            .position(|d| d.covers(policy, &f.rule, span))
        else {
            continue;
        };
        let Some(d) = directives.get(i) else {
            continue;
        };
        if let Some(u) = used.get_mut(i) {
            *u = true;
        }
        f.suppressed = Some(Suppressed {
            reason: d.entry.reason.clone(),
            entry: d.entry.text.clone(),
            origin: d.origin,
            until: d.entry.until,
            at: resource.source.as_ref().map(|s| s.line_col(d.at.start)),
            was: f.status,
        });
        f.status = Status::Skip;
    }
    directives
        .iter()
        .zip(used)
        .filter(|(_, used)| !used)
        .map(|(d, _)| {
            Diagnostic::info(
                Code::UnusedSuppression,
                format!(
                    "suppression `{}` covers no finding of {}",
                    d.entry.selector(),
                    resource.display_name()
                ),
                resource.source.as_ref().map(|s| Location::at(s, d.at)),
            )
        })
        .collect()
}

impl Suppressed {
    /// `suppressed (# kpol:ignore, line 8, until 2027-03-31): <reason>`: what every format
    /// shows of a suppressed result.
    pub fn describe(&self) -> String {
        let mut how = vec![match self.origin {
            Origin::Annotation => kpol::suppress::ANNOTATION.to_owned(),
            Origin::Comment => format!("# {}", kpol::suppress::COMMENT_WORD),
        }];
        if let Some(at) = self.at {
            how.push(format!("line {}", at.line));
        }
        if let Some(u) = self.until {
            how.push(format!("until {u}"));
        }
        format!("suppressed ({}): {}", how.join(", "), self.reason)
    }
}
