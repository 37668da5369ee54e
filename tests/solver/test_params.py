"""Declared parameters: parsing, ranges, the one-line refusals and the generated help."""
from __future__ import annotations

import pytest

from solver.params import Param, ParamError, parse_assignments, resolve

OMEGA = Param("omega", 1.5, float, "relaxation", lo=0.0, hi=2.0, lo_open=True, hi_open=True)
N = Param("n", 350, int, "marbles", lo=1)
R = Param("r", "local", str, "strategy", choices=("local", "global"))
FLAG = Param("adapt", True, bool, "adaptive")
DT = Param("dt", 0.02, float, "time step", "s", lo=0.0, hi=1.0, lo_open=True)


@pytest.mark.parametrize("param, text, value", [
    (OMEGA, " 1.25 ", 1.25), (N, "1e3", 1000), (N, "7", 7), (R, "global", "global"),
    (FLAG, "off", False), (FLAG, "1", True), (DT, 0.5, 0.5)])
def test_text_and_values_parse_to_the_declared_type(param, text, value):
    got = param.parse(text)
    assert got == value and type(got) is param.kind


@pytest.mark.parametrize("param, text", [
    (OMEGA, "0"), (OMEGA, "2"), (OMEGA, "nan"), (OMEGA, "inf"), (OMEGA, "x"), (N, "2.5"),
    (N, "0"), (N, "1e400"), (R, "blocky"), (FLAG, "maybe"), (DT, "-1"),
    # Beyond 2**53 even without a declared bound: no OverflowError in an int64 kernel later.
    (N, "1e308"), (N, "1e17"), (N, str(2 ** 53 + 2))])
def test_bad_values_are_refused_in_one_line_naming_value_and_range(param, text):
    with pytest.raises(ParamError) as err:
        param.parse(text)
    message = str(err.value)
    assert message.startswith(f"{param.name}={text} is not valid: must be {param.range_text()}")
    assert "\n" not in message


def test_ranges_defaults_and_help_are_written_from_the_declaration():
    assert OMEGA.range_text() == "float in (0, 2)"
    assert N.range_text() == "int in [1, inf]" and R.range_text() == "one of local|global"
    assert DT.help_text() == "time step (default 0.02 s; float in (0, 1])"
    assert FLAG.default_text() == "1" and N.default_text() == "350"
    assert DT.describe().split() == ["dt=0.02", "[s]", "float", "in", "(0,", "1]", "time", "step"]
    assert Param("k", 5, float, "a float keeps a float default").default == 5.0
    assert N.but(default=3).default == 3 and N.but(default=3).range_text() == N.range_text()


def test_resolve_fills_defaults_and_names_the_valid_parameters():
    assert resolve((OMEGA, N), {"n": "3"}, "solver x") == {"omega": 1.5, "n": 3}
    with pytest.raises(ParamError, match="unknown parameter 'm' for solver x; valid: n, omega"):
        resolve((OMEGA, N), {"m": 1}, "solver x")


def test_assignments_split_on_the_first_equals_sign():
    assert parse_assignments(["omega=1.5", " n = 10 ", "r=a=b"]) == {"omega": "1.5", "n": "10",
                                                                     "r": "a=b"}
    for bad in ("omega", "=1", "omega="):
        with pytest.raises(ParamError, match="not of the form name=value"):
            parse_assignments([bad])
