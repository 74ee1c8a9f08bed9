#!/usr/bin/env python3
"""What the DEVICE queue's append and remove scripts cost Redis, alone: no node, no network.

    broker-bench/queue-script-cost.py [--rounds N] [--per-call M] REV...

For each git revision REV (a commit, a branch, or "worktree" for the files as they are), the
APPEND, WRITES, RENEW and (where there is one) APPLY scripts are taken from DeviceQueues.java and wrapped in one Lua driver,
which runs inside a single EVAL: 100 clients take turns, each call appends M messages (default 6,
one source partition per client, 150-byte values) and acknowledges, in one WRITES call, what the
client's previous call queued, so queues stay short as for connected subscribers (builds whose
append carries removes get them in the client's next append instead). A fresh
database per run: 20,000 calls to warm up (the repeat window filled), then 40,000 timed. Builds
take turns, N rounds (default 3). Prints microseconds of Redis time per message, a driver that
appends nothing first (its own cost, to subtract).

Needs redis-server and redis-cli on the PATH; starts its own server on a free loopback port and
stops it at the end.
"""
import argparse
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

SOURCE = "broker-persistence/src/main/java/io/fleetmq/persistence/redis/DeviceQueues.java"

DRIVER = """
%(renew)s
local function append(KEYS, ARGV)
%(apply)s
%(append)s
end
local function writes(KEYS, ARGV)
%(apply)s
%(writes)s
end
local clients = tonumber(ARGV[1])
local calls = tonumber(ARGV[2])
local per = tonumber(ARGV[3])
local nkeys = tonumber(ARGV[4])
local base = tonumber(ARGV[5])
local off = {}
local pending = {}
local payload = string.rep('x', 150)
for c = 1, calls do
  local cl = (c %% clients) + 1
  local prefix = 'b:q:{c' .. cl .. '}:'
  local keys = {prefix .. 'i', prefix .. 'd', prefix .. 'm', prefix .. 'p', prefix .. 'a', prefix .. 'b', prefix .. 's'}
  if nkeys == 5 then keys[5] = prefix .. 's' end
  local args = {'1000', '3600000', '1700000000000', '1024'}
  if %(carry)s then
    args[5] = tostring(#(pending[cl] or {}))
    for _, s in ipairs(pending[cl] or {}) do
      args[#args + 1] = 'r'; args[#args + 1] = s; args[#args + 1] = '0'
    end
  end
  local p = cl %% 8
  for k = 1, per do
    off[p] = (off[p] or base) + 1 + (k %% 3)
    args[#args + 1] = 'p' .. p
    args[#args + 1] = tostring(off[p])
    args[#args + 1] = payload
  end
  local r = append(keys, args)
  local wargs = {'3600000'}
  for _, s in ipairs(pending[cl] or {}) do
    wargs[#wargs + 1] = 'r'; wargs[#wargs + 1] = s; wargs[#wargs + 1] = '0'
  end
  if #wargs > 1 and not %(carry)s then writes(keys, wargs) end
  local mine = {}
  for i = 1, #r - 1, 2 do if r[i] ~= 0 then mine[#mine + 1] = tostring(r[i]) end end
  pending[cl] = mine
end
return calls
"""

NULL_APPEND = """local out = {}
for i = 5, #ARGV, 3 do out[#out + 1] = 0; out[#out + 1] = 0 end
return out
"""


def source(rev):
    if rev == "worktree":
        with open(SOURCE, encoding="utf-8") as f:
            return f.read()
    return subprocess.run(["git", "show", rev + ":" + SOURCE], check=True, capture_output=True,
                          text=True).stdout


def block(java, name):
    m = re.search(r'String ' + name + r' = """\n(.*?)""";', java, re.S)
    return m.group(1) if m else ""


def driver(java, null=False):
    keys = 7 if "base + \"a\"" in java else 5
    # Builds whose append carries the client's writes (ARGV[5] their number) get the removes
    # there, instead of in a WRITES call of their own.
    carry = "true" if "local carried = tonumber(ARGV[5])" in block(java, "APPEND") else "false"
    text = DRIVER % {"renew": block(java, "RENEW"), "append": NULL_APPEND if null else block(java, "APPEND"),
                     "writes": block(java, "WRITES"), "apply": block(java, "APPLY"), "carry": carry}
    return text, keys


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cli(port, *args, stdin=None):
    return subprocess.run(["redis-cli", "-p", str(port), *args], check=True, capture_output=True, text=True,
                          input=stdin).stdout.strip()


def run(port, path, keys, per, calls, base):
    out = cli(port, "--eval", path, ",", "100", str(calls), str(per), str(keys), str(base))
    if out != str(calls):
        sys.exit("script failed: " + out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--per-call", type=int, default=6)
    ap.add_argument("revs", nargs="+")
    a = ap.parse_args()
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    work = tempfile.mkdtemp(prefix="queue-script-cost.")
    builds = [("driver alone", *driver(source(a.revs[0]), null=True))] + [(rev, *driver(source(rev))) for rev in a.revs]
    paths = []
    for i, (name, text, keys) in enumerate(builds):
        path = os.path.join(work, "driver%d.lua" % i)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        paths.append((name, path, keys))
    port = free_port()
    server = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                               "--appendonly", "no", "--dir", work], stdout=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                if cli(port, "ping") == "PONG":
                    break
            except subprocess.CalledProcessError:
                pass
            time.sleep(0.1)
        timed = 40_000
        for rnd in range(1, a.rounds + 1):
            for name, path, keys in paths:
                cli(port, "flushall")
                run(port, path, keys, a.per_call, 20_000, 0)
                start = time.monotonic()
                run(port, path, keys, a.per_call, timed, 100_000_000)
                us = (time.monotonic() - start) * 1e6 / (timed * a.per_call)
                print("round %d  %-14s %5.2f us per message" % (rnd, name, us), flush=True)
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
