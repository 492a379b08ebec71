//! YAML for JSON values ([`kpol::yaml::emit`]), shaped like sigs.k8s.io/yaml output: keys
//! sorted, two-space indent, list items at their parent's indent, strings plain when unambiguous and
//! double-quoted (JSON escapes, valid YAML for any character: `kpol::yaml::double_quoted`)
//! otherwise.

use serde_json::Value;

/// The value as a YAML document (no `---`).
pub fn to_yaml(v: &Value) -> String {
    let style = kpol::yaml::emit::Style {
        sort_keys: true,
        key: &kpol::yaml::emit::plain_or_quoted,
        scalar: &kpol::yaml::emit::json_scalar,
    };
    kpol::yaml::emit::block(v, &style)
}
