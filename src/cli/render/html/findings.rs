//! The findings of the HTML page: the table the script pages (its rows as data, a plain
//! table of the first ones without scripts), and the results that exceptions and
//! suppressions skipped.

use super::markup::{self, Markup};
use super::model::{Page, Row};
use super::{action_badge, severity_cell, severity_rank, shown_or_none};

fn location(m: &mut Markup, row: &Row, base: Option<&std::path::Path>) {
    m.raw("<td class=\"loc\">");
    if let Some(file) = &row.file {
        let text = match row.line {
            Some(l) => format!("{file}:{l}"),
            None => file.clone(),
        };
        match markup::relative_href(base, file) {
            Some(href) => {
                m.raw("<a");
                m.attr("href", &href);
                m.raw(">");
                m.text(&text);
                m.raw("</a>");
            }
            None => m.text(&text),
        }
    }
    m.raw("</td>");
}

/// The cells a finding and a waived result share: policy/rule, kind, namespace, name, place.
fn resource_cells(m: &mut Markup, page: &Page, row: &Row, base: Option<&std::path::Path>) {
    m.raw("<td><a");
    m.attr("href", &format!("#p-{}", row.policy));
    m.raw(">");
    m.text(
        page.policies
            .get(row.policy)
            .map_or("", |p| p.name.as_str()),
    );
    m.raw("</a>");
    if !row.rule.is_empty() {
        m.raw("<br>");
        m.text(&row.rule);
    }
    m.raw("</td><td>");
    m.text(shown_or_none(&row.kind));
    m.raw("</td><td>");
    if row.namespace.is_empty() {
        m.raw("<span class=\"none\">(none)</span>");
    } else {
        m.text(&row.namespace);
    }
    m.raw("</td><td>");
    m.text(&row.name);
    m.raw("</td>");
    location(m, row, base);
}

pub(super) fn findings(m: &mut Markup, page: &Page, base: Option<&std::path::Path>) {
    if page.baseline().is_some() {
        m.raw("<section id=\"findings\"><h2>New findings</h2>\n");
        m.raw("<p class=\"note\">Every fail, warn and error result the baseline does not record (");
    } else {
        m.raw("<section id=\"findings\"><h2>Findings</h2>\n");
        m.raw("<p class=\"note\">Every fail, warn and error result (");
    }
    m.num(page.rows.len());
    m.raw("). Click a column heading to sort; a policy, namespace or kind above filters the table.</p>\n");
    m.raw("<p class=\"print-note\">Printed: the findings shown on screen (the current page and filter).</p>\n");
    m.raw("<div class=\"controls js-only\"><input type=\"search\" id=\"q\" placeholder=\"filter: words in any column\" aria-label=\"filter findings\">");
    m.raw(
        "<select id=\"f-status\" aria-label=\"result\"><option value=\"\">any result</option>\
           <option>fail</option><option>warn</option><option>error</option></select>",
    );
    m.raw(
        "<select id=\"f-action\" aria-label=\"action\"><option value=\"\">any action</option>\
           <option>Enforce</option><option>Audit</option><option>Warn</option></select>",
    );
    m.raw("<select id=\"f-sev\" aria-label=\"severity\"><option value=\"\">any severity</option>");
    let mut sevs: Vec<&String> = page.severities.keys().filter(|s| !s.is_empty()).collect();
    sevs.sort_by_key(|s| (severity_rank(s), (*s).clone()));
    for s in sevs {
        m.raw("<option>");
        m.text(s);
        m.raw("</option>");
    }
    m.raw("<option value=\"(unset)\">(unset)</option></select>");
    m.raw("<span class=\"chip\" id=\"chip\" hidden><span></span><button type=\"button\" aria-label=\"clear\">×</button></span></div>\n");
    m.raw("<table class=\"sortable\" id=\"findings-table\"><thead><tr><th>result</th><th>action</th><th>severity</th>\
           <th>policy / rule</th><th>kind</th><th>namespace</th><th>name</th><th>location</th><th>message</th></tr></thead>\
           <tbody></tbody></table>\n");
    m.raw("<div class=\"pager js-only\"><button type=\"button\" id=\"prev\">‹ previous</button>\
           <button type=\"button\" id=\"next\">next ›</button><span id=\"pager-info\"></span>\
           <select id=\"f-size\" aria-label=\"rows per page\"><option>100</option><option>500</option>\
           <option>2000</option></select></div>\n");
    // The rows, for the script to page: one JSON document of interned strings, escaped as
    // text of a hidden textarea (read back with `.value`, shown with `textContent`).
    m.raw("<textarea id=\"findings-data\" hidden readonly aria-hidden=\"true\">");
    m.text(&findings_data(page, base));
    m.raw("</textarea>\n");
    // Without scripts: the first rows as a plain table.
    m.raw("<noscript><p class=\"note\">Scripts are off: the first ");
    m.num(page.rows.len().min(NOSCRIPT_ROWS));
    m.raw(" findings, unsorted (the JSON result has them all).</p>\n<table><thead><tr><th>result</th><th>action</th>\
           <th>severity</th><th>policy / rule</th><th>kind</th><th>namespace</th><th>name</th><th>location</th>\
           <th>message</th></tr></thead><tbody>\n");
    for row in page.rows.iter().take(NOSCRIPT_ROWS) {
        m.raw("<tr><td><span");
        m.attr("class", &format!("s s-{}", row.status.as_str()));
        m.raw(">");
        m.raw(row.status.as_str());
        m.raw("</span></td><td>");
        action_badge(m, &row.action);
        m.raw("</td>");
        severity_cell(m, page.policies.get(row.policy).map_or("", |p| &p.severity));
        resource_cells(m, page, row, base);
        m.raw("<td class=\"msg\">");
        m.text(row.message.trim_end());
        m.raw("</td></tr>\n");
    }
    m.raw("</tbody></table></noscript>\n</section>\n");
}

