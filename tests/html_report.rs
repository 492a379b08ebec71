//! `kpol check --format html` and `kpol report`, over testdata/html (markup in policy
//! annotations, rule messages, resource names and namespaces, a PolicyException) plus a
//! generated file of failing Pods, so that the findings table pages.
//!
//! The page is checked as written (every element and attribute: nothing is fetched, no
//! injected element) and as Chromium renders it (`--dump-dom` after the script ran, and a
//! `--screenshot`): the headline counts equal the JSON summary of the same run, hostile
//! names are text, the script ran under the page's Content-Security-Policy and paged the
//! table. Chromium is Debian's `chromium` (`KPOL_CHROMIUM` names another binary); without
//! it the browser test says so on stderr and returns, unless `CI` is set: there it fails
//! (`.ci/run` installs it).

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// Pods generated beside the fixtures, each failing `no-latest` (more than a page of 100).
const GENERATED: usize = 130;

fn kpol(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kpol"))
        .args(args)
        .current_dir(dir)
        .env("SOURCE_DATE_EPOCH", "1767225600")
        .output()
        .expect("run kpol")
}

/// A working directory with `resources/` (the fixtures and the generated Pods) and
/// `policies/`, fresh for each test.
fn workspace(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("html-report-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/html");
    for sub in ["resources", "policies"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
        for e in std::fs::read_dir(src.join(sub)).unwrap() {
            let e = e.unwrap();
            std::fs::copy(e.path(), dir.join(sub).join(e.file_name())).unwrap();
        }
    }
    let mut many = String::new();
    for i in 0..GENERATED {
        many.push_str(&format!(
            "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: gen-{i:03}\n  namespace: ns-{}\n  \
             labels: {{team: t}}\nspec:\n  containers:\n    - name: app\n      image: nginx:latest\n",
            i % 7
        ));
    }
    // After the fixtures in input order, so that the hostile Pods are on the first page.
    std::fs::write(dir.join("resources/more pods.yaml"), many).unwrap();
    dir
}

const CHECK: &[&str] = &["check", "--no-config", "resources", "-p", "policies"];

