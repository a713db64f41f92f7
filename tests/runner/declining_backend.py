"""A subprocess test backend that declines every request with protocol 2's ``unsupported`` reply.

    python declining_backend.py [--speak 1|2] [--caps JSON] [--reason TEXT]

``--speak 1`` answers the handshake as a version-1 backend and still sends ``unsupported``: a protocol error,
since version 1 has no such reply. The handshake honours the runner's offer (``protocols``), as a v2 backend
must: it refuses the runner when the version it speaks is not offered.
"""

import argparse
import json
import struct
import sys

from conformance.protocol import decode_message, encode_message


def read_frame(stream) -> bytes | None:
    prefix = stream.read(4)
    if len(prefix) < 4:
        return None
    return stream.read(struct.unpack("<I", prefix)[0])


def write_frame(stream, meta: dict) -> None:
    blob = encode_message(meta)
    stream.write(struct.pack("<I", len(blob)) + blob)
    stream.flush()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--speak", type=int, default=2)
    ap.add_argument("--caps", default="{}")
    ap.add_argument("--reason", default="this codec implements no such request")
    args = ap.parse_args()
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while (blob := read_frame(stdin)) is not None:
        meta, _ = decode_message(blob)
        if meta["type"] == "bye":
            return 0
        if meta["type"] == "hello":
            offered = meta.get("protocols", [meta.get("protocol")])
            if args.speak not in offered:
                write_frame(stdout, {"type": "error", "error": {"code": "protocol.version",
                                                                "message": f"speaks {args.speak} only"}})
                continue
            write_frame(stdout, {"type": "hello", "protocol": args.speak, "name": "decliner", "version": "1",
                                 "profile": "test/a", "capabilities": json.loads(args.caps)})
            continue
        write_frame(stdout, {"type": "unsupported", "id": meta["id"], "reason": args.reason})
    return 0


if __name__ == "__main__":
    sys.exit(main())
