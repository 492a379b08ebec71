//! Kyverno's time functions (`pkg/engine/jmespath/time.go`). Inputs are RFC 3339 unless a
//! layout is given; `time_parse`/`time_since` with a Go layout other than RFC 3339 (or a
//! Unix-seconds layout) are not supported by kpol yet and give an error.

use std::cmp::Ordering;

use super::{Arg, arg_str, generic};
use crate::base::duration;
use crate::jmespath::time::Time;
use crate::jmespath::{Error, value};
use crate::yaml::Node;

type R = Result<Node, Error>;

const RFC3339: &str = "2006-01-02T15:04:05Z07:00";

fn time_arg(n: &str, a: &[Arg<'_, '_>], i: usize) -> Result<Time, Error> {
    Time::parse_rfc3339(arg_str(n, a, i)?).map_err(Error::Eval)
}

fn duration_arg(n: &str, a: &[Arg<'_, '_>], i: usize) -> Result<i64, Error> {
    let s = arg_str(n, a, i)?;
    duration::parse(s).ok_or_else(|| Error::Eval(format!("time: invalid duration {s:?}")))
}

fn parse_layout(n: &str, layout: &str, s: &str) -> Result<Time, Error> {
    if layout.is_empty() || layout == RFC3339 {
        Time::parse_rfc3339(s).map_err(Error::Eval)
    } else {
        Err(generic(
            n,
            format!("kpol does not support the time layout {layout:?} yet"),
        ))
    }
}

pub(super) fn time_since(n: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    let layout = arg_str(n, a, 0)?;
    let t1 = parse_layout(n, layout, arg_str(n, a, 1)?)?;
    let s2 = arg_str(n, a, 2)?;
    let t2 = if s2.is_empty() {
        Time::now()
    } else {
        parse_layout(n, layout, s2)?
    };
    Ok(value::string(duration::format(t2.sub(&t1))))
}

pub(super) fn time_now(_: &str, _: &[Arg<'_, '_>], _: u32) -> R {
    Ok(value::string(Time::now().format_rfc3339()))
}

pub(super) fn time_now_utc(_: &str, _: &[Arg<'_, '_>], _: u32) -> R {
    Ok(value::string(Time::now().format_rfc3339()))
}

pub(super) fn time_to_cron(n: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    let c = time_arg(n, a, 0)?.civil();
    Ok(value::string(format!(
        "{} {} {} {} {}",
        c.minute, c.hour, c.day, c.month, c.weekday
    )))
}

pub(super) fn time_add(n: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    let t = time_arg(n, a, 0)?;
    let d = duration_arg(n, a, 1)?;
    Ok(value::string(t.add(d).format_rfc3339()))
}

pub(super) fn time_parse(n: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    let layout = arg_str(n, a, 0)?;
    let s = arg_str(n, a, 1)?;
    if layout.parse::<i64>().is_ok() {
        let secs: i64 = s
            .parse()
            .map_err(|_| Error::Eval(format!("strconv.ParseInt: parsing {s:?}: invalid syntax")))?;
        return Ok(value::string(Time::from_unix_utc(secs).format_rfc3339()));
    }
    Ok(value::string(parse_layout(n, layout, s)?.format_rfc3339()))
}

pub(super) fn time_utc(n: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    let mut t = time_arg(n, a, 0)?;
    t.offset = 0;
    Ok(value::string(t.format_rfc3339()))
}

pub(super) fn time_diff(n: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    let (t1, t2) = (time_arg(n, a, 0)?, time_arg(n, a, 1)?);
    Ok(value::string(duration::format(t2.sub(&t1))))
}

pub(super) fn time_before(n: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    let (t1, t2) = (time_arg(n, a, 0)?, time_arg(n, a, 1)?);
    Ok(value::boolean(t1.cmp_instant(&t2) == Ordering::Less))
}

pub(super) fn time_after(n: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    let (t1, t2) = (time_arg(n, a, 0)?, time_arg(n, a, 1)?);
    Ok(value::boolean(t1.cmp_instant(&t2) == Ordering::Greater))
}

pub(super) fn time_between(n: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    let (t, start, end) = (time_arg(n, a, 0)?, time_arg(n, a, 1)?, time_arg(n, a, 2)?);
    Ok(value::boolean(
        t.cmp_instant(&start) == Ordering::Greater && t.cmp_instant(&end) == Ordering::Less,
    ))
}

pub(super) fn time_truncate(n: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    let t = time_arg(n, a, 0)?;
    let d = duration_arg(n, a, 1)?;
    Ok(value::string(t.truncate(d).format_rfc3339()))
}
