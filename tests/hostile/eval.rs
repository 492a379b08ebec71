//! Evaluation budgets: substitution, JMESPath, CEL and foreach on hostile policies and resources.

#[allow(unused_imports)]
use super::*;
