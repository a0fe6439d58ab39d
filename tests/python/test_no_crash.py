# No Python call can crash the interpreter on bad input: junk bytes through
# every reader, every bad number through every function, in a child
# interpreter whose exit status shows a crash (a signal or abort) that pytest
# in this process could not survive to report. Each call must either return
# or raise a Python exception; the child counts both and fails only if it dies.
import os
import pathlib
import subprocess
import sys
import textwrap

CHILD = textwrap.dedent(r'''
    import math, os, pathlib, random, sys
    import fitspeed

    data = pathlib.Path(sys.argv[1])
    outcomes = {"returned": 0, "raised": 0}

    def attempt(f, *a, **k):
        try:
            f(*a, **k)
            outcomes["returned"] += 1
        except (fitspeed.Error, TypeError, ValueError, OverflowError, KeyError, IndexError,
                ImportError):
            outcomes["raised"] += 1

    rng = random.Random(20261127)
    formats = fitspeed.format_names()
    # Every test log, whole, cut short and with junk spliced in, in every format.
    files = [p for p in sorted(data.rglob("*")) if p.is_file() and p.stat().st_size < 300_000]
    for p in files[:120]:
        text = p.read_bytes()
        attempt(fitspeed.read, str(p), as_frame=False)
        cut = text[: rng.randrange(1, max(2, len(text)))]
        junk = bytearray(text[:4000])
        for _ in range(20):
            if junk:
                junk[rng.randrange(len(junk))] = rng.randrange(256)
        for fmt in formats:
            attempt(fitspeed.read_text, cut, source=p.name, format=fmt, as_frame=False)
            attempt(fitspeed.read_text, bytes(junk), source=p.name, format=fmt, as_frame=False)
    for _ in range(200):
        blob = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 400)))
        attempt(fitspeed.read_text, blob, format=rng.choice(formats), as_frame=False)
    for spec in ["", "@", "x@batch=", "x@batch=nan", "x@devices=-3", "x@unit=parsecs",
                 "/dev/null", "/", "\x00", "x@seq_len=1e400"]:
        attempt(fitspeed.read, spec)

    bad = [math.nan, math.inf, -math.inf, -1.0, 0.0, 1e308, -1e308, 5e-324]
    def sample(batch, rate):
        s = fitspeed.Sample(); s.batch = batch; s.throughput_sps = rate; return s
    for b in bad + [64.0]:
        for v in bad + [100.0]:
            attempt(fitspeed.fit, [sample(b, v), sample(128.0, 180.0), sample(256.0, 300.0)])
    for law in fitspeed.law_names():
        attempt(fitspeed.fit, [sample(1e-300, 1e300), sample(1e300, 1e-300), sample(1.0, 1.0)],
                law=law)
    for x in bad + [1, 2**31, -2**31]:
        attempt(fitspeed.fit, [sample(64.0, 100.0), sample(128.0, 180.0)], confidence=x)
        attempt(fitspeed.fit, [sample(64.0, 100.0), sample(128.0, 180.0)], loss="huber",
                loss_scale=x)
        attempt(fitspeed.project, (x, x), samples_per_epoch=x, batch=x, epochs=[x],
                price_per_device_hour=x)
        attempt(fitspeed.project, (100.0, 0.1), samples_per_epoch=1000, batch=32, epochs=[x],
                validation_samples=x, startup_s=x)
        attempt(fitspeed.model, "resnet18", "a100", [int(x) if math.isfinite(x) else 0],
                interval_level=x)
        attempt(fitspeed.model, "resnet18", "a100", [32], devices=int(x) if math.isfinite(x)
                else -1, devices_per_node=3)
        attempt(fitspeed.llm_step, "llama-3-8b", "h100", seq_len=int(x) if math.isfinite(x)
                else -5, micro_batch=int(x) if math.isfinite(x) else 0)
        attempt(fitspeed.llm_step, "gpt2", "h100", seq_len=1024, tp=int(x) if math.isfinite(x)
                else 0, pp=7, vp=3, cp=5, ep=2, zero=9)
        attempt(fitspeed.plan_llm, "llama-3-8b", "h100", devices=int(x) if math.isfinite(x)
                else 0, global_batch=8, seq_len=2048, top=0)
        attempt(fitspeed.transformer, f"transformer:layers={x},hidden=64,heads=2")
    attempt(fitspeed.model, "resnet18", "/dev/null", [32])
    attempt(fitspeed.model, "resnet18", "a100", [32], links="/dev/null")
    attempt(fitspeed.plan_llm, "llama-3-8b", "h100", devices=8, global_batch=8, seq_len=2048,
            fix={"tp": "eight"})
    attempt(fitspeed.frame_to_samples, [{"batch": "x"}, {"batch": None}])
    print(outcomes, flush=True)
    assert outcomes["returned"] > 0 and outcomes["raised"] > 0
''')


def test_bad_input_never_crashes_the_interpreter(data_dir, tmp_path):
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    env = dict(os.environ)
    done = subprocess.run([sys.executable, str(script), str(data_dir)], capture_output=True,
                          text=True, env=env, timeout=600, check=False)
    assert done.returncode == 0, f"child exited {done.returncode}:\n{done.stdout}\n{done.stderr[-4000:]}"
    assert "returned" in done.stdout
