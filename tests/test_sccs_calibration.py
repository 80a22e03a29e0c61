"""Empirical calibration (hp.sccs.EmpiricalNull) against EmpiricalCalibration and by simulation.

The reference numbers are EmpiricalCalibration's: its bundled ``sccs`` data set (45 negative
controls and sertraline, upper GI bleeding; ``data/sccs.rda``, Apache-2.0) read with R, and the
values its documentation prints for that data (``fitNull``: mean 0.7922, sd 0.2834;
``calibrateP`` for sertraline: 0.8389142; ``calibrateConfidenceInterval`` with
``convertNullToErrorModel``: -0.05953451, -0.6335409, 0.5144719, se 0.2928658). The optimum of
``fitNull``'s own objective run in R (its C++ ``logLikelihoodNull`` rewritten in R, then ``optim``
from ``c(0, 1)`` as ``fitNull`` calls it) is recorded too.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, stats

import hphawkes_py as hp
from hphawkes_py.sccs.calibration import EmpiricalNull, _neg_log_lik

# EmpiricalCalibration::sccs, groundTruth == 0 (negative controls), in the data set's order
NEG_LOG_RR = np.array([
    0.43390207400000003, 0.63631836399999997, 0.92975489700000002, 1.6919273429999999, 0.52616905999999997,
    0.85818900799999998, 0.80099241499999996, 0.87817015099999995, 0.73045168000000005, 0.77618847099999999,
    0.73452359499999997, 1.279632463, 0.531254954, 0.106333278, 0.46424663100000002, 1.24344184, 1.347351819,
    0.106333278, -0.64762386699999996, 0.85607930600000004, 1.3079247599999999, 1.1636848310000001,
    0.81623468700000001, 0.106333278, 1.506439297, 0.73756339699999995, 0.68784957099999999, 0.62943312399999995,
    0.78774764500000005, 0.089599439000000003, 0.70447484599999999, 0.64738734600000003, 0.25066564200000002,
    1.938194097, 1.119246873, 0.38041439399999999, 0.57138622400000005, 0.52179065599999996, 1.021801577,
    0.473702289, 0.79614467700000002, 0.89359186899999998, 1.029418911, -0.85308226399999998, 1.1274860369999999])
NEG_SE = np.array([
    0.76175376013773199, 0.18398919863043262, 0.29798018370120738, 0.59552219837843545, 0.19671994889512195,
    0.13084604461857455, 0.1208557937378381, 0.34623978689573903, 0.13902187133964242, 0.29705879379187217,
    0.27788325391555918, 0.26214141101858762, 0.13397045957139808, 0.33114826753845572, 0.13874018636284882,
    0.090779785083070275, 0.11597129787630642, 0.33114826753845572, 1.3135211666227322, 0.16092114038338981,
    0.19409665018288569, 0.11753148217635431, 0.3873816724964253, 0.33114826753845572, 0.13117075520220056,
    0.80561643113516257, 0.061145938517953552, 0.10155054325350177, 0.081931049969164213, 0.55100016521950346,
    0.072644489972009521, 0.25179735904462713, 0.23306313241601428, 0.80501822344891616, 0.14583379638144361,
    0.13109747082327913, 0.67647460165682827, 0.12671642424151944, 0.31106551441685959, 0.50335173136432765,
    0.64758236702722016, 0.37599694751303364, 0.14165947036940424, 0.80995029568879418, 0.57301008770198969])
# groundTruth == 1: sertraline
SERTRALINE = (0.73262353700000005, 0.07371708489747715)
# fitNull's optim in R: $par = (mean, precision), $value = minus log-likelihood
R_PAR = (0.79215805192387778, 12.44769445481079195)
R_VALUE = 24.929817245448486


@pytest.fixture(scope="module")
def sccs_null():
    return EmpiricalNull.fit(NEG_LOG_RR, NEG_SE)


# ------------------------------------------------------------------ against EmpiricalCalibration
def test_likelihood_is_fitnulls_objective():
    # R's logLikelihoodNull at R's optimum, through our likelihood: the same function
    sd = 1.0 / math.sqrt(R_PAR[1])
    assert _neg_log_lik(R_PAR[0], sd, NEG_LOG_RR, NEG_SE) == pytest.approx(R_VALUE, abs=1e-10)


def test_fit_matches_empirical_calibration_sccs_example(sccs_null):
    null = sccs_null
    assert null.n_controls == 45
    # the documented fitNull output, printed to 4 decimals from a Nelder-Mead stop (mean 0.792158);
    # the optimum itself is at mean 0.792117, sd 0.283423
    assert null.mean == pytest.approx(0.7922, abs=1e-4)
    assert null.sd == pytest.approx(0.2834, abs=5e-5)
    assert (round(null.mean, 6), round(null.sd, 6)) == (0.792117, 0.283423)
    # R's Nelder-Mead stops within its tolerance of the optimum; ours is at least as good
    assert -null.log_likelihood <= R_VALUE + 1e-12
    assert null.mean == pytest.approx(R_PAR[0], abs=2e-4)
    assert null.sd == pytest.approx(1.0 / math.sqrt(R_PAR[1]), abs=2e-4)
    # and it is the optimum: the gradient of the log-likelihood vanishes
    h = 1e-6
    for dm, ds in ((h, 0.0), (0.0, h)):
        up = _neg_log_lik(null.mean + dm, null.sd + ds, NEG_LOG_RR, NEG_SE)
        down = _neg_log_lik(null.mean - dm, null.sd - ds, NEG_LOG_RR, NEG_SE)
        assert abs(up - down) / (2 * h) < 1e-5


def test_calibrate_p_matches_empirical_calibration(sccs_null):
    p = sccs_null.calibrate_p([SERTRALINE[0]], [SERTRALINE[1]])
    assert p.shape == (1,)
    assert p[0] == pytest.approx(0.8389142, abs=2e-4)
    # the same formula at R's own fitted null reproduces R's number to all printed digits
    r_null = EmpiricalNull(mean=R_PAR[0], sd=1.0 / math.sqrt(R_PAR[1]), n_controls=45, log_likelihood=-R_VALUE)
    assert r_null.calibrate_p([SERTRALINE[0]], [SERTRALINE[1]])[0] == pytest.approx(0.83891416611821534, rel=1e-12)


def test_calibrate_ci_matches_empirical_calibration():
    r_null = EmpiricalNull(mean=R_PAR[0], sd=1.0 / math.sqrt(R_PAR[1]), n_controls=45, log_likelihood=-R_VALUE)
    ci = r_null.calibrate_ci([SERTRALINE[0]], [SERTRALINE[1]])
    row = ci.iloc[0]
    # convertNullToErrorModel + calibrateConfidenceInterval (uniroot to its default tolerance)
    assert row["log_rr"] == pytest.approx(-0.05953451, abs=1e-7)
    assert row["log_lower"] == pytest.approx(-0.6335409, abs=2e-5)
    assert row["log_upper"] == pytest.approx(0.5144719, abs=2e-5)
    assert row["se_log_rr"] == pytest.approx(0.2928658, abs=2e-5)
    assert row["rr"] == pytest.approx(math.exp(row["log_rr"]))
    assert ci.attrs["level"] == 0.95


def test_calibrate_ci_level_and_bounds():
    null = EmpiricalNull(mean=0.1, sd=0.2, n_controls=10, log_likelihood=0.0)
    ci = null.calibrate_ci([0.5, -0.3], [0.1, 0.3], level=0.9)
    z = stats.norm.ppf(0.95)
    total = np.sqrt(0.04 + np.array([0.01, 0.09]))
    np.testing.assert_allclose(ci["log_rr"], [0.4, -0.4], rtol=0, atol=1e-15)
    np.testing.assert_allclose(ci["log_lower"], np.array([0.4, -0.4]) - z * total, rtol=1e-14)
    np.testing.assert_allclose(ci["log_upper"], np.array([0.4, -0.4]) + z * total, rtol=1e-14)
    # the calibrated p-value is 1 - level exactly at a bound of the calibrated interval (log_rr = 0 there)
    lo = ci["log_lower"].to_numpy()
    p_at_bound = null.calibrate_p([0.5 - lo[0]], [0.1])
    assert p_at_bound[0] == pytest.approx(0.1, rel=1e-12)


def test_ease_is_the_mean_absolute_error():
    for mean, sd in ((0.79, 0.28), (-0.1, 0.05), (0.0, 0.3)):
        null = EmpiricalNull(mean=mean, sd=sd, n_controls=3, log_likelihood=0.0)
        numeric = sum(integrate.quad(lambda b: abs(b) * stats.norm.pdf(b, mean, sd), a, c, epsabs=1e-13)[0]
                      for a, c in ((-np.inf, 0.0), (0.0, np.inf)))
        assert null.ease == pytest.approx(numeric, rel=1e-9)
    assert EmpiricalNull(mean=-0.2, sd=0.0, n_controls=3, log_likelihood=0.0).ease == pytest.approx(0.2)


# ------------------------------------------------------------------ by simulation
def test_recovers_mean_and_sd_from_many_controls():
    rng = np.random.default_rng(7)
    se = rng.uniform(0.05, 0.4, 2000)
    x = rng.normal(0.3, np.sqrt(0.15 ** 2 + se ** 2))
    null = EmpiricalNull.fit(x, se)
    assert null.mean == pytest.approx(0.3, abs=0.02)
    assert null.sd == pytest.approx(0.15, abs=0.02)


def test_no_systematic_error_gives_sd_zero():
    # estimates closer together than their standard errors: the optimum is on the boundary sd = 0
    x = np.array([0.0, 0.01, -0.01, 0.005])
    se = np.full(4, 0.5)
    null = EmpiricalNull.fit(x, se)
    assert null.sd == 0.0
    assert null.mean == pytest.approx(x.mean(), abs=1e-15)


def test_calibrated_p_uniform_under_the_null():
    rng = np.random.default_rng(11)
    mean, sd = 0.25, 0.2
    se_c = rng.uniform(0.05, 0.3, 500)
    null = EmpiricalNull.fit(rng.normal(mean, np.sqrt(sd ** 2 + se_c ** 2)), se_c)
    se = rng.uniform(0.05, 0.3, 4000)
    x = rng.normal(mean, np.sqrt(sd ** 2 + se ** 2))
    p = null.calibrate_p(x, se)
    assert stats.kstest(p, "uniform").pvalue > 0.01
    assert abs(np.mean(p < 0.05) - 0.05) < 0.015
    # the uncalibrated p-values are far from uniform on the same estimates
    p_raw = 2 * stats.norm.sf(np.abs(x) / se)
    assert np.mean(p_raw < 0.05) > 0.3


def test_one_sided_p_values():
    null = EmpiricalNull(mean=0.1, sd=0.2, n_controls=3, log_likelihood=0.0)
    z = (0.6 - 0.1) / math.sqrt(0.04 + 0.01)
    assert null.calibrate_p([0.6], [0.1], alternative="greater")[0] == pytest.approx(stats.norm.sf(z), rel=1e-14)
    assert null.calibrate_p([0.6], [0.1], alternative="less")[0] == pytest.approx(stats.norm.cdf(z), rel=1e-14)
    assert null.calibrate_p([0.6], [0.1])[0] == pytest.approx(2 * stats.norm.sf(z), rel=1e-14)


# ------------------------------------------------------------------ bad input
def test_fit_drops_non_finite_and_extreme_with_a_warning_and_counts_them():
    x = np.concatenate([NEG_LOG_RR, [np.inf, np.nan, 5.0, 0.2]])
    se = np.concatenate([NEG_SE, [0.5, 0.5, 0.5, np.inf]])
    with pytest.warns(UserWarning, match=r"3 NaN/infinite and 1 extreme .* first at index 45"):
        null = EmpiricalNull.fit(x, se)
    assert null.dropped == {"non_finite": 3, "extreme": 1}
    assert null.n_controls == 45
    ref = EmpiricalNull.fit(NEG_LOG_RR, NEG_SE)
    assert (null.mean, null.sd) == (ref.mean, ref.sd)
    assert "non_finite=3" in repr(null)
    with pytest.raises(ValueError, match=r"invalid='drop'"):
        EmpiricalNull.fit(x, se, invalid="raise")
    with pytest.raises(ValueError, match=r"invalid must be one of"):
        EmpiricalNull.fit(NEG_LOG_RR, NEG_SE, invalid="ignore")


def test_fit_refuses_bad_input():
    with pytest.raises(ValueError, match=r"log_rr and se_log_rr must have the same length: log_rr has 3"):
        EmpiricalNull.fit([0.1, 0.2, 0.3], [0.1, 0.1])
    with pytest.raises(ValueError, match=r"se_log_rr must be > 0 .* se_log_rr\[1\] = 0.0"):
        EmpiricalNull.fit([0.1, 0.2, 0.3], [0.1, 0.0, 0.1])
    with pytest.raises(ValueError, match=r"se_log_rr must be > 0 .* -0.1"):
        EmpiricalNull.fit([0.1, 0.2, 0.3], [0.1, 0.1, -0.1])
    with pytest.raises(ValueError, match=r"at least 3 negative controls .* got 2"):
        EmpiricalNull.fit([0.1, 0.2], [0.1, 0.1])
    with pytest.warns(UserWarning), pytest.raises(ValueError, match=r"got 2 \(of 3; 1 unusable\)"):
        EmpiricalNull.fit([0.1, 0.2, np.nan], [0.1, 0.1, 0.1])
    with pytest.raises(TypeError, match=r"log_rr must be an array of numbers"):
        EmpiricalNull.fit(["a", "b", "c"], [0.1, 0.1, 0.1])
    with pytest.raises(ValueError, match=r"log_rr must be 1-dimensional"):
        EmpiricalNull.fit(np.zeros((3, 2)), np.ones((3, 2)))
    with pytest.raises(ValueError, match=r"finite mean and a finite sd >= 0"):
        EmpiricalNull(mean=0.0, sd=-1.0, n_controls=3, log_likelihood=0.0)


def test_calibrate_refuses_bad_input_and_keeps_missing_in_place():
    null = EmpiricalNull(mean=0.1, sd=0.2, n_controls=3, log_likelihood=0.0)
    with pytest.raises(ValueError, match=r"same length"):
        null.calibrate_p([0.1, 0.3, 0.2], [0.05, 0.1])
    with pytest.raises(ValueError, match=r"same length"):
        null.calibrate_ci([0.1, 0.3, 0.2], [0.05, 0.1])
    with pytest.raises(ValueError, match=r"se_log_rr must be > 0"):
        null.calibrate_p([0.1], [-0.05])
    for level in (0.0, 1.0, 1.5, -0.1, float("nan")):
        with pytest.raises(ValueError, match=r"level must be in \(0, 1\)"):
            null.calibrate_ci([0.1], [0.1], level=level)
    with pytest.raises(ValueError, match=r"alternative must be one of"):
        null.calibrate_p([0.1], [0.1], alternative="upper")
    # as calibrateP's NA: no p-value for an estimate that does not exist, in its own position
    p = null.calibrate_p([0.1, np.nan, 0.3, 0.2], [0.05, 0.1, np.inf, 0.1])
    assert np.isnan(p[1]) and np.isnan(p[2]) and np.isfinite(p[[0, 3]]).all()
    ci = null.calibrate_ci([0.1, -np.inf], [0.05, 0.1])
    assert ci.iloc[1].isna().all() and ci.iloc[0].notna().all()


def test_plot_draws_and_refuses_bad_input(tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    null = EmpiricalNull.fit(NEG_LOG_RR, NEG_SE)
    ax = null.plot(NEG_LOG_RR, NEG_SE, path=tmp_path / "cal.png")
    assert (tmp_path / "cal.png").stat().st_size > 0
    assert len(ax.collections) >= 2  # the calibrated region and the points
    with pytest.raises(ValueError, match=r"plot needs finite estimates: 1 NaN/infinite, first at index 1"):
        null.plot([0.1, np.nan], [0.1, 0.1])


def test_public_name():
    assert hp.sccs.EmpiricalNull is EmpiricalNull
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert "EmpiricalNull" in hp.sccs.__all__


# ------------------------------------------------------------------ fitting the controls
@pytest.fixture(scope="module")
def controls_data():
    data, _ = hp.sccs.simulate(n_cases=600, n_drugs=4, prevalence=0.3, fraction_positive=0.0, seed=21)
    return data


def _alone(data, covariate):
    """The covariate's own design, rebuilt independently through the long format."""
    outcomes, covariates = data.to_long()
    return hp.sccs.SCCSData.from_long(outcomes, covariates[covariates["covariate_id"] == covariate])


