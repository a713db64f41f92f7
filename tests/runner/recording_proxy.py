"""A subprocess backend that records every frame between the runner and the backend it wraps.

    python recording_proxy.py LOG -- COMMAND [ARGS...]

Frames pass through unchanged; LOG gets one record per frame: a direction byte (b"R" runner, b"B" backend),
a 4-byte little-endian length and the safetensors blob. The protocol is strictly request/reply, so after each
frame from the runner exactly one frame comes back (none after "bye").
"""

import json
import struct
import subprocess
import sys


def message_type(blob):
    """The "type" of a message, read from the safetensors header with the standard library only."""
    (n,) = struct.unpack_from("<Q", blob)
    return json.loads(json.loads(blob[8:8 + n])["__metadata__"]["qconform"]).get("type")


def read_frame(stream):
    head = stream.read(4)
    if len(head) < 4:
        return None
    return stream.read(struct.unpack("<I", head)[0])


def main():
    log_path, command = sys.argv[1], sys.argv[sys.argv.index("--") + 1:]
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    with open(log_path, "ab") as log:
        while (blob := read_frame(sys.stdin.buffer)) is not None:
            log.write(b"R" + struct.pack("<I", len(blob)) + blob)
            child.stdin.write(struct.pack("<I", len(blob)) + blob)
            child.stdin.flush()
            if message_type(blob) == "bye":
                break
            reply = read_frame(child.stdout)
            if reply is None:
                break
            log.write(b"B" + struct.pack("<I", len(reply)) + reply)
            log.flush()
            sys.stdout.buffer.write(struct.pack("<I", len(reply)) + reply)
            sys.stdout.buffer.flush()
    child.stdin.close()
    child.wait(timeout=10)


if __name__ == "__main__":
    main()
