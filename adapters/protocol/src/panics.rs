//! Panic capture: a panic while running an op becomes an error reply carrying the panic's exact text
//! (the runner classifies burn's panic messages itself), instead of a dead backend.

use std::cell::RefCell;

thread_local! {
    static LAST_PANIC: RefCell<Option<(String, String)>> = const { RefCell::new(None) };
}

/// Why an op produced no outputs.
#[derive(Clone, Debug, PartialEq)]
pub enum Failure {
    /// The code under test panicked with this text; `location` is the panic site (`file:line`).
    Panic { message: String, location: String },
    /// The backend refused the request with an error code of docs/ops.md (or its own `harness.*` code).
    Error { code: String, message: String },
    /// The backend does not implement this request (protocol 2's `unsupported` reply): the vector is
    /// declined, not failed. To a runner that speaks only version 1 it is sent as an error.
    Unsupported { reason: String },
}

/// `Err(Failure::Error{..})`, for `return fail("range.block_not_divisible", "...")`.
pub fn fail<T>(code: &str, message: impl Into<String>) -> Result<T, Failure> {
    Err(Failure::Error { code: code.to_string(), message: message.into() })
}

/// `Err(Failure::Unsupported{..})`, for `return unsupported("Q4S is not implemented")`.
pub fn unsupported<T>(reason: impl Into<String>) -> Result<T, Failure> {
    Err(Failure::Unsupported { reason: reason.into() })
}

/// Installs a panic hook that records the message and location instead of printing them, so a caught
/// panic leaves stderr clean; with `log`, each panic is also printed to stderr.
pub fn install_panic_hook(log: bool) {
    std::panic::set_hook(Box::new(move |info| {
        let message = payload_text(info.payload());
        let location = info.location().map(|l| format!("{}:{}", l.file(), l.line())).unwrap_or_default();
        if log {
            eprintln!("[qconform] panic at {location}: {message}");
        }
        LAST_PANIC.with(|p| *p.borrow_mut() = Some((message, location)));
    }));
}

fn payload_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "Box<dyn Any>".to_string()
    }
}

/// Runs `f`, turning a panic into `Failure::Panic` with the exact panic text (and, with the hook
/// installed, its location). Needs `panic = "unwind"` (cargo's default).
pub fn catch<T>(f: impl FnOnce() -> Result<T, Failure>) -> Result<T, Failure> {
    LAST_PANIC.with(|p| *p.borrow_mut() = None);
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            let recorded = LAST_PANIC.with(|p| p.borrow_mut().take());
            let (message, location) = recorded.unwrap_or_else(|| (payload_text(payload.as_ref()), String::new()));
            Err(Failure::Panic { message, location })
        }
    }
}
