//! Kyverno's CEL `time` library (`kyverno/sdk:extensions/cel/libs/time/lib.go`): `time.now()`,
//! `time.toCron(timestamp)` and `time.truncate(timestamp, duration)`. `time.now()` reads the
//! clock, as Kyverno does; policies use it for age checks such as "built less than N hours ago".

use cel::{Context, ExecutionError, Value};
use chrono::{DateTime, Datelike, FixedOffset, TimeDelta, Timelike, Utc};

/// Seconds from Go's zero time (0001-01-01 UTC) to the Unix epoch: `Time.Truncate` counts
/// from there.
const ZERO_TO_UNIX: i128 = 62_135_596_800;

pub(super) fn register(ctx: &mut Context<'static, 'static>) {
    let _ = ctx.add_function("time.now", now);
    let _ = ctx.add_function("time.toCron", to_cron);
    let _ = ctx.add_function("time.truncate", truncate);
}

fn now() -> Value {
    Value::Timestamp(Utc::now().fixed_offset())
}

/// `minute hour day month weekday` of the timestamp (in its own offset, like Go's fields).
fn to_cron(ts: DateTime<FixedOffset>) -> Value {
    let cron = format!(
        "{} {} {} {} {}",
        ts.minute(),
        ts.hour(),
        ts.day(),
        ts.month(),
        ts.weekday().num_days_from_sunday()
    );
    Value::from(cron)
}

/// Go's `Time.Truncate`: rounds down to a multiple of `d` since the zero time; a duration of
/// zero or less returns the time unchanged.
fn truncate(ts: DateTime<FixedOffset>, d: TimeDelta) -> Result<Value, ExecutionError> {
    let Some(step) = d.num_nanoseconds().filter(|n| *n > 0) else {
        return Ok(Value::Timestamp(ts));
    };
    let since_zero = (i128::from(ts.timestamp()) + ZERO_TO_UNIX) * 1_000_000_000
        + i128::from(ts.timestamp_subsec_nanos());
    let rem = since_zero.rem_euclid(i128::from(step));
    let back = i64::try_from(rem)
        .map(TimeDelta::nanoseconds)
        .map_err(|e| ExecutionError::function_error("time.truncate", e.to_string()))?;
    ts.checked_sub_signed(back)
        .map(Value::Timestamp)
        .ok_or_else(|| ExecutionError::function_error("time.truncate", "timestamp out of range"))
}

#[cfg(test)]
mod tests {
    use crate::cel::eval_expr as run;
    use cel::Value;

    #[test]
    fn now_is_a_recent_timestamp() {
        assert_eq!(
            run("time.now() > timestamp('2024-01-01T00:00:00Z')"),
            Ok(Value::Bool(true))
        );
        assert_eq!(
            run("time.now() - duration('4380h') < time.now()"),
            Ok(Value::Bool(true))
        );
    }

    #[test]
    fn to_cron_fields() {
        // 2024-03-05 was a Tuesday.
        assert_eq!(
            run("time.toCron(timestamp('2024-03-05T07:08:09Z'))"),
            Ok(Value::from("8 7 5 3 2"))
        );
    }

    #[test]
    fn truncate_like_go() {
        assert_eq!(
            run(
                "time.truncate(timestamp('2024-03-05T07:08:09Z'), duration('1h')) == timestamp('2024-03-05T07:00:00Z')"
            ),
            Ok(Value::Bool(true))
        );
        assert_eq!(
            run(
                "time.truncate(timestamp('2024-03-05T07:08:09Z'), duration('0s')) == timestamp('2024-03-05T07:08:09Z')"
            ),
            Ok(Value::Bool(true))
        );
    }
}
