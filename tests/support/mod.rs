//! Helpers shared by the integration tests (not a test target itself).

pub mod fidelity;
pub mod initdb_template;
pub mod pg;
pub mod sqlfile;
