//! Kyverno's CEL `random` library (`kyverno/sdk:extensions/cel/libs/random`): `random()` and
//! `random(pattern)` (also `random.random`) give a string the regular expression matches, as
//! goregen generates it — `random()` uses Kyverno's default pattern `[0-9a-z]{8}`; an
//! unbounded repetition (`*`, `+`, `{n,}`) repeats at most ten more times than its minimum.
//!
//! Deliberate difference: kpol's strings are reproducible. The choices come from a generator
//! seeded by the pattern, so the same pattern always gives the same string (every run, every
//! thread count); Kyverno's differ from call to call. What a policy can rely on — the string
//! matches the pattern — holds for both.

use regex_syntax::hir::{Class, Hir, HirKind};

use cel::{Context, ExecutionError, Value};

/// The pattern of `random()` (Kyverno's `random_default_expr`).
const DEFAULT_PATTERN: &str = "[0-9a-z]{8}";
/// How many repetitions past its minimum an unbounded repetition may add (goregen's default).
const UNBOUNDED_EXTRA: u32 = 10;
/// The longest string kpol generates.
const MAX_LEN: usize = 1 << 20;

pub(super) fn register(ctx: &mut Context<'static, 'static>) {
    for name in ["random", "random.random"] {
        let _ = ctx.add_function(name, random);
    }
}

fn random(
    cel::extractors::Arguments(args): cel::extractors::Arguments,
) -> Result<Value, ExecutionError> {
    let pattern = match args.as_slice() {
        [] => DEFAULT_PATTERN.to_owned(),
        [Value::String(s)] => s.to_string(),
        [other] => {
            return Err(ExecutionError::function_error(
                "random",
                format!(
                    "type conversion error from '{}' to 'string'",
                    other.type_of()
                ),
            ));
        }
        _ => return Err(ExecutionError::invalid_argument_count(1, args.len())),
    };
    generate(&pattern)
        .map(Value::from)
        .map_err(|e| ExecutionError::function_error("random", e))
}

/// A string `pattern` matches, chosen reproducibly from the pattern.
pub fn generate(pattern: &str) -> Result<String, String> {
    let hir = regex_syntax::parse(pattern)
        .map_err(|e| format!("error parsing regexp: {}", first_line(&e.to_string())))?;
    let mut rng = SplitMix(fnv(pattern));
    let mut out = String::new();
    emit(&hir, &mut rng, &mut out)?;
    Ok(out)
}

fn first_line(s: &str) -> String {
    s.lines()
        .filter(|l| l.trim_start().starts_with("error:"))
        .map(|l| l.trim().trim_start_matches("error:").trim().to_owned())
        .next()
        .unwrap_or_else(|| s.to_owned())
}

fn emit(hir: &Hir, rng: &mut SplitMix, out: &mut String) -> Result<(), String> {
    if out.len() > MAX_LEN {
        return Err(format!("generated string longer than {MAX_LEN} bytes"));
    }
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => {}
        HirKind::Literal(lit) => out.push_str(&String::from_utf8_lossy(&lit.0)),
        HirKind::Class(Class::Unicode(c)) => {
            let ranges = c.ranges();
            let total: u64 = ranges
                .iter()
                .map(|r| u64::from(r.end()) - u64::from(r.start()) + 1)
                .sum();
            if total == 0 {
                return Err("the pattern has an empty character class".to_owned());
            }
            let mut pick = rng.below(total);
            for r in ranges {
                let size = u64::from(r.end()) - u64::from(r.start()) + 1;
                if pick < size {
                    let cp = u32::from(r.start()) + pick as u32;
                    out.push(char::from_u32(cp).unwrap_or(r.start()));
                    break;
                }
                pick -= size;
            }
        }
        HirKind::Class(Class::Bytes(c)) => {
            let ranges = c.ranges();
            let total: u64 = ranges
                .iter()
                .map(|r| u64::from(r.end()) - u64::from(r.start()) + 1)
                .sum();
            if total == 0 {
                return Err("the pattern has an empty character class".to_owned());
            }
            let mut pick = rng.below(total);
            for r in ranges {
                let size = u64::from(r.end()) - u64::from(r.start()) + 1;
                if pick < size {
                    out.push(char::from(r.start() + pick as u8));
                    break;
                }
                pick -= size;
            }
        }
        HirKind::Repetition(rep) => {
            let max = rep
                .max
                .unwrap_or_else(|| rep.min.saturating_add(UNBOUNDED_EXTRA));
            let span = u64::from(max.saturating_sub(rep.min)) + 1;
            let n = u64::from(rep.min) + rng.below(span);
            for _ in 0..n {
                emit(&rep.sub, rng, out)?;
            }
        }
        HirKind::Capture(c) => emit(&c.sub, rng, out)?,
        HirKind::Concat(items) => {
            for h in items {
                emit(h, rng, out)?;
            }
        }
        HirKind::Alternation(items) => {
            let i = rng.below(items.len() as u64) as usize;
            if let Some(h) = items.get(i) {
                emit(h, rng, out)?;
            }
        }
    }
    Ok(())
}

fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// SplitMix64: small, fast and good enough to pick characters.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0).
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cel::eval_expr as run;

    fn string(expr: &str) -> String {
        match run(expr) {
            Ok(Value::String(s)) => s.to_string(),
            other => panic!("{expr}: {other:?}"),
        }
    }

    #[test]
    fn generated_strings_match_their_pattern() {
        // kyverno/sdk's cases: a UUID-like pattern and the default one.
        let uuid = "[A-Z0-9]{8}-[A-Z0-9]{4}-[A-Z0-9]{4}-[A-Z0-9]{4}-[A-Z0-9]{12}";
        let s = string(&format!("random.random('{uuid}')"));
        assert!(
            regex::Regex::new(&format!("^{uuid}$"))
                .unwrap()
                .is_match(&s),
            "{s}"
        );
        let s = string("random()");
        assert!(
            regex::Regex::new("^[0-9a-z]{8}$").unwrap().is_match(&s),
            "{s}"
        );
        for p in ["(ab|cd)+x?", "a*b{2,}", "[^a-z]\\d\\w\\s", "^x.y$"] {
            let s = generate(p).unwrap();
            let full = format!("^(?:{p})$");
            assert!(regex::Regex::new(&full).unwrap().is_match(&s), "{p}: {s:?}");
        }
    }

    #[test]
    fn the_same_pattern_gives_the_same_string() {
        assert_eq!(string("random('[a-z]{12}')"), string("random('[a-z]{12}')"));
        assert_ne!(string("random('[a-z]{12}')"), string("random('[a-z]{13}')"));
    }

    #[test]
    fn bad_patterns_and_arguments_are_errors() {
        let e = run("random('[a-z')").unwrap_err();
        assert!(e.contains("error parsing regexp"), "{e}");
        let e = run("random(1)").unwrap_err();
        assert!(e.contains("to 'string'"), "{e}");
        assert!(run("random('a{1000}{1000}{2}')").is_err());
    }
}
