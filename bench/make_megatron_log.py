#!/usr/bin/env python3
"""Writes a long Megatron-DeepSpeed training log for timing `fitspeed read` and `fit` end to end
(issue 31: "a Megatron log of 200,000 iteration lines (66 MB)").

The arguments dump of tests/data/logs-wild/megatron-nemo's real log (GPT-3 0.125B, random-LTD
baseline, 1 GPU), then N iteration lines in that log's exact layout: every 10 iterations, 2048 tokens per sample, the
step time drifting around the log's 484.7 ms at global batch 256. With --batches 256,512 the
lines are shared by that many runs (each after its own arguments dump), the step time growing
with the batch as the law has it (v0 = 570 samples/s, t = 36 ms), so that `fitspeed fit` has
more than one batch to fit.

    bench/make_megatron_log.py /tmp/megatron-200k.log [--lines 200000] [--batches 256,512]
"""
import argparse
import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))
LOG = os.path.join(HERE, '..', 'tests', 'data', 'logs-wild', 'megatron-nemo',
                   'microsoft-Megatron-DeepSpeed_examples_random_ltd_gpt3-0.125B-baseline.excerpt.log')


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('out')
    parser.add_argument('--lines', type=int, default=200000)
    parser.add_argument('--batches', default='256')
    args = parser.parse_args()
    batches = [int(b) for b in args.batches.split(',')]
    with open(LOG) as f:
        lines = f.read().splitlines(keepends=True)
    end = next(i for i, line in enumerate(lines) if 'end of arguments' in line)
    with open(args.out, 'w') as out:
        for run, batch in enumerate(batches):
            out.writelines(lines[:end + 1])
            count = args.lines // len(batches) + (1 if run < args.lines % len(batches) else 0)
            step_ms = 1000 * (batch / 570.0 + 0.036)
            for k in range(1, count + 1):
                it = 10 * k
                ms = step_ms * (1 + 0.006 * math.sin(k / 7.0))
                loss = 10.78 * math.exp(-k / 50000.0) + 2.0
                out.write(f' iteration {it:>8d}/  171661 | consumed samples: {it * batch:>12d} | '
                          f'consumed tokens: {it * batch * 2048:>12d} | elapsed time per iteration '
                          f'(ms): {ms:.1f} | learning rate: {min(it, 3000) * 9.339e-09:.3E} | '
                          f'global batch size: {batch:>5d} |reserve_length:   256 | lm loss: '
                          f'{loss:.6E} | loss scale: 2048.0 | number of skipped iterations:   0 | '
                          f'number of nan iterations:   0 |\n')


if __name__ == '__main__':
    main()
