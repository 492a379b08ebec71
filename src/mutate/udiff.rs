//! A unified diff of two texts (`--- a/file`, `+++ b/file`, `@@` hunks with three lines of
//! context), for `kpol mutate --diff` and patched-resource mismatches.

/// One line of the edit script.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Line<'a> {
    Same(&'a str),
    Del(&'a str),
    Add(&'a str),
}

const CONTEXT: usize = 3;

/// The unified diff of `old` → `new`, empty when they are equal.
pub fn unified(old: &str, new: &str, old_name: &str, new_name: &str) -> String {
    if old == new {
        return String::new();
    }
    let a: Vec<&str> = old.split_inclusive('\n').collect();
    let b: Vec<&str> = new.split_inclusive('\n').collect();
    let script = edit_script(&a, &b);
    let mut out = format!("--- {old_name}\n+++ {new_name}\n");
    // Positions in the script of changed lines, grouped into hunks.
    let changed: Vec<usize> = (0..script.len())
        .filter(|&i| !matches!(script[i], Line::Same(_)))
        .collect();
    let mut i = 0;
    while i < changed.len() {
        let start = changed[i].saturating_sub(CONTEXT);
        let mut end = changed[i];
        // Changes at most twice the context apart share a hunk (as `diff -u` joins them).
        while i < changed.len() && changed[i] <= end + 2 * CONTEXT + 1 {
            end = changed[i];
            i += 1;
        }
        let end = (end + CONTEXT + 1).min(script.len());
        let (mut a_line, mut b_line) = (1, 1);
        for l in &script[..start] {
            match l {
                Line::Same(_) => {
                    a_line += 1;
                    b_line += 1;
                }
                Line::Del(_) => a_line += 1,
                Line::Add(_) => b_line += 1,
            }
        }
        let hunk = &script[start..end];
        let a_len = hunk.iter().filter(|l| !matches!(l, Line::Add(_))).count();
        let b_len = hunk.iter().filter(|l| !matches!(l, Line::Del(_))).count();
        let a_start = if a_len == 0 { a_line - 1 } else { a_line };
        let b_start = if b_len == 0 { b_line - 1 } else { b_line };
        out.push_str(&format!("@@ -{a_start},{a_len} +{b_start},{b_len} @@\n"));
        for l in hunk {
            let (sign, text) = match l {
                Line::Same(t) => (' ', t),
                Line::Del(t) => ('-', t),
                Line::Add(t) => ('+', t),
            };
            out.push(sign);
            out.push_str(text);
            if !text.ends_with('\n') {
                out.push_str("\n\\ No newline at end of file\n");
            }
        }
    }
    out
}

/// Common prefix and suffix, then an LCS on the middle (replaced wholesale when huge).
fn edit_script<'a>(a: &[&'a str], b: &[&'a str]) -> Vec<Line<'a>> {
    let pre = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suf = a[pre..]
        .iter()
        .rev()
        .zip(b[pre..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (am, bm) = (&a[pre..a.len() - suf], &b[pre..b.len() - suf]);
    let mut out: Vec<Line<'a>> = a[..pre].iter().map(|l| Line::Same(l)).collect();
    if am.len().saturating_mul(bm.len()) > 4_000_000 {
        out.extend(am.iter().map(|l| Line::Del(l)));
        out.extend(bm.iter().map(|l| Line::Add(l)));
    } else {
        let (n, m) = (am.len(), bm.len());
        // lcs[i][j]: LCS length of am[i..] and bm[j..].
        let mut lcs = vec![0u32; (n + 1) * (m + 1)];
        for i in (0..n).rev() {
            for j in (0..m).rev() {
                lcs[i * (m + 1) + j] = if am[i] == bm[j] {
                    lcs[(i + 1) * (m + 1) + j + 1] + 1
                } else {
                    lcs[(i + 1) * (m + 1) + j].max(lcs[i * (m + 1) + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < n || j < m {
            if i < n && j < m && am[i] == bm[j] {
                out.push(Line::Same(am[i]));
                i += 1;
                j += 1;
            } else if i < n && (j == m || lcs[(i + 1) * (m + 1) + j] >= lcs[i * (m + 1) + j + 1]) {
                out.push(Line::Del(am[i]));
                i += 1;
            } else {
                out.push(Line::Add(bm[j]));
                j += 1;
            }
        }
    }
    out.extend(a[a.len() - suf..].iter().map(|l| Line::Same(l)));
    out
}

#[cfg(test)]
mod tests {
    use super::unified;

    #[test]
    fn one_added_line_makes_one_hunk() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let new = "a\nb\nc\nd\nX\ne\nf\ng\nh\n";
        assert_eq!(
            unified(old, new, "a/f", "b/f"),
            "--- a/f\n+++ b/f\n@@ -2,6 +2,7 @@\n b\n c\n d\n+X\n e\n f\n g\n"
        );
        assert_eq!(unified(old, old, "a", "b"), "");
    }

    #[test]
    fn changes_six_lines_apart_share_a_hunk_seven_apart_do_not() {
        let old = "0\n1\n2\n3\n4\n5\n6\n7\n8\n9\n";
        let hunks = |new: &str| {
            let diff = unified(old, new, "a", "b");
            diff.lines()
                .filter(|l| l.starts_with("@@ "))
                .map(str::to_owned)
                .collect::<Vec<_>>()
        };
        // `1` and `8` changed, six unchanged lines between them: one hunk, as `diff -u`.
        assert_eq!(
            hunks("0\nA\n2\n3\n4\n5\n6\n7\nB\n9\n"),
            ["@@ -1,10 +1,10 @@"]
        );
        // `0` and `8`, seven between them: two hunks.
        assert_eq!(
            hunks("A\n1\n2\n3\n4\n5\n6\n7\nB\n9\n"),
            ["@@ -1,4 +1,4 @@", "@@ -6,5 +6,5 @@"]
        );
    }
}
