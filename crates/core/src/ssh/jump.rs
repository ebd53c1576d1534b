//! Logging in to a jump host (`-J`, `ProxyJump`) with its own credentials.
//!
//! A jump host is another machine, often run by someone else (a university bastion, a
//! provider's gateway). It gets what OpenSSH would give it: its own key files from
//! `~/.ssh/config` (else the default `~/.ssh/id_*`), the agent, and the password kept in the
//! keychain for that hop. Never the destination's password or the keys chosen for the
//! destination: those are for the destination alone.

use super::auth::Credentials;
use super::destination::Destination;
use super::secrets::{password_account, stored_secret, with_stored_passphrases};

/// What `hop` is offered when we log in to it on the way to the destination.
pub(crate) fn jump_host_credentials(hop: &Destination) -> Credentials {
    let password = stored_secret(&password_account(hop));
    let mut credentials = Credentials::like_openssh(&hop.identity_files, password);
    credentials.keys = with_stored_passphrases(credentials.keys);
    credentials
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hop_is_offered_its_own_key_files_and_nothing_of_the_destination() {
        let command = super::super::parse_ssh_command(
            "ssh -i /keys/for-the-gpu -J ops@bastion.example:2222 root@gpu.example",
        )
        .expect("parses");
        let destination = Destination::resolve(&command, None).expect("resolves");
        let mut hop = destination.jump[0].clone();
        hop.identity_files = vec!["/keys/bastion".into()];
        let credentials = jump_host_credentials(&hop);
        let paths: Vec<_> = credentials.keys.iter().map(|k| k.path.clone()).collect();
        assert_eq!(
            paths,
            vec![std::path::PathBuf::from("/keys/bastion")],
            "only the hop's own key, not the destination's -i"
        );
        assert_eq!(
            credentials.password, None,
            "no password is stored for the hop, and the destination's is never borrowed"
        );
    }
}
