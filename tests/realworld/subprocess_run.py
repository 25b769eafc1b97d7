# SPDX-License-Identifier: MIT
"""subprocess with its defaults: close_fds=True closes every inherited
descriptor but 0-2 in the child before exec, a pipe for the output."""
import subprocess

out = subprocess.run(["sh", "-c", "echo one; echo two >&2"],
                     capture_output=True, check=True)
assert out.stdout == b"one\n" and out.stderr == b"two\n", out
