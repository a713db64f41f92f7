//! Bytes on the wire: length-prefixed frames holding safetensors blobs whose
//! `__metadata__["qconform"]` is the JSON message (docs/protocol.md, "Messages" and "subprocess").

use std::collections::HashMap;
use std::io::{self, Read, Write};

use safetensors::tensor::{Dtype, SafeTensors, TensorView};
use serde_json::Value;

/// Frames larger than this are refused, in both directions (protocol.md, "subprocess").
pub const MAX_FRAME: u64 = 1 << 30;
/// The `__metadata__` key that carries the JSON message.
pub const META_KEY: &str = "qconform";

/// A tensor as it travels: safetensors dtype, shape and little-endian element bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct Arr {
    pub dtype: Dtype,
    pub shape: Vec<usize>,
    pub data: Vec<u8>,
}

/// A message's tensors by name.
pub type Tensors = HashMap<String, Arr>;

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

    /// The elements of an `F32` tensor, `None` for any other dtype.
    pub fn to_f32(&self) -> Option<Vec<f32>> {
        (self.dtype == Dtype::F32)
            .then(|| self.data.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect())
    }

    /// The elements of an `I8` tensor, `None` for any other dtype.
    pub fn to_i8(&self) -> Option<Vec<i8>> {
        (self.dtype == Dtype::I8).then(|| self.data.iter().map(|b| *b as i8).collect())
    }
}

/// One decoded message: its JSON and its tensors.
#[derive(Debug)]
pub struct Message {
    pub json: Value,
    pub tensors: Tensors,
}

/// Reads one frame; `Ok(None)` on a clean end of input (the runner closed the pipe).
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

/// Writes one frame and flushes it (the runner waits for whole frames).
pub fn write_frame(out: &mut impl Write, blob: &[u8]) -> io::Result<()> {
    if blob.len() as u64 > MAX_FRAME {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("reply of {} bytes exceeds 1 GiB", blob.len())));
    }
    out.write_all(&(blob.len() as u32).to_le_bytes())?;
    out.write_all(blob)?;
    out.flush()
}

/// Parses a message blob; the error says what is wrong with it.
pub fn decode(blob: &[u8]) -> Result<Message, String> {
    let st = SafeTensors::deserialize(blob).map_err(|e| format!("not a safetensors blob: {e:?}"))?;
    let (_, meta) = SafeTensors::read_metadata(blob).map_err(|e| format!("bad header: {e:?}"))?;
    let text = meta
        .metadata()
        .as_ref()
        .and_then(|m| m.get(META_KEY))
        .ok_or_else(|| format!("no {META_KEY:?} key in __metadata__"))?;
    let json: Value = serde_json::from_str(text).map_err(|e| format!("bad message JSON: {e}"))?;
    let tensors = st
        .tensors()
        .into_iter()
        .map(|(name, view)| (name, Arr::new(view.dtype(), view.shape().to_vec(), view.data().to_vec())))
        .collect();
    Ok(Message { json, tensors })
}

/// The blob of a message. Panics if a tensor's bytes do not match its dtype and shape (a backend bug,
/// reported as such rather than sent as a malformed reply).
pub fn encode(json: &Value, tensors: &[(String, Arr)]) -> Vec<u8> {
    let meta = HashMap::from([(META_KEY.to_string(), json.to_string())]);
    let views: Vec<(String, TensorView<'_>)> = tensors
        .iter()
        .map(|(name, a)| {
            let view = TensorView::new(a.dtype, a.shape.clone(), &a.data)
                .unwrap_or_else(|e| panic!("backend bug: output {name} inconsistent: {e:?}"));
            (name.clone(), view)
        })
        .collect();
    safetensors::serialize(views, Some(meta)).expect("safetensors serialization")
}
