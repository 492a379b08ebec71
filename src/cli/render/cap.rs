//! `--max-findings N`: with more findings than N, the human format shows the N worst and
//! counts the rest.
//!
//! The worst come first: an Enforce failure or an error before an Audit failure or a warning
//! (the levels of `--format github`, [`super::ci_level`]), then by the policy's
//! `policies.kyverno.io/severity` (critical, high, medium, low, none), then in input order.
//! Up to N findings the output is the uncapped one, in input order. Memory stays bounded
//! however many findings a run has: at most N rendered findings are held (a heap that drops
//! the least bad), plus the counts of what was dropped. The inputs' other lines (their
//! diagnostics, suppressed results) are never dropped: they keep their place among the
//! findings until the cap first drops one (or [`HELD_LINES`] of them are held back); from
//! then on they are written at once, in input order, and the findings shown follow them.

use std::collections::BinaryHeap;
use std::io::{self, Write};

use kpol::report::Status;

/// The most always-shown pieces (an input's diagnostics, a suppressed result) held back in
/// order while the findings are under the cap.
const HELD_LINES: usize = 1024;

use crate::cli::check::{CheckReport, Finding};

/// What one input rendered, piece by piece.
#[derive(Default)]
pub struct Parts {
    pub pieces: Vec<Piece>,
}

impl Parts {
    /// One piece that is always shown: the whole of a format's text for an input.
    pub fn whole(text: Vec<u8>) -> Self {
        Parts {
            pieces: vec![Piece { rank: None, text }],
        }
    }
}

/// Rendered text and, for a finding the cap may drop, how bad it is.
pub struct Piece {
    pub rank: Option<Rank>,
    pub text: Vec<u8>,
}

/// How bad a finding is: smaller is worse. The order of the fields is the order of the cap.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub struct Rank {
    /// 0: an Enforce failure or an error; 1: an Audit failure or a warning.
    level: u8,
    /// 0: critical … 3: low, 4: no severity annotation.
    severity: u8,
    /// Which of `fail`, `warn`, `error` (for the count of what is left out).
    status: u8,
}

impl Rank {
    /// The rank of a finding the human format shows in detail; `None` for one it does not
    /// (a pass, a skip).
    pub fn of(report: &CheckReport, f: &Finding) -> Option<Rank> {
        let status = match f.status {
            Status::Fail => 0,
            Status::Warn => 1,
            Status::Error => 2,
            Status::Pass | Status::Skip => return None,
        };
        let level = match super::ci_level(f) {
            Some("error") => 0,
            _ => 1,
        };
        let severity = report
            .policies
            .get(f.policy_index)
            .and_then(|p| p.severity.as_deref())
            .map_or(4, |s| match s.trim().to_ascii_lowercase().as_str() {
                "critical" => 0,
                "high" => 1,
                "medium" => 2,
                "low" => 3,
                _ => 4,
            });
        Some(Rank {
            level,
            severity,
            status,
        })
    }
}

/// A ranked piece, ordered by rank then arrival (input order): the heap's top is the least
/// bad, the one dropped first.
struct Held {
    rank: Rank,
    seq: usize,
    text: Vec<u8>,
}

impl PartialEq for Held {
    fn eq(&self, other: &Self) -> bool {
        (self.rank, self.seq) == (other.rank, other.seq)
    }
}
impl Eq for Held {}
impl PartialOrd for Held {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Held {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.rank, self.seq).cmp(&(other.rank, other.seq))
    }
}

/// The cap over one run's output, fed input by input in input order.
pub struct Cap {
    /// `None`: no cap, every piece is written as it comes.
    limit: Option<usize>,
    /// While nothing was dropped and few pieces are held: every piece, in input order.
    queued: Vec<(usize, Piece)>,
    /// Once more than `limit` pieces came: the worst findings so far.
    heap: BinaryHeap<Held>,
    /// Whether the cap has begun dropping or flushing (`heap` is in use).
    spilled: bool,
    seq: usize,
    findings: usize,
    /// Always-shown pieces in `queued`.
    queued_others: usize,
    /// `fail`, `warn`, `error` findings left out.
    dropped: [usize; 3],
}

impl Cap {
    /// `limit`: the most findings shown (`None` or `Some(0)`: all).
    pub fn new(limit: Option<usize>) -> Self {
        Cap {
            limit: limit.filter(|n| *n > 0),
            queued: Vec::new(),
            heap: BinaryHeap::new(),
            spilled: false,
            seq: 0,
            findings: 0,
            queued_others: 0,
            dropped: [0; 3],
        }
    }

    /// Takes one input's pieces: written now, held, or (the least bad findings beyond the
    /// limit) counted and dropped.
    pub fn push(&mut self, parts: Parts, out: &mut dyn Write) -> io::Result<()> {
        let Some(limit) = self.limit else {
            for piece in parts.pieces {
                out.write_all(&piece.text)?;
            }
            return Ok(());
        };
        for piece in parts.pieces {
            self.seq += 1;
            if piece.rank.is_some() {
                self.findings += 1;
            } else {
                self.queued_others += usize::from(!self.spilled);
            }
            if !self.spilled {
                self.queued.push((self.seq, piece));
                // More findings than the limit, or many other pieces: what is held is bounded
                // from here on.
                if self.findings > limit || self.queued_others > HELD_LINES {
                    self.spill(out)?;
                }
                continue;
            }
            self.hold(self.seq, piece, out)?;
        }
        Ok(())
    }

