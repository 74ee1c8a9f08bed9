#!/usr/bin/env python3
"""What Redis wrote to its append-only file: commands by name, per script transaction and by share of
the bytes (docs/benchmarks.md, "Queue keys renew their expiry only once it ran down").

    python3 broker-bench/aof-stats.py DATA_DIR [DATA_DIR ...]

DATA_DIR is a node's BROKER_DATA_DIR (its embedded Redis keeps the file under redis/appendonlydir);
the newest incremental file is read, which holds what was written since the last rewrite.
"""
import collections
import glob
import sys


def commands(data):
    """Yields (name, size in bytes) of each RESP array in the file."""
    i = 0
    while i < len(data):
        if data[i:i + 1] != b'*':
            i = data.index(b'\n', i) + 1
            continue
        end = data.index(b'\r\n', i)
        count = int(data[i + 1:end])
        start, i = i, end + 2
        name = None
        for _ in range(count):
            end = data.index(b'\r\n', i)
            length = int(data[i + 1:end])
            i = end + 2
            if name is None:
                name = data[i:i + length].upper().decode()
            i += length + 2
        yield name, i - start


for d in sys.argv[1:]:
    files = sorted(glob.glob(d + '/redis/appendonlydir/*.incr.aof'))
    if not files:
        sys.exit(d + ': no append-only file under redis/appendonlydir')
    counts, sizes = collections.Counter(), collections.Counter()
    with open(files[-1], 'rb') as f:
        for name, size in commands(f.read()):
            counts[name] += 1
            sizes[name] += size
    total = sum(sizes.values())
    transactions = max(counts['EXEC'], 1)
    print('%s: %d bytes, %d transactions, %d bytes per transaction' % (files[-1], total, counts['EXEC'],
                                                                      total // transactions))
    for name, n in counts.most_common():
        print('  %-18s %10d  %6.2f per transaction  %5.1f %% of the bytes' % (
            name, n, n / transactions, 100.0 * sizes[name] / total))
