"""Runs a command with its output on a pseudo-terminal and prints what it
wrote, one line per carriage return, without terminal escape sequences;
exits with the command's status.

    python on_terminal.py COMMAND [ARGS...]
"""

import os
import pty
import re
import sys

chunks = []


def read(fd):
    data = os.read(fd, 4096)
    chunks.append(data)
    return data


status = pty.spawn(sys.argv[1:], read)
text = b"".join(chunks).decode("utf-8", "replace")
text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", text)
for line in re.split(r"\r\n|\r|\n", text):
    if line:
        print(line)
sys.exit(os.waitstatus_to_exitcode(status))