    /// From holding everything in order to writing the always-shown pieces at once and
    /// holding only the worst findings.
    fn spill(&mut self, out: &mut dyn Write) -> io::Result<()> {
        self.spilled = true;
        for (seq, piece) in std::mem::take(&mut self.queued) {
            self.hold(seq, piece, out)?;
        }
        Ok(())
    }

    fn hold(&mut self, seq: usize, piece: Piece, out: &mut dyn Write) -> io::Result<()> {
        let Some(rank) = piece.rank else {
            return out.write_all(&piece.text);
        };
        self.heap.push(Held {
            rank,
            seq,
            text: piece.text,
        });
        if self.heap.len() > self.limit.unwrap_or(usize::MAX)
            && let Some(least) = self.heap.pop()
            && let Some(n) = self.dropped.get_mut(usize::from(least.rank.status))
        {
            *n += 1;
        }
        Ok(())
    }

    /// Writes what is held: in input order when nothing was dropped, else worst first and a
    /// line counting the rest.
    pub fn finish(&mut self, out: &mut dyn Write) -> io::Result<()> {
        for (_, piece) in std::mem::take(&mut self.queued) {
            out.write_all(&piece.text)?;
        }
        let dropped: usize = self.dropped.iter().sum();
        let mut held = std::mem::take(&mut self.heap).into_vec();
        if dropped == 0 {
            held.sort_by_key(|h| h.seq);
        } else {
            held.sort();
        }
        for h in held {
            out.write_all(&h.text)?;
        }
        if dropped > 0 {
            writeln!(out, "{}", more_line(self.dropped))?;
            writeln!(out)?;
        }
        Ok(())
    }
}

/// `… and 120 more findings (118 fail, 2 error) not shown; --max-findings 0 shows all`.
fn more_line([fail, warn, error]: [usize; 3]) -> String {
    let parts: Vec<String> = [(fail, "fail"), (warn, "warn"), (error, "error")]
        .into_iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, word)| format!("{n} {word}"))
        .collect();
    let total = fail + warn + error;
    let noun = if total == 1 { "finding" } else { "findings" };
    format!(
        "… and {total} more {noun} ({}) not shown; --max-findings 0 shows all",
        parts.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rank(level: u8, severity: u8, status: u8) -> Option<Rank> {
        Some(Rank {
            level,
            severity,
            status,
        })
    }

    fn piece(rank: Option<Rank>, text: &str) -> Piece {
        Piece {
            rank,
            text: format!("{text}\n").into_bytes(),
        }
    }

    fn run(limit: Option<usize>, inputs: Vec<Vec<Piece>>) -> String {
        let mut cap = Cap::new(limit);
        let mut out = Vec::new();
        for pieces in inputs {
            cap.push(Parts { pieces }, &mut out).unwrap();
        }
        cap.finish(&mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    fn inputs() -> Vec<Vec<Piece>> {
        vec![
            vec![
                piece(None, "diag-a"),
                piece(rank(1, 4, 0), "audit-a"),
                piece(rank(0, 2, 0), "enforce-medium-a"),
            ],
            vec![piece(rank(1, 1, 1), "warn-high-b")],
            vec![
                piece(rank(0, 1, 2), "error-high-c"),
                piece(None, "suppressed-c"),
                piece(rank(0, 4, 0), "enforce-c"),
            ],
        ]
    }

    #[test]
    fn under_the_limit_the_output_is_the_uncapped_one() {
        let all = "diag-a\naudit-a\nenforce-medium-a\nwarn-high-b\nerror-high-c\nsuppressed-c\nenforce-c\n";
        assert_eq!(run(None, inputs()), all);
        assert_eq!(run(Some(0), inputs()), all);
        assert_eq!(run(Some(5), inputs()), all);
        // Many diagnostics are written as they come, the findings under the cap after them.
        let mut many: Vec<Vec<Piece>> = (0..HELD_LINES + 1)
            .map(|i| vec![piece(None, &format!("d{i}"))])
            .collect();
        many.insert(1, vec![piece(rank(1, 4, 0), "finding")]);
        let got = run(Some(5), many);
        assert!(got.ends_with(&format!("d{HELD_LINES}\nfinding\n")), "{got}");
    }

    #[test]
    fn over_the_limit_the_worst_come_first_and_the_rest_is_counted() {
        let got = run(Some(3), inputs());
        assert_eq!(
            got,
            "diag-a\nsuppressed-c\nerror-high-c\nenforce-medium-a\nenforce-c\n\
             … and 2 more findings (1 fail, 1 warn) not shown; --max-findings 0 shows all\n\n"
        );
        let one = run(Some(1), inputs());
        assert!(
            one.contains("\nerror-high-c\n… and 4 more findings (3 fail, 1 warn)"),
            "{one}"
        );
    }

    /// However many findings come, no more than the limit are held.
    #[test]
    fn memory_is_bounded_by_the_limit() {
        let mut cap = Cap::new(Some(10));
        let mut out = Vec::new();
        for i in 0..10_000u32 {
            let r = rank((i % 2) as u8, (i % 5) as u8, 0);
            cap.push(
                Parts {
                    pieces: vec![piece(r, &i.to_string())],
                },
                &mut out,
            )
            .unwrap();
            assert!(cap.heap.len() <= 10 && cap.queued.len() <= 10);
        }
        cap.finish(&mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        // The ten worst: level 0 and severity 0, i.e. i ≡ 0 (mod 10), the earliest first.
        assert!(text.starts_with("0\n10\n20\n"), "{text}");
        assert!(
            text.contains("… and 9990 more findings (9990 fail)"),
            "{text}"
        );
    }
}
