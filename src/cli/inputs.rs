//! Reading inputs.
