"""`mpirun -np 2 ridge serve` of a MoE model with its experts spread over the ranks (--ep 2, attention split
or data-parallel): completions answer as one process's do, and /metrics reports each rank's expert load, the
ranks' tokens adding up to the experts'."""
import json
import re
import subprocess

import pytest

from test_parallel import ENV  # noqa: F401  (the mpirun environment)
from test_parallel_faults import SplitServer
from test_synth import ARCHITECTURES, SMALL, synth


@pytest.fixture(scope="module")
def moe_model(ridge_bin, tmp_path_factory):
    args, dtype = ARCHITECTURES["olmoe"]
    return synth(ridge_bin, tmp_path_factory.mktemp("ep") / "olmoe.gguf", *args, *SMALL, "-t", dtype, "--std", "0.3")


def samples(text, name):
    return {m.group(1): float(m.group(2)) for m in re.finditer(rf'^{re.escape(name)}\{{[a-z]+="(\d+)"\}} (\S+)$', text, re.M)}


@pytest.mark.parametrize("flags", [["--ep", "2"], ["--ep", "2", "--enable-dp-attention"]], ids=["ep", "dp-attention"])
def test_expert_parallel_serving_reports_each_ranks_load(ridge_bin, moe_model, flags):
    server = SplitServer(ridge_bin, moe_model, *flags)
    try:
        texts = []
        for prompt in ["Hello", "one two three four five"]:
            status, body, _ = server.complete(prompt, max_tokens=6)
            assert status == 200, body
            texts.append(json.loads(body)["choices"][0]["text"])
        status, body, _ = server.request_metrics()
        assert status == 200
        metrics = body.decode()
        experts = samples(metrics, "ridge:moe_expert_tokens_total")
        ranks = samples(metrics, "ridge:moe_rank_tokens_total")
        assert sorted(ranks) == ["0", "1"], metrics[-2000:]
        assert all(v > 0 for v in ranks.values())
        assert sum(ranks.values()) == sum(experts.values())
        for prompt, text in zip(["Hello", "one two three four five"], texts):
            one = subprocess.run([ridge_bin, "run", "-m", moe_model, "-p", prompt, "-n", "6", "--temp", "0", "--json",
                                  "-t", "2"], capture_output=True, text=True, check=True)
            assert json.loads(one.stdout)["text"] == text
        print(f"\n{flags}: rank loads {ranks}")
    finally:
        server.close()
