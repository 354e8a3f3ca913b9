#!/usr/bin/env bash
# One-shot GPU check (issue 52), for a machine with one GPU, python 3.12 with torch and jax for CUDA, and no
# network: it installs bench/gpu_wheels/ (made here by bench/gpu_wheels.sh; pass it along, e.g. the device
# tool's carry=["bench/gpu_wheels"]) into a folder of its own, then within about 8 minutes runs
# bench/gpu_check.py (DLPack without a copy, the split evaluate on one device, fused against stepped, and
# vecrl_evaluate.rollout_function inside a lax.scan of 8 generations: issue 76),
# bench/brax_evaluate.py on brax's ant and playground's CartpoleBalance at P = 4,096 and 16,384 against
# the EvoJAX-style floor, the fused loop in the GPU's shape (16 steps a check, restarts by selection: the
# default there) and in the CPU's (1 step a check, cond: --other-shape), and the jax tests on the GPU. Each part has a time limit of its own, so one slow
# part leaves the others their time; what each prints is its figures.
set -uo pipefail
cd "$(dirname "$0")/.."
skip=${1:-}  # --skip-quick: leave gpu_check.py out (a rerun of the benches and tests only)
site=${TMPDIR:-/tmp}/vecrl-gpu-site
rm -rf "$site"
python3 -m pip install --quiet --no-deps --no-index --target "$site" bench/gpu_wheels/*.whl 2>&1 | tail -3
export PYTHONPATH="$site" PYTHONUNBUFFERED=1 MUJOCO_GL=egl
part() {  # part LIMIT_S NAME COMMAND...: run it with its own limit, say how it ended
  local limit=$1 name=$2 t0=$SECONDS
  shift 2
  echo "=== $name (limit ${limit} s)"
  timeout "$limit" "$@"
  echo "=== $name: exit $? in $((SECONDS - t0)) s"
}
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
[ "$skip" = --skip-quick ] || part 80 "gpu_check.py" python3 bench/gpu_check.py
for popsize in 4096 16384; do
  part 120 "brax ant P=$popsize" python3 bench/brax_evaluate.py --only brax::ant --popsize "$popsize" \
    --episode-length 200 --rounds 1 --skip-stepped --other-shape
done
for popsize in 4096 16384; do
  part 75 "playground CartpoleBalance P=$popsize" python3 bench/brax_evaluate.py \
    --only playground::CartpoleBalance --popsize "$popsize" --episode-length 200 --rounds 1 --skip-stepped \
    --other-shape
done
part 60 "jax tests on the GPU" python3 -m pytest -q -p no:cacheprovider -x packages/vecrl-jax/tests \
  tests/test_evaluate_sharded.py packages/vecrl-brax/tests/test_brax_make.py
echo "=== done in $SECONDS s"
