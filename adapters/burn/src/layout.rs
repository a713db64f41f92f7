//! Quantized tensors in motion (docs/ops.md `qlayout`, `quantize_view`): layout steps applied through
//! burn's public `Tensor` API, to a QFloat tensor or to a float tensor that is then quantized.
//!
//! A step is one `Tensor` call. Ranks change along a chain (`reshape`, `expand`), so the tensor travels
//! as `Dyn`, one variant per rank (1 to 6: every chain the suite uses fits, and each extra rank costs
//! compile time in every generic call below).

use burn_std::quantization::QuantScheme;
use burn_std::{DType, Shape, Slice, TensorData};
use burn_tensor::{Int, Tensor};
use serde_json::{Value, json};

use crate::target::Target;
use crate::tensors::{Inputs, data_to_arr, input, quantized_data, quantized_outputs, scheme_param, tensor};
use qconform_protocol::{Failure, Output, fail};

pub(crate) enum Dyn {
    R1(Tensor<1>),
    R2(Tensor<2>),
    R3(Tensor<3>),
    R4(Tensor<4>),
    R5(Tensor<5>),
    R6(Tensor<6>),
}

/// `$body` with `$t` bound to the tensor of whatever rank, its result wrapped back in the same variant.
macro_rules! same_rank {
    ($dyn:expr, $t:ident, $D:ident => $body:expr) => {
        match $dyn {
            Dyn::R1($t) => { #[allow(dead_code)] const $D: usize = 1; Dyn::R1($body) }
            Dyn::R2($t) => { #[allow(dead_code)] const $D: usize = 2; Dyn::R2($body) }
            Dyn::R3($t) => { #[allow(dead_code)] const $D: usize = 3; Dyn::R3($body) }
            Dyn::R4($t) => { #[allow(dead_code)] const $D: usize = 4; Dyn::R4($body) }
            Dyn::R5($t) => { #[allow(dead_code)] const $D: usize = 5; Dyn::R5($body) }
            Dyn::R6($t) => { #[allow(dead_code)] const $D: usize = 6; Dyn::R6($body) }
        }
    };
}
pub(crate) use same_rank;

/// `$body` (which returns `Result<Dyn, Failure>`) with `$t` bound to the tensor of whatever rank.
macro_rules! any_rank {
    ($dyn:expr, $t:ident => $body:expr) => {
        match $dyn {
            Dyn::R1($t) => $body,
            Dyn::R2($t) => $body,
            Dyn::R3($t) => $body,
            Dyn::R4($t) => $body,
            Dyn::R5($t) => $body,
            Dyn::R6($t) => $body,
        }
    };
}
pub(crate) use any_rank;

/// `Tensor::reshape` (or `expand`, `$method`) to a shape of any served rank.
macro_rules! to_rank {
    ($t:expr, $method:ident, $shape:expr) => {{
        let shape: Vec<usize> = $shape;
        let s = Shape::from(shape.clone());
        match shape.len() {
            1 => Ok(Dyn::R1($t.$method::<1, _>(s))),
            2 => Ok(Dyn::R2($t.$method::<2, _>(s))),
            3 => Ok(Dyn::R3($t.$method::<3, _>(s))),
            4 => Ok(Dyn::R4($t.$method::<4, _>(s))),
            5 => Ok(Dyn::R5($t.$method::<5, _>(s))),
            6 => Ok(Dyn::R6($t.$method::<6, _>(s))),
            r => fail("harness.rank", format!("layout steps serve ranks 1 to 6, not {r}")),
        }
    }};
}

pub(crate) fn usizes(step: &Value, key: &str) -> Result<Vec<usize>, Failure> {
    let list = step.get(key).and_then(Value::as_array);
    let parsed: Option<Vec<usize>> = list.map(|l| l.iter().map(|v| v.as_u64().map(|v| v as usize)).collect()).flatten();
    match parsed {
        Some(v) => Ok(v),
        None => fail("harness.bad_params", format!("step {step}: {key:?} must be a list of integers")),
    }
}

pub(crate) fn usize_of(step: &Value, key: &str) -> Result<usize, Failure> {
    match step.get(key).and_then(Value::as_u64) {
        Some(v) => Ok(v as usize),
        None => fail("harness.bad_params", format!("step {step}: {key:?} must be an integer")),
    }
}

pub(crate) fn array<const N: usize>(v: &[usize], step: &Value) -> Result<[usize; N], Failure> {
    match v.try_into() {
        Ok(a) => Ok(a),
        Err(_) => fail("harness.bad_params", format!("step {step}: expected {N} entries")),
    }
}

/// `Tensor::flip` takes a const-length array of axes.
fn flip<const D: usize>(t: Tensor<D>, axes: &[usize], step: &Value) -> Result<Tensor<D>, Failure> {
    Ok(match axes.len() {
        1 => t.flip(array::<1>(axes, step)?),
        2 => t.flip(array::<2>(axes, step)?),
        3 => t.flip(array::<3>(axes, step)?),
        4 => t.flip(array::<4>(axes, step)?),
        5 => t.flip(array::<5>(axes, step)?),
        6 => t.flip(array::<6>(axes, step)?),
        n => return fail("harness.bad_params", format!("step {step}: flip of {n} axes is not served")),
    })
}

fn slices(step: &Value) -> Result<Vec<Slice>, Failure> {
    let Some(ranges) = step.get("ranges").and_then(Value::as_array) else {
        return fail("harness.bad_params", format!("step {step}: \"ranges\" must be a list of [start, end, step]"));
    };
    ranges
        .iter()
        .map(|r| {
            let v: Option<Vec<i64>> = r.as_array().map(|a| a.iter().filter_map(Value::as_i64).collect());
            match v.as_deref() {
                Some([start, end, by]) => Ok(Slice::new(*start as isize, Some(*end as isize), *by as isize)),
                _ => fail("harness.bad_params", format!("step {step}: a range is [start, end, step]")),
            }
        })
        .collect()
}

/// One `Tensor` call.
pub(crate) fn apply(t: Dyn, step: &Value) -> Result<Dyn, Failure> {
    let device = any_rank!(&t, x => x.device());
    let op = step.get("op").and_then(Value::as_str).unwrap_or("");
    match op {
        "reshape" => {
            let shape = usizes(step, "shape")?;
            any_rank!(t, x => to_rank!(x, reshape, shape.clone()))
        }
        "expand" => {
            let shape = usizes(step, "shape")?;
            any_rank!(t, x => to_rank!(x, expand, shape.clone()))
        }
        "transpose" => Ok(same_rank!(t, x, D => x.transpose())),
        "swap_dims" => {
            let dims = usizes(step, "dims")?;
            let [a, b] = array::<2>(&dims, step)?;
            Ok(same_rank!(t, x, D => x.swap_dims(a, b)))
        }
        "permute" => {
            let axes = usizes(step, "axes")?;
            Ok(same_rank!(t, x, D => x.permute(array::<D>(&axes, step)?)))
        }
        "flip" => {
            let axes = usizes(step, "axes")?;
            Ok(same_rank!(t, x, D => flip(x, &axes, step)?))
        }
        "slice" => {
            let s = slices(step)?;
            Ok(same_rank!(t, x, D => x.slice(&s)))
        }
        "select" => {
            let dim = usize_of(step, "dim")?;
            let idx: Vec<i64> = usizes(step, "indices")?.into_iter().map(|i| i as i64).collect();
            let n = idx.len();
            let indices = Tensor::<1, Int>::from_data(TensorData::new(idx, [n]), &device);
            Ok(same_rank!(t, x, D => x.select(dim, indices.clone())))
        }
        "gather" => {
            let dim = usize_of(step, "dim")?;
            let idx: Vec<i64> = usizes(step, "indices")?.into_iter().map(|i| i as i64).collect();
            let shape = usizes(step, "shape")?;
            let data = TensorData::new(idx, shape);
            Ok(same_rank!(t, x, D => x.gather(dim, Tensor::<D, Int>::from_data(data.clone(), &device))))
        }
        "cat" => {
            let (dim, copies) = (usize_of(step, "dim")?, usize_of(step, "copies")?);
            Ok(same_rank!(t, x, D => Tensor::cat(vec![x; copies], dim)))
        }
        "repeat_dim" => {
            let (dim, times) = (usize_of(step, "dim")?, usize_of(step, "times")?);
            Ok(same_rank!(t, x, D => x.repeat_dim(dim, times)))
        }
        "matmul" => {
            let rhs: Vec<f32> = match step.get("rhs").and_then(Value::as_array) {
                Some(v) => v.iter().filter_map(Value::as_f64).map(|f| f as f32).collect(),
                None => return fail("harness.bad_params", format!("step {step}: \"rhs\" must be a list of numbers")),
            };
            let data = TensorData::new(rhs, usizes(step, "shape")?);
            Ok(same_rank!(t, x, D => x.matmul(Tensor::<D>::from_data(data.clone(), &device))))
        }
        "mul_scalar" => {
            let Some(v) = step.get("value").and_then(Value::as_f64) else {
                return fail("harness.bad_params", format!("step {step}: \"value\" must be a number"));
            };
            Ok(same_rank!(t, x, D => x.mul_scalar(v as f32)))
        }
        other => fail("harness.bad_params", format!("unknown layout step {other:?}")),
    }
}

pub(crate) fn steps(params: &Value, key: &str) -> Result<Vec<Value>, Failure> {
    match params.get(key).and_then(Value::as_array) {
        Some(s) => Ok(s.clone()),
        None => fail("harness.bad_params", format!("params.{key} must be a list of steps")),
    }
}

/// `qlayout`: `Tensor::from_data(TensorData::quantized(..))`, the steps, then what a user reads back:
/// `dequantize()` first (a panic there is the answer), then `into_data()` split by burn's reader.
pub fn qlayout<T: Target>(params: &Value, inputs: &Inputs) -> Result<Output, Failure> {
    let scheme = scheme_param(params)?;
    let chain = steps(params, "steps")?;
    let mut t = quantized_input("qlayout", scheme, inputs, &T::device())?;
    for step in &chain {
        t = apply(t, step)?;
    }
    any_rank!(t, x => read_back(x))
}

/// `Tensor::from_data(TensorData::quantized(..))` of the parts `codes`, `scales`, `global?`, at the codes' rank
/// (1 to 4), for `op`.
pub(crate) fn quantized_input(op: &str, scheme: QuantScheme, inputs: &Inputs, device: &burn_tensor::Device)
    -> Result<Dyn, Failure> {
    let rank = input(inputs, "codes")?.shape.len();
    let data = quantized_data(scheme, inputs)?;
    Ok(match rank {
        1 => Dyn::R1(Tensor::<1>::from_data(data, device)),
        2 => Dyn::R2(Tensor::<2>::from_data(data, device)),
        3 => Dyn::R3(Tensor::<3>::from_data(data, device)),
        4 => Dyn::R4(Tensor::<4>::from_data(data, device)),
        r => return fail("harness.rank", format!("{op} serves input ranks 1 to 4, not {r}")),
    })
}

/// The float tensor `x` in its own dtype, at its rank (1 to 4), for `op`.
pub(crate) fn float_input(op: &str, inputs: &Inputs, device: &burn_tensor::Device) -> Result<Dyn, Failure> {
    let x = input(inputs, "x")?;
    Ok(match x.shape.len() {
        1 => Dyn::R1(tensor::<1>(x, device)?),
        2 => Dyn::R2(tensor::<2>(x, device)?),
        3 => Dyn::R3(tensor::<3>(x, device)?),
        4 => Dyn::R4(tensor::<4>(x, device)?),
        r => return fail("harness.rank", format!("{op} serves input ranks 1 to 4, not {r}")),
    })
}

pub(crate) fn read_back<const D: usize>(t: Tensor<D>) -> Result<Output, Failure> {
    match t.dtype() {
        DType::QFloat(scheme) => {
            let x = t.clone().dequantize().into_data();
            let mut tensors = vec![("x".to_string(), data_to_arr(&x, None)?)];
            tensors.extend(quantized_outputs(t.into_data(), false)?);
            Ok(Output { values: json!({"quantized": true, "scheme": format!("{scheme:?}")}), tensors })
        }
        _ => {
            let x = t.into_data();
            Ok(Output { values: json!({"quantized": false}), tensors: vec![("x".to_string(), data_to_arr(&x, None)?)] })
        }
    }
}

/// `quantize_view`: `Tensor::quantize_dynamic` of a view (the float steps) of a contiguous tensor.
pub fn quantize_view<T: Target>(params: &Value, inputs: &Inputs) -> Result<Output, Failure> {
    let scheme = scheme_param(params)?;
    let chain = steps(params, "view")?;
    let mut t = float_input("quantize_view", inputs, &T::device())?;
    for step in &chain {
        t = apply(t, step)?;
    }
    any_rank!(t, v => {
        let q = v.quantize_dynamic(&scheme);
        Ok(Output { values: json!({}), tensors: quantized_outputs(q.into_data(), false)? })
    })
}