def test_fit_negative_controls_fits_each_control_alone(controls_data):
    est = hp.sccs.fit_negative_controls(controls_data, [3, 1])
    assert est.index.tolist() == [3, 1]  # the order given
    for c in (3, 1):
        ref = hp.sccs.fit(_alone(controls_data, c), prior="none", tolerance=1e-10, progress=False)
        table = ref.results_table([c], method="wald")
        assert est.loc[c, "log_rr"] == pytest.approx(ref.coefficients[c], rel=1e-6)
        assert est.loc[c, "se_log_rr"] == pytest.approx(table["se"].iloc[0], rel=1e-5)
        assert est.loc[c, "exposed_events"] == table["exposed_events"].iloc[0]
        assert est.loc[c, "converged"]


def test_fit_negative_controls_with_an_executor_gives_the_same(controls_data):
    from concurrent.futures import ThreadPoolExecutor

    serial = hp.sccs.fit_negative_controls(controls_data, [1, 2, 3, 4])
    with ThreadPoolExecutor(2) as ex:
        parallel = hp.sccs.fit_negative_controls(controls_data, [1, 2, 3, 4], executor=ex)
    pd.testing.assert_frame_equal(serial, parallel)


def test_fit_negative_controls_marks_estimates_that_do_not_exist():
    # drug "b" covers no event: its estimate is -inf, and the null fit leaves it out with a warning
    rows = []
    for s in range(6):
        rows += [(s, 3 * s, 1.0 if s % 2 else 0.0, 10.0), (s, 3 * s + 1, 0.0 if s % 2 else 1.0, 20.0),
                 (s, 3 * s + 2, 0.0, 5.0)]
    outcomes = pd.DataFrame(rows, columns=["stratum_id", "row_id", "y", "time"])
    covs = pd.DataFrame({"row_id": [3 * s for s in range(6)] + [3 * s + 2 for s in range(6)],
                         "covariate_id": ["a"] * 6 + ["b"] * 6})
    data = hp.sccs.SCCSData.from_long(outcomes, covs)
    est = hp.sccs.fit_negative_controls(data, ["a", "b"])
    assert est.loc["b", "log_rr"] == -np.inf and est.loc["b", "se_log_rr"] == np.inf
    assert not est.loc["b", "converged"] and est.loc["b", "exposed_events"] == 0
    assert np.isfinite(est.loc["a", "log_rr"]) and est.loc["a", "converged"]


