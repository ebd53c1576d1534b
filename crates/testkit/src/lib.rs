//! Test hosts for Leasehold's integration tests and benchmarks.
pub mod delay_link;
pub mod netns;
