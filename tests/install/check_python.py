"""The installed Python package, imported from the prefix's site folder given
as argv[1] (not the build tree), and used: a law of v0 = 1000 samples/s and
t = 0.1 s over 10,000 samples at batch 100 is 100 steps of 0.2 s, so an epoch
takes 20 s (by hand: 10000/1000 + 100 x 0.1)."""
import sys

import fitspeed

assert fitspeed.__file__.startswith(sys.argv[1]), fitspeed.__file__
row = fitspeed.project((1000.0, 0.1), samples_per_epoch=10000, batch=100,
                       epochs=[1]).to_dict()["rows"][0]
print("epoch_s =", row["epoch_s"])
