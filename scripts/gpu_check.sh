#!/usr/bin/env bash
# Everything the GPU section of docs/benchmarks.md needs, in one go, on a machine with a
# GPU and `pip install -e ".[bench]" "jax[cuda12]"` done. Every figure lands in a file
# under OUT (default gpu-results/); nothing is asserted, the files are the result.
#
#   bash scripts/gpu_check.sh [OUT]
#
# Takes about 20-40 minutes on an H100/H200 (the 42-million-node liars_dice(sides=9) is
# lowered on the host first; the lowering branch's parallel lowering shortens that).
set -uo pipefail
OUT=${1:-gpu-results}
mkdir -p "$OUT"
cd "$(dirname "$0")/.."
export XLA_PYTHON_CLIENT_PREALLOCATE=false
run() {            # run NAME CMD...: output to OUT/NAME.log, keep going on failure
  local name=$1; shift
  echo "== $name: $*" | tee "$OUT/$name.log"
  "$@" >>"$OUT/$name.log" 2>&1
  echo "   exit $?" | tee -a "$OUT/$name.log"
}
run machine sh -c 'date -u; uname -a; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv; nproc; python -c "import jax; print(jax.__version__, jax.devices())"'
# the issue's games on the GPU, peers (CPU programs) beside them for scale
run bench python scripts/bench.py --gpu --games leduc liars_dice goofspiel6 \
    --peers openspiel_cpp liteefg --json "$OUT/bench.json" --markdown "$OUT/bench.md"
# the large set: liars_dice(sides=7/8/9), Goofspiel-6, Leduc stacks of 256..4096 (jaxcfr only)
run bench-large python scripts/bench.py --gpu --large --peer-budget 3600 \
    --json "$OUT/bench-large.json" --markdown "$OUT/bench-large.md"
# per-pass timings and the bandwidth bound (the H200's 4.8 TB/s given; also measured)
for game in "liars_dice" "liars_dice(dice=1, sides=8)" "goofspiel(cards=6)"; do
  tag=$(echo "$game" | tr -c 'a-z0-9' '_')
  run "profile-$tag" python scripts/profile_passes.py "$game" --json "$OUT/profile-$tag.json"
  run "profile-$tag-4800" python scripts/profile_passes.py "$game" --bandwidth 4800 \
      --json "$OUT/profile-$tag-4800.json"
done
# determinism: GPU twice, resumed, with --xla_gpu_deterministic_ops, against the CPU
run determinism python scripts/determinism.py --gpu --json "$OUT/determinism.json"
echo "results in $OUT/"
