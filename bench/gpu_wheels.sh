#!/usr/bin/env bash
# Prepares bench/gpu_check.sh's wheels, here (with the package registries): the GPU machine has python 3.12
# with torch and jax for CUDA, and neither a network nor brax, MuJoCo, MuJoCo Playground or gymnasium. Writes
# bench/gpu_wheels/ (git-ignored, about 45 MiB: it travels with the working tree, 64 MiB at most):
# those libraries' cp312 wheels without their dependencies (only what their imports and steps need: jax,
# numpy and scipy are the machine's), pytest, and vecrl's own packages built from this tree (run it again
# after changing them).
set -euo pipefail
cd "$(dirname "$0")/.."
out=bench/gpu_wheels
rm -rf "$out" && mkdir -p "$out"
py312=$(pyenv root 2>/dev/null)/versions/3.12.1/bin/python3.12
[ -x "$py312" ] || py312=python3.12
download() {
  "$py312" -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_27_x86_64 \
    --platform manylinux_2_28_x86_64 --platform any -d "$out" "$@"
}
# brax 0.14.2 and playground 0.2.0 with the mujoco they were tested with here (mujoco 4.0 is three wheels:
# its studio, 13 MiB, is never imported by a simulation); what their imports need, found by importing and
# stepping brax's ant and playground's CartpoleBalance in a python 3.12 venv holding only jax.
download brax==0.14.2 playground==0.2.0 mujoco==4.0.0 mujoco-core==4.0.0 mujoco-mjx==3.17.0 flax==0.12.8 \
  gymnasium==1.4.0 cloudpickle farama-notifications pluggy etils ml-collections jaxopt trimesh msgpack optax \
  chex treescope absl-py lxml mediapy tqdm typing_extensions pyyaml orbax-checkpoint rich markdown-it-py mdurl \
  pygments pillow pytest iniconfig packaging pytest-timeout
python3.11 -m pip wheel --quiet --no-deps -w "$out" \
  packages/vecrl-core packages/vecrl-jax packages/vecrl-brax packages/vecrl-playground packages/vecrl-policy
du -sh "$out"
