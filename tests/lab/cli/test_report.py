"""lab.cli.report (`marbles-bench report`'s options): bad options refused in one line before any
work, the recorded command, the help with each scene's budget, the frictional scene list."""
from __future__ import annotations

import pytest

from lab.cli import bench
from lab.cli import report
from solver.params import ParamError
from tests.lab.helpers import run_cli


@pytest.mark.parametrize("args, fragment", [
    (["--scenes", "bowl,nope"], "unknown scene 'nope'"),
    (["--scenes", "bowl,,disk"], "empty name"),
    (["--solvers", "pgs,zzz"], "unknown solver 'zzz'"),
    (["--iterations", "0"], "iterations=0"),
    (["--settle", "-2"], "settle=-2"),
    (["--exit-steps", "0"], "exit-steps=0"),
    (["--exit-scene", "nope"], "unknown scene 'nope'"),
    (["--series", "some"], "--series"),
    (["--part", "half"], "--part"),
    (["--friction-scenes", "friction-bowl,nope"], "unknown frictional scene 'nope'"),
    (["--friction-scenes", "friction-box,friction-box"], "lists a scene twice"),
    (["--profile-budget", "0"], "profile-budget=0"),
    (["--profile-budget", "x"], "profile-budget"),
    (["--part", "profiles", "--profiles", "none"], "measures nothing"),
])
def test_report_bad_input_is_one_line_and_exit_2(tmp_path, args, fragment):
    code, out, err = run_cli("report", "--out", str(tmp_path / "o"), *args)
    assert code == 2 and err.count("\n") == 1 and fragment in err
    assert not (tmp_path / "o").exists()


def test_the_recorded_command_names_only_the_options_that_differ():
    parse = bench.build_parser().parse_args
    args = parse(["report"])
    assert args.func is report.cmd_report
    assert report._command_line(args) == "marbles-bench report"
    args = parse(["report", "--out", "r2", "--scenes", "column", "--iterations", "5",
                  "--exit-scene", "none", "--repeats", "3", "--series", "none"])
    assert report._command_line(args) == ("marbles-bench report --out r2 --scenes column "
                                          "--iterations 5 --exit-scene none --series none")
    args = parse(["report", "--part", "friction", "--friction-scenes", "friction-box",
                  "--exit-steps", "300"])
    assert report._command_line(args) == ("marbles-bench report --exit-steps 300 --part "
                                          "friction --friction-scenes friction-box")
    args = parse(["report", "--part", "profiles", "--profile-budget", "2", "--profiles",
                  "default"])
    assert report._command_line(args) == ("marbles-bench report --part profiles "
                                          "--profile-budget 2")


def test_help_gives_each_scene_its_budget(capsys):
    assert set(report.DEFAULT_SCENES) <= set(report.BUDGETS)
    with pytest.raises(SystemExit) as stop:
        bench.main(["report", "--help"])
    assert stop.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert ("per scene, bowl 5000, disk 2000, column 200, mass-ratio 3000" in text
            and "per scene, bowl 500, disk 300, column 1, mass-ratio 1" in text)
    assert "bowl: steps 150, 200, 250, 300, 350, 400, 450, 500, 550, 600" in text
    assert "friction-box: steps 200, 300, 400" in text and "--part {all,frictionless,friction,profiles}" \
        in text
    assert "(default 300 without friction, 100 with)" in text


@pytest.mark.parametrize("text, fragment", [
    ("friction-bowl,nope", "unknown frictional scene 'nope'"),
    ("friction-box,friction-box", "lists a scene twice"),
])
def test_bad_scene_lists_are_refused_in_one_line(text, fragment):
    with pytest.raises(ParamError, match=fragment) as caught:
        report.parse_friction_scenes(text)
    assert "\n" not in str(caught.value)


def test_scene_lists_keep_the_users_order_and_none_is_empty():
    assert report.parse_friction_scenes("friction-box, friction-bowl") == ["friction-box",
                                                                     "friction-bowl"]
    assert report.parse_friction_scenes("none") == []
