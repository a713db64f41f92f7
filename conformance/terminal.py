"""Text from a backend (error messages, stderr, names, versions, reasons) made safe to print.

A backend controls those bytes. Printed raw, escape sequences could clear the screen, move the cursor over
FAILED lines, set the window title, or reorder a line (bidirectional overrides); a ``\\r`` or a newline in a name
could print a forged line above the real verdict; a lone surrogate (``"\\ud800"``, valid in JSON, not in UTF-8)
would crash the print itself. ``safe`` shows every control character other than newline and tab, and every
surrogate, as a visible escape (``\\x1b``, ``\\r``, ``\\u202e``, ``\\ud800``); ``one_line`` escapes newline and
tab too, for text that must stay on its line (a name in a statement, a reason in a list). Every printer of
backend text goes through one of them (``run``, ``list``, ``report``, ``repro``, ``serve``, ``fuzz``).
"""

from __future__ import annotations

import re

# C0 controls except \t and \n, DEL, C1 controls, the Unicode bidi/invisible formatting controls, surrogates, and
# the two noncharacters XML forbids (a badge or JUnit file stays well-formed).
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff"
                     "\ud800-\udfff\ufffe\uffff]")
_UNSAFE_LINE = re.compile(f"[\t\n{_UNSAFE.pattern[1:-1]}]")


def _escape(m: re.Match) -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def safe(text: str) -> str:
    """``text`` with every control character except newline and tab, and every surrogate, shown as an escape."""
    return _UNSAFE.sub(_escape, str(text))


def one_line(text: str) -> str:
    """``safe(text)`` with newline and tab escaped too: printed, it is one line."""
    return _UNSAFE_LINE.sub(_escape, str(text))
