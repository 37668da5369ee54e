"""A frictional solver outside the package for the campaign tests: pgs's own function under
another name, so its rows must equal pgs's."""
from solver.methods.driver import Method
from solver.methods.pgs import METHOD as PGS

METHOD = Method("plugin-pgs", "pgs as a plug-in", dict(PGS.solvers),
                "pgs registered from a module outside solver/methods", PGS.params)
