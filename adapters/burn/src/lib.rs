//! qconform harness on burn's published crates: serves docs/ops.md over docs/protocol.md
//! (subprocess transport) with one burn backend per binary. See docs/burn-harness.md.

pub mod bench;
#[cfg(feature = "checkpoint")]
pub mod checkpoint;
pub mod compat;
pub mod float_ops;
pub mod layout;
pub mod ops;
pub mod scheme;
pub mod target;
pub mod tensors;

use std::marker::PhantomData;

use burn_std::DType;
use qconform_protocol::{Backend, Failure, Output, Tensors};
use serde_json::{Value, json};

pub use target::Target;

/// Float dtypes declared for every backend: a backend that cannot hold one (burn-ndarray has no
/// f16/bf16 tensors) answers with burn's own panic, which the oracle profile expects.
const FLOAT_DTYPES: &[(&str, DType)] = &[("f32", DType::F32), ("f16", DType::F16), ("bf16", DType::BF16)];
/// Scale dtypes, each with the float dtype its device buffer has (if any).
const SCALE_DTYPES: &[(&str, Option<DType>)] = &[
    ("F32", Some(DType::F32)),
    ("F16", Some(DType::F16)),
    ("BF16", Some(DType::BF16)),
    ("UE8M0", None),
    ("UE4M3", None),
];

/// The handshake reply (protocol.md, "Handshake").
pub fn hello<T: Target>() -> Value {
    let floats: Vec<&str> = FLOAT_DTYPES.iter().filter(|(_, d)| T::declares(*d)).map(|(n, _)| *n).collect();
    let scales: Vec<&str> = SCALE_DTYPES.iter().map(|(n, _)| *n).collect();
    let device_scales: Vec<&str> =
        SCALE_DTYPES.iter().filter(|(_, d)| d.is_none_or(T::declares)).map(|(n, _)| *n).collect();
    // Narrowed per op (protocol.md, `per_op`): the parts of an op burn does not reach.
    let mut per_op = serde_json::Map::new();
    // burn's CPU packer and the public path to its unpacker, per release (compat.rs).
    per_op.insert("pack_u32".into(), json!({"values": compat::PACK_VALUES}));
    per_op.insert("unpack_u32".into(), json!({"values": compat::UNPACK_VALUES}));
    if device_scales.len() < scales.len() {
        for op in ops::DEVICE_OPS.iter().filter(|op| claimed::<T>(op)) {
            per_op.insert((*op).into(), json!({"scale_dtypes": device_scales}));
        }
    }
    json!({
        "type": "hello",
        "protocol": 1,
        "name": T::NAME,
        "version": compat::BURN_VERSION,
        "profile": target::profile::<T>(),
        "capabilities": {
            "ops": ops::OPS.iter().filter(|op| claimed::<T>(op)).collect::<Vec<_>>(),
            "values": ["Q8F", "Q8S", "Q4F", "Q4S", "Q2F", "Q2S", "E4M3", "E5M2", "E2M1"],
            "stores": ["Native", "PackedU32", "PackedNative"],
            "modes": ["Symmetric", "Lookup"],
            "scale_dtypes": scales,
            "input_dtypes": floats,
            "output_dtypes": floats,
            "per_op": per_op,
        },
        "build": {
            "harness": env!("CARGO_PKG_VERSION"),
            "profile": if cfg!(debug_assertions) { "debug" } else { "release" },
            "simd": cfg!(feature = "simd"),
            "multi_threads": cfg!(feature = "multi-threads"),
            // burn-wgpu's default features (the `burn-defaults` build of the GPU manifests).
            "fusion": cfg!(feature = "fusion"),
            "autotune": cfg!(feature = "autotune"),
        },
    })
}

/// Whether the hello claims `op`: not when the target leaves it unclaimed, nor a checkpoint op in a build without
/// burn-pack.
fn claimed<T: Target>(op: &str) -> bool {
    !T::UNCLAIMED.contains(&op) && (cfg!(feature = "checkpoint") || !ops::CHECKPOINT_OPS.contains(&op))
}

/// Entry point of every harness binary: `--bench [--n N]` or the protocol loop on stdin/stdout.
pub fn main<T: Target>() -> ! {
    // Caught panics leave stderr clean; QCONFORM_BURN_LOG=1 logs each one (docs/burn-harness.md).
    qconform_protocol::install_panic_hook(std::env::var_os("QCONFORM_BURN_LOG").is_some());
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
        match qconform_protocol::serve_stdio(&mut Harness::<T>(PhantomData)) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("[qconform-burn] transport error: {e}");
                1
            }
        }
    };
    std::process::exit(code)
}

/// The harness as a protocol backend: the frames, the hello/run loop and panic capture are
/// `qconform-protocol`'s (adapters/protocol); the ops are `ops::run`.
pub struct Harness<T>(pub PhantomData<T>);

impl<T: Target> Backend for Harness<T> {
    fn hello(&self) -> Value {
        hello::<T>()
    }

    fn run(&mut self, op: &str, params: &Value, inputs: &Tensors) -> Result<Output, Failure> {
        ops::run::<T>(op, params, inputs)
    }

    /// After a panic (already answered), a device that no longer computes ends the process, so the next
    /// request meets a fresh one (see `exit_for_fresh_device`).
    fn after_failure(&mut self, failure: &Failure) {
        if matches!(failure, Failure::Panic { .. }) && !ops::device_healthy::<T>() {
            exit_for_fresh_device();
        }
    }
}

/// Ends the process after a panic that left burn's device unusable (burn-fusion's device thread poisons every
/// later operation; on WGSL a kernel that fails to compile leaves the server "in an invalid state"), so a later
/// request's error is not blamed on the wrong vector. The reply is already flushed; status 75 (sysexits' EX_TEMPFAIL) tells the runner
/// to send a request this process had not read to a fresh one (docs/protocol.md). An `exec` on the same pipes
/// would lose requests the client pipelined (`run_many`): they sit in this process's stdin buffer, and both
/// sides would wait on each other.
fn exit_for_fresh_device() -> ! {
    eprintln!("[qconform-burn] the device no longer computes after a panic: exiting for a fresh process");
    std::process::exit(75)
}
