"""`ridge plan` and `ridge lint` from the command line: the seeds' headline numbers in --json, an
SVG plot, lint findings, clear errors, and --validate on the default model with a probe profile
written here, in one process and split across two MPI ranks (the measured numbers vary by machine;
the test checks the report's shape)."""
import json
import os
import shutil
import subprocess

import pytest


PROFILE = {"cpu": "test profile", "cores": 2, "read_bandwidth_gbs": {"1": 10.0, "2": 10.0},
           "peak_f32_gflops": {"1": 200.0, "2": 250.0}, "peak_int8_gops": {"1": 600.0, "2": 550.0},
           "l1d_kib": 48, "l2_kib": 2048, "l3_kib": 32768, "isa": ["avx2"], "memory_gib": 16}


def run(ridge_bin, *args, env=None, timeout=300):
    return subprocess.run([ridge_bin, *args], capture_output=True, text=True, timeout=timeout, env=env)


def test_plan_json_reproduces_first_seed(ridge_bin):
    r = run(ridge_bin, "plan", "llama-3-70b", "--hw", "h100", "--weights", "fp8", "--kv", "fp8",
            "--context", "8192", "--batch", "1,8,32,128", "--json", "--price", "2")
    assert r.returncode == 0, r.stderr
    plan = json.loads(r.stdout)
    balance = {row["precision"]: row["balance"] for row in plan["hardware"]["balance"]}
    assert balance["bf16"] == pytest.approx(295, abs=1)
    assert balance["fp8"] == pytest.approx(590, abs=1.5)
    assert plan["decode"]["single_stream_ceiling_tok_s"] == pytest.approx(48, rel=0.02)
    totals = [row["tok_s_total"] for row in plan["decode"]["rows"]]
    for ours, seed in zip(totals, [47, 333, 958, 1803]):
        assert ours == pytest.approx(seed, rel=0.03)
    assert plan["cost"]["rows"][0]["usd_per_million"] == pytest.approx(12, abs=0.5)


def test_plan_tables_and_svg(ridge_bin, tmp_path):
    svg = tmp_path / "roofline.svg"
    r = run(ridge_bin, "plan", "deepseek-v3", "--hw", "B200", "--weights", "fp8", "--svg", str(svg))
    assert r.returncode == 0, r.stderr
    for title in ["## Model deepseek-v3", "machine balance", "## Decode versus batch", "## KV cache ledger",
                  "## MoE: GEMM-M per expert", "## GEMM shapes", "## Quantization"]:
        assert title in r.stdout
    text = svg.read_text()
    assert text.startswith("<svg") and text.rstrip().endswith("</svg>") and "<circle" in text


def test_plan_sections_and_errors(ridge_bin):
    r = run(ridge_bin, "plan", "llama-3-8b", "--section", "kv", "--json")
    assert r.returncode == 0, r.stderr
    assert list(json.loads(r.stdout)) == ["kv"]
    bad = run(ridge_bin, "plan", "no-such-model")
    assert bad.returncode == 1 and "neither a file nor a named shape" in bad.stderr
    bad = run(ridge_bin, "plan", "llama-3-8b", "--hw", "tpu-v9")
    assert bad.returncode == 1 and "unknown hardware" in bad.stderr


def test_plan_default_model_file(ridge_bin, default_model):
    r = run(ridge_bin, "plan", default_model, "--section", "model,decode", "--json")
    assert r.returncode == 0, r.stderr
    plan = json.loads(r.stdout)
    assert plan["model"]["formats"]["weights"].startswith("q4_1")


def test_lint(ridge_bin):
    r = run(ridge_bin, "lint", "smollm2-135m", "--json")
    assert r.returncode == 0, r.stderr
    findings = {f["check"]: f for f in json.loads(r.stdout)["findings"]}
    assert findings["align.n_embd"]["level"] == "warn" and "576" in findings["align.n_embd"]["value"]
    strict = run(ridge_bin, "lint", "smollm2-135m", "--strict")
    assert strict.returncode == 1
    assert run(ridge_bin, "lint", "llama-3-70b", "--strict").returncode == 0


def test_validate_without_profile_says_run_probe(ridge_bin, tmp_path):
    env = dict(os.environ, RIDGE_HOME=str(tmp_path))
    r = run(ridge_bin, "plan", "--validate", "default", env=env)
    assert r.returncode == 1 and "run ridge probe first" in r.stderr


