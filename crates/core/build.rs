// `sqlx::migrate!` embeds the migration folders at compile time but cannot tell cargo about a
// file added to them; without this a new migration would be missing from an incremental build.
fn main() {
    println!("cargo:rerun-if-changed=migrations");
    println!("cargo:rerun-if-changed=migrations_pg");
}
