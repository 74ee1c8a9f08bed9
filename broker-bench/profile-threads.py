#!/usr/bin/env python3
"""Summarises an async-profiler `collapsed,threads` profile: the share of samples per thread (digits
folded, so a pool shows as one line), the hottest leaf frames, and, with a regular expression, the
inclusive share of every frame that matches it. With a second expression, only the samples of the
threads whose name matches it count (say, where one consumer thread of a wall-clock profile waits).

    profile-threads.py PROFILE [FRAME_REGEX [THREAD_REGEX]]
"""
import collections
import re
import sys


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    threads, leaves, inclusive = collections.Counter(), collections.Counter(), collections.Counter()
    total = 0
    only = re.compile(sys.argv[3]) if len(sys.argv) > 3 else None
    with open(sys.argv[1]) as profile:
        for line in profile:
            line = line.rstrip()
            if not line:
                continue
            stack, count = line.rsplit(' ', 1)
            count = int(count)
            frames = stack.split(';')
            if only is not None and not only.search(frames[0]):
                continue
            total += count
            thread = re.sub(r'\d+', '#', re.sub(r' tid=\d+', '', frames[0]))
            threads[thread] += count
            leaves[frames[-1]] += count
            for frame in set(frames[1:]):
                inclusive[frame] += count
    if total == 0:
        sys.exit('no samples in ' + sys.argv[1])
    print(f'{total} samples')
    print('== by thread')
    for name, count in threads.most_common(30):
        print(f'{100 * count / total:6.2f} % {name}')
    print('== hottest leaf frames')
    for name, count in leaves.most_common(30):
        print(f'{100 * count / total:6.2f} % {name}')
    if len(sys.argv) > 2:
        pattern = re.compile(sys.argv[2])
        print('== frames matching', sys.argv[2], '(inclusive)')
        for name, count in inclusive.most_common():
            if pattern.search(name):
                print(f'{100 * count / total:6.2f} % {name}')


if __name__ == '__main__':
    main()
