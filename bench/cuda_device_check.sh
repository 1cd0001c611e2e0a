#!/usr/bin/env bash
# The CUDA backend's checks for one short session on a GPU machine (written for an H200 with 16 CPU
# cores; about 4-6 minutes, every phase under its own time limit so the summary is always written):
#   1. the GPU, driver and binaries (the carried ones from bench/cuda_device_prepare.sh when they
#      run here, else a build with -DRIDGE_CUDA=ON, through ccache when present)
#   2. the unit tests: every CUDA kernel against the CPU reference, the CUDA forward pass against
#      the CPU's, and greedy equality on the default model when it is here
#   3. end-to-end greedy equality of `ridge run --device cpu` and `--device cuda` on the default model
#   4. `ridge probe --device cuda`: copy and read bandwidth, BF16 and FP8 matmul rates
#   5. `ridge bench run --device cuda` on the default model and on a synthetic Llama-3-8B in BF16:
#      prefill (pp512 / pp4096) TFLOP/s, decode at 1, 8, 32 and 128 sequences in GB/s against the
#      measured bandwidth, and a per-kernel profile of one decode step
# Results under $OUT: summary.json (all figures), check.log (everything printed), unit.txt,
# probe.json, bench_default.json, bench_llama3_8b.json. What to carry: bench/cuda_device_prepare.sh.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/build-devout}
mkdir -p "$OUT"
LOG=$OUT/check.log
: > "$LOG"
export RIDGE_HOME=${RIDGE_HOME:-$ROOT/build-ridge-home}
mkdir -p "$RIDGE_HOME/models"
TMP=$ROOT/build-devtmp
rm -rf "$TMP"
mkdir -p "$TMP"
START=$(date +%s)
declare -A STATUS

say() { echo "$*" | tee -a "$LOG"; }
elapsed() { echo $(( $(date +%s) - START )); }
phase() { say "=== [$(elapsed)s] $*"; }
# capture NAME SECONDS FILE CMD...: stdout to FILE (the log when FILE is -), stderr to the log.
capture() {
  local name=$1 limit=$2 file=$3
  shift 3
  if [ "$file" = - ]; then file=$LOG; else : > "$file"; fi
  local t0
  t0=$(date +%s)
  timeout --kill-after=10 "$limit" "$@" >> "$file" 2>> "$LOG"
  local rc=$?
  STATUS[$name]="rc=$rc seconds=$(( $(date +%s) - t0 ))"
  say "--- $name: ${STATUS[$name]}"
  return $rc
}
run() {
  local name=$1 limit=$2
  shift 2
  capture "$name" "$limit" - "$@"
}

phase "GPU"
HAVE_GPU=0
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv 2>&1 | tee -a "$LOG" &&
  nvidia-smi -L > /dev/null 2>&1 && HAVE_GPU=1
say "cpus: $(nproc), GPU: $HAVE_GPU (without one only the build, the CPU-side tests and the skips are checked)"

# CUDA libraries: the toolkit's, else wherever the image keeps them (the Python packages').
CUDA_LIB=
for d in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -z "$CUDA_LIB" ] && [ -e "$d/libcublasLt.so.13" ] && CUDA_LIB=$d
done
[ -z "$CUDA_LIB" ] && CUDA_LIB=$(dirname "$(find / -xdev -name 'libcublasLt.so.13' 2>/dev/null | head -1)")
CUDART_LIB=$CUDA_LIB
[ -e "$CUDA_LIB/libcudart.so.13" ] || CUDART_LIB=$(dirname "$(find / -xdev -name 'libcudart.so.13' 2>/dev/null | head -1)")
export LD_LIBRARY_PATH=$ROOT/build-carry/lib:$CUDA_LIB:$CUDART_LIB:${LD_LIBRARY_PATH:-}
say "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"

phase "binaries"
RIDGE=$ROOT/build-carry/bin/ridge
TESTS=$ROOT/build-carry/bin/ridge_tests
runnable() { [ -x "$RIDGE" ] && "$RIDGE" --help > /dev/null 2>> "$LOG" && "$TESTS" --gtest_list_tests > /dev/null 2>> "$LOG"; }
if runnable; then
  STATUS[binaries]=carried
elif export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$ROOT/build-carry/lib-compat && runnable; then
  STATUS[binaries]="carried, with the carried libstdc++/OpenSSL/zlib"
