#!/usr/bin/env python3
"""Opens N TCP connections to 127.0.0.1:PORT that never start TLS, and prints the RSS of the
server process PID before, while they are held, and after they are closed (a measurement for
issue 17, not a test).

    hack/idle-connections.py PORT PID [-n 5000] [--hold 3]

Bounded: at most 20,000 connections (the script raises its own descriptor limit to fit), held
for --hold seconds (default 3), all on 127.0.0.1.
"""
import argparse
import resource
import socket
import time


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def main():
    p = argparse.ArgumentParser()
    p.add_argument("port", type=int)
    p.add_argument("pid", type=int)
    p.add_argument("-n", type=int, default=5000)
    p.add_argument("--hold", type=float, default=3.0)
    a = p.parse_args()
    n = min(a.n, 20000)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, n + 100)), hard))
    before = rss_kib(a.pid)
    socks, refused = [], 0
    for _ in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(2)
        try:
            s.connect(("127.0.0.1", a.port))
            socks.append(s)
        except OSError:
            refused += 1
            s.close()
    time.sleep(a.hold)
    held = rss_kib(a.pid)
    closed_by_server = 0
    for s in socks:
        s.setblocking(False)
        try:
            if s.recv(1) == b"":
                closed_by_server += 1
        except BlockingIOError:
            pass
        except OSError:
            closed_by_server += 1
        s.close()
    time.sleep(1)
    after = rss_kib(a.pid)
    print(f"{len(socks)} connections ({refused} refused at connect, {closed_by_server} closed by "
          f"the server within {a.hold:g} s): RSS {before} KiB before, {held} KiB held "
          f"(+{held - before} KiB), {after} KiB 1 s after closing")


if __name__ == "__main__":
    main()