fn check(dir: &Path, more: &[&str]) -> Output {
    let args: Vec<&str> = CHECK.iter().chain(more).copied().collect();
    let o = kpol(&args, dir);
    assert!(
        o.status.code() == Some(1),
        "exit {:?}: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// One start tag of the page: its name, attributes, and the text of a script or style.
#[derive(Debug)]
struct Tag {
    name: String,
    attrs: Vec<(String, String)>,
    raw_text: String,
}

/// The start tags of an HTML text that escapes `<` and `>` in text and attribute values
/// (kpol's page; a DOM that Chromium serialised escapes `<` in text and `"` in values), with
/// the raw text of `<script>` and `<style>`.
fn tags(html: &str) -> Vec<Tag> {
    let b = html.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let find = |from: usize, pat: &str| html[from..].find(pat).map_or(html.len(), |p| from + p);
    while i < b.len() {
        if b[i] != b'<' {
            i += 1;
            continue;
        }
        if html[i..].starts_with("<!--") {
            i = find(i, "-->") + 3;
            continue;
        }
        if i + 1 < b.len() && (b[i + 1] == b'/' || b[i + 1] == b'!') {
            i = find(i, ">") + 1;
            continue;
        }
        let start = i + 1;
        let mut j = start;
        while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'-') {
            j += 1;
        }
        if j == start {
            i += 1;
            continue;
        }
        let name = html[start..j].to_ascii_lowercase();
        let mut attrs = Vec::new();
        loop {
            while j < b.len() && b[j].is_ascii_whitespace() {
                j += 1;
            }
            if j >= b.len() || b[j] == b'>' {
                j += 1;
                break;
            }
            if b[j] == b'/' {
                j += 1;
                continue;
            }
            let a = j;
            while j < b.len() && !b[j].is_ascii_whitespace() && !matches!(b[j], b'=' | b'>' | b'/')
            {
                j += 1;
            }
            let attr = html[a..j].to_ascii_lowercase();
            let mut value = String::new();
            if j < b.len() && b[j] == b'=' {
                j += 1;
                if j < b.len() && (b[j] == b'"' || b[j] == b'\'') {
                    let q = b[j] as char;
                    let end = html[j + 1..].find(q).map_or(html.len(), |p| j + 1 + p);
                    value = html[j + 1..end].to_owned();
                    j = end + 1;
                } else {
                    let v = j;
                    while j < b.len() && !b[j].is_ascii_whitespace() && b[j] != b'>' {
                        j += 1;
                    }
                    value = html[v..j].to_owned();
                }
            }
            attrs.push((attr, value));
        }
        let mut raw_text = String::new();
        if name == "script" || name == "style" {
            let end = find(j, &format!("</{name}"));
            raw_text = html[j..end].to_owned();
            j = end;
        }
        out.push(Tag {
            name,
            attrs,
            raw_text,
        });
        i = j;
    }
    out
}

const ELEMENTS: &[&str] = &[
    "html", "head", "meta", "title", "script", "style", "body", "header", "h1", "h2", "p", "time",
    "section", "div", "span", "b", "i", "code", "nav", "a", "br", "table", "thead", "tbody", "tr",
    "th", "td", "details", "summary", "svg", "g", "text", "rect", "input", "select", "option",
    "button", "noscript", "textarea",
];

/// Whether anything in the page could make a request or run injected code: an element
/// outside kpol's set, an event handler, a `src`, a style attribute, a link that is not a
/// fragment or a relative path, a URL or import in the styles or scripts.
fn leaks(html: &str) -> Vec<String> {
    let mut out = Vec::new();
    for t in tags(html) {
        if !ELEMENTS.contains(&t.name.as_str()) {
            out.push(format!("element <{}>", t.name));
        }
        for (a, v) in &t.attrs {
            let bad = a.starts_with("on")
                || matches!(
                    a.as_str(),
                    "src"
                        | "srcset"
                        | "style"
                        | "action"
                        | "formaction"
                        | "background"
                        | "xlink:href"
                )
                || (a == "href"
                    && !(v.starts_with('#') || v.starts_with("./") || v.starts_with("../")))
                || (a == "href" && (v.contains("//") || v.contains(':')));
            if bad {
                out.push(format!("<{} {a}=\"{v}\">", t.name));
            }
        }
        for pat in [
            "url(",
            "@import",
            "http:",
            "https:",
            "//",
            "fetch(",
            "XMLHttpRequest",
            "import(",
        ] {
            if t.raw_text.contains(pat) {
                out.push(format!("<{}> contains {pat}", t.name));
            }
        }
    }
    out
}

/// The text of the element with `id` (up to its first child tag).
fn text_of(html: &str, id: &str) -> String {
    let at = html
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no #{id}"));
    let rest = &html[at..];
    let open = rest.find('>').unwrap() + 1;
    let close = rest[open..].find('<').unwrap() + open;
    rest[open..close].to_owned()
}

fn summary(dir: &Path) -> Value {
    let o = check(dir, &["--format", "json"]);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    doc["summary"].clone()
}

/// `kpol check --format html`, `kpol report` on its `--format json` and on the merged JSON
/// of two shards write the same page.
#[test]
fn the_run_its_json_and_merged_shards_give_the_same_page() {
    let dir = workspace("same");
    check(&dir, &["--format", "html", "-o", "direct.html"]);
    check(&dir, &["--format", "json", "-o", "run.json"]);
    check(
        &dir,
        &["--format", "json", "--shard", "1/2", "-o", "s1.json"],
    );
    check(
        &dir,
        &["--format", "json", "--shard", "2/2", "-o", "s2.json"],
    );
    let merged = kpol(&["merge", "s2.json", "s1.json", "-o", "merged.json"], &dir);
    assert_eq!(merged.status.code(), Some(1));
    for json in ["run.json", "merged.json"] {
        let o = kpol(&["report", json, "-o", "from-json.html"], &dir);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let a = std::fs::read_to_string(dir.join("direct.html")).unwrap();
        let b = std::fs::read_to_string(dir.join("from-json.html")).unwrap();
        assert!(a == b, "kpol report {json} differs from --format html");
    }
    // On standard output, links are relative to the working directory.
    let o = kpol(&["report", "run.json"], &dir);
    let html = String::from_utf8(o.stdout).unwrap();
    assert!(html.contains("href=\"./resources/more%20pods.yaml\""));
}

/// A file that is not kpol's JSON result is refused with the reason (exit 2).
#[test]
fn report_refuses_what_is_not_a_check_result() {
    let dir = workspace("refuse");
    std::fs::write(dir.join("other.json"), "{\"version\": 2, \"results\": []}").unwrap();
    for (file, why) in [
        (
            "other.json",
            "other.json: not a kpol check --format json report",
        ),
        ("missing.json", "missing.json: "),
    ] {
        let o = kpol(&["report", file], &dir);
        assert_eq!(o.status.code(), Some(2));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(why), "{err}");
        assert!(o.stdout.is_empty());
    }
}

