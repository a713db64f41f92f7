//! qconform harness on burn's published crates: serves docs/ops.md over docs/protocol.md
//! (subprocess transport) with one burn backend per binary. See docs/burn-harness.md.

pub mod bench;
pub mod compat;
pub mod layout;
pub mod ops;
pub mod proto;
pub mod scheme;

use std::io::{self, BufReader, BufWriter};

use serde_json::{Value, json};

pub use ops::Target;
use proto::{Failure, catch, decode, encode, error_json, read_frame, write_frame};

/// Float dtypes declared for every backend: a backend that cannot hold one (burn-ndarray has no
/// f16/bf16 tensors) answers with burn's own panic, which the oracle profile expects.
const FLOAT_DTYPES: &[&str] = &["f32", "f16", "bf16"];

/// The handshake reply (protocol.md, "Handshake").
pub fn hello<T: Target>() -> Value {
    json!({
        "type": "hello",
        "protocol": 1,
        "name": T::NAME,
        "version": compat::BURN_VERSION,
        "profile": format!("burn-{}/{}", compat::BURN_VERSION, T::BACKEND),
        "capabilities": {
            "ops": ops::OPS,
            "values": ["Q8F", "Q8S", "Q4F", "Q4S", "Q2F", "Q2S", "E4M3", "E5M2", "E2M1"],
            "stores": ["Native", "PackedU32", "PackedNative"],
            "modes": ["Symmetric", "Lookup"],
            "scale_dtypes": ["F32", "F16", "BF16", "UE8M0", "UE4M3"],
            "input_dtypes": FLOAT_DTYPES,
            "output_dtypes": FLOAT_DTYPES,
            // Narrowed per op (protocol.md, `per_op`): the parts of an op burn does not reach.
            "per_op": {
                // burn's CPU packer and the public path to its unpacker, per release (compat.rs).
                "pack_u32": {"values": compat::PACK_VALUES},
                "unpack_u32": {"values": compat::UNPACK_VALUES},
            },
        },
        "build": {
            "harness": env!("CARGO_PKG_VERSION"),
            "profile": if cfg!(debug_assertions) { "debug" } else { "release" },
            "simd": cfg!(feature = "simd"),
            "multi_threads": cfg!(feature = "multi-threads"),
        },
    })
}

/// Entry point of every harness binary: `--bench [--n N]` or the protocol loop on stdin/stdout.
pub fn main<T: Target>() -> ! {
    proto::install_panic_hook();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = if args.iter().any(|a| a == "--bench") {
        bench::main::<T>(&args)
    } else if args.iter().any(|a| a == "--hello") {
        // Convenience for humans and build.sh: print the handshake reply as JSON.
        println!("{}", hello::<T>());
        0
    } else if let Some(a) = args.first() {
        eprintln!("usage: {} [--bench [--n N] | --hello]  (no argument: protocol on stdin/stdout); unknown {a:?}", T::NAME);
        2
    } else {
        match serve::<T>() {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("[qconform-burn] transport error: {e}");
                1
            }
        }
    };
    std::process::exit(code)
}

/// The subprocess protocol loop. Returns on `bye` or at the end of input.
pub fn serve<T: Target>() -> io::Result<()> {
    let mut input = BufReader::new(io::stdin().lock());
    let mut output = BufWriter::new(io::stdout().lock());
    while let Some(blob) = read_frame(&mut input)? {
        let (reply, tensors) = match decode(&blob) {
            Err(e) => (
                error_json(None, &Failure::Harness { code: "protocol.bad_frame".into(), message: e }),
                vec![],
            ),
            Ok(msg) => match msg.json.get("type").and_then(Value::as_str) {
                Some("hello") => {
                    if msg.json.get("protocol").and_then(Value::as_u64) == Some(1) {
                        (hello::<T>(), vec![])
                    } else {
                        let failure = Failure::Harness {
                            code: "protocol.version".into(),
                            message: format!("this backend speaks protocol 1, not {}", msg.json.get("protocol").unwrap_or(&Value::Null)),
                        };
                        (error_json(None, &failure), vec![])
                    }
                }
                Some("bye") => return Ok(()),
                Some("request") => {
                    let id = msg.json.get("id").cloned().unwrap_or(Value::Null);
                    let op = msg.json.get("op").and_then(Value::as_str).unwrap_or("").to_string();
                    let params = msg.json.get("params").cloned().unwrap_or_else(|| json!({}));
                    match catch(|| ops::run::<T>(&op, &params, &msg.tensors)) {
                        Ok(out) => (json!({"type": "result", "id": id, "values": out.values}), out.tensors),
                        Err(failure) => (error_json(Some(&id), &failure), vec![]),
                    }
                }
                other => {
                    let failure = Failure::Harness {
                        code: "protocol.unknown_type".into(),
                        message: format!("unknown message type {other:?}"),
                    };
                    (error_json(msg.json.get("id"), &failure), vec![])
                }
            },
        };
        write_frame(&mut output, &encode(&reply, &tensors))?;
    }
    Ok(())
}
