#!/usr/bin/env bash
# One visit to a machine with an NVIDIA GPU: every GPU check and figure of docs/gpu.md in one run
# that ends within its budget (seconds, default 520). Results go to $OUT (default ./gpu-visit; 8
# files): machine.txt, gpu.json/.log (launch costs, GPU-against-CPU checks, a profile of a step's
# host time, 10 000 to 1 000 000 marbles on every GPU solver, the numba-cuda launch baseline,
# jacobi's solve in one launch against a launch per iteration and per phase), gpu10m.json/.log
# (10 000 000 marbles), cpu.json/.log (the 16-thread CPU core from the same piles), tests.txt
# (tests/solver/cuda on the real GPU, if pytest is there and time is left).
#
#     bash benchmarks/gpu_visit.sh 520
#     SIZES=60 BIG=100 CPU_SIZES=60 CHECK=20 SETTLE=3 NUMBA_ENABLE_CUDASIM=1 bash benchmarks/gpu_visit.sh
#         (the same run in miniature on the simulator: checks the script, not the GPU)
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-gpu-visit}
mkdir -p "$OUT"
BUDGET=${1:-520}
export PYTHONPATH=.
SIZES=${SIZES:-10000,100000,1000000}
BIG=${BIG:-10000000}
CPU_SIZES=${CPU_SIZES:-100000,1000000}
CHECK=${CHECK:-200}
SETTLE=${SETTLE:-150}
START=$(date +%s)
left() { echo $((BUDGET - ($(date +%s) - START))); }

{
    nvidia-smi -L
    python -V
    python -c "import numpy, numba, numba_cuda; print('numpy', numpy.__version__, 'numba', \
numba.__version__, 'numba-cuda', numba_cuda.__version__)"
    echo "cpus $(nproc)"
} >"$OUT/machine.txt" 2>&1

bench() {  # NAME SECONDS ARGS...: one benchmarks.gpu run, its own budget
    local name=$1 seconds=$2
    shift 2
    if [ "$seconds" -lt 30 ]; then
        echo "$name: skipped, $seconds s left" >>"$OUT/machine.txt"
        return
    fi
    timeout "$seconds" python -m benchmarks.gpu --budget "$((seconds - 10))" \
        --out "$OUT/$name.json" "$@" >"$OUT/$name.log" 2>&1
    echo "$name: exit $? after $(($(date +%s) - START)) s" >>"$OUT/machine.txt"
}

bench gpu $(($(left) - 170)) --skip convergence --check-sizes "$CHECK" \
    --profile-n "${SIZES%%,*}" --sizes "$SIZES" --steps 10 --settle "$SETTLE" --cpu-threads "" \
    --solvers jacobi,mass-split,apgd,coloured-gs,prox-jacobi
bench gpu10m $(($(left) - 110)) --skip launch,checks,profile,convergence --sizes "$BIG" \
    --friction off --solvers jacobi,mass-split --numba-launch "" --mode-sizes "" --steps 5 --settle "$((SETTLE / 4 + 1))" \
    --cpu-threads ""
bench cpu $(($(left) - 15)) --skip launch,checks,profile,convergence \
    --sizes "$CPU_SIZES" --solvers "" --numba-launch "" --settle "$SETTLE" --cpu-threads 16 \
    --cpu-steps 3
if python -c "import pytest" 2>/dev/null && [ "$(left)" -gt 40 ]; then
    timeout "$(($(left) - 5))" python -m pytest -q -x -p no:cacheprovider \
        tests/solver/cuda/test_launch.py tests/solver/cuda/test_jacobi.py >"$OUT/tests.txt" 2>&1
    echo "tests: exit $? after $(($(date +%s) - START)) s" >>"$OUT/machine.txt"
fi
echo "done after $(($(date +%s) - START)) s" >>"$OUT/machine.txt"
