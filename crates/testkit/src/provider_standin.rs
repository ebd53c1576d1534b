//! A provider API stand-in (`tests/provider-standin/standin.py`) on a loopback port: the
//! documented shapes of RunPod v2, Vast.ai, Lambda or AutoDL Pro, with a control API to set the
//! account's instances, script failures and read back every request it was sent.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};

use serde_json::Value;

pub struct ProviderStandin {
    child: Child,
    port: u16,
}

impl ProviderStandin {
    /// Start the stand-in of `provider` (`runpod`, `vast`, `lambda`, `autodl`) accepting `key`.
    pub fn start(provider: &str, key: &str) -> Self {
        let script = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/provider-standin/standin.py"
        );
        let mut child = Command::new("python3")
            .arg(script)
            .arg(provider)
            .arg(key)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("python3 runs the provider stand-in");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("the stand-in prints its port");
        let port = line.trim().parse().expect("a port number");
        Self { child, port }
    }

    /// `http://127.0.0.1:PORT`, what `LEASEHOLD_<PROVIDER>_API_URL` is set to.
    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn call(&self, method: &str, path: &str, body: Option<&Value>) -> Value {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).expect("stand-in answers");
        let body = body.map(Value::to_string).unwrap_or_default();
        write!(
            stream,
            "{method} {path} HTTP/1.1\r\nHost: standin\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .expect("request sent");
        let mut answer = String::new();
        stream.read_to_string(&mut answer).expect("answer read");
        let json = answer.split_once("\r\n\r\n").map_or("", |(_, b)| b);
        serde_json::from_str(json).unwrap_or(Value::Null)
    }

    /// Replace the account's instances (the stand-in's neutral form, see its docstring).
    pub fn set_instances(&self, instances: impl Into<Value>) {
        let instances = instances.into();
        self.call("POST", "/_standin/instances", Some(&instances));
    }

    /// Change one instance (`{"state": "stopped"}`, `{"price": "0.79"}`, `{"state": "gone"}` …).
    pub fn patch(&self, id: &str, change: impl Into<Value>) {
        let change = change.into();
        self.call("PATCH", &format!("/_standin/instances/{id}"), Some(&change));
    }

    /// The market its catalog serves: `{"offers": [neutral offer], "raw": [rows sent as they
    /// are], "many": n}` (see the stand-in's docstring).
    pub fn set_offers(&self, market: impl Into<Value>) {
        let market = market.into();
        self.call("POST", "/_standin/offers", Some(&market));
    }

    /// Failures, page size, confirmation delay, charges, AutoDL's total spend.
    pub fn script(&self, script: impl Into<Value>) {
        let script = script.into();
        self.call("POST", "/_standin/script", Some(&script));
    }

    /// Every request it was sent, in order.
    pub fn requests(&self) -> Vec<Value> {
        match self.call("GET", "/_standin/requests", None) {
            Value::Array(list) => list,
            _ => Vec::new(),
        }
    }

    /// Requests that broke the documented contract, and answers that broke the schema.
    pub fn violations(&self) -> Vec<Value> {
        match self.call("GET", "/_standin/violations", None) {
            Value::Array(list) => list,
            _ => Vec::new(),
        }
    }
}

impl Drop for ProviderStandin {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
