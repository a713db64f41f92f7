//! Float ops on a quantized tensor (docs/ops.md `float_ops`): a chain of `Tensor` calls, layout steps
//! (src/layout.rs) and float ops alike, on a QFloat tensor loaded from its parts or quantized on the device,
//! then read back as `qlayout` reads it: the reply says whether burn left the result quantized.
//!
//! Every call is burn's public `Tensor` API; which route burn takes (dequantize and a float result, or a
//! requantization under the input's scheme) is burn's own (docs/spec/float-ops.md).

use burn_std::TensorData;
use burn_tensor::{Bool, Tensor};
use serde_json::Value;

use crate::layout::{Dyn, any_rank, float_input, quantized_input, read_back, same_rank, steps, usize_of};
use crate::target::Target;
use crate::scheme::scheme_from_json;
use crate::tensors::{Inputs, scheme_param};
use qconform_protocol::{Failure, Output, fail};

/// `float_ops`: the start tensor, each step, then `dequantize()` and `into_data()` (src/layout.rs).
pub fn float_ops<T: Target>(params: &Value, inputs: &Inputs) -> Result<Output, Failure> {
    let scheme = scheme_param(params)?;
    let chain = steps(params, "steps")?;
    let device = T::device();
    let mut t = if inputs.contains_key("x") {
        // quantized on the device: `Tensor::from_data(x).quantize_dynamic(&scheme)`, x in its own dtype
        let x = float_input("float_ops", inputs, &device)?;
        same_rank!(x, v, D => v.quantize_dynamic(&scheme))
    } else {
        quantized_input("float_ops", scheme, inputs, &device)?
    };
    for step in &chain {
        t = apply(t, step)?;
    }
    any_rank!(t, x => read_back(x))
}

fn number(step: &Value, key: &str) -> Result<f32, Failure> {
    match step.get(key).and_then(Value::as_f64) {
        Some(v) => Ok(v as f32),
        None => fail("harness.bad_params", format!("step {step}: {key:?} must be a number")),
    }
}

/// A float tensor given in the step as a flat list `key` with its `"shape"`.
fn float_operand<const D: usize>(step: &Value, key: &str, device: &burn_tensor::Device) -> Result<Tensor<D>, Failure> {
    let values: Vec<f32> = match step.get(key).and_then(Value::as_array) {
        Some(v) => v.iter().filter_map(Value::as_f64).map(|f| f as f32).collect(),
        None => return fail("harness.bad_params", format!("step {step}: {key:?} must be a list of numbers")),
    };
    let shape = crate::layout::usizes(step, "shape")?;
    Ok(Tensor::<D>::from_data(TensorData::new(values, shape), device))
}

/// A binary step's other side: the same tensor (`"rhs": "self"`, quantized like it), a float tensor, or with
/// `"rhs_scheme"` that float tensor quantized on the device under its own scheme (a second QFloat tensor).
fn other<const D: usize>(x: &Tensor<D>, step: &Value) -> Result<Tensor<D>, Failure> {
    if step.get("rhs").and_then(Value::as_str) == Some("self") {
        return Ok(x.clone());
    }
    let rhs = float_operand::<D>(step, "rhs", &x.device())?;
    match step.get("rhs_scheme") {
        Some(s) => Ok(rhs.quantize_dynamic(&scheme_from_json(s)?)),
        None => Ok(rhs),
    }
}

/// A comparison of the tensor with the step's scalar `"value"`: `x.<compare>(value)`.
fn compared<const D: usize>(x: &Tensor<D>, compare: &str, step: &Value) -> Result<Tensor<D, Bool>, Failure> {
    let v = number(step, "value")?;
    let x = x.clone();
    Ok(match compare {
        "greater_elem" => x.greater_elem(v),
        "greater_equal_elem" => x.greater_equal_elem(v),
        "lower_elem" => x.lower_elem(v),
        "lower_equal_elem" => x.lower_equal_elem(v),
        "equal_elem" => x.equal_elem(v),
        other => return fail("harness.bad_params", format!("step {step}: unknown compare {other:?}")),
    })
}

/// `mask_fill`'s and `mask_where`'s mask: the comparison its `"compare"` names.
fn mask<const D: usize>(x: &Tensor<D>, step: &Value) -> Result<Tensor<D, Bool>, Failure> {
    compared(x, step.get("compare").and_then(Value::as_str).unwrap_or(""), step)
}

/// An op that takes one dim: a reduction keeps it (of size 1), a scan keeps the shape; `argmax`/`argmin`'s Int
/// indices are read as floats (`Tensor::float`: exact below 2^24).
fn along<const D: usize>(x: Tensor<D>, op: &str, d: usize) -> Tensor<D> {
    match op {
        "sum_dim" => x.sum_dim(d),
        "mean_dim" => x.mean_dim(d),
        "prod_dim" => x.prod_dim(d),
        "cumsum" => x.cumsum(d),
        "cumprod" => x.cumprod(d),
        "max_dim" => x.max_dim(d),
        "min_dim" => x.min_dim(d),
        "argmax" => x.argmax(d).float(),
        "argmin" => x.argmin(d).float(),
        _ => unreachable!("along: {op} takes no dim"),
    }
}

