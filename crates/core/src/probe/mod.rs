//! The probe battery: what is true on the rented machine, as typed facts.
//!
//! Each probe is a shell command (built with [`crate::shell`]) plus a pure parser from its
//! output to facts, so every parser is tested on captured text without a machine. The battery
//! runs the probes concurrently on any [`crate::target::Target`] and keeps what succeeded when
//! some fail. Judging the facts is [`crate::diagnose`]'s job, not this module's.

pub mod nvidia_smi;
