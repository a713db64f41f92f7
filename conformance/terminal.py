"""Text from a backend (error messages, stderr, names) made safe to print on a terminal.

A backend controls those bytes. Printed raw, escape sequences could clear the screen, move the cursor over
FAILED lines, set the window title, or reorder a line (bidirectional overrides). Every control character other
than newline and tab is shown as a visible escape instead (``\\x1b``, ``\\r``, ``\\u202e``).
"""

from __future__ import annotations

import re

# C0 controls except \t and \n, DEL, C1 controls, and the Unicode bidi/invisible formatting controls.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")


def _escape(m: re.Match) -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def safe(text: str) -> str:
    """``text`` with every control character except newline and tab shown as an escape."""
    return _UNSAFE.sub(_escape, str(text))
