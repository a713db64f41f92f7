//! A minimal qconform backend: `quantize_dynamic` and `dequantize` of burn's Q8S (symmetric int8) with
//! per-tensor or per-block f32 scales, codes stored natively, the arithmetic of burn-ndarray 0.22.0-pre.3.
//! Everything else is declared out of scope in `hello`, so the runner reports it "not applicable".
//!
//!     cargo build --release && qconform run --backend "subprocess:target/release/qconform-example-rust-backend"

use qconform_protocol::{Arr, Backend, Failure, Output, Tensors, Value, fail, json};

/// Q8S codes span [-Q, Q] (burn's `QuantValue::Q8S` range).
const Q: f32 = 127.0;

struct Example;

impl Backend for Example {
    fn hello(&self) -> Value {
        json!({
            "name": "qconform-example-rust-backend",
            "version": env!("CARGO_PKG_VERSION"),
            "profile": "burn-0.22.0-pre.3/ndarray",
            "capabilities": {
                "ops": ["quantize_dynamic", "dequantize"],
                "values": ["Q8S"], "stores": ["Native"], "modes": ["Symmetric"],
                "levels": ["tensor", "block"], "scale_dtypes": ["F32"],
                "input_dtypes": ["f32"], "output_dtypes": ["f32"],
            },
        })
    }

    fn run(&mut self, op: &str, params: &Value, inputs: &Tensors) -> Result<Output, Failure> {
        let block = params["scheme"]["block"]["size"].as_array().map(|s| canonical(s));
        match op {
            "quantize_dynamic" => quantize_dynamic(tensor(inputs, "x")?, block.as_deref()),
            "dequantize" if inputs.contains_key("global") => {
                fail("bytes.global_unexpected", "a global scale given to a one-level scheme")
            }
            "dequantize" => dequantize(tensor(inputs, "codes")?, tensor(inputs, "scales")?, block.as_deref()),
            _ => fail("op.unknown", format!("unknown op {op:?}")),
        }
    }
}

fn tensor<'a>(inputs: &'a Tensors, name: &str) -> Result<&'a Arr, Failure> {
    inputs.get(name).map_or_else(|| fail("harness.missing_input", format!("no input {name:?}")), Ok)
}

/// burn's `BlockSize::new`: leading 1s dropped, at most five extents kept.
fn canonical(size: &[Value]) -> Vec<usize> {
    let dims: Vec<usize> = size.iter().map(|d| d.as_u64().unwrap_or(1) as usize).collect();
    dims.iter().skip_while(|d| **d == 1).take(5).copied().collect()
}

/// Which scale governs each element: one for a per-tensor scheme, else N-D rectangles.
struct Layout {
    shape: Vec<usize>,
    block: Vec<usize>, // extent per axis; empty for per-tensor
    grid: Vec<usize>,  // blocks per axis, partial blocks included
}

impl Layout {
    fn new(shape: &[usize], block: Option<&[usize]>) -> Self {
        let Some(block) = block else { return Layout { shape: shape.to_vec(), block: vec![], grid: vec![] } };
        // The block's first min(rank, len) extents, right-aligned over the tensor's axes (`to_dim_vec`).
        let n = block.len().min(shape.len());
        let block: Vec<usize> = std::iter::repeat_n(1, shape.len() - n).chain(block[..n].iter().copied()).collect();
        let grid = shape.iter().zip(&block).map(|(d, b)| d.div_ceil(*b)).collect();
        Layout { shape: shape.to_vec(), block, grid }
    }

    fn num_blocks(&self) -> usize {
        self.grid.iter().product() // 1 for per-tensor (empty product)
    }

    /// Row-major element index -> row-major block index.
    fn block_of(&self, mut index: usize) -> usize {
        let (mut block, mut stride) = (0, 1);
        for axis in (0..self.block.len()).rev() {
            block += index % self.shape[axis] / self.block[axis] * stride;
            index /= self.shape[axis];
            stride *= self.grid[axis];
        }
        block
    }
}

/// burn-ndarray's `valid_scale`: a zero scale divides and multiplies as 0.1.
fn guard(scale: f32) -> f32 {
    if scale == 0.0 { 0.1 } else { scale }
}

fn quantize_dynamic(x: &Arr, block: Option<&[usize]>) -> Result<Output, Failure> {
    let values = x.to_f32().ok_or(Failure::Error { code: "harness.bad_input".into(), message: "x must be F32".into() })?;
    let layout = Layout::new(&x.shape, block);
    if block.is_none() && values.is_empty() {
        return fail("range.empty_ndarray", "the min of an empty tensor");
    }
    if layout.shape.iter().zip(&layout.block).any(|(d, b)| d % b != 0) {
        return fail("range.block_not_divisible", "the blocks do not tile the tensor");
    }
    if 2 * layout.block.len() > 6 {
        // Calibration reshapes to [n0, b0, n1, b1, ...]; ndarray arrays have at most 6 dims.
        return fail("ndarray.reshape_dims", format!("NdArray supports arrays up to 6 dimensions, received: {}", 2 * layout.block.len()));
    }
    // MinMax range per block, then scale = 2 * max(|min|, |max|) / (Q - (-Q)), all in f32.
    let mut range = vec![(f32::INFINITY, f32::NEG_INFINITY); layout.num_blocks()];
    for (i, v) in values.iter().enumerate() {
        let r = &mut range[layout.block_of(i)];
        *r = (r.0.min(*v), r.1.max(*v));
    }
    let scales: Vec<f32> = range
        .iter()
        .map(|(lo, hi)| {
            let alpha = if lo.abs() < hi.abs() { hi.abs() } else { lo.abs() };
            alpha * 2.0 / (2.0 * Q)
        })
        .collect();
    let mut codes = Vec::with_capacity(values.len());
    for (i, v) in values.iter().enumerate() {
        // Ties away from zero (`f32::round`), clamped; a NaN code is ndarray's failed `NumCast`.
        let q = (v / guard(scales[layout.block_of(i)])).round().clamp(-Q, Q);
        if q.is_nan() {
            return fail("ndarray.nan_code", "called `Option::unwrap()` on a `None` value");
        }
        codes.push(q as i8);
    }
    Ok(Output::tensors(vec![
        ("codes".into(), Arr::i8(x.shape.clone(), &codes)),
        ("scales".into(), Arr::f32(vec![scales.len()], &scales)),
    ]))
}

fn dequantize(codes: &Arr, scales: &Arr, block: Option<&[usize]>) -> Result<Output, Failure> {
    let bad = |what: &str| Failure::Error { code: "harness.bad_input".into(), message: format!("{what} has the wrong dtype") };
    let (q, s) = (codes.to_i8().ok_or_else(|| bad("codes"))?, scales.to_f32().ok_or_else(|| bad("scales"))?);
    let layout = Layout::new(&codes.shape, block);
    if s.len() != layout.num_blocks() {
        // The parts do not make one tensor's bytes: burn reads a different number of codes back.
        return fail("data.shape_mismatch", format!("{} scales for {} blocks", s.len(), layout.num_blocks()));
    }
    let x: Vec<f32> = q.iter().enumerate().map(|(i, c)| guard(s[layout.block_of(i)]) * *c as f32).collect();
    Ok(Output::tensors(vec![("x".into(), Arr::f32(codes.shape.clone(), &x))]))
}

fn main() {
    qconform_protocol::main(&mut Example)
}