def test_fit_negative_controls_refuses_bad_input(controls_data):
    with pytest.raises(TypeError, match=r"data must be an SCCSData"):
        hp.sccs.fit_negative_controls("data", [1])
    with pytest.raises(ValueError, match=r"controls has covariate id\(s\) not in the data: \[9\]"):
        hp.sccs.fit_negative_controls(controls_data, [1, 9])
    with pytest.raises(ValueError, match=r"controls repeats covariate id\(s\) \[2\]"):
        hp.sccs.fit_negative_controls(controls_data, [2, 1, 2])
    with pytest.raises(ValueError, match=r"\[2\] are both negative controls and adjusted for"):
        hp.sccs.fit_negative_controls(controls_data, [1, 2], adjust=[2])
    with pytest.raises(ValueError, match=r"adjust has covariate id\(s\) not in the data: \['x'\]"):
        hp.sccs.fit_negative_controls(controls_data, [1], adjust=["x"])
    with pytest.raises(ValueError, match=r"controls must name at least one covariate"):
        hp.sccs.fit_negative_controls(controls_data, [])
    with pytest.raises(TypeError, match=r"controls must be a list of covariate ids, got 'abc'"):
        hp.sccs.fit_negative_controls(controls_data, "abc")
    with pytest.raises(ValueError, match=r"prior"):
        hp.sccs.fit_negative_controls(controls_data, [1], prior="cauchy")


