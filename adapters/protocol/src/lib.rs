//! The qconform backend protocol, versions 1 and 2 (docs/protocol.md), for backends written in Rust.
//!
//! Implement [`Backend`] (the handshake and one op) and call [`main`]: the crate reads the runner's
//! frames on stdin, answers each on stdout, and turns a panic inside an op into an error reply with
//! the panic's text, so one bad vector never takes the backend down. [`unsupported`] declines a request
//! the backend does not implement (protocol 2: the vector is declined, not failed). `examples/rust-backend` is a
//! complete backend in under 150 lines; the burn harness (`adapters/burn`) is a large one.
//!
//! ```no_run
//! use qconform_protocol::{Backend, Failure, Output, Tensors, Value, fail, json};
//! struct Mine;
//! impl Backend for Mine {
//!     fn hello(&self) -> Value {
//!         json!({"name": "mine", "version": "0.1", "profile": "burn-0.22.0-pre.3/ndarray",
//!                "capabilities": {"ops": ["dequantize"]}})
//!     }
//!     fn run(&mut self, op: &str, _params: &Value, _inputs: &Tensors) -> Result<Output, Failure> {
//!         fail("op.unknown", format!("unknown op {op:?}"))
//!     }
//! }
//! fn main() { qconform_protocol::main(&mut Mine) }
//! ```

mod panics;
mod wire;

use std::io::{self, BufReader, BufWriter, Read, Write};

pub use panics::{Failure, catch, fail, install_panic_hook, unsupported};
pub use safetensors::tensor::Dtype;
pub use serde_json::{Value, json};
pub use wire::{Arr, MAX_FRAME, META_KEY, Message, Tensors, decode, encode, read_frame, write_frame};

/// The newest protocol version this crate speaks; it answers a runner in the newest version both speak.
pub const PROTOCOL: u64 = 2;
/// Every version this crate speaks (version 1: no `unsupported` reply).
pub const PROTOCOLS: [u64; 2] = [1, 2];

/// What an op returns: JSON values (an object, e.g. for `scheme_info`) and named output tensors.
#[derive(Clone, Debug, Default)]
pub struct Output {
    pub values: Value,
    pub tensors: Vec<(String, Arr)>,
}

impl Output {
    /// Outputs that are tensors only.
    pub fn tensors(tensors: Vec<(String, Arr)>) -> Self {
        Self { values: json!({}), tensors }
    }
}

/// A backend under test.
pub trait Backend {
    /// The handshake reply: `name`, `version`, `profile` and `capabilities` (protocol.md, "Handshake");
    /// `type` and `protocol` are filled in.
    fn hello(&self) -> Value;
    /// One op of docs/ops.md on the request's params and input tensors.
    fn run(&mut self, op: &str, params: &Value, inputs: &Tensors) -> Result<Output, Failure>;
    /// Called once the error reply to a failed request has been written and flushed: the place to recover,
    /// e.g. to re-exec the process when a panic left a GPU device unusable, so the next request does not
    /// inherit it. Default: nothing.
    fn after_failure(&mut self, _failure: &Failure) {}
}

/// One reply: its JSON and tensors, and the failure it reports (for [`Backend::after_failure`]).
#[derive(Debug)]
pub struct Reply {
    pub json: Value,
    pub tensors: Vec<(String, Arr)>,
    pub failure: Option<Failure>,
}

impl Reply {
    fn error(id: Option<&Value>, failure: Failure, version: u64) -> Self {
        Self { json: error_json(id, &failure, version), tensors: vec![], failure: Some(failure) }
    }
}

/// The handshake reply of `backend` in protocol `version`, with `type` and `protocol` set.
pub fn hello_reply(backend: &impl Backend, version: u64) -> Value {
    let mut reply = backend.hello();
    if let Some(obj) = reply.as_object_mut() {
        obj.insert("type".into(), json!("hello"));
        obj.insert("protocol".into(), json!(version));
    }
    reply
}

/// The version to answer a runner's hello in: the newest of [`PROTOCOLS`] it offers (its `protocols` list,
/// else its `protocol` number), or `None` when it offers none of them.
pub fn negotiate(hello: &Value) -> Option<u64> {
    let offered: Vec<u64> = match hello.get("protocols").and_then(Value::as_array) {
        Some(list) => list.iter().filter_map(Value::as_u64).collect(),
        None => hello.get("protocol").and_then(Value::as_u64).into_iter().collect(),
    };
    PROTOCOLS.iter().rev().copied().find(|v| offered.contains(v))
}

