//! Condition operator tests (validate-cases.md §G, §H).