/// Every element and attribute of the written page is kpol's own: the hostile names,
/// namespaces, annotations and messages are escaped text, and nothing is fetched.
#[test]
fn hostile_strings_are_text_and_nothing_leaves_the_page() {
    let dir = workspace("hostile");
    let o = check(&dir, &["--format", "html"]);
    let html = String::from_utf8(o.stdout).unwrap();
    assert_eq!(leaks(&html), Vec::<String>::new());
    let scripts = tags(&html)
        .into_iter()
        .filter(|t| t.name == "script")
        .count();
    assert_eq!(scripts, 2);
    for text in [
        "&lt;script&gt;alert(1)&lt;/script&gt;",
        "&quot;&gt;&lt;img src=x onerror=alert(2)&gt;",
        "x&#39; onmouseover=&#39;alert(3)",
        "Pinned images &lt;script&gt;alert(&#39;title&#39;)&lt;/script&gt;",
        "Best &lt;b&gt;Practices&lt;/b&gt;",
        "image tag &lt;b&gt;latest&lt;/b&gt; is not allowed &amp; never will be",
        "PolicyException legacy-&lt;i&gt;exempt&lt;/i&gt;",
    ] {
        assert!(html.contains(text), "missing {text}");
    }
    // The scanner finds what it is for.
    let planted = html.replacen("<body>", "<body><img src=\"https://x.example/t.png\">", 1);
    assert_eq!(leaks(&planted).len(), 2, "{:?}", leaks(&planted));
    assert!(!leaks("<style>a{background:url(x.png)}</style><a href=\"javascript:x\">").is_empty());
}

fn chromium() -> Option<PathBuf> {
    let candidates = std::env::var_os("KPOL_CHROMIUM")
        .map(|c| vec![PathBuf::from(c)])
        .unwrap_or_else(|| ["chromium", "chromium-browser"].map(PathBuf::from).to_vec());
    let found = candidates.into_iter().find(|c| {
        Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if found.is_none() {
        let msg = "chromium not found (install Debian's `chromium`, or set KPOL_CHROMIUM)";
        assert!(
            std::env::var_os("CI").is_none(),
            "{msg}: CI must run the browser test"
        );
        eprintln!("html_report browser test NOT RUN: {msg}");
    }
    found
}

fn headless(browser: &Path, profile: &Path, what: &[&str], page: &Path) -> Output {
    let url = format!("file://{}", page.display());
    Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--hide-scrollbars",
            "--window-size=1400,2200",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(what)
        .arg(url)
        .output()
        .expect("run chromium")
}

/// The page as Chromium renders it: the headline counts are the JSON summary's, the
/// script ran (allowed by the page's hashes) and paged the table, hostile names are text.
#[test]
fn chromium_renders_the_summary_and_no_injected_element() {
    let Some(browser) = chromium() else {
        return;
    };
    let dir = workspace("chromium");
    check(&dir, &["--format", "html", "-o", "report.html"]);
    let page = dir.join("report.html");
    let profile = dir.join("profile");
    let o = headless(&browser, &profile, &["--dump-dom"], &page);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dom = String::from_utf8(o.stdout).unwrap();

    let s = summary(&dir);
    for key in ["pass", "fail", "warn", "error", "skip"] {
        assert_eq!(
            text_of(&dom, &format!("n-{key}")),
            s[key].as_u64().unwrap().to_string(),
            "{key}"
        );
    }
    // 4 fixture Pods and the generated ones; the fixtures' two latest-tag Pods, the
    // unlabelled one and every generated Pod fail.
    let resources = 4 + GENERATED;
    assert_eq!(text_of(&dom, "n-resources"), resources.to_string());
    assert_eq!(text_of(&dom, "n-compliant-resources"), "2");
    // The script ran: the document is marked and the pager counted the findings.
    assert!(dom.contains("class=\"js ready\""), "the script did not run");
    let findings =
        s["fail"].as_u64().unwrap() + s["warn"].as_u64().unwrap() + s["error"].as_u64().unwrap();
    assert_eq!(
        text_of(&dom, "pager-info"),
        format!("findings 1\u{2013}100 of {findings}")
    );
    let at = dom.find("id=\"findings-table\"").unwrap();
    let table = &dom[at..at + dom[at..].find("</table>").unwrap()];
    assert_eq!(
        table.matches("<tr>").count(),
        101,
        "the heading and a page of 100"
    );
    // The DOM Chromium built holds kpol's elements only: the hostile strings are text.
    assert_eq!(leaks(&dom), Vec::<String>::new());
    assert_eq!(tags(&dom).iter().filter(|t| t.name == "script").count(), 2);
    assert!(dom.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));

    // A filter from the link (`#q=`): the script's filter finds the one generated Pod, and
    // the hostile Pod by its name.
    let filtered = page.display().to_string() + "#q=gen-007";
    let o = headless(&browser, &profile, &["--dump-dom"], Path::new(&filtered));
    let dom = String::from_utf8(o.stdout).unwrap();
    assert_eq!(
        text_of(&dom, "pager-info"),
        format!("findings 1\u{2013}1 of 1 (filtered from {findings})")
    );
    assert!(dom.contains("<td>gen-007</td>"));
    let filtered = page.display().to_string() + "#q=%3Cscript%3E%20no-latest";
    let o = headless(&browser, &profile, &["--dump-dom"], Path::new(&filtered));
    let dom = String::from_utf8(o.stdout).unwrap();
    assert_eq!(
        text_of(&dom, "pager-info"),
        format!("findings 1\u{2013}1 of 1 (filtered from {findings})")
    );

    let shot = dir.join("report.png");
    let arg = format!("--screenshot={}", shot.display());
    let o = headless(&browser, &profile, &[&arg], &page);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let png = std::fs::read(&shot).unwrap();
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 10_000,
        "{} bytes",
        png.len()
    );
}

