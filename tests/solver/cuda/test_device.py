"""Choosing the device: refusals in one line, auto, and the CLI (run, compare, solve)."""
import json

import numpy as np
import pytest

from lab.cli import bench

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
    assert stop.value.code == 2 and err.count("\n") == 1 and "(it runs on cpu)" in err
    assert "`marbles-bench list` names those that run there" in err
    from lab.cli.catalog import list_text
    listed = list_text()
    assert "(friction: yes; devices: cpu, cuda)" in listed  # where the message points
    assert all(f"devices: {', '.join(m.devices)})" in listed for m in registry.METHODS.values())


def test_a_run_on_the_gpu_records_its_device(tmp_path):
    import json

    from lab.cli import bench
    out = tmp_path / "run.json"
    bench.main(["run", "--scene", "column", "--device", "cuda", "--solver", "mass-split",
                "--steps", "3", "--quiet", "--json", str(out)])
    record = json.loads(out.read_text())
    assert record["settings"]["device"] == "cuda" and record["steps_done"] == 3
    assert record["settings"]["precision"] == "float64"


def test_float32_is_refused_on_the_cpu_in_one_line(capsys):
    from lab.cli import bench
    with pytest.raises(SystemExit) as stop:
        bench.main(["run", "--scene", "column", "--precision", "float32", "--steps", "1"])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.count("\n") == 1 and "float32" in err
    with pytest.raises(ParamError, match="precision"):
        StepOptions(registry.settings("jacobi", 20, False), device="cuda", precision="half")


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


def test_compare_on_the_gpu_solves_there_what_runs_there(tmp_path, capsys):
    """`compare --device cuda`: pgs on the CPU, jacobi on the GPU (benchmark.json says so), and
    the GPU's jacobi curve is the CPU's on the same frozen step."""
    runs = {}
    for device in ("cpu", "cuda"):
        out = tmp_path / device
        assert bench.main(["compare", "--scene", "bowl", "--set", "n=30", "--settle", "15",
                           "--iterations", "6", "--solvers", "pgs,jacobi", "--device", device,
                           "--repeats", "1", "--out", str(out), "--quiet"]) == 0
        runs[device] = (json.loads((out / "benchmark.json").read_text()),
                        np.load(out / "benchmark.npy")["residual"])
    (cpu, cpu_curves), (gpu, gpu_curves) = runs["cpu"], runs["cuda"]
    assert gpu["devices"] == {"pgs": "cpu", "jacobi": "cuda"}
    assert cpu["devices"] == {"pgs": "cpu", "jacobi": "cpu"}
    assert gpu["settings"]["device"] == "cuda" and cpu_curves.shape == (2, 7)
    np.testing.assert_allclose(gpu_curves, cpu_curves, rtol=1e-9)


def test_solve_on_the_gpu_prints_the_cpus_trace(tmp_path, capsys):
    path = tmp_path / "p.npz"
    assert bench.main(["run", "--scene", "bowl", "--set", "n=30", "--steps", "15",
                       "--save-lcp", str(path), "--quiet"]) == 0
    traces = {}
    for device in ("cpu", "cuda"):
        capsys.readouterr()
        out = tmp_path / f"{device}.json"
        assert bench.main(["solve", str(path), "--solver", "mass-split", "--iterations", "6",
                           "--device", device, "--json", str(out)]) == 0
        report = json.loads(out.read_text())
        assert report["device"] == device
        traces[device] = report["trace"]
    assert "on the GPU" in capsys.readouterr().out
    np.testing.assert_allclose(traces["cuda"], traces["cpu"], rtol=1e-9)


@pytest.mark.parametrize("args, says", [
    (["--solver", "pgs"], "solver pgs does not run on the cuda device"),
    (["--fclib"], "an FCLIB file holds W, not marbles")])
def test_solve_refuses_what_the_gpu_cannot_run(tmp_path, capsys, args, says):
    from lab.io.fclib import save_fclib
    from tests.solver.cuda.conftest import one_gpu_step

    sim, _ = one_gpu_step("bowl", {"n": 24, "mu": 0.5, "mu_wall": 0.5}, "jacobi")
    path = tmp_path / "p.hdf5"
    save_fclib(path, sim.problem, sim.lam)
    lcp = tmp_path / "p.npz"
    from lab.io.snapshot import save_lcp
    save_lcp(lcp, sim.problem, sim.lam, sim.world)
    argv = ["solve", "--device", "cuda", "--iterations", "3"]
    argv += ([str(lcp), *args] if args[0] == "--solver" else ["--fclib", str(path)])
    with pytest.raises(SystemExit) as stop:
        bench.main(argv)
    err = capsys.readouterr().err
    assert stop.value.code == 2 and says in err and err.count("\n") == 1


def test_every_method_declaring_the_gpu_has_its_function_there_and_no_other():
    from solver.cuda.driver import SOLVES
    from solver.problem import FRICTIONAL, FRICTIONLESS

    declared = registry.on_device("cuda")
    assert [solve.method for solve in SOLVES] == declared
    for name, method in registry.METHODS.items():
        there = method._elsewhere.get("cuda", {})
        assert set(there) == ({FRICTIONLESS, FRICTIONAL} if name in declared else set())
    with pytest.raises(ValueError, match="does not declare device cuda"):
        registry.get("pgs").on("cuda", {FRICTIONLESS: print})


def test_a_rewound_simulation_on_the_gpu_repeats_its_steps_bit_for_bit():
    import scenes
    from solver.step import Simulation

    sim = Simulation(scenes.build("box", {"n": 30}),
                     StepOptions(registry.settings("jacobi", 20, False), 1.0, 1.0, 1, "cuda"))
    kept = []
    for _ in range(6):
        sim.step()
        kept.append(sim.checkpoint())
    sim.rewind(kept[2])
    assert sim.problem is kept[2].problem and kept[2].solved is None
    for k in range(3, 6):
        sim.step()
        assert np.array_equal(sim.world.x, kept[k].x) and np.array_equal(sim.world.v, kept[k].v)


@pytest.mark.parametrize("scene, params, kind", [
    ("box", {"n": 30}, "frictionless"),
    ("bowl", {"n": 24, "mu": 0.5, "mu_wall": 0.5}, "frictional")])
def test_the_gpus_problem_presents_the_cpus_interface(scene, params, kind):
    """The step's problem on the GPU answers as the CPU's does (kind, rows, size, m, the
    residual of λ), and its solve is the Method's."""
    from tests.solver.cuda.conftest import one_gpu_step

    sim, _ = one_gpu_step(scene, params, "jacobi", warm_start=1.0)
    device, host = sim._problem, sim.problem
    assert (device.device, host.device) == ("cuda", "cpu")
    assert (device.kind, device.rows, device.size, device.m) == (host.kind, host.rows,
                                                                 host.size, host.m)
    assert device.kind == kind and device.frictional == host.frictional
    lam = sim.lam
    assert np.abs(lam).max() > 0.0
    assert device.residual(lam) == host.residual(lam)
    np.testing.assert_array_equal(device.error(sim.backend.device(lam)), host.error(lam))
