"""Drive a Session as the window does, without a window: typed commands between steps.

    python examples/session_commands.py
"""
import numpy as np

from lab.session import commands as cmd
from lab.session.session import Session
from lab.session.spec import RunSpec


def main():
    session = Session(RunSpec.create("column", "pgs", iterations=20))
    session.start()                                      # compiles kernels, builds the world
    for _ in range(50):
        session.step()
    session.apply(cmd.SetSolver("psor"))                 # from the next step on
    session.apply(cmd.Relax(0.2))                        # omega 1.5 -> 1.7
    session.apply(cmd.DragStart(6))                      # pull the top marble up and aside
    session.apply(cmd.DragMove(6, np.array([0.0, 0.0, 1.8])))
    for _ in range(100):
        session.step()
    session.apply(cmd.SetColourMode("impulse"))
    state = session.state()
    print(f"{state.solver} {state.solver_params['omega']:g}, t = {session.world.time:.2f} s, "
          f"top marble at z = {session.world.x[6, 2]:.3f} m, colours {session.colours().shape}, "
          f"{len(session.log.take())} steps logged")


if __name__ == "__main__":
    main()
