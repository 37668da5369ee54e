"""The options both command lines share: help generated from the declarations, one-line errors
with exit code 2, and the RunSpec they make."""
from __future__ import annotations

import pytest

from lab.cli import options as cli
from lab.session.spec import SPEED
from solver.options import ITERATIONS
from solver.world import DT


def parser(speed=False):
    p = cli.ArgumentParser(prog="marbles-test")
    cli.add_run_options(p, speed=speed)
    return p


def test_help_comes_from_the_declarations():
    text = parser(speed=True).format_help()
    flat = "".join(text.split())  # argparse wraps lines, even inside words with a hyphen
    for param in (ITERATIONS, DT, SPEED):
        assert "".join(param.help_text().split()) in flat
    assert "oneofbowl|disk|column|mass-ratio|box" in flat
    assert "--set NAME=VALUE" in text


def test_defaults_and_the_spec():
    args = parser().parse_args(["--set", "omega=1.2", "--solver", "psor", "--dt", "0.01"])
    assert (args.scene, args.iterations, args.dt) == ("bowl", "20", "0.01")
    spec = cli.spec_from_args(args)
    assert spec.solver_params["omega"] == 1.2 and spec.dt == 0.01 and spec.speed == 1.0


def test_errors_are_one_line_with_exit_code_2(capsys):
    cli.set_prog("marbles-test")
    with pytest.raises(SystemExit) as ended:
        parser().parse_args(["--nope"])
    assert ended.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("marbles-test: error: unrecognized arguments")
    assert "(see marbles-test --help)" in err
