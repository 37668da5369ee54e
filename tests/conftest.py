"""Without a CUDA GPU the cuda backend's tests run on numba-cuda's simulator. numba.cuda reads
the switch from Numba's settings when it is first imported; pytest has imported Numba already
(for the warning filter in pyproject.toml), so its settings are read again here."""
import os
import shutil

if "NUMBA_ENABLE_CUDASIM" not in os.environ and shutil.which("nvidia-smi") is None:
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    from numba.core import config

    config.reload_config()
