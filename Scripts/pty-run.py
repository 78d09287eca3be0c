#!/usr/bin/env python3
"""Runs a command on a new pseudo-terminal (as if in a terminal window), reads and discards what it
draws, and exits with its status. Writes the command's PID to PIDFILE first, so a benchmark can
watch the process itself. The terminal is 80x24 and TERM is xterm-256color unless set.

Usage: Scripts/pty-run.py PIDFILE COMMAND [ARG...]
"""
import fcntl
import os
import pty
import struct
import sys
import termios


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 64
    pidfile, command = sys.argv[1], sys.argv[2:]
    os.environ.setdefault("TERM", "xterm-256color")
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(command[0], command)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    with open(pidfile, "w") as out:
        out.write(f"{pid}\n")
    while True:
        try:
            if not os.read(fd, 65536):
                break
        except OSError:
            break
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main())
