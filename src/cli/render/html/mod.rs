//! `--format html` and `kpol report`: one self-contained page (docs/OUTPUT.md) — headline
//! counts, failures by severity, policy, namespace and kind with inline-SVG bar charts, the
//! findings table (sorted, filtered and paged by a small inline script; every row is there
//! without it), exceptions and suppressions, and the run's problems.
//!
//! Nothing on the page is fetched: styles and script are inline, allowed by hash in the
//! page's Content-Security-Policy (`default-src 'none'`), and links are relative paths to
//! the inputs. Every string from a manifest or a policy goes through [`markup::escape`].

mod findings;
pub mod markup;
pub mod model;
mod saved;

use std::io::{self, Write};
use std::path::PathBuf;

use sha2::Digest as _;

use crate::cli::check::CheckReport;
use markup::Markup;
use model::{Counts, Group, Page, St};

const CSS: &str = include_str!("report.css");
const JS: &str = include_str!("report.js");
/// Marks the document before the body is parsed, so that the rows past the first page are
/// not laid out before the script pages them.
const HEAD_JS: &str = "document.documentElement.className=\"js\";";
/// Bars in a chart: the rest are in the table below it.
const CHART_ROWS: usize = 15;
/// A group table with more rows than this is folded (`<details>`).
const FOLD_ROWS: usize = 30;

/// `--format html`; `base` is the directory the report is written to (links to the inputs
/// are relative to it).
pub struct Html {
    pub base: Option<PathBuf>,
}

impl super::Render for Html {
    fn render(&self, report: &CheckReport, out: &mut dyn Write) -> io::Result<()> {
        let page = Page::from_report(report);
        out.write_all(write_page(&page, self.base.as_deref()).as_bytes())
    }
}

