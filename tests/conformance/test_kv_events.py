"""`ridge serve --kv-events-endpoint`: KV cache events in vLLM's schema over ZeroMQ, read the way a
KV-aware router reads them (pyzmq SUB socket, msgpack), and decoded with msgspec into structs shaped
like vLLM's own (vllm/distributed/kv_events.py) whose re-encoding gives back the same bytes.

Two completions share a long prefix: the first stores its full blocks as one chain starting at no
parent; the second stores only the blocks after the shared ones, its first parent the last shared
block of the first chain. Token ids are the prompts' own, block by block."""
import json
import socket
import subprocess
import time

import msgpack
import pytest
import zmq

from serve_fixture import running_server

TOPIC = b"kv@ridge-test"
BLOCK = 16  # ridge's default --block-size
PREFIX = ("You are a careful assistant for travellers. Answer in one short sentence, name the place, and "
          "never invent facts. The traveller is planning a week in Europe, likes museums, old bridges and "
          "rivers, travels by train, and wants to know the essentials of each city before arriving there. ")
PROMPT_A = PREFIX + "Which city is the capital of France?"
PROMPT_B = PREFIX + "Which river flows through the city of Paris?"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ridge_tokenize(ridge_bin, model, text):
    out = subprocess.run([ridge_bin, "tokenize", "-m", model, "-p", text, "--ids-only"],
                         check=True, capture_output=True, text=True, timeout=60)
    return [int(t) for t in out.stdout.split()]


@pytest.fixture(scope="module")
def ctx():
    c = zmq.Context()
    yield c
    c.destroy(linger=0)


@pytest.fixture(scope="module")
def sub_port(ctx):
    """(SUB socket, its port). It binds where ridge connects: ridge connects to a tcp://host:port endpoint
    without a wildcard (vLLM's rule)."""
    s = ctx.socket(zmq.SUB)
    s.setsockopt(zmq.SUBSCRIBE, TOPIC)
    port = s.bind_to_random_port("tcp://127.0.0.1")
    yield s, port
    s.close(linger=0)


@pytest.fixture(scope="module")
def sub(sub_port):
    return sub_port[0]


@pytest.fixture(scope="module")
def server(ridge_bin, default_model, sub_port):
    sub, port = sub_port
    replay_port = free_port()
    with running_server(ridge_bin, default_model, "--kv-events-endpoint", f"tcp://127.0.0.1:{port}",
                        "--kv-events-topic", TOPIC.decode(), "--kv-events-replay-endpoint",
                        f"tcp://127.0.0.1:{replay_port}") as s:
        s.replay_endpoint = f"tcp://127.0.0.1:{replay_port}"
        # A SUB socket sends its subscription to a new peer only while it is being called, and a PUB
        # drops what it sends before that: let it join before the first request.
        for _ in range(30):
            sub.poll(10)
        yield s


def complete(server, prompt):
    status, body = server.request("GET", "/v1/models")
    assert status == 200, body
    model = json.loads(body)["data"][0]["id"]
    status, body = server.request("POST", "/v1/completions",
                                  {"model": model, "prompt": prompt, "max_tokens": 1, "temperature": 0})
    assert status == 200, body


def receive(sock, quiet_s=1.0, first_s=10.0):
    """Messages until none came for quiet_s (the first may take first_s)."""
    messages = []
    deadline = first_s
    while sock.poll(int(deadline * 1000)):
        messages.append(sock.recv_multipart())
        deadline = quiet_s
    return messages


def stored_events(messages):
    """The BlockStored events of these [topic, seq, payload] messages, checking each batch's frame."""
    events = []
    for topic, seq, payload in messages:
        assert topic == TOPIC and len(seq) == 8
        ts, batch_events, dp_rank = msgpack.unpackb(payload)
        assert abs(ts - time.time()) < 60 and dp_rank == 0
        for e in batch_events:
            assert e[0] in ("BlockStored", "BlockRemoved", "AllBlocksCleared"), e
            if e[0] == "BlockStored":
                events.append(e)
    return events


