"""The cuda backend: the whole step on the GPU (solver/cuda/backend.py). Imported only when a
step asks for it; numba-cuda is an optional extra (`pip install -e '.[cuda]'`). Whether a
solver runs here is its Method's `devices`, checked by solver.options.check_device."""
