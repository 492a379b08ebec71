//! Hostile YAML and names: per-file budgets, large maps, nested Lists, terminal and log injection.

#[allow(unused_imports)]
use super::*;
