"""lab.cli.launch, the `marbles-bench` program as pyproject installs it, and `python -m
lab.cli.bench`: Ctrl-C at any moment of the start (the imports take a second or more), or
during the command, ends it with one line and exit code 130, never a traceback."""
from __future__ import annotations

import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
PROGRAM = ["-c", "import sys; from lab.cli.launch import main; sys.exit(main())"]
MODULE = ["-m", "lab.cli.bench"]
# A command that outlasts every delay below, so the signal always lands before it ends.
LONG_RUN = ["run", "--scene", "bowl", "--steps", "1000000", "--quiet"]


def test_the_installed_program_is_the_launcher():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["marbles-bench"] == "lab.cli.launch:main"


def interrupted(entry: list[str], command: list[str], delay: float) -> tuple[int, str]:
    """(exit code, stderr) of the program sent SIGINT `delay` s after its start reached the
    program's own imports: -X importtime reports each import as it ends, and argparse is the
    first one after hold() in both entries, so the signal never lands in the interpreter's own
    start-up (its site packages), which no program can guard. The import lines are dropped."""
    # SIGINT as a terminal delivers it: a suite started as a background job of a
    # non-interactive shell inherits SIGINT ignored, and so would the child without this.
    proc = subprocess.Popen([sys.executable, "-X", "importtime", *entry, *command], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    for line in proc.stderr:
        if line.startswith("import time:") and line.split("|")[-1].strip() == "argparse":
            break
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    return proc.returncode, "".join(line + "\n" for line in err.splitlines()
                                    if not line.startswith("import time:"))


@pytest.mark.parametrize("entry", [PROGRAM, MODULE], ids=["program", "module"])
@pytest.mark.parametrize("delay", [0.0, 0.1, 0.3, 0.6, 1.0])
def test_ctrl_c_while_starting_is_one_line_and_exit_130(entry, delay):
    code, err = interrupted(entry, LONG_RUN, delay)
    assert code == 130, err[-2000:]
    assert "Traceback" not in err and err == "marbles-bench: interrupted; no partial file written\n"


@pytest.mark.parametrize("command", [["list"], ["solve", "no-such-file.npz"]])
def test_ctrl_c_while_starting_other_commands_is_one_line(command):
    """list and solve need the same imports before they print or refuse anything."""
    code, err = interrupted(PROGRAM, command, 0.0)
    assert code == 130, err[-2000:]
    assert err == "marbles-bench: interrupted; no partial file written\n"
