//! qconform harness on burn's published crates: serves docs/ops.md over docs/protocol.md
//! (subprocess transport) with one burn backend per binary. See docs/burn-harness.md.

pub mod bench;
pub mod compat;
pub mod layout;
pub mod ops;
pub mod scheme;

use std::marker::PhantomData;

use qconform_protocol::{Backend, Failure, Output, Tensors};
use serde_json::{Value, json};

pub use ops::Target;

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

    /// After a panic (already answered), a device that no longer computes is replaced with a fresh
    /// process, so the next request's outcome is its own (see `restart_fresh`).
    fn after_failure(&mut self, failure: &Failure) {
        if matches!(failure, Failure::Panic { .. }) && !ops::device_healthy::<T>() {
            restart_fresh();
        }
    }
}

/// Replaces this process with a fresh copy of itself on the same stdin/stdout, so the next request
/// meets a new device. One request is in flight at a time and its reply is already flushed, so no
/// input is lost. A panic that leaves burn's device unusable is rare (burn-fusion's device thread
/// poisons every later operation; the lean builds panic synchronously), but when it happens, a
/// later request's error would otherwise be blamed on the wrong vector.
fn restart_fresh() -> ! {
    use std::os::unix::process::CommandExt;
    let exe = std::env::current_exe().unwrap_or_else(|_| std::env::args().next().unwrap_or_default().into());
    let err = std::process::Command::new(&exe).exec();
    eprintln!("[qconform-burn] device unusable after a panic and re-exec of {exe:?} failed: {err}");
    std::process::exit(1)
}