else
  say "carried binaries missing or not runnable here: building"
  [ -x "$RIDGE" ] && ldd "$RIDGE" | grep "not found" | tee -a "$LOG"
  export CCACHE_DIR=${CCACHE_DIR:-$ROOT/build-ccache}
  run configure 120 cmake -S . -B build-cuda -G Ninja -DCMAKE_BUILD_TYPE=Release -DRIDGE_CONFORMANCE=OFF \
    -DRIDGE_BENCH=OFF -DRIDGE_CUDA=ON "-DCMAKE_CUDA_ARCHITECTURES=90a-real"
  run build 420 cmake --build build-cuda -j "$(nproc)" --target ridge ridge_tests
  RIDGE=$ROOT/build-cuda/ridge
  TESTS=$ROOT/build-cuda/tests/ridge_tests
  STATUS[binaries]=built
fi
say "binaries: ${STATUS[binaries]}"

phase "default model"
MODEL=$RIDGE_HOME/models/SmolLM2-135M-Instruct.Q4_1.gguf
SHA=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
if [ ! -f "$MODEL" ] && [ -f build-stash/model.part1 ] && [ -f build-carry/model.part2 ]; then
  cat build-stash/model.part1 build-carry/model.part2 > "$MODEL"
fi
if [ ! -f "$MODEL" ] && [ -f "$HOME/.cache/ridge/models/SmolLM2-135M-Instruct.Q4_1.gguf" ]; then
  cp "$HOME/.cache/ridge/models/SmolLM2-135M-Instruct.Q4_1.gguf" "$MODEL"
fi
HAVE_MODEL=0
if [ -f "$MODEL" ] && echo "$SHA  $MODEL" | sha256sum -c --status; then
  HAVE_MODEL=1
else
  rm -f "$MODEL"
  say "no default model (carry both parts, see bench/cuda_device_prepare.sh): its checks are skipped"
fi
STATUS[default_model]=$HAVE_MODEL

phase "unit tests (CUDA kernels, forward pass, CPU-side)"
capture unit 300 "$OUT/unit.txt" "$TESTS" --gtest_filter='Cuda*' --gtest_color=no
grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$OUT/unit.txt" | tee -a "$LOG"

PROMPTS=("The capital of France is" "Once upon a time, there was a little robot who" "def fibonacci(n):"
         "The three primary colors are" "Water boils at a temperature of")
if [ "$HAVE_MODEL" = 1 ] && [ "$HAVE_GPU" = 1 ]; then
  phase "end-to-end greedy equality, CPU vs CUDA, default model"
  for i in "${!PROMPTS[@]}"; do
    for dev in cpu cuda; do
      capture "e2e_${dev}_$i" 120 "$TMP/e2e_${dev}_$i.json" \
        "$RIDGE" run -m default --device "$dev" --json --temp 0 -n 48 --ignore-eos -p "${PROMPTS[$i]}"
    done
  done
fi

if [ "$HAVE_GPU" = 1 ]; then
  phase "probe"
    capture probe 120 "$OUT/probe.json" "$RIDGE" probe --device cuda --json -r 5
fi

bench() {  # bench NAME SECONDS ARGS...: JSON to $OUT/NAME.json
  local name=$1 limit=$2
  shift 2
  capture "$name" "$limit" "$OUT/$name.json" "$RIDGE" bench run --device cuda --json "$@"
}

if [ "$HAVE_MODEL" = 1 ] && [ "$HAVE_GPU" = 1 ]; then
  phase "bench: default model"
  bench bench_default 120 -m default -p 512 -n 128 -b 1,8,32,128 -r 3
fi

SYNTH=$ROOT/build-synth/llama-3-8b.BF16.gguf
if [ "$HAVE_GPU" = 1 ] && [ "$(elapsed)" -lt 330 ]; then
  phase "synthetic Llama-3-8B BF16"
  mkdir -p build-synth
  [ -f "$SYNTH" ] || run synth 200 "$RIDGE" synth llama-3-8b -t BF16 -o "$SYNTH"
  if [ -f "$SYNTH" ] && [ "$(elapsed)" -lt 420 ]; then
    phase "bench: Llama-3-8B BF16"
    bench bench_llama3_8b 200 -m "$SYNTH" -p 4096 -n 128 -b 1,8,32,128 -r 3
  else
    say "skipped the 8B bench: out of time"
  fi
else
  say "skipped the 8B synth and bench (GPU $HAVE_GPU, $(elapsed)s elapsed)"
fi

phase "summary"
for k in "${!STATUS[@]}"; do echo "$k ${STATUS[$k]}"; done > "$TMP/status"
python3 "$ROOT/bench/cuda_device_summary.py" "$OUT" "$TMP" "$(elapsed)" | tee -a "$LOG"
rm -rf "$TMP"
