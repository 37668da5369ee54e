"""The contact solvers, one module per method, behind one signature (`driver.Method`), found by
name in `registry`."""