/// `sort`/`sort_descending`, or the `argsort` indices read as floats like argmax's.
fn sorted<const D: usize>(x: Tensor<D>, indices: bool, descending: bool, d: usize) -> Tensor<D> {
    match (indices, descending) {
        (false, false) => x.sort(d),
        (false, true) => x.sort_descending(d),
        (true, false) => x.argsort(d).float(),
        (true, true) => x.argsort_descending(d).float(),
    }
}

/// `Tensor::stack(vec![t; copies], dim)`: one rank more.
fn stack(t: Dyn, step: &Value) -> Result<Dyn, Failure> {
    let (dim, copies) = (usize_of(step, "dim")?, usize_of(step, "copies")?);
    Ok(match t {
        Dyn::R1(x) => Dyn::R2(Tensor::stack(vec![x; copies], dim)),
        Dyn::R2(x) => Dyn::R3(Tensor::stack(vec![x; copies], dim)),
        Dyn::R3(x) => Dyn::R4(Tensor::stack(vec![x; copies], dim)),
        Dyn::R4(x) => Dyn::R5(Tensor::stack(vec![x; copies], dim)),
        Dyn::R5(x) => Dyn::R6(Tensor::stack(vec![x; copies], dim)),
        Dyn::R6(_) => return fail("harness.rank", "stack of a rank-6 tensor: ranks 1 to 6 are served"),
    })
}

/// `Tensor::matmul` with the held tensor as lhs (times a float rhs, or itself) or as rhs (`"lhs"`: a float lhs).
fn matmul<const D: usize>(x: Tensor<D>, step: &Value) -> Result<Tensor<D>, Failure> {
    if step.get("lhs").is_some() {
        return Ok(float_operand::<D>(step, "lhs", &x.device())?.matmul(x));
    }
    let rhs = other(&x, step)?;
    Ok(x.matmul(rhs))
}

/// One `Tensor` call: a float op here, a layout step in src/layout.rs.
fn apply(t: Dyn, step: &Value) -> Result<Dyn, Failure> {
    let op = step.get("op").and_then(Value::as_str).unwrap_or("");
    match op {
        "abs" => Ok(same_rank!(t, x, D => x.abs())),
        "neg" => Ok(same_rank!(t, x, D => x.neg())),
        "sqrt" => Ok(same_rank!(t, x, D => x.sqrt())),
        "add_scalar" => {
            let v = number(step, "value")?;
            Ok(same_rank!(t, x, D => x.add_scalar(v)))
        }
        "clamp" => {
            let (lo, hi) = (number(step, "min")?, number(step, "max")?);
            Ok(same_rank!(t, x, D => x.clamp(lo, hi)))
        }
        "add" => Ok(same_rank!(t, x, D => { let o = other(&x, step)?; x.add(o) })),
        "sub" => Ok(same_rank!(t, x, D => { let o = other(&x, step)?; x.sub(o) })),
        "mul" => Ok(same_rank!(t, x, D => { let o = other(&x, step)?; x.mul(o) })),
        "div" => Ok(same_rank!(t, x, D => { let o = other(&x, step)?; x.div(o) })),
        "mask_fill" => {
            let fill = number(step, "fill")?;
            Ok(same_rank!(t, x, D => { let m = mask(&x, step)?; x.mask_fill(m, fill) }))
        }
        "mask_where" => Ok(same_rank!(t, x, D => {
            let source = other(&x, step)?; // first, as every other side: a quantized one's panics before the mask's
            let m = mask(&x, step)?;
            x.mask_where(m, source)
        })),
        // a Bool result, read as floats (`Tensor::float`): 1.0 where it holds, else 0.0
        "greater_elem" | "greater_equal_elem" | "lower_elem" | "lower_equal_elem" | "equal_elem" => {
            Ok(same_rank!(t, x, D => compared(&x, op, step)?.float()))
        }
        "sum" => Ok(Dyn::R1(any_rank!(t, x => x.sum()))),
        "prod" => Ok(Dyn::R1(any_rank!(t, x => x.prod()))),
        "sum_dim" | "mean_dim" | "prod_dim" | "cumsum" | "cumprod" | "max_dim" | "min_dim" | "argmax" | "argmin" => {
            let d = usize_of(step, "dim")?;
            Ok(same_rank!(t, x, D => along(x, op, d)))
        }
        "sort" | "argsort" => {
            let d = usize_of(step, "dim")?;
            let descending = step.get("descending").and_then(Value::as_bool).unwrap_or(false);
            Ok(same_rank!(t, x, D => sorted(x, op == "argsort", descending, d)))
        }
        "topk" => {
            let (d, k) = (usize_of(step, "dim")?, usize_of(step, "k")?);
            Ok(same_rank!(t, x, D => x.topk(k, d)))
        }
        "stack" => stack(t, step),
        "matmul" => Ok(same_rank!(t, x, D => matmul(x, step)?)),
        _ => crate::layout::apply(t, step),
    }
}
