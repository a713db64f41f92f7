//! The qconform subprocess protocol (docs/protocol.md): length-prefixed safetensors frames whose
//! `__metadata__["qconform"]` holds the JSON message, plus panic capture.

use std::cell::RefCell;
use std::collections::HashMap;
use std::io::{self, Read, Write};

use safetensors::tensor::{Dtype, SafeTensors, TensorView};
use serde_json::{Value, json};

/// Frames larger than this are refused (protocol.md, "subprocess").
pub const MAX_FRAME: u64 = 1 << 30;

/// A tensor as it travels: safetensors dtype, shape and little-endian bytes.
#[derive(Clone, Debug)]
pub struct Arr {
    pub dtype: Dtype,
    pub shape: Vec<usize>,
    pub data: Vec<u8>,
}

impl Arr {
    pub fn new(dtype: Dtype, shape: Vec<usize>, data: Vec<u8>) -> Self {
        Self { dtype, shape, data }
    }

    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    pub fn f32(shape: Vec<usize>, values: &[f32]) -> Self {
        Self::new(Dtype::F32, shape, values.iter().flat_map(|v| v.to_le_bytes()).collect())
    }

    pub fn i8(shape: Vec<usize>, values: &[i8]) -> Self {
        Self::new(Dtype::I8, shape, values.iter().map(|v| *v as u8).collect())
    }

    pub fn u8(shape: Vec<usize>, values: Vec<u8>) -> Self {
        Self::new(Dtype::U8, shape, values)
    }

    pub fn u32(shape: Vec<usize>, values: &[u32]) -> Self {
        Self::new(Dtype::U32, shape, values.iter().flat_map(|v| v.to_le_bytes()).collect())
    }
}

/// One decoded message: its JSON and its tensors.
pub struct Message {
    pub json: Value,
    pub tensors: HashMap<String, Arr>,
}

/// Reads one frame; `Ok(None)` on a clean end of input.
pub fn read_frame(input: &mut impl Read) -> io::Result<Option<Vec<u8>>> {
    let mut len = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        let n = input.read(&mut len[got..])?;
        if n == 0 {
            return if got == 0 {
                Ok(None)
            } else {
                Err(io::Error::new(io::ErrorKind::UnexpectedEof, "truncated frame length"))
            };
        }
        got += n;
    }
    let len = u32::from_le_bytes(len) as u64;
    if len > MAX_FRAME {
        return Err(io::Error::new(io::ErrorKind::InvalidData, format!("frame of {len} bytes refused")));
    }
    let mut blob = vec![0u8; len as usize];
    input.read_exact(&mut blob)?;
    Ok(Some(blob))
}

pub fn write_frame(out: &mut impl Write, blob: &[u8]) -> io::Result<()> {
    out.write_all(&(blob.len() as u32).to_le_bytes())?;
    out.write_all(blob)?;
    out.flush()
}

pub fn decode(blob: &[u8]) -> Result<Message, String> {
    let st = SafeTensors::deserialize(blob).map_err(|e| format!("not a safetensors blob: {e:?}"))?;
    let (_, meta) = SafeTensors::read_metadata(blob).map_err(|e| format!("bad header: {e:?}"))?;
    let text = meta
        .metadata()
        .as_ref()
        .and_then(|m| m.get("qconform"))
        .ok_or_else(|| "no \"qconform\" key in __metadata__".to_string())?;
    let json: Value = serde_json::from_str(text).map_err(|e| format!("bad message JSON: {e}"))?;
    let mut tensors = HashMap::new();
    for (name, view) in st.tensors() {
        tensors.insert(name, Arr::new(view.dtype(), view.shape().to_vec(), view.data().to_vec()));
    }
    Ok(Message { json, tensors })
}

pub fn encode(json: &Value, tensors: &[(String, Arr)]) -> Vec<u8> {
    let mut meta = HashMap::new();
    meta.insert("qconform".to_string(), json.to_string());
    let views: Vec<(String, TensorView<'_>)> = tensors
        .iter()
        .map(|(name, a)| {
            let view = TensorView::new(a.dtype, a.shape.clone(), &a.data)
                .unwrap_or_else(|e| panic!("harness bug: output {name} inconsistent: {e:?}"));
            (name.clone(), view)
        })
        .collect();
    safetensors::serialize(views, Some(meta)).expect("safetensors serialization")
}

// ------------------------------------------------------------------------------------------------
// Panic capture
// ------------------------------------------------------------------------------------------------

thread_local! {
    static LAST_PANIC: RefCell<Option<(String, String)>> = const { RefCell::new(None) };
}

/// Installs a panic hook that records the message (and location) instead of printing it, so a
/// caught panic leaves stderr clean. With `QCONFORM_BURN_LOG` set, each panic is also logged.
pub fn install_panic_hook() {
    let log = std::env::var_os("QCONFORM_BURN_LOG").is_some();
    std::panic::set_hook(Box::new(move |info| {
        let message = payload_text(info.payload());
        let location = info.location().map(|l| format!("{}:{}", l.file(), l.line())).unwrap_or_default();
        if log {
            eprintln!("[qconform-burn] panic at {location}: {message}");
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

/// The outcome of running an op.
pub enum Failure {
    /// burn (or Rust's std on burn's behalf) panicked with this text; `location` is the panic site.
    Panic { message: String, location: String },
    /// The harness itself refused the request (malformed input, unsupported by the harness).
    Harness { code: String, message: String },
}

pub fn harness<T>(code: &str, message: impl Into<String>) -> Result<T, Failure> {
    Err(Failure::Harness { code: code.to_string(), message: message.into() })
}

/// Runs `f`, turning a panic into `Failure::Panic` with the exact panic text.
pub fn catch<T>(f: impl FnOnce() -> Result<T, Failure>) -> Result<T, Failure> {
    LAST_PANIC.with(|p| *p.borrow_mut() = None);
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            let recorded = LAST_PANIC.with(|p| p.borrow_mut().take());
            let (message, location) = match recorded {
                Some((m, l)) => (m, l),
                None => (payload_text(payload.as_ref()), String::new()),
            };
            Err(Failure::Panic { message, location })
        }
    }
}

pub fn error_json(id: Option<&Value>, failure: &Failure) -> Value {
    let error = match failure {
        // `code` is left out: the runner classifies burn's panic text itself (protocol.md).
        Failure::Panic { message, .. } => json!({"message": message, "panic": message}),
        Failure::Harness { code, message } => json!({"code": code, "message": message}),
    };
    match id {
        Some(id) => json!({"type": "error", "id": id, "error": error}),
        None => json!({"type": "error", "error": error}),
    }
}
