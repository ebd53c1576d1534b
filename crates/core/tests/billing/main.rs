//! Tests of the rental ledger: the seeds' scenarios and every rule field (table tests), the cost
//! engine's properties (proptest), and the store-backed API on fresh databases with an injected
//! clock.

mod common;
mod estimates;
mod extremes;
mod properties;
mod scenarios;
mod store;
