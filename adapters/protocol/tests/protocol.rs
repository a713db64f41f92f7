//! The protocol loop end to end on in-memory streams: what a runner sends, what comes back.

use qconform_protocol::*;

/// Doubles `x`; panics on op "boom"; refuses anything else with a code. Counts `after_failure` calls.
#[derive(Default)]
struct Doubler {
    failures: Vec<Failure>,
}

impl Backend for Doubler {
    fn hello(&self) -> Value {
        json!({"name": "doubler", "version": "1", "profile": null, "capabilities": {"ops": ["double"]}})
    }

    fn run(&mut self, op: &str, _params: &Value, inputs: &Tensors) -> Result<Output, Failure> {
        match op {
            "double" => {
                let x = inputs["x"].to_f32().expect("f32 input");
                let y: Vec<f32> = x.iter().map(|v| v * 2.0).collect();
                Ok(Output::tensors(vec![("y".into(), Arr::f32(inputs["x"].shape.clone(), &y))]))
            }
            "boom" => panic!("index out of bounds: the len is 3 but the index is 7"),
            "q4" => unsupported("Q4S is not implemented"),
            _ => fail("op.unknown", format!("unknown op {op:?}")),
        }
    }

    fn after_failure(&mut self, failure: &Failure) {
        self.failures.push(failure.clone());
    }
}

