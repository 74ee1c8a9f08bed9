#!/usr/bin/env python3
"""The node's CPU per delivered message, by group of threads, from one or more output directories of
profile-sitting.sh (a CPU profile): each group's share of the samples times the cores the node used
while profiled (cpu.txt), divided by the generator's delivered rate (run.txt). One column per
directory, as a Markdown table.

    profile-cost.py OUT [OUT ...]
"""
import collections
import json
import re
import sys

# First match wins, searched in the thread name (the first frame of a `collapsed,threads` stack).
GROUPS = [(name, re.compile(pattern)) for name, pattern in [
    ('Netty event loops (MQTT)', r'fleetmq-(io|accept)'),
    ('session actors', r'fleetmq-actor'),
    ('Redis client', r'lettuce'),
    ('routing consumer (`publish`)', r'fleetmq-publish-consumer'),
    ('`device.persisted` consumer', r'fleetmq-device-persisted-consumer'),
    ('cluster producer (`device.persisted`, `node.*`)', r'kafka-producer-network-thread \| \S*-cluster\b'),
    ('publish producer', r'kafka-producer-network-thread'),
    ('other consumers of the node', r'-consumer|fleetmq-follow|follower'),
    ('embedded Kafka broker', r'data-plane|kafka-|group-coordinator|quorum|raft|ExpirationReaper|executor-|metadata'),
    ('GC and VM', r'GC|G1|VM Thread|VM Periodic'),
    ('JIT compiler', r'Compiler|C1 |C2 '),
]]


def group(thread):
    for name, pattern in GROUPS:
        if pattern.search(thread):
            return name
    return 'other'


def cost(out):
    with open(out + '/cpu.txt') as f:
        cores = float(f.read().split(':')[1])
    with open(out + '/run.txt') as f:
        rate = json.loads(f.read().strip().splitlines()[-1])['delivered_per_s']
    samples, total = collections.Counter(), 0
    with open(out + '/profile.collapsed') as f:
        for line in f:
            line = line.rstrip()
            if not line:
                continue
            stack, count = line.rsplit(' ', 1)
            samples[group(stack.split(';')[0])] += int(count)
            total += int(count)
    return cores, rate, {g: n / total * cores / rate * 1e6 for g, n in samples.items()}


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    runs = [cost(out) for out in sys.argv[1:]]
    print('| µs of node CPU per delivered message | ' + ' | '.join(sys.argv[1:]) + ' |')
    print('| --- |' + ' --- |' * len(runs))
    print('| node cores while profiled, delivered msg/s | '
          + ' | '.join(f'{c:.2f}, {r:,.0f}' for c, r, _ in runs) + ' |')
    names = [name for name, _ in GROUPS] + ['other']
    for name in sorted(names, key=lambda n: -runs[0][2].get(n, 0)):
        if any(name in groups for _, _, groups in runs):
            print(f'| {name} | ' + ' | '.join(f'{groups.get(name, 0):.2f}' for _, _, groups in runs) + ' |')
    print('| all | ' + ' | '.join(f'{sum(groups.values()):.2f}' for _, _, groups in runs) + ' |')


if __name__ == '__main__':
    main()
