//! Helpers shared by the integration tests (not a test target itself).

pub mod fidelity;
pub mod pg;
pub mod sqlfile;