# ------------------------------------------------------------------ systematic error model (positive controls)
# 10 controls at each true relative risk 1, 2, 4 (simulated, rounded to 6 decimals), and what
# EmpiricalCalibration's fitSystematicErrorModel (non-legacy; its R code: optim BFGS from
# c(0, 1, 0.1, 0)) and calibrateConfidenceInterval (uniroot) give on them in R
SEM_X = np.array([
    0.046192, 0.189199, 0.159201, 0.264266, 0.220910, 0.368161, 0.069109, 0.315575, 0.080761, 0.019572, 1.028386,
    0.631670, 0.679171, 0.414154, 0.436935, 0.874894, 0.362462, 0.960075, 1.183565, 0.717581, 1.105898, 1.420365,
    1.486214, 1.245198, 1.331814, 1.604348, 1.712323, 1.474505, 1.150031, 1.318562])
SEM_SE = np.array([
    0.218958, 0.103581, 0.127363, 0.249867, 0.298951, 0.085558, 0.069681, 0.095206, 0.139912, 0.092405, 0.197190,
    0.204202, 0.076346, 0.191433, 0.051157, 0.166280, 0.293906, 0.249857, 0.199206, 0.131337, 0.101586, 0.160681,
    0.119510, 0.268739, 0.103289, 0.118561, 0.251795, 0.117091, 0.117016, 0.067720])