/// The reply for `failure` to request `id` (`None`: to no request in particular) in protocol `version`.
pub fn error_json(id: Option<&Value>, failure: &Failure, version: u64) -> Value {
    let error = match failure {
        // `code` is left out: the runner classifies panic text itself (protocol.md, "Requests and replies").
        Failure::Panic { message, .. } => json!({"message": message, "panic": message}),
        Failure::Error { code, message } => json!({"code": code, "message": message}),
        Failure::Unsupported { reason } if version >= 2 => {
            return json!({"type": "unsupported", "id": id, "reason": reason});
        }
        // Version 1 has no way to decline: the runner records a failure, which is what v1 means.
        Failure::Unsupported { reason } => json!({"code": "harness.unsupported", "message": reason}),
    };
    match id {
        Some(id) => json!({"type": "error", "id": id, "error": error}),
        None => json!({"type": "error", "error": error}),
    }
}

/// The reply to one message blob, or `None` for `bye`, in a session that speaks the newest version.
pub fn respond(backend: &mut impl Backend, blob: &[u8]) -> Option<Reply> {
    let mut version = PROTOCOL;
    respond_in(backend, blob, &mut version)
}

/// The reply to one message blob in a session whose negotiated `version` a hello sets.
pub fn respond_in(backend: &mut impl Backend, blob: &[u8], version: &mut u64) -> Option<Reply> {
    let current = *version;
    let refuse = |id: Option<&Value>, code: &str, message: String| {
        Some(Reply::error(id, Failure::Error { code: code.into(), message }, current))
    };
    let msg = match decode(blob) {
        Ok(msg) => msg,
        Err(e) => return refuse(None, "protocol.bad_frame", e),
    };
    match msg.json.get("type").and_then(Value::as_str) {
        Some("hello") => match negotiate(&msg.json) {
            Some(v) => {
                *version = v;
                Some(Reply { json: hello_reply(backend, v), tensors: vec![], failure: None })
            }
            None => refuse(None, "protocol.version", format!("this backend speaks protocol 1 or 2, not {}", msg.json.get("protocol").unwrap_or(&Value::Null))),
        },
        Some("bye") => None,
        Some("request") => {
            let id = msg.json.get("id").cloned().unwrap_or(Value::Null);
            let op = msg.json.get("op").and_then(Value::as_str).unwrap_or("");
            let params = msg.json.get("params").cloned().unwrap_or_else(|| json!({}));
            Some(match catch(|| backend.run(op, &params, &msg.tensors)) {
                Ok(out) => Reply {
                    json: json!({"type": "result", "id": id, "values": out.values}),
                    tensors: out.tensors,
                    failure: None,
                },
                Err(failure) => Reply::error(Some(&id), failure, current),
            })
        }
        other => refuse(msg.json.get("id"), "protocol.unknown_type", format!("unknown message type {other:?}")),
    }
}

/// The protocol loop: answers every frame of `input` on `output`; returns on `bye` or at the end of input.
pub fn serve(backend: &mut impl Backend, input: impl Read, output: impl Write) -> io::Result<()> {
    let (mut input, mut output) = (BufReader::new(input), BufWriter::new(output));
    let mut version = PROTOCOL;
    while let Some(blob) = read_frame(&mut input)? {
        let Some(reply) = respond_in(backend, &blob, &mut version) else { break };
        write_frame(&mut output, &encode(&reply.json, &reply.tensors))?;
        if let Some(failure) = &reply.failure {
            backend.after_failure(failure);
        }
    }
    Ok(())
}

/// [`serve`] on stdin/stdout.
pub fn serve_stdio(backend: &mut impl Backend) -> io::Result<()> {
    serve(backend, io::stdin().lock(), io::stdout().lock())
}

/// A backend's whole `main`: installs the panic hook (panics are printed to stderr too when
/// `QCONFORM_LOG_PANICS` is set), serves stdin/stdout and exits (1 on a transport error).
pub fn main(backend: &mut impl Backend) -> ! {
    install_panic_hook(std::env::var_os("QCONFORM_LOG_PANICS").is_some());
    let code = match serve_stdio(backend) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("[qconform] transport error: {e}");
            1
        }
    };
    std::process::exit(code)
}