def test_validate_default_model(ridge_bin, default_model, tmp_path):
    profile = tmp_path / "machine.json"
    profile.write_text(json.dumps(PROFILE))
    r = run(ridge_bin, "plan", "--validate", default_model, "--profile", str(profile), "--json",
            "--validate-prompt", "8", "--validate-decode", "2", timeout=900)
    assert r.returncode == 0, r.stderr
    v = json.loads(r.stdout)
    for phase in ("prefill", "decode"):
        assert v[phase]["predicted_s"] > 0 and v[phase]["measured_s"] > 0
        assert v[phase]["ratio"] == pytest.approx(v[phase]["measured_s"] / v[phase]["predicted_s"])


def test_validate_split_under_mpirun(ridge_bin, default_model, tmp_path):
    """TP=2 over two ranks: rank 0 measures the split model's decode through both, and prints the
    parallel section's prediction for the layout beside it (priced with the profile's measured
    shared-memory links); the other rank prints nothing. Without mpirun the split is refused."""
    mpirun = shutil.which("mpirun")
    assert mpirun, "mpirun not found: tools/setup_deps.sh installs openmpi-bin"
    profile = tmp_path / "machine.json"
    fit = {"fit": {"latency_us": 2.0, "bandwidth_gbs": 1.0}}
    profile.write_text(json.dumps({**PROFILE, "dist": {"all_reduce": fit, "send_recv": fit, "ranks": 2,
                                                       "transport": "shared memory"}}))
    args = ["plan", "--validate", default_model, "--hw", "local", "--tp", "2", "--profile", str(profile), "--json",
            "--validate-prompt", "8", "--validate-decode", "4"]
    alone = run(ridge_bin, *args)
    assert alone.returncode == 1 and "mpirun -np 2" in alone.stderr
    env = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    r = subprocess.run([mpirun, "-np", "2", "--bind-to", "none", ridge_bin, *args, "-t", "1"], capture_output=True,
                       text=True, timeout=900, env=env)
    assert r.returncode == 0, r.stderr
    v = json.loads(r.stdout)  # rank 0's report only
    assert v["split"] == {"tp": 2, "pp": 1, "ranks": 2, "threads_per_rank": 1, "tp_mode": "gather"}
    assert v["comm"]["measured"] and v["comm"]["shares_host"]
    d = v["decode"]
    for key in ("predicted_s", "measured_s", "predicted_tok_s", "measured_tok_s", "predicted_stage_s", "predicted_comm_s"):
        assert d[key] > 0, key
    assert d["ratio"] == pytest.approx(d["measured_s"] / d["predicted_s"])
    assert d["predicted_s"] == pytest.approx(d["predicted_stage_s"] + d["predicted_comm_s"])
    assert v["prefill"]["tokens"] == 8 and v["prefill"]["measured_tok_s"] > 0


@pytest.mark.parametrize("shape", ["deepseek-v3", "qwen3-30b-a3b"])
def test_plan_ledger_matches_the_engine_on_a_synthetic_file(ridge_bin, tmp_path, shape):
    """The planner's KV bytes per token (DeepSeek-V3: the 512 + 64 latent per layer) and active weight
    bytes per decode token agree with what the engine allocates and reads on the same file (the real
    attention shapes, fewer layers and experts so it runs in seconds)."""
    path = str(tmp_path / f"{shape}.gguf")
    scale = ["--n-layer", "4", "--n-vocab", "2000", "--n-embd", "1024", "--n-expert", "16", "--n-ff-expert", "256"]
    if shape == "deepseek-v3":
        scale += ["--n-layer-dense-lead", "1", "--n-ff", "512"]
    r = run(ridge_bin, "synth", shape, *scale, "-t", "Q8_0", "-o", path, "-f")
    assert r.returncode == 0, r.stderr
    r = run(ridge_bin, "plan", path, "--kv", "f16", "--context", "4096", "--batch", "1", "--json")
    assert r.returncode == 0, r.stderr
    plan = json.loads(r.stdout)
    row, kv_per_token = plan["decode"]["rows"][0], plan["model"]["kv_bytes_per_token"]
    r = run(ridge_bin, "bench", "run", "-m", path, "-p", "0", "-n", "2", "-r", "1", "--json")
    assert r.returncode == 0, r.stderr
    engine = json.loads(r.stdout)["results"][0]
    print(f"\n{shape}: KV bytes/token plan {kv_per_token:.0f} engine {engine['kv_bytes_per_position']}; "
          f"active weight bytes plan {row['weight_bytes']:.0f} engine {engine['weight_bytes_per_token']}")
    assert kv_per_token == engine["kv_bytes_per_position"]
    assert row["weight_bytes"] == pytest.approx(engine["weight_bytes_per_token"], rel=0.01)
