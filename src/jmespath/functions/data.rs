//! Kyverno's data functions: `label_match`, `parse_json`, `parse_yaml`, `lookup`, `items`,
//! `object_from_lists` (`pkg/engine/jmespath/functions.go`). Decoded numbers are float64.

use super::{Arg, arg_str, iface_to_string, not_of_type};
use crate::jmespath::Error;
use crate::jmespath::value::{self, deep_equal};
use crate::yaml::{Node, Value};

type R = Result<Node, Error>;

pub(super) fn label_match(n: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    // Upstream numbers these arguments from 0 in its messages.
    let sel = a[0]
        .node()
        .as_map()
        .ok_or_else(|| not_of_type(n, 0, "Object"))?;
    let labels = a[1]
        .node()
        .as_map()
        .ok_or_else(|| not_of_type(n, 1, "Object"))?;
    Ok(value::boolean(sel.iter().all(|(k, v)| {
        labels.get(k).is_some_and(|w| deep_equal(v, w))
    })))
}

pub(super) fn parse_json(n: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    let s = arg_str(n, a, 0)?;
    let v: serde_json::Value = serde_json::from_str(s).map_err(|e| Error::Eval(e.to_string()))?;
    Ok(value::from_json(&v))
}

pub(super) fn parse_yaml(n: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    let s = arg_str(n, a, 0)?;
    let docs = crate::yaml::parse_documents(s, crate::yaml::Limits::default())
        .map_err(|e| Error::Eval(format!("error converting YAML to JSON: {}", e.message)))?;
    Ok(docs
        .into_iter()
        .next()
        .map_or_else(value::null, |d| value::json_round_trip(&d.root)))
}

pub(super) fn lookup(n: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    match &a[0].node().value {
        Value::Map(m) => {
            let key = a[1].str().ok_or_else(|| not_of_type(n, 2, "String"))?;
            Ok(m.get(key).cloned().unwrap_or_else(value::null))
        }
        Value::Seq(items) => {
            let key = a[1].float().ok_or_else(|| not_of_type(n, 2, "Number"))?;
            if !key.is_finite() || key.trunc() != key {
                return Err(Error::Eval(format!(
                    "JMESPath function '{n}': argument #2: expected an integer number but got: {}",
                    crate::number::format_go_g(key)
                )));
            }
            Ok(usize::try_from(key as i64)
                .ok()
                .and_then(|i| items.get(i))
                .cloned()
                .unwrap_or_else(value::null))
        }
        _ => Err(not_of_type(n, 1, "Object or Array")),
    }
}

pub(super) fn items(n: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    let key_name = a[1].str().ok_or_else(|| not_of_type(n, 2, "String"))?;
    let val_name = a[2].str().ok_or_else(|| not_of_type(n, 3, "String"))?;
    let pair =
        |k: Node, v: Node| value::map(vec![(key_name.to_owned(), k), (val_name.to_owned(), v)]);
    match &a[0].node().value {
        Value::Map(m) => {
            let mut keys: Vec<&str> = m.keys().collect();
            keys.sort_unstable();
            Ok(value::seq(
                keys.into_iter()
                    .map(|k| {
                        pair(
                            value::string(k),
                            m.get(k).cloned().unwrap_or_else(value::null),
                        )
                    })
                    .collect(),
            ))
        }
        Value::Seq(list) => Ok(value::seq(
            list.iter()
                .enumerate()
                .map(|(i, v)| pair(value::float(i as f64), v.clone()))
                .collect(),
        )),
        _ => Err(not_of_type(n, 1, "Object or Array")),
    }
}

pub(super) fn object_from_lists(n: &str, a: &[Arg<'_, '_>], _: u32) -> R {
    let keys = a[0]
        .node()
        .as_seq()
        .ok_or_else(|| not_of_type(n, 1, "Array"))?;
    let vals = a[1]
        .node()
        .as_seq()
        .ok_or_else(|| not_of_type(n, 2, "Array"))?;
    let mut out: Vec<(String, Node)> = Vec::with_capacity(keys.len());
    for (i, k) in keys.iter().enumerate() {
        let key = iface_to_string(k).ok_or_else(|| not_of_type(n, 1, "StringArray"))?;
        let v = vals.get(i).cloned().unwrap_or_else(value::null);
        match out.iter_mut().find(|(ok, _)| *ok == key) {
            Some(slot) => slot.1 = v,
            None => out.push((key, v)),
        }
    }
    Ok(value::map(out))
}
