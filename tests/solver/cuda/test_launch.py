"""The launcher's parameters against numba-cuda's own marshalling (real device-array objects
over fake memory, in a process without the simulator: no GPU is needed to lay out a launch),
and its launches on the simulator."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from solver.cuda import launch, runtime

cuda = runtime.cuda  # kernels name it `cuda`: the simulator swaps that global

LAYOUT = textwrap.dedent("""
    import ctypes, sys
    import numpy as np
    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack
    from numba.cuda.cudadrv.devicearray import DeviceNDArray
    from numba.cuda.dispatcher import _Kernel
    from numba.cuda.typing.typeof import Purpose, typeof
    from solver.cuda.launch import flatten, numba_params, same_params

    class Memory:  # what an array asks of its memory to be laid out: its address
        def __init__(self, address):
            self.device_ctypes_pointer = ctypes.c_void_p(address)

    def array(shape, dtype, address, strides=None):
        itemsize = np.dtype(dtype).itemsize
        if strides is None:
            strides = np.empty(shape, dtype).strides
        return DeviceNDArray(shape, strides, dtype, gpu_data=Memory(address))

    class Compiled:  # numba-cuda's compiled kernel, as far as its marshalling goes
        extensions = []
        _prepare_args = _Kernel._prepare_args

        def __init__(self, args):
            self.argument_types = [typeof(a, Purpose.argument) for a in args]

    x = array((7, 3), np.float64, 4096)
    keys = array((11,), np.int64, 8192)
    column = array((7,), np.float64, 12288, strides=(24,))  # a strided column: layout A
    args = ((x, keys, (column, 3)), 2.5, True, 17, array((4, 6), np.float64, 16384))
    ours = []
    kind = flatten(args, ours)
    theirs = numba_params(Compiled(args), args)
    assert same_params(ours, theirs), (ours, theirs)
    assert kind[0][0] == typeof(x, Purpose.argument) and kind[1:4] == (float, bool, int)
    assert kind[0][2][0].layout == "A" and kind[0][0].layout == "C"
    # the check must be able to fail: one address off, an int for a C long
    wrong = list(ours)
    wrong[4] += 8
    assert not same_params(wrong, theirs)
    swapped = [v.value if isinstance(v, ctypes.c_long) else v for v in ours]
    assert not same_params(swapped, theirs)
    print("laid out", len(ours), "parameters")
""")


def test_parameters_are_numba_cudas_own():
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    done = subprocess.run([sys.executable, "-c", LAYOUT], env=env, cwd=root,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "laid out 36 parameters" in done.stdout


def test_a_kinds_kernel_differs_by_array_type_and_scalar_type():
    params: list = []

    class Fake:
        def __init__(self, numba_type):
            self._numba_type_ = numba_type
            self._strided_memory_view_shim = View()

    class View:
        size, ptr, shape = 3, 64, (3,)
        dtype = np.dtype(np.float64)

        class _layout:
            strides_in_bytes = (8,)

    one = launch.flatten((Fake("f8[:]"), 1), params)
    assert params[:5] == [0, 0, 3, 8, 64] and params[5:7] == [3, 8]
    assert one != launch.flatten((Fake("i8[:]"), 1), [])
    assert one != launch.flatten((Fake("f8[:]"), 1.0), [])
    with pytest.raises(TypeError, match="ndarray"):
        launch.flatten((np.zeros(3),), [])


@pytest.mark.skipif(not runtime.simulated(), reason="the simulator's launches")
def test_kernel_launches_on_the_simulator_as_numba_cudas_own():
    @launch.kernel
    def scaled(a, factor, out):
        for i in range(cuda.grid(1), a.shape[0], cuda.gridsize(1)):
            out[i] = factor * a[i]

    assert not launch.enabled()
    a = cuda.to_device(np.arange(5.0))
    out = cuda.device_array(5)
    scaled[2, 4](a, 3.0, out)
    assert np.array_equal(out.copy_to_host(), 3.0 * np.arange(5.0))
    assert scaled.py_func.__name__ == "scaled"  # the dispatcher's attributes pass through