/// Findings listed without scripts.
const NOSCRIPT_ROWS: usize = 500;

/// The findings as the script reads them: `s`, every string once (as [`markup::visible`]
/// shows it); `p`, per policy `[name, severity]`; `f`, per file `[text, href]` (`-1`: no
/// link); `r`, per finding `[status, action, policy, rule, kind, namespace, name, file, line,
/// message]`, strings and files by index (`-1`: none), line `0` when unknown.
fn findings_data(page: &Page, base: Option<&std::path::Path>) -> String {
    use std::collections::HashMap;
    let mut strings: Vec<String> = Vec::new();
    let mut index: HashMap<String, i64> = HashMap::new();
    let mut intern = |s: &str| -> i64 {
        let s = markup::visible(s);
        if let Some(i) = index.get(s.as_ref()) {
            return *i;
        }
        let i = strings.len() as i64;
        strings.push(s.clone().into_owned());
        index.insert(s.into_owned(), i);
        i
    };
    let policies: Vec<[i64; 2]> = page
        .policies
        .iter()
        .map(|p| [intern(&p.name), intern(&p.severity)])
        .collect();
    let mut files: Vec<[i64; 2]> = Vec::new();
    let mut file_index: HashMap<&str, i64> = HashMap::new();
    let mut rows: Vec<[i64; 10]> = Vec::with_capacity(page.rows.len());
    for row in &page.rows {
        let file = match &row.file {
            Some(f) => match file_index.get(f.as_str()) {
                Some(i) => *i,
                None => {
                    let href = markup::relative_href(base, f).map_or(-1, |h| intern(&h));
                    files.push([intern(f), href]);
                    let i = files.len() as i64 - 1;
                    file_index.insert(f, i);
                    i
                }
            },
            None => -1,
        };
        let action = match row.action.as_str() {
            "Enforce" => 1,
            "Warn" => 2,
            _ => 0,
        };
        rows.push([
            row.status as i64,
            action,
            row.policy as i64,
            intern(&row.rule),
            intern(&row.kind),
            intern(&row.namespace),
            intern(&row.name),
            file,
            i64::from(row.line.unwrap_or(0)),
            intern(row.message.trim_end()),
        ]);
    }
    let doc = serde_json::json!({"s": strings, "p": policies, "f": files, "r": rows});
    doc.to_string()
}

pub(super) fn waived(m: &mut Markup, page: &Page, base: Option<&std::path::Path>) {
    m.raw("<section id=\"waived\"><h2>Exceptions and suppressions</h2>\n");
    if page.waived.is_empty() {
        m.raw("<p class=\"note\">No result was skipped by a PolicyException or a suppression.</p></section>\n");
        return;
    }
    m.raw("<p class=\"note\">Results skipped by a PolicyException or a suppression (");
    m.num(page.waived.len());
    m.raw(").</p>\n<table class=\"sortable\" id=\"waived-table\"><thead><tr><th>by</th><th>reason</th><th>expires</th>\
           <th>policy / rule</th><th>kind</th><th>namespace</th><th>name</th><th>location</th></tr></thead><tbody>\n");
    for row in &page.waived {
        m.raw("<tr><td>");
        for (i, x) in row.exceptions.iter().enumerate() {
            if i > 0 {
                m.raw("<br>");
            }
            m.raw("PolicyException ");
            m.text(x);
        }
        let (reason, expires) = match &row.suppression {
            Some((r, e)) => {
                if !row.exceptions.is_empty() {
                    m.raw("<br>");
                }
                m.raw("suppression");
                (r.as_deref().unwrap_or(&row.message), e.as_deref())
            }
            None => (row.message.as_str(), None),
        };
        m.raw("</td><td class=\"msg\">");
        m.text(reason.trim_end());
        m.raw("</td><td>");
        m.text(expires.unwrap_or(""));
        m.raw("</td>");
        resource_cells(m, page, row, base);
        m.raw("</tr>\n");
    }
    m.raw("</tbody></table></section>\n");
}
