//! Address pairs for delay links, unique across the test processes running at once.
//!
//! Every link gets a /30 from 10.213.0.0/16, a private range used only between a TUN pair on this
//! machine. A slot is taken while its host address is assigned to a live TUN device; TUN devices
//! vanish with the process that opened them, so a crashed run frees its slots by itself. Choosing
//! a slot and assigning its address happen under one file lock shared by all test processes.

use std::collections::HashSet;
use std::fs::File;
use std::net::Ipv4Addr;
use std::process::Command;

/// /30 subnets in 10.213.0.0/16.
const SLOTS: u16 = 16_384;

/// The two ends of one link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AddressPair {
    pub(crate) host: Ipv4Addr,
    pub(crate) namespace: Ipv4Addr,
}

impl AddressPair {
    fn of_slot(slot: u16) -> Self {
        let [high, low] = slot.to_be_bytes();
        // slot = 64 * third_octet + quarter: third octet from the upper bits, /30 base from the rest.
        let third = (high << 2) | (low >> 6);
        let base = (low & 0x3f) << 2;
        Self {
            host: Ipv4Addr::new(10, 213, third, base + 1),
            namespace: Ipv4Addr::new(10, 213, third, base + 2),
        }
    }
}

/// Held while a slot is chosen and its address assigned; released on drop.
pub(crate) struct SlotLock {
    _file: File,
}

impl SlotLock {
    pub(crate) fn acquire() -> std::io::Result<Self> {
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(std::env::temp_dir().join("leasehold-delay-link.lock"))?;
        file.lock()?;
        Ok(Self { _file: file })
    }

    /// The first pair whose host address no device in this namespace uses, `None` when all are.
    pub(crate) fn free_pair(&self) -> Option<AddressPair> {
        let used = addresses_in_use();
        (0..SLOTS)
            .map(AddressPair::of_slot)
            .find(|pair| !used.contains(&pair.host))
    }
}

fn addresses_in_use() -> HashSet<Ipv4Addr> {
    let Ok(output) = Command::new("ip")
        .args(["-o", "-4", "addr", "show"])
        .output()
    else {
        return HashSet::new();
    };
    parse_addresses(&String::from_utf8_lossy(&output.stdout))
}

/// Local addresses in `ip -o -4 addr show` output; lines look like
/// `5: lh12h0    inet 10.213.0.1 peer 10.213.0.2/32 scope global lh12h0\ …`.
fn parse_addresses(listing: &str) -> HashSet<Ipv4Addr> {
    listing
        .lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            words.find(|word| *word == "inet")?;
            let address = words.next()?;
            address.split('/').next()?.parse().ok()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_map_to_distinct_slash_30_pairs() {
        assert_eq!(
            AddressPair::of_slot(0),
            AddressPair {
                host: Ipv4Addr::new(10, 213, 0, 1),
                namespace: Ipv4Addr::new(10, 213, 0, 2)
            }
        );
        assert_eq!(AddressPair::of_slot(1).host, Ipv4Addr::new(10, 213, 0, 5));
        assert_eq!(AddressPair::of_slot(64).host, Ipv4Addr::new(10, 213, 1, 1));
        assert_eq!(
            AddressPair::of_slot(SLOTS - 1).namespace,
            Ipv4Addr::new(10, 213, 255, 254),
            "the last slot is the top of the /16"
        );
        let hosts: HashSet<_> = (0..SLOTS).map(|s| AddressPair::of_slot(s).host).collect();
        assert_eq!(
            hosts.len(),
            usize::from(SLOTS),
            "no two slots share an address"
        );
    }

    #[test]
    fn parses_local_addresses_not_peers() {
        let listing = "1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever\n\
            7: lh42h0    inet 10.213.0.1 peer 10.213.0.2/32 scope global lh42h0\\       valid_lft forever\n\
            garbage line\n";
        let used = parse_addresses(listing);
        assert!(
            used.contains(&Ipv4Addr::new(10, 213, 0, 1)),
            "the host end is in use"
        );
        assert!(used.contains(&Ipv4Addr::new(127, 0, 0, 1)));
        assert!(
            !used.contains(&Ipv4Addr::new(10, 213, 0, 2)),
            "a peer address is not local"
        );
        assert_eq!(used.len(), 2, "unparseable lines are ignored");
    }
}