def chain_of(events):
    """(hashes, tokens, first parent) of BlockStored events that follow each other as one chain."""
    assert events, "no BlockStored event arrived"
    hashes, tokens = [], []
    for e in events:
        tag, block_hashes, parent, token_ids, block_size, lora_id, medium, lora_name, *defaulted = e
        assert block_size == BLOCK and len(token_ids) == BLOCK * len(block_hashes)
        assert lora_id is None and lora_name is None and medium == "CPU" and defaulted == [None] * 4
        assert all(isinstance(h, int) and 0 <= h < 2**64 for h in block_hashes)
        if hashes:
            assert parent == hashes[-1], "each event hangs under the block before it"
        hashes += block_hashes
        tokens += token_ids
    return hashes, tokens, events[0][2]


def test_shared_prefix_chains_and_replays(ridge_bin, default_model, server, sub, ctx):
    tokens_a = ridge_tokenize(ridge_bin, default_model, PROMPT_A)
    tokens_b = ridge_tokenize(ridge_bin, default_model, PROMPT_B)
    shared = 0
    while tokens_a[shared] == tokens_b[shared]:
        shared += 1
    shared_blocks = shared // BLOCK
    assert shared_blocks >= 2, "the prompts should share a few blocks"

    complete(server, PROMPT_A)
    live = receive(sub)
    hashes_a, stored_a, parent_a = chain_of(stored_events(live))
    assert parent_a is None
    assert len(hashes_a) == len(tokens_a) // BLOCK
    assert stored_a == tokens_a[:len(stored_a)]

    complete(server, PROMPT_B)
    more = receive(sub)
    hashes_b, stored_b, parent_b = chain_of(stored_events(more))
    assert parent_b == hashes_a[shared_blocks - 1], "the second chain continues the shared blocks of the first"
    assert not set(hashes_b) & set(hashes_a)
    assert len(hashes_b) == len(tokens_b) // BLOCK - shared_blocks
    assert stored_b == tokens_b[shared_blocks * BLOCK:(shared_blocks + len(hashes_b)) * BLOCK]

    live += more
    seqs = [int.from_bytes(seq, "big") for _, seq, _ in live]
    assert seqs == list(range(len(seqs)))

    # Replay from the second batch on: a DEALER gets ["", topic, seq, payload] per kept batch, then the end mark.
    replay = ctx.socket(zmq.DEALER)
    replay.connect(server.replay_endpoint)
    try:
        replay.send_multipart([b"", (1).to_bytes(8, "big")])
        got = receive(replay)
    finally:
        replay.close(linger=0)
    assert got[-1] == [b"", TOPIC, (-1).to_bytes(8, "big", signed=True), b""]
    assert [m[1:] for m in got[:-1]] == [list(m) for m in live[1:]]

    check_against_vllm_structs([payload for _, _, payload in live])


def check_against_vllm_structs(payloads):
    """Each payload decodes into vLLM-shaped msgspec structs (events as tagged arrays) and encodes back to itself."""
    msgspec = pytest.importorskip("msgspec")

    class KVCacheEvent(msgspec.Struct, array_like=True, omit_defaults=True, gc=False, tag=True):
        pass

    class BlockStored(KVCacheEvent):
        block_hashes: list[int]
        parent_block_hash: int | None
        token_ids: list[int]
        block_size: int
        lora_id: int | None
        medium: str | None
        lora_name: str | None
        extra_keys: list | None = None
        group_idx: int | None = None
        kv_cache_spec_kind: str | None = None
        kv_cache_spec_sliding_window: int | None = None

    class BlockRemoved(KVCacheEvent):
        block_hashes: list[int]
        medium: str | None
        group_idx: int | None = None

    class AllBlocksCleared(KVCacheEvent):
        pass

    class KVEventBatch(msgspec.Struct, array_like=True, omit_defaults=True, gc=False):
        ts: float
        events: list[BlockStored | BlockRemoved | AllBlocksCleared]
        data_parallel_rank: int | None = None

    decoder = msgspec.msgpack.Decoder(KVEventBatch)
    for payload in payloads:
        batch = decoder.decode(payload)
        assert batch.events and batch.data_parallel_rank == 0
        assert msgspec.msgpack.encode(batch) == payload
