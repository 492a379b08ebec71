//! GeneratingPolicy tests.
