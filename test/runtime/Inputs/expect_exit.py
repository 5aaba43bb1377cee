"""Runs a command and succeeds when it exits with the status given.

    expect_exit.py STATUS COMMAND [ARG]...

Its output passes through, so FileCheck can read it.
"""

import subprocess
import sys


def main():
    expected = int(sys.argv[1])
    result = subprocess.run(sys.argv[2:], stderr=subprocess.STDOUT)
    if result.returncode != expected:
        print(f"expect_exit.py: exit status {result.returncode}, expected {expected}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
