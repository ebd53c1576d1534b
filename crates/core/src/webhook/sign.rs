//! The two signed services' signatures, exactly as their robot documentation defines them.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

fn hmac_base64(key: &[u8], message: &[u8]) -> String {
    let mut mac = HmacSha256::new_from_slice(key).expect("HMAC accepts keys of any length");
    mac.update(message);
    STANDARD.encode(mac.finalize().into_bytes())
}

/// DingTalk: base64(HMAC-SHA256(key = secret, message = timestamp + "\n" + secret)), with the
/// timestamp in milliseconds. The caller URL-encodes it as the `sign` query parameter.
pub fn dingtalk_sign(secret: &str, timestamp_ms: i64) -> String {
    hmac_base64(
        secret.as_bytes(),
        format!("{timestamp_ms}\n{secret}").as_bytes(),
    )
}

/// Feishu: base64(HMAC-SHA256(key = timestamp + "\n" + secret, message = empty)), with the
/// timestamp in seconds; it goes into the JSON body as `sign`.
pub fn feishu_sign(secret: &str, timestamp_s: i64) -> String {
    hmac_base64(format!("{timestamp_s}\n{secret}").as_bytes(), b"")
}