/// A Pod failing `no-latest`, as `more pods.yaml` writes them.
fn latest_pod(name: &str, annotations: &str) -> String {
    format!(
        "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  namespace: ns-new\n  \
         labels: {{team: t}}\n{annotations}spec:\n  containers:\n    - name: app\n      image: nginx:latest\n"
    )
}

/// `--baseline`: the page (of the run, and `kpol report` of its JSON) says the findings
/// listed are the new ones and counts what the baseline took and, with `--baseline-strict`,
/// what is gone from it; the skip card counts the suppressed results.
#[test]
fn a_baseline_run_says_what_is_new_baselined_and_gone() {
    let dir = workspace("baseline");
    let o = kpol(&[CHECK, &["--write-baseline", "base.json"]].concat(), &dir);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let recorded = summary(&dir);
    let recorded = recorded["fail"].as_u64().unwrap()
        + recorded["warn"].as_u64().unwrap()
        + recorded["error"].as_u64().unwrap();
    assert!(recorded > GENERATED as u64);
    // Two new failures, one suppressed; three generated Pods fixed (gone from the baseline).
    let new = [
        latest_pod("new-a", ""),
        latest_pod("new-b", ""),
        latest_pod(
            "quiet",
            "  annotations:\n    kpol.io/ignore: \"no-latest -- vendor image\"\n",
        ),
    ]
    .concat();
    std::fs::write(dir.join("resources/new.yaml"), new).unwrap();
    let more = dir.join("resources/more pods.yaml");
    let text = std::fs::read_to_string(&more).unwrap();
    let fixed = text.replacen("nginx:latest", "nginx:1.27", 3);
    std::fs::write(&more, fixed).unwrap();

    let args = ["--baseline", "base.json", "--baseline-strict"];
    check(
        &dir,
        &[&args[..], &["--format", "json", "-o", "run.json"]].concat(),
    );
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
    let s = &doc["summary"];
    assert_eq!(s["fail"], 2, "{s}");
    assert_eq!(s["baselined"], recorded - 3, "{s}");
    assert_eq!(s["baselineStale"], 3, "{s}");
    assert_eq!(s["suppressed"], 1, "{s}");
    check(
        &dir,
        &[&args[..], &["--format", "html", "-o", "run.html"]].concat(),
    );
    let o = kpol(&["report", "run.json", "-o", "report.html"], &dir);
    assert_eq!(o.status.code(), Some(0));
    let direct = std::fs::read_to_string(dir.join("run.html")).unwrap();
    let saved = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(
        direct == saved,
        "kpol report run.json differs from --format html"
    );
    assert_eq!(text_of(&direct, "n-fail"), "2");
    assert_eq!(text_of(&direct, "n-baselined"), (recorded - 3).to_string());
    assert_eq!(text_of(&direct, "n-baseline-stale"), "3");
    assert_eq!(text_of(&direct, "n-suppressed"), "1");
    assert_eq!(text_of(&direct, "n-skip"), s["skip"].to_string());
    assert!(direct.contains("<h2>New findings</h2>"));
    assert!(direct.contains(&format!(
        "the findings listed are the <b>new</b> ones, not recorded in the baseline; {} recorded \
         findings are left out and fail nothing; 3 recorded findings are gone",
        recorded - 3
    )));
    // Without --baseline the same page shows no baseline.
    check(&dir, &["--format", "html", "-o", "plain.html"]);
    let plain = std::fs::read_to_string(dir.join("plain.html")).unwrap();
    assert!(!plain.contains("n-baselined") && plain.contains("<h2>Findings</h2>"));
}