SEM_T = np.repeat(np.log([1.0, 2.0, 4.0]), 10)
R_SEM = (0.15515579477471728, 0.85448864236440802, 0.11061076314190857, 0.031638248046659705)
R_SEM_VALUE = -6.7633645170765151
R_SEM_CI = {  # (log_rr, se_log_rr) -> (calibrated log_rr, lower, upper)
    (1.2, 0.1): (1.2227713200893504, 0.83374488713694017, 1.6617565714590143),
    (0.1, 0.25): (-0.06454830648432619, -0.71430465696411949, 0.58070515107931353),
    (-0.4, 0.15): (-0.64969359129055704, -1.1304229110394293, -0.21286417107890515),
}


def test_error_model_likelihood_is_empirical_calibrations():
    from hphawkes_py.sccs.calibration import _error_model_nll

    assert _error_model_nll(np.array(R_SEM), SEM_X, SEM_SE, SEM_T) == pytest.approx(R_SEM_VALUE, abs=1e-10)
    assert _error_model_nll(np.array([0.0, 1.0, -0.1, 0.0]), SEM_X, SEM_SE, SEM_T) == np.inf


def test_error_model_fit_matches_empirical_calibration():
    model = hp.sccs.SystematicErrorModel.fit(SEM_X, SEM_SE, SEM_T)
    assert model.n_controls == 30
    # at least as good an optimum as R's BFGS stop, and the same parameters to its tolerance
    assert -model.log_likelihood <= R_SEM_VALUE + 1e-10
    theta = (model.mean_intercept, model.mean_slope, model.sd_intercept, model.sd_slope)
    np.testing.assert_allclose(theta, R_SEM, rtol=0, atol=1e-4)


