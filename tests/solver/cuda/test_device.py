"""Choosing the device: refusals in one line, auto, and the CLI."""
import pytest

from solver.methods import registry
from solver.options import AUTO_MARBLES, StepOptions
from solver.params import ParamError


def test_a_solver_that_does_not_run_on_the_gpu_is_refused_by_name():
    with pytest.raises(ParamError, match="solver pgs does not run on the cuda device"):
        StepOptions(registry.settings("pgs", 20, False), device="cuda")


def test_an_unknown_device_is_refused():
    with pytest.raises(ParamError, match="device"):
        StepOptions(registry.settings("pgs", 20, False), device="tpu")


def test_auto_picks_the_gpu_for_large_piles_only():
    options = StepOptions(registry.settings("jacobi", 20, False), device="auto")
    assert options.device_for(AUTO_MARBLES - 1) == "cpu"
    assert options.device_for(AUTO_MARBLES) == "cuda"
    assert StepOptions(registry.settings("pgs", 20, False),
                       device="auto").device_for(10 ** 6) == "cpu"


def test_the_command_line_refuses_a_gpu_solver_it_cannot_run(capsys):
    from lab.cli import bench
    with pytest.raises(SystemExit) as stop:
        bench.main(["run", "--scene", "bowl", "--device", "cuda", "--solver", "pgs"])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.count("\n") == 1 and "jacobi, mass-split" in err


def test_a_run_on_the_gpu_records_its_device(tmp_path):
    import json

    from lab.cli import bench
    out = tmp_path / "run.json"
    bench.main(["run", "--scene", "column", "--device", "cuda", "--solver", "mass-split",
                "--steps", "3", "--quiet", "--json", str(out)])
    record = json.loads(out.read_text())
    assert record["settings"]["device"] == "cuda" and record["steps_done"] == 3


def test_a_dragged_marble_follows_the_mouse_on_the_gpu():
    """The Session edits the world on the host while dragging; the GPU's next step starts from
    the edit, so the top marble of the column is lifted towards the target as on the CPU."""
    import numpy as np

    from lab.session import commands as cmd
    from lab.session.session import Session
    from lab.session.spec import RunSpec

    top = 6
    lifted = {}
    for device in ("cpu", "cuda"):
        s = Session(RunSpec.create("column", "mass-split", 5, speed=1.0, device=device))
        s.start()
        start = s.world.x[top].copy()
        s.apply(cmd.DragStart(top))
        s.apply(cmd.DragMove(top, start + np.array([0.0, 0.0, 0.5])))
        for _ in range(5):
            s.step()
        lifted[device] = s.world.x[top, 2] - start[2]
    assert lifted["cpu"] > 0.2
    assert lifted["cuda"] == pytest.approx(lifted["cpu"], abs=1e-9)
