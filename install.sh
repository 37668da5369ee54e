#!/usr/bin/env bash
# One-step set-up for a fresh machine.
#   bash install.sh run [marbles options]   install, then launch the program
#   bash install.sh test [pytest options]   install with the test extras, then run the test suite
# As root it installs the missing system packages that Qt's xcb platform, Mesa's software OpenGL
# (llvmpipe) and the virtual X server for the GUI tests need; otherwise it names them.
set -euo pipefail
cd "$(dirname "$0")"
mode="${1:-}"
[ $# -gt 0 ] && shift
case "$mode" in run|test) ;; *) echo "usage: bash install.sh run|test [options]" >&2; exit 2;; esac

system_packages=(xvfb xauth libgl1-mesa-dri libegl1 libglx-mesa0 libfontconfig1 libdbus-1-3
  libxkbcommon-x11-0 libxcb-cursor0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1 libxcb-randr0
  libxcb-render-util0 libxcb-shape0 libxcb-xinerama0 libxcb-xkb1 libxcb-xfixes0)
missing=()
if command -v dpkg >/dev/null 2>&1; then
  for pkg in "${system_packages[@]}"; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
  done
fi
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "install.sh: installing system packages: ${missing[*]}" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "install.sh: missing system packages (install them as root): ${missing[*]}" >&2
  fi
fi

python=${PYTHON:-python3}
# The cuda backend's extra where a CUDA GPU answers (--device cuda|auto use it).
gpu=""
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  gpu=",cuda"
  echo "install.sh: a CUDA GPU is present: installing the cuda extra" >&2
fi
if [ "$mode" = run ]; then
  if [ -n "$gpu" ]; then "$python" -m pip install -q -e ".[cuda]"; else "$python" -m pip install -q -e .; fi
  # The kernels the window steps first, compiled now with a bar (a minute at most on a cold
  # cache, a second when cached), so that the window's marbles move at once.
  case " $* " in *" -h "*|*" --help "*|*" --version "*) ;; *) marbles --compile-only "$@";; esac
  exec marbles "$@"
fi
"$python" -m pip install -q -e ".[test$gpu]"
# One pytest worker a core, at most four (each compiles its own kernels where the cache is cold
# and holds its own Qt); a later -n in the arguments wins, -n 0 runs the suite in one process.
workers=$(nproc 2>/dev/null || echo 1)
[ "$workers" -gt 4 ] && workers=4
exec "$python" -m pytest -n "$workers" "$@"
