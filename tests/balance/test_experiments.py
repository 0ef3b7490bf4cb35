"""Seed E's four claims, checked by the numbers of `animik balance experiment 1|2|3|4`."""

import json

import numpy as np
import pytest
from balance_helpers import model  # noqa: F401 (fixture)

from animik.balance.experiments import run_experiment
from animik.cli import main

REQUIRED = ["tracking_rmse_m", "max_cop_base_distance_m", "max_zeta", "cop_outside_samples",
            "anticipation_s", "final_position_error_m", "cycle_ms_median"]


@pytest.fixture(scope="module")
def runs(model):
    return {k: run_experiment(k, model) for k in (1, 2, 3, 4)}


def test_experiment_1_base_turns_before_the_reference(runs):
    m = runs[1][0].metrics
    assert m["anticipation_s"] >= 0.1          # at least one MPC period ahead of the corner
    assert m["cop_outside_samples"] == 0
    assert m["max_zeta"] < 1.0
    assert m["infeasible_cycles"] == 0
    # the base follows the corner closely (tracking first)
    assert m["corner_tracking_rmse_m"] < 0.05


def test_experiment_2_cop_closer_to_the_base_tracking_worse(runs):
    m1, m2 = runs[1][0].metrics, runs[2][0].metrics
    assert m2["max_cop_base_distance_m"] < 0.3 * m1["max_cop_base_distance_m"]
    assert m2["corner_tracking_rmse_m"] > 5 * m1["corner_tracking_rmse_m"]
    assert m2["cop_outside_samples"] == 0


def test_experiment_3_one_mass_cop_leaves_the_support_two_mass_stays(runs):
    one, two = (r.metrics for r in runs[3])
    assert (one["model"], two["model"]) == ("one-mass", "two-mass")
    assert one["cop_outside_samples"] > 0 and one["min_support_margin_m"] < 0
    assert two["cop_outside_samples"] == 0 and two["min_support_margin_m"] > 0


def test_experiment_4_open_loop_drifts_closed_loop_does_not(runs):
    open_, closed = (r.metrics for r in runs[4])
    assert (open_["loop"], closed["loop"]) == ("open", "closed")
    assert open_["final_position_error_m"] > 0.2
    assert closed["final_position_error_m"] < 0.02
    assert open_["tracking_rmse_m"] > 3 * closed["tracking_rmse_m"]
    # the drift grows with time in open loop: the error in the last second exceeds the first's
    s = runs[4][0].series
    err = np.linalg.norm(s["base"] - s["ref"], axis=1)
    assert err[s["t"] > 9.0].mean() > err[(s["t"] > 1.0) & (s["t"] < 2.0)].mean()


def test_cli_writes_json_and_plot(tmp_path, capsys):
    out, png = tmp_path / "e1.json", tmp_path / "e1.png"
    assert main(["balance", "experiment", "1", "--json", str(out), "--plot", str(png)]) == 0
    data = json.loads(out.read_text())
    for key in REQUIRED:
        assert key in data and data[key] == data[key]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "anticipation_s" in capsys.readouterr().out


def test_cli_full_body_plant(tmp_path, capsys):
    out = tmp_path / "e2.json"
    assert main(["balance", "experiment", "2", "--plant", "full-body", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["plant"] == "full-body (leg)" and data["cop_model_gap_max_m"] > 0.005
    assert "full-body plant, pose leg" in capsys.readouterr().out
    with pytest.raises(SystemExit) as e:
        main(["balance", "experiment", "1", "--plant", "three-mass"])
    assert e.value.code == 2


def test_cli_bad_experiment_and_rig(capsys):
    with pytest.raises(SystemExit) as e:  # a bad option value is bad usage (exit 2)
        main(["balance", "experiment", "5"])
    assert e.value.code == 2 and "invalid choice" in capsys.readouterr().err
    assert main(["balance", "experiment", "1", "--rig", "fig2"]) == 3
    assert "no balance data" in capsys.readouterr().err


def test_bench_balance_runs_every_solver_and_they_agree(capsys):
    from animik.balance.qp import available_solvers
    from animik.bench.balance import bench

    rows, cycles = bench(repeats=1, steps=5)
    assert cycles > 0
    names = {r[0] for r in rows}
    assert names == set(available_solvers()) and len(names - {"qpsolvers-daqp"}) >= 3
    for solver, start, med, p99, mx, agree_mm, failed, _ in rows:
        assert 0 < med <= p99 <= mx
        if solver in ("daqp", "quadprog", "qpsolvers-daqp"):  # exact active-set solvers
            assert agree_mm < 1e-3 and failed == 0, (solver, start)


def test_cli_bad_values_name_them(capsys):
    # out-of-range numbers are bad usage (exit 2, argparse names the option) ...
    for argv, text in ((["--alpha3", "-1"], "--alpha3"), (["--steps", "0"], "--steps"),
                       (["--period", "0"], "--period"), (["--speed", "-2"], "--speed")):
        with pytest.raises(SystemExit) as e:
            main(["balance", "experiment", "1", *argv])
        assert e.value.code == 2, argv
        assert text in capsys.readouterr().err, argv
    # ... an unknown solver name is bad input data (exit 3), as unknown rig names are
    assert main(["balance", "experiment", "1", "--solver", "nope"]) == 3
    assert "solver" in capsys.readouterr().err


def test_cli_overrides_change_the_run(tmp_path):
    out = tmp_path / "e.json"
    assert main(["balance", "experiment", "1", "--alpha3", "500000", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["weights"]["alpha3"] == 500000
    assert data["max_cop_base_distance_m"] < 0.03  # experiment 2's behaviour


def test_too_large_a_push_gives_flagged_best_effort_not_a_crash(model):
    from dataclasses import replace

    from animik.balance.experiments import EXPERIMENTS, run
    from animik.balance.plant import Disturbances

    exp = replace(EXPERIMENTS[1], duration=3.0,
                  disturbances=Disturbances(pushes=((1.0, (3.0, 0.0)),)))
    r = run(exp, model)
    assert r.metrics["infeasible_cycles"] > 0
    assert np.isfinite(r.series["base"]).all()
