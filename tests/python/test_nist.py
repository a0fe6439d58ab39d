# NIST StRD Misra1d through Python: the hyperbolic law IS Misra1d
# (y = b1*b2*x/(1 + b2*x) with b1 = v0, b2 = 1/(v0 t)), fitted with NIST's
# residual (absolute throughput) from NIST's first start (b1 = 500, b2 = 1e-4,
# i.e. v0 = 500, t = 1/(500*1e-4) = 20), must match the certified values of
# Misra1d.dat (lines 41-43) to 9 significant digits (log relative error),
# the same bar as tests/fit/nist_test.cc.
import math

import numpy as np

import fitspeed

B1, B1_SD = 4.3736970754e02, 3.6489174345e00
B2, B2_SD = 3.0227324449e-04, 2.9334354479e-06
RSS = 5.6419295283e-02


def lre(value: float, certified: float) -> float:
    """Significant digits in agreement (NIST's log relative error)."""
    if value == certified:
        return 15.0
    return -math.log10(abs(value - certified) / abs(certified))


def test_misra1d_matches_the_certified_values_to_nine_digits(data_dir):
    samples = fitspeed.read(str(data_dir / "nist" / "Misra1d.dat"), as_frame=False)
    assert len(samples) == 14
    result = fitspeed.fit(samples, objective="absolute-throughput", initial=[500.0, 20.0],
                          leave_one_out=False)
    group = result.groups[0]
    assert group.usable
    v0, t = result.v0, result.t
    b1, b2 = v0.value, 1.0 / (v0.value * t.value)
    # sd(b2) from the covariance of (v0, t) by the chain rule, which at the
    # solution is exact for the linearized covariance NIST certifies:
    # d b2/d v0 = -1/(v0^2 t), d b2/d t = -1/(v0 t^2).
    g = np.array([-1.0 / (v0.value ** 2 * t.value), -1.0 / (v0.value * t.value ** 2)])
    b2_sd = math.sqrt(g @ np.asarray(result.covariance) @ g)
    for name, value, certified in [("b1", b1, B1), ("sd(b1)", v0.std_error, B1_SD),
                                   ("b2", b2, B2), ("sd(b2)", b2_sd, B2_SD),
                                   ("RSS", group.rss, RSS)]:
        assert lre(value, certified) >= 9, f"{name} = {value!r}, certified {certified!r}"


def test_predict_is_the_law_at_the_fitted_parameters(data_dir):
    result = fitspeed.fit(fitspeed.read(str(data_dir / "nist" / "Misra1d.dat")),
                          objective="absolute-throughput")
    v0, t = result.v0.value, result.t.value
    batches = np.array([1.0, 100.0, 1e4])
    np.testing.assert_allclose(result.predict(batches), batches / (batches / v0 + t), rtol=1e-12)
    np.testing.assert_allclose(result.predict_step_time(batches), batches / v0 + t, rtol=1e-12)
    low, mid, high = result.predict_band(batches)
    assert np.all(low < mid) and np.all(mid < high)
    # At b -> infinity the band's half-width tends to v0's (q * sd(v0)).
    low_inf, _, high_inf = result.predict_band(1e12)
    np.testing.assert_allclose((high_inf - low_inf) / 2, result.v0.ci_high - v0, rtol=1e-6)