fn frames(messages: &[(Value, Vec<(String, Arr)>)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (json, tensors) in messages {
        write_frame(&mut out, &encode(json, tensors)).unwrap();
    }
    out
}

fn replies(input: Vec<u8>) -> Vec<Message> {
    replies_and_failures(input).0
}

fn replies_and_failures(input: Vec<u8>) -> (Vec<Message>, Vec<Failure>) {
    let mut output = Vec::new();
    let mut backend = Doubler::default();
    serve(&mut backend, input.as_slice(), &mut output).unwrap();
    let mut stream = output.as_slice();
    let mut out = Vec::new();
    while let Some(blob) = read_frame(&mut stream).unwrap() {
        out.push(decode(&blob).unwrap());
    }
    (out, backend.failures)
}

fn request(id: &str, op: &str, tensors: Vec<(String, Arr)>) -> (Value, Vec<(String, Arr)>) {
    (json!({"type": "request", "id": id, "op": op, "params": {}}), tensors)
}

#[test]
fn a_session_answers_every_message_in_order() {
    install_panic_hook(false);
    let x = Arr::f32(vec![2, 2], &[1.0, -2.5, 0.0, 3.0e38]);
    let input = frames(&[
        (json!({"type": "hello", "protocol": 1}), vec![]),
        request("1", "double", vec![("x".into(), x)]),
        request("2", "boom", vec![]),
        request("3", "nope", vec![]),
        (json!({"type": "whatever", "id": "4"}), vec![]),
    ]);
    let (r, failures) = replies_and_failures(input);
    assert_eq!(r.len(), 5);
    assert_eq!(r[0].json["type"], "hello");
    assert_eq!(r[0].json["protocol"], 1);
    assert_eq!(r[0].json["name"], "doubler");
    assert_eq!(r[0].json["capabilities"]["ops"], json!(["double"]));

    assert_eq!(r[1].json, json!({"type": "result", "id": "1", "values": {}}));
    let y = &r[1].tensors["y"];
    assert_eq!(y.shape, vec![2, 2]);
    // 2 * 3e38 overflows to +inf in f32: the bits travel unchanged.
    let bits: Vec<u32> = y.to_f32().unwrap().iter().map(|v| v.to_bits()).collect();
    assert_eq!(bits, vec![0x4000_0000, 0xc0a0_0000, 0, 0x7f80_0000]);

    // A panic is an error reply with the exact panic text and no code (the runner classifies it).
    let msg = "index out of bounds: the len is 3 but the index is 7";
    assert_eq!(r[2].json, json!({"type": "error", "id": "2", "error": {"message": msg, "panic": msg}}));
    assert!(r[2].tensors.is_empty());

    assert_eq!(r[3].json["error"]["code"], "op.unknown");
    assert_eq!(r[3].json["id"], "3");
    assert_eq!(r[4].json["error"]["code"], "protocol.unknown_type");
    assert_eq!(r[4].json["id"], "4");

    // after_failure saw each failed request, in order, after its reply (the panic with its location)
    assert_eq!(failures.len(), 3);
    assert!(matches!(&failures[0], Failure::Panic { message, location } if message.starts_with("index out of bounds") && location.contains("protocol.rs")));
    assert_eq!(failures[1], Failure::Error { code: "op.unknown".into(), message: "unknown op \"nope\"".into() });
}

#[test]
fn bye_ends_the_session() {
    let input = frames(&[(json!({"type": "bye"}), vec![]), (json!({"type": "hello", "protocol": 1}), vec![])]);
    assert!(replies(input).is_empty());
}

#[test]
fn another_protocol_version_is_refused() {
    let r = replies(frames(&[(json!({"type": "hello", "protocol": 3}), vec![])]));
    assert_eq!(r[0].json["type"], "error");
    assert_eq!(r[0].json["error"]["code"], "protocol.version");
}

#[test]
fn a_frame_that_is_not_a_message_gets_an_error_reply() {
    let mut input = Vec::new();
    write_frame(&mut input, b"not safetensors").unwrap();
    let r = replies(input);
    assert_eq!(r[0].json["error"]["code"], "protocol.bad_frame");
    // A safetensors blob without the "qconform" key is not a message either.
    let mut input = Vec::new();
    write_frame(&mut input, &safetensors::serialize(Vec::<(String, safetensors::tensor::TensorView)>::new(), None).unwrap()).unwrap();
    assert!(replies(input)[0].json["error"]["message"].as_str().unwrap().contains("qconform"));
}

#[test]
fn frames_are_length_prefixed_little_endian() {
    let mut out = Vec::new();
    write_frame(&mut out, b"abc").unwrap();
    assert_eq!(out, b"\x03\x00\x00\x00abc");
    assert_eq!(read_frame(&mut out.as_slice()).unwrap(), Some(b"abc".to_vec()));
    assert_eq!(read_frame(&mut &b""[..]).unwrap(), None);
    assert_eq!(read_frame(&mut &b"\x03\x00"[..]).unwrap_err().kind(), std::io::ErrorKind::UnexpectedEof);
    assert_eq!(read_frame(&mut &b"\x03\x00\x00\x00ab"[..]).unwrap_err().kind(), std::io::ErrorKind::UnexpectedEof);
    // "Hell" read as a length is above 1 GiB: refused, not allocated.
    assert_eq!(read_frame(&mut &b"Hello"[..]).unwrap_err().kind(), std::io::ErrorKind::InvalidData);
}

#[test]
fn tensors_round_trip_bit_exact() {
    let tensors = vec![
        ("c".to_string(), Arr::i8(vec![3], &[-128, 0, 127])),
        ("w".to_string(), Arr::u32(vec![1], &[0xdead_beef])),
        ("n".to_string(), Arr::f32(vec![0], &[])),
    ];
    let m = decode(&encode(&json!({"type": "result", "id": "x"}), &tensors)).unwrap();
    assert_eq!(m.json["id"], "x");
    for (name, a) in &tensors {
        assert_eq!(&m.tensors[name], a);
    }
    assert_eq!(m.tensors["c"].to_i8().unwrap(), vec![-128, 0, 127]);
    assert_eq!(m.tensors["c"].to_f32(), None);
}

#[test]
fn a_runner_offering_version_2_gets_it_and_a_declined_request_is_unsupported() {
    let r = replies(frames(&[
        (json!({"type": "hello", "protocol": 1, "protocols": [1, 2]}), vec![]),
        request("1", "q4", vec![]),
    ]));
    assert_eq!(r[0].json["protocol"], 2);
    assert_eq!(r[1].json, json!({"type": "unsupported", "id": "1", "reason": "Q4S is not implemented"}));
    assert!(r[1].tensors.is_empty());
}

#[test]
fn to_a_version_1_runner_a_declined_request_is_an_error() {
    let r = replies(frames(&[(json!({"type": "hello", "protocol": 1}), vec![]), request("1", "q4", vec![])]));
    assert_eq!(r[0].json["protocol"], 1);
    assert_eq!(r[1].json["type"], "error");
    assert_eq!(r[1].json["error"]["code"], "harness.unsupported");
}
