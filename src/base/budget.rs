//! The evaluation budget: one allowance of work units and built bytes per rule evaluation,
//! shared by everything that builds values while a rule is evaluated — `{{ }}` substitution,
//! JMESPath, CEL and `foreach` (docs/FUZZING.md, "Evaluation budgets").
//!
//! The allowance lives in a per-thread [`Scope`]: the outermost scope open on a thread resets
//! it, inner scopes share it. The engine opens one per rule; substitution, JMESPath searches,
//! CEL evaluations and foreach loops open their own, so a caller that opens none (a test, `kpol
//! jp`, generate) still gets a fresh allowance per operation and nothing accumulates across a
//! thread. A rule is evaluated on one thread, so the figures do not depend on `-j`.
//!
//! Past either figure every further charge in the scope fails (the allowance stays spent), and
//! the error names the budget; callers turn it into the rule's `error` result.

use std::cell::Cell;
use std::fmt;

/// Work units one rule evaluation may spend: one per JMESPath node evaluated, per CEL
/// comprehension iteration, per foreach element, per variable substituted. Real policies
/// spend well under 100,000 on the largest resources of the corpus.
pub const WORK_BUDGET: u64 = 10_000_000;
/// Work units one `foreach` element costs (validate and mutate, at any nesting level), on top
/// of what its list query and body spend: nested loops over large lists stop after 100,000
/// elements in one rule evaluation.
pub const FOREACH_ELEMENT_COST: u64 = 100;
/// Bytes one rule evaluation may build: substituted text, JMESPath values copied or made by
/// functions, CEL strings and lists made by `+` (16 MiB: what is charged is built first, so a
/// doubling value peaks at a few times this).
pub const BYTE_BUDGET: u64 = 16 * 1024 * 1024;

#[derive(Clone, Copy)]
struct State {
    depth: u32,
    work_left: u64,
    bytes_left: u64,
}

thread_local! {
    static STATE: Cell<State> = const {
        Cell::new(State { depth: 0, work_left: WORK_BUDGET, bytes_left: BYTE_BUDGET })
    };
}

/// Which allowance ran out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exceeded {
    Work,
    Bytes,
}

impl fmt::Display for Exceeded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Exceeded::Work => write!(
                f,
                "evaluation budget exceeded: more than {WORK_BUDGET} work units in one rule evaluation"
            ),
            Exceeded::Bytes => write!(
                f,
                "evaluation budget exceeded: more than {} MiB built in one rule evaluation",
                BYTE_BUDGET / (1024 * 1024)
            ),
        }
    }
}

impl std::error::Error for Exceeded {}

/// An open budget scope (see the module text); closed when dropped.
#[must_use = "the scope closes when dropped"]
pub struct Scope(());

impl Scope {
    /// Opens a scope; the outermost one on this thread starts a fresh allowance.
    pub fn enter() -> Scope {
        STATE.with(|s| {
            let mut st = s.get();
            if st.depth == 0 {
                st.work_left = WORK_BUDGET;
                st.bytes_left = BYTE_BUDGET;
            }
            st.depth += 1;
            s.set(st);
        });
        Scope(())
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        STATE.with(|s| {
            let mut st = s.get();
            st.depth = st.depth.saturating_sub(1);
            s.set(st);
        });
    }
}

/// Spends `n` work units.
pub fn work(n: u64) -> Result<(), Exceeded> {
    spend(n, Exceeded::Work)
}

/// Spends `n` bytes.
pub fn bytes(n: u64) -> Result<(), Exceeded> {
    spend(n, Exceeded::Bytes)
}

/// Spends `n` of the allowance `which`; past it, both allowances are spent.
fn spend(n: u64, which: Exceeded) -> Result<(), Exceeded> {
    STATE.with(|s| {
        let mut st = s.get();
        let left = match which {
            Exceeded::Work => &mut st.work_left,
            Exceeded::Bytes => &mut st.bytes_left,
        };
        let r = if n > *left {
            st.work_left = 0;
            st.bytes_left = 0;
            Err(which)
        } else {
            *left -= n;
            Ok(())
        };
        s.set(st);
        r
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outer_scope_resets_inner_scopes_share() {
        let _outer = Scope::enter();
        assert!(bytes(BYTE_BUDGET - 10).is_ok());
        {
            let _inner = Scope::enter();
            assert_eq!(bytes(11), Err(Exceeded::Bytes));
            // Spent: everything after fails too, work included.
            assert_eq!(work(1), Err(Exceeded::Work));
        }
        assert!(work(1).is_err());
        drop(_outer);
        let _fresh = Scope::enter();
        assert!(work(WORK_BUDGET).is_ok());
        assert_eq!(work(1), Err(Exceeded::Work));
        assert!(Exceeded::Work.to_string().contains("10000000 work units"));
        assert!(Exceeded::Bytes.to_string().contains("16 MiB built"));
    }
}
