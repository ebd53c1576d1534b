//! Team-mode rows in the local database: the link to the team's server (never its password),
//! the events not yet on the server, the rows pulled from it, and the conflicts found while
//! merging. Decimals travel as the exact text the recording laptop stored and times in the one
//! UTC form the ledger stores, so every laptop replays identical values. `crate::team` decides
//! what is pushed and pulled, and checks what is pulled before it reaches these functions.
//!
//! One file per aggregate; everything is re-exported here, so callers say `store::team::…`.

mod conflicts;
mod link;
mod pending;
mod pulled;
mod records;
mod views;

pub use conflicts::*;
pub use link::*;
pub use pending::*;
pub use pulled::*;
pub use records::*;
pub use views::*;