/// The directory links are relative to: the report file's, else the working directory.
pub fn base_of(output: Option<&std::path::Path>) -> Option<PathBuf> {
    let dir = match output.and_then(std::path::Path::parent) {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::path::absolute(dir).ok()
}

fn csp_hash(text: &str) -> String {
    let digest = sha2::Sha256::digest(text.as_bytes());
    format!("'sha256-{}'", kpol::jmespath::x509::base64_encode(&digest))
}

/// The whole page.
pub fn write_page(page: &Page, base: Option<&std::path::Path>) -> String {
    let mut m = Markup::default();
    m.raw("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    m.raw("<meta http-equiv=\"Content-Security-Policy\"");
    let csp = format!(
        "default-src 'none'; style-src {}; script-src {} {}; base-uri 'none'; form-action 'none'",
        csp_hash(CSS),
        csp_hash(HEAD_JS),
        csp_hash(JS)
    );
    m.attr("content", &csp);
    m.raw(">\n<meta name=\"referrer\" content=\"no-referrer\">\n");
    m.raw("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    m.raw("<meta name=\"generator\"");
    m.attr("content", concat!("kpol ", env!("CARGO_PKG_VERSION")));
    m.raw(">\n<title>kpol report</title>\n<script>");
    m.raw(HEAD_JS);
    m.raw("</script>\n<style>");
    m.raw(CSS);
    m.raw("</style>\n</head>\n<body>\n");
    header(&mut m, page);
    severities(&mut m, page);
    policies(&mut m, page);
    namespaces(&mut m, page);
    kinds(&mut m, page);
    findings::findings(&mut m, page, base);
    findings::waived(&mut m, page, base);
    problems(&mut m, page);
    m.raw("<script>");
    m.raw(JS);
    m.raw("</script>\n</body>\n</html>\n");
    m.into_string()
}

fn failures(c: &Counts) -> usize {
    c[St::Fail as usize] + c[St::Warn as usize] + c[St::Error as usize]
}

/// `97.3%`, rounded down (a single failure never shows as 100%).
fn percent(part: usize, whole: usize) -> String {
    if whole == 0 {
        return "—".to_owned();
    }
    let tenths = (part as u128 * 1000 / whole as u128) as usize;
    format!("{}.{}%", tenths / 10, tenths % 10)
}

fn header(m: &mut Markup, page: &Page) {
    m.raw("<header><h1>kpol compliance report</h1><p class=\"meta\">");
    if let Some(t) = chrono::DateTime::from_timestamp(page.timestamp as i64, 0) {
        m.raw("Generated <time");
        m.attr("datetime", &t.format("%Y-%m-%dT%H:%M:%SZ").to_string());
        m.raw(">");
        m.text(&t.format("%Y-%m-%d %H:%M UTC").to_string());
        m.raw("</time> by ");
    }
    m.raw(concat!(
        "kpol ",
        env!("CARGO_PKG_VERSION"),
        "</p></header>\n"
    ));
    let s = &page.summary;
    let compliant = page.resources - page.failing_resources;
    m.raw("<section id=\"summary\" class=\"cards\">\n");
    m.raw("<div class=\"card\"><span class=\"n\" id=\"n-resources\">");
    m.num(page.resources);
    m.raw("</span><span class=\"l\">resources checked (a rule applied)</span></div>\n");
    m.raw("<div class=\"card pass\"><span class=\"n\" id=\"n-compliant\">");
    m.text(&percent(compliant, page.resources));
    m.raw("</span><span class=\"l\">compliant: <span id=\"n-compliant-resources\">");
    m.num(compliant);
    m.raw("</span> without a fail or error</span></div>\n");
    for (id, class, label, n) in [
        ("n-pass", "card pass", "pass", s.pass),
        ("n-fail", "card fail", "fail", s.fail),
        ("n-warn", "card warn", "warn", s.warn),
        ("n-error", "card error", "error", s.error),
        ("n-skip", "card skip", "skip", s.skip),
    ] {
        m.raw("<div");
        m.attr("class", class);
        m.raw("><span class=\"n\"");
        m.attr("id", id);
        m.raw(">");
        m.num(n);
        m.raw("</span><span class=\"l\">");
        m.text(label);
        if id == "n-skip" && s.suppressed > 0 {
            m.raw(" (<span id=\"n-suppressed\">");
            m.num(s.suppressed);
            m.raw("</span> suppressed)");
        }
        m.raw("</span></div>\n");
    }
    if let Some((baselined, stale)) = page.baseline() {
        m.raw("<div class=\"card baseline\"><span class=\"n\" id=\"n-baselined\">");
        m.num(baselined);
        m.raw("</span><span class=\"l\">baselined: recorded, not listed</span></div>\n");
        if stale > 0 {
            m.raw("<div class=\"card fail\"><span class=\"n\" id=\"n-baseline-stale\">");
            m.num(stale);
            m.raw("</span><span class=\"l\">gone from the baseline</span></div>\n");
        }
    }
    m.raw("</section>\n");
    if let Some((baselined, stale)) = page.baseline() {
        m.raw("<p class=\"baseline-note\" id=\"baseline\">Baseline: the findings listed are the <b>new</b> ones, \
               not recorded in the baseline; ");
        m.num(baselined);
        m.raw(if baselined == 1 {
            " recorded finding is"
        } else {
            " recorded findings are"
        });
        m.raw(" left out and fail nothing");
        if stale > 0 {
            m.raw("; ");
            m.num(stale);
            m.raw(if stale == 1 {
                " recorded finding is"
            } else {
                " recorded findings are"
            });
            m.raw(" gone (<code>--baseline-strict</code> fails the run: rewrite it with <code>--write-baseline</code>)");
        }
        m.raw(".</p>\n");
    }
    let problems = s.problems();
    if !problems.is_empty() {
        m.raw("<p class=\"problems\" id=\"incomplete\">Incomplete run: ");
        m.text(&problems.join(", "));
        m.raw(" (see <a href=\"#problems\">Problems</a>).</p>\n");
    }
    m.raw("<p class=\"note\">Results are Kyverno's rule results (pass, fail, warn, error, skip). \
           A resource is compliant when no rule failed or errored on it. <b class=\"a a-Enforce\">Enforce</b> \
           failures would be blocked at admission; <b class=\"a a-Audit\">Audit</b> failures are only reported.</p>\n");
    m.raw(
        "<nav><a href=\"#severity\">By severity</a><a href=\"#by-policy\">By policy</a>\
           <a href=\"#by-namespace\">By namespace</a><a href=\"#by-kind\">By kind</a>\
           <a href=\"#findings\">Findings</a><a href=\"#waived\">Exceptions and suppressions</a>\
           <a href=\"#problems\">Problems</a></nav>\n",
    );
}

/// Critical first, unset last.
fn severity_rank(s: &str) -> usize {
    match s {
        "critical" => 0,
        "high" => 1,
        "medium" => 2,
        "low" => 3,
        "info" => 4,
        "" => 6,
        _ => 5,
    }
}

fn severity_cell(m: &mut Markup, sev: &str) {
    m.raw("<td");
    m.attr_num("data-v", severity_rank(sev));
    if sev.is_empty() {
        m.raw("><span class=\"none\">(unset)</span></td>");
    } else {
        m.attr(
            "class",
            &format!(
                "sev-{}",
                sev.replace(|c: char| !c.is_ascii_alphanumeric(), "")
            ),
        );
        m.raw(">");
        m.text(sev);
        m.raw("</td>");
    }
}

fn count_cells(m: &mut Markup, c: &Counts) {
    for st in [St::Fail, St::Warn, St::Error, St::Pass, St::Skip] {
        m.raw("<td class=\"n\">");
        m.num(c[st as usize]);
        m.raw("</td>");
    }
}

const COUNT_HEADS: &str = "<th class=\"n\">fail</th><th class=\"n\">warn</th><th class=\"n\">error</th><th class=\"n\">pass</th><th class=\"n\">skip</th>";

fn severities(m: &mut Markup, page: &Page) {
    m.raw("<section id=\"severity\"><h2>Failures by severity</h2>\n");
    m.raw("<p class=\"note\">From each policy's <code>policies.kyverno.io/severity</code> annotation.</p>\n");
    let mut rows: Vec<(&String, &Group)> = page.severities.iter().collect();
    rows.sort_by_key(|(s, _)| (severity_rank(s), (*s).clone()));
    m.raw("<table class=\"sortable\"><thead><tr><th>severity</th><th class=\"n\">policies failing</th>\
           <th class=\"n\">resources failing</th>");
    m.raw(COUNT_HEADS);
    m.raw("</tr></thead><tbody>\n");
    for (sev, g) in rows {
        m.raw("<tr>");
        severity_cell(m, sev);
        m.raw("<td class=\"n\">");
        m.num(g.policies);
        m.raw("</td><td class=\"n\">");
        m.num(g.failing_resources);
        m.raw("</td>");
        count_cells(m, &g.counts);
        m.raw("</tr>\n");
    }
    m.raw("</tbody></table></section>\n");
}

/// A horizontal stacked bar chart of fail, warn and error results.
fn chart(m: &mut Markup, label: &str, items: &[(&str, Counts)]) {
    let items: Vec<&(&str, Counts)> = items
        .iter()
        .filter(|(_, c)| failures(c) > 0)
        .take(CHART_ROWS)
        .collect();
    if items.is_empty() {
        m.raw("<p class=\"note\">No failures, warnings or errors.</p>\n");
        return;
    }
    let max = items
        .iter()
        .map(|(_, c)| failures(c))
        .max()
        .unwrap_or(1)
        .max(1);
    let (label_w, bar_w, row_h) = (300usize, 420usize, 20usize);
    let height = items.len() * row_h + 4;
    m.raw("<svg class=\"chart\" role=\"img\"");
    m.attr("aria-label", label);
    m.attr("viewBox", &format!("0 0 {} {height}", label_w + bar_w + 70));
    m.attr_num("width", label_w + bar_w + 70);
    m.attr_num("height", height);
    m.raw(">\n");
    for (i, (name, c)) in items.iter().enumerate() {
        let y = i * row_h + 2;
        m.raw("<g><title>");
        m.text(name);
        m.raw(": ");
        m.text(&format!(
            "{} fail, {} warn, {} error",
            c[St::Fail as usize],
            c[St::Warn as usize],
            c[St::Error as usize]
        ));
        m.raw("</title><text text-anchor=\"end\"");
        m.attr_num("x", label_w - 6);
        m.attr_num("y", y + 14);
        m.raw(">");
        let short: String = if name.chars().count() > 42 {
            name.chars().take(41).chain(['…']).collect()
        } else if name.is_empty() {
            "(none)".to_owned()
        } else {
            (*name).to_owned()
        };
        m.text(&short);
        m.raw("</text>");
        let mut x = label_w;
        for (st, class) in [
            (St::Fail, "b-fail"),
            (St::Error, "b-error"),
            (St::Warn, "b-warn"),
        ] {
            let n = c[st as usize];
            if n == 0 {
                continue;
            }
            let w = (n * bar_w).div_ceil(max).max(1);
            m.raw("<rect");
            m.attr("class", class);
            m.attr_num("x", x);
            m.attr_num("y", y + 3);
            m.attr_num("width", w);
            m.attr_num("height", row_h - 6);
            m.raw("></rect>");
            x += w;
        }
        m.raw("<text class=\"c\"");
        m.attr_num("x", x + 4);
        m.attr_num("y", y + 14);
        m.raw(">");
        m.num(failures(c));
        m.raw("</text></g>\n");
    }
    m.raw("</svg>\n<div class=\"legend\"><span><i class=\"s-fail\"></i>fail</span>\
           <span><i class=\"s-error\"></i>error</span><span><i class=\"s-warn\"></i>warn</span></div>\n");
}

/// A link that filters the findings table on one column (without the script: a jump to it).
fn filter_link(m: &mut Markup, col: usize, label: &'static str, value: &str, shown: &str) {
    m.raw("<a href=\"#findings\"");
    m.attr_num("data-col", col);
    m.attr("data-label", label);
    m.attr("data-val", shown_or_none(value));
    m.raw(">");
    if value.is_empty() {
        m.raw("<span class=\"none\">(none)</span>");
    } else {
        m.text(shown);
    }
    m.raw("</a>");
}

fn shown_or_none(s: &str) -> &str {
    if s.is_empty() { "(none)" } else { s }
}

fn policies(m: &mut Markup, page: &Page) {
    m.raw("<section id=\"by-policy\"><h2>Failures by policy</h2>\n");
    let mut order: Vec<usize> = (0..page.policies.len())
        .filter(|i| {
            page.policies
                .get(*i)
                .is_some_and(|p| p.counts.iter().any(|n| *n > 0))
        })
        .collect();
    order.sort_by_key(|i| {
        page.policies
            .get(*i)
            .map(|p| (usize::MAX - failures(&p.counts), p.name.clone()))
    });
    let items: Vec<(&str, Counts)> = order
        .iter()
        .filter_map(|i| page.policies.get(*i))
        .map(|p| (p.name.as_str(), p.counts))
        .collect();
    chart(m, "failures by policy", &items);
    let unmatched = page.policies.len() - order.len();
    if unmatched > 0 {
        m.raw("<p class=\"note\">");
        m.num(unmatched);
        m.raw(" more policies gave no result (no resource matched them).</p>\n");
    }
    m.raw("<table class=\"sortable\" id=\"policies-table\"><thead><tr><th>policy</th><th>severity</th>\
           <th>category</th><th>action</th><th class=\"n\">resources failing</th><th class=\"n\">resources</th>");
    m.raw(COUNT_HEADS);
    m.raw("</tr></thead><tbody>\n");
    for i in order {
        let Some(p) = page.policies.get(i) else {
            continue;
        };
        m.raw("<tr");
        m.attr("id", &format!("p-{i}"));
        m.raw("><td>");
        filter_link(m, 3, "policy", &p.name, &p.name);
        if p.title.is_some() || p.description.is_some() {
            m.raw("<details><summary>");
            m.text(p.title.as_deref().unwrap_or("description"));
            m.raw("</summary>");
            if let Some(d) = &p.description {
                m.raw("<p>");
                m.text(d.trim());
                m.raw("</p>");
            }
            m.raw("</details>");
        }
        m.raw("</td>");
        severity_cell(m, &p.severity);
        m.raw("<td>");
        m.text(p.category.as_deref().unwrap_or(""));
        m.raw("</td><td>");
        action_badge(m, &p.action);
        m.raw("</td><td class=\"n\">");
        m.num(p.failing_resources);
        m.raw("</td><td class=\"n\">");
        m.num(p.resources);
        m.raw("</td>");
        count_cells(m, &p.counts);
        m.raw("</tr>\n");
    }
    m.raw("</tbody></table></section>\n");
}

fn action_badge(m: &mut Markup, action: &str) {
    let class = match action {
        "Enforce" => "a a-Enforce",
        "Warn" => "a a-Warn",
        _ => "a a-Audit",
    };
    m.raw("<span");
    m.attr("class", class);
    m.raw(">");
    m.text(action);
    m.raw("</span>");
}

/// How one group table is titled and which findings column its links filter.
struct GroupView {
    id: &'static str,
    title: &'static str,
    what: &'static str,
    plural: &'static str,
    col: usize,
    chart: bool,
}

fn groups(m: &mut Markup, v: &GroupView, groups: &std::collections::BTreeMap<String, Group>) {
    let GroupView {
        id,
        title,
        what,
        plural,
        col,
        chart: with_chart,
    } = *v;
    m.raw("<section");
    m.attr("id", id);
    m.raw("><h2>");
    m.raw(title);
    m.raw("</h2>\n");
    let mut rows: Vec<(&String, &Group)> = groups.iter().collect();
    rows.sort_by_key(|(name, g)| (usize::MAX - failures(&g.counts), (*name).clone()));
    if with_chart {
        let items: Vec<(&str, Counts)> = rows.iter().map(|(n, g)| (n.as_str(), g.counts)).collect();
        chart(m, title, &items);
    }
    // A long table (hundreds of namespaces) is folded under its chart.
    let folded = rows.len() > FOLD_ROWS;
    if folded {
        m.raw("<details><summary>");
        m.num(rows.len());
        m.raw(" ");
        m.raw(plural);
        m.raw("</summary>\n");
    }
    m.raw("<table class=\"sortable\"><thead><tr><th>");
    m.raw(what);
    m.raw("</th><th class=\"n\">resources failing</th><th class=\"n\">resources</th><th class=\"n\">compliant</th>");
    m.raw(COUNT_HEADS);
    m.raw("</tr></thead><tbody>\n");
    for (name, g) in rows {
        m.raw("<tr><td>");
        filter_link(m, col, what, name, name);
        m.raw("</td><td class=\"n\">");
        m.num(g.failing_resources);
        m.raw("</td><td class=\"n\">");
        m.num(g.resources);
        m.raw("</td><td class=\"n\">");
        m.text(&percent(g.resources - g.failing_resources, g.resources));
        m.raw("</td>");
        count_cells(m, &g.counts);
        m.raw("</tr>\n");
    }
    m.raw("</tbody></table>");
    if folded {
        m.raw("</details>");
    }
    m.raw("</section>\n");
}

fn namespaces(m: &mut Markup, page: &Page) {
    let view = GroupView {
        id: "by-namespace",
        title: "Failures by namespace",
        what: "namespace",
        plural: "namespaces",
        col: 5,
        chart: true,
    };
    groups(m, &view, &page.namespaces);
}

fn kinds(m: &mut Markup, page: &Page) {
    let view = GroupView {
        id: "by-kind",
        title: "Failures by kind",
        what: "kind",
        plural: "kinds",
        col: 4,
        chart: false,
    };
    groups(m, &view, &page.kinds);
}

fn problems(m: &mut Markup, page: &Page) {
    m.raw("<section id=\"problems\"><h2>Problems</h2>\n");
    if page.diagnostics.is_empty() {
        m.raw("<p class=\"note\">None: every input and policy was read.</p></section>\n");
        return;
    }
    m.raw("<table class=\"sortable\"><thead><tr><th>level</th><th>code</th><th>where</th><th>message</th></tr></thead><tbody>\n");
    for d in &page.diagnostics {
        m.raw("<tr><td>");
        m.text(&d.severity);
        m.raw("</td><td>");
        m.text(&d.code);
        m.raw("</td><td class=\"loc\">");
        m.text(&d.position);
        m.raw("</td><td class=\"msg\">");
        m.text(d.message.trim_end());
        m.raw("</td></tr>\n");
    }
    m.raw("</tbody></table></section>\n");
}