def test_error_model_calibrate_ci_matches_empirical_calibration():
    model = hp.sccs.SystematicErrorModel(*R_SEM)
    keys = list(R_SEM_CI)
    ci = model.calibrate_ci([k[0] for k in keys], [k[1] for k in keys])
    for i, k in enumerate(keys):
        # R's uniroot stops within its default tolerance (about 1.2e-4)
        np.testing.assert_allclose(ci.loc[i, ["log_rr", "log_lower", "log_upper"]].to_numpy(float), R_SEM_CI[k],
                                   rtol=0, atol=2e-4)
    assert ci["se_log_rr"].to_numpy() == pytest.approx(((ci["log_upper"] - ci["log_lower"]) / (2 * 1.959963984540054))
                                                       .to_numpy(), rel=1e-12)


def test_error_model_from_null_is_the_null_only_calibration():
    null = EmpiricalNull(mean=R_PAR[0], sd=1.0 / math.sqrt(R_PAR[1]), n_controls=45, log_likelihood=-R_VALUE)
    model = hp.sccs.SystematicErrorModel.from_null(null)
    got = model.calibrate_ci([SERTRALINE[0], 0.1], [SERTRALINE[1], 0.4], level=0.9)
    ref = null.calibrate_ci([SERTRALINE[0], 0.1], [SERTRALINE[1], 0.4], level=0.9)
    np.testing.assert_allclose(got.to_numpy(), ref.to_numpy(), rtol=1e-10, atol=1e-12)
    with pytest.raises(TypeError, match=r"null must be an EmpiricalNull"):
        hp.sccs.SystematicErrorModel.from_null((0.1, 0.2))


def test_error_model_refuses_bad_input():
    fit = hp.sccs.SystematicErrorModel.fit
    with pytest.raises(ValueError, match=r"at least two different true effect sizes"):
        fit(SEM_X[:10], SEM_SE[:10], SEM_T[:10])
    with pytest.raises(ValueError, match=r"log_rr and true_log_rr must have the same length"):
        fit(SEM_X, SEM_SE, SEM_T[:-1])
    with pytest.raises(ValueError, match=r"true_log_rr must be finite"):
        fit(SEM_X, SEM_SE, np.where(np.arange(30) == 3, np.nan, SEM_T))
    x = SEM_X.copy()
    x[4] = np.inf
    with pytest.warns(UserWarning, match=r"1 NaN/infinite estimate\(s\), first at index 4"):
        model = fit(x, SEM_SE, SEM_T)
    assert model.dropped == {"non_finite": 1} and model.n_controls == 29
    with pytest.raises(ValueError, match=r"invalid='drop'"):
        fit(x, SEM_SE, SEM_T, invalid="raise")
    with pytest.raises(ValueError, match=r"finite parameters"):
        hp.sccs.SystematicErrorModel(0.0, np.nan, 0.1, 0.0)
    # a model whose bias does not depend on the true effect cannot be inverted: NaN, with a warning
    flat = hp.sccs.SystematicErrorModel(0.1, 0.0, 0.2, 0.0)
    with pytest.warns(UserWarning, match=r"3 calibrated bound\(s\) have no solution in \[-100, 100\]"):
        ci = flat.calibrate_ci([0.5], [0.1])
    assert ci.iloc[0].isna().all()
