"""The soak's request kinds (common.MIX): each k_KIND(rng) sends one request of that kind and returns its
record, with an 'anomaly' where a 2xx answer breaks the request's contract."""
import json
import random
import re
import socket
import struct
import threading
import time

from .client import dechunk, error_of
from .common import BURST, now

WORDS = ("river stone candle window garden silver music paper orange mountain forest ocean cloud winter summer "
         "library engine signal bridge harbor lantern market island valley thunder meadow castle kitchen "
         "planet comet crystal feather compass journey letter mirror puzzle rocket shadow teacher village "
         "wizard yellow zebra anchor basket cactus dragon ember falcon glacier hammer igloo jungle kettle "
         "lemon marble needle otter pepper quartz ribbon saddle tiger umbrella violin walnut yarn acorn "
         "blanket copper desert echo fountain granite horizon ivory jasmine kayak lighthouse maple nectar "
         "orbit pebble quiver rainbow sapphire tunnel velvet whistle canyon dolphin emerald festival").split()

SCHEMA = {"type": "object",
          "properties": {"name": {"type": "string", "maxLength": 16},
                         "age": {"type": "integer", "minimum": 0, "maximum": 120},
                         "city": {"type": "string", "enum": ["Paris", "Tokyo", "Lima", "Oslo"]}},
          "required": ["name", "age", "city"], "additionalProperties": False}
TOOLS = [{"type": "function", "function": {
             "name": "get_weather", "description": "The current weather in a city.",
             "parameters": {"type": "object",
                            "properties": {"city": {"type": "string"},
                                           "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
                            "required": ["city"]}}},
         {"type": "function", "function": {
             "name": "search_web", "description": "Search the web.",
             "parameters": {"type": "object", "properties": {"query": {"type": "string"}},
                            "required": ["query"]}}}]


def sentence(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n))


def shared_prefixes(count, words):
    """`count` long system prompts, the same in every run (prefix cache and KV tiers hit them)."""
    out = []
    for k in range(count):
        rng = random.Random(1000 + k)
        rules = " ".join(f"Rule {i + 1}: always mention the {rng.choice(WORDS)} and the {rng.choice(WORDS)}."
                         for i in range(words // 8))
        out.append(f"You are assistant number {k} of the soak test. Follow these house rules. {rules} "
                   f"Background notes: {sentence(rng, words // 3)}.")
    return out


class Kinds:
    """The request kinds (a part of workload.Soak: self.args, self.prefixes, self.new_rec, self.stream, ...)."""

    def user_prompt(self, rng):
        topic = rng.choice(["a short story", "a poem", "a list of facts", "a recipe", "an explanation",
                            "a dialogue", "advice"])
        return f"Write {topic} about the {rng.choice(WORDS)} and the {rng.choice(WORDS)}. {sentence(rng, rng.randint(4, 120))}"

    def max_tokens(self, rng):
        return rng.randint(self.args.min_tokens, self.args.max_tokens)

    def sampling(self, rng):
        return {"temperature": 0.0} if rng.random() < 0.5 else {"temperature": 0.8, "top_p": 0.95,
                                                                "seed": rng.randint(0, 1 << 30)}

    def answer(self, rec, path, body, stream, n):
        """Sends a chat or completion request, streamed or plain: outcome 'ok' on a 2xx answer, an anomaly when
        it does not have n choices. Returns the stream's chunks or the parsed body, or None on failure."""
        t = now()
        if stream:
            out = self.stream(rec, path, body, t)
            if out is not None and rec["outcome"] is None:
                rec["outcome"] = "ok"
                if n > 1 and rec.get("choices_seen") != n:
                    rec["anomaly"] = f"streamed {rec.get('choices_seen')} choices for n={n}"
            return out
        out = self.post_json(rec, path, body, t)
        if out is not None:
            rec["outcome"] = "ok"
            choices = out.get("choices") or []
            if len(choices) != n:
                rec["anomaly"] = f"{len(choices)} choices for n={n}"
        return out

    def do_chat(self, rng, kind, stream, n=1, messages=None, extra=None):
        body = {"messages": messages or [{"role": "user", "content": self.user_prompt(rng)}],
                "max_tokens": self.max_tokens(rng), "stream": stream, **self.sampling(rng), **(extra or {})}
        if n > 1:
            body["n"] = n
            body["temperature"] = 0.8
        rec = self.new_rec(kind, "chat", stream, n=n)
        return rec, self.answer(rec, "/v1/chat/completions", body, stream, n)

    def do_completion(self, rng, kind, stream, n=1):
        prompt = f"{sentence(rng, rng.randint(3, 150))}. The {rng.choice(WORDS)} of the {rng.choice(WORDS)} is"
        body = {"prompt": prompt, "max_tokens": self.max_tokens(rng), "stream": stream, **self.sampling(rng)}
        if n > 1:
            body.update(n=n, temperature=0.8)
        rec = self.new_rec(kind, "completions", stream, n=n)
        self.answer(rec, "/v1/completions", body, stream, n)
        return rec

    def k_chat_stream(self, rng):
        return self.do_chat(rng, "chat_stream", True)[0]

    def k_chat(self, rng):
        return self.do_chat(rng, "chat", False)[0]

    def k_completion_stream(self, rng):
        return self.do_completion(rng, "completion_stream", True)

    def k_completion(self, rng):
        return self.do_completion(rng, "completion", False)

    def k_chat_n(self, rng):
        return self.do_chat(rng, "chat_n", False, n=rng.choice([2, 3]))[0]

    def k_completion_stream_n(self, rng):
        return self.do_completion(rng, "completion_stream_n", True, n=2)

    def k_structured(self, rng):
        messages = [{"role": "system", "content": "Answer in JSON."},
                    {"role": "user", "content": f"Invent a person who likes the {rng.choice(WORDS)}."}]
        extra = {"response_format": {"type": "json_schema", "json_schema": {"name": "person", "strict": True,
                                                                            "schema": SCHEMA}}}
        rec, out = self.do_chat(rng, "structured", False, messages=messages, extra=extra)
        if out is not None:
            c = (out.get("choices") or [{}])[0]
            if c.get("finish_reason") == "stop":
                try:
                    v = json.loads((c.get("message") or {}).get("content") or "")
                    if not (isinstance(v, dict) and set(SCHEMA["required"]) <= set(v) and set(v) <= set(SCHEMA["properties"])):
                        rec["anomaly"] = f"structured output off the schema: {json.dumps(v)[:120]}"
                except ValueError:
                    rec["anomaly"] = "structured output is not JSON: " + str((c.get("message") or {}).get("content"))[:120]
        return rec

    def k_tools(self, rng):
        named = rng.random() < 0.5
        choice = {"type": "function", "function": {"name": "get_weather"}} if named else "required"
        messages = [{"role": "user", "content": f"What is the weather in {rng.choice(['Paris', 'Tokyo', 'Lima', 'Oslo'])}?"}]
        stream = rng.random() < 0.4
        rec, out = self.do_chat(rng, "tools", stream, messages=messages,
                                extra={"tools": TOOLS, "tool_choice": choice, "max_tokens": 64})
        rec["tool_choice"] = "named" if named else "required"
        if out is not None and not stream:
            c = (out.get("choices") or [{}])[0]
            calls = (c.get("message") or {}).get("tool_calls") or []
            if c.get("finish_reason") != "length":
                if not calls:
                    rec["anomaly"] = f"no tool call under tool_choice {rec['tool_choice']} (finish {c.get('finish_reason')})"
                else:
                    try:
                        json.loads(calls[0]["function"]["arguments"])
                        if named and calls[0]["function"]["name"] != "get_weather":
                            rec["anomaly"] = f"called {calls[0]['function']['name']} for a named tool_choice"
                    except (ValueError, KeyError, TypeError):
                        rec["anomaly"] = "tool call arguments are not JSON"
        return rec

    def k_shared_prefix(self, rng):
        k = rng.randrange(len(self.prefixes))
        messages = [{"role": "system", "content": self.prefixes[k]},
                    {"role": "user", "content": f"Question {rng.randint(0, 9999)}: tell me about the {rng.choice(WORDS)}."}]
        rec, _ = self.do_chat(rng, "shared_prefix", True, messages=messages)
        rec["prefix"] = k
        return rec

    def k_too_long(self, rng):
        words = rng.randint(int(self.args.ctx_size * 1.2), int(self.args.ctx_size * 2))
        chat = rng.random() < 0.5
        stream = rng.random() < 0.5
        text = sentence(rng, words)
        body = ({"messages": [{"role": "user", "content": text}]} if chat else {"prompt": text})
        body.update(max_tokens=16, stream=stream)
        path = "/v1/chat/completions" if chat else "/v1/completions"
        rec = self.new_rec("too_long", "chat" if chat else "completions", stream, prompt_words=words)
        t = now()
        out = self.stream(rec, path, body, t) if stream else self.post_json(rec, path, body, t)
        if rec.get("status") == 400 and (rec.get("error_code") == "context_length_exceeded"
                                         or "context" in (rec.get("error_message") or "")):
            rec["outcome"] = "expected_400"
        elif out is not None and rec["outcome"] is None:
            rec.update(outcome="unexpected_success", error_message=f"{rec['status']} for a prompt of {words} words, past the context")
        return rec

    def k_cancel(self, rng):
        chat = rng.random() < 0.5
        after = rng.randint(1, 4)
        body_extra = {"max_tokens": self.args.max_tokens + 32, "stream": True, "ignore_eos": True}
        if chat:
            body = {"messages": [{"role": "user", "content": self.user_prompt(rng)}], **body_extra}
            path = "/v1/chat/completions"
        else:
            body = {"prompt": f"Once upon a time, the {rng.choice(WORDS)}", **body_extra}
            path = "/v1/completions"
        rec = self.new_rec("cancel", "chat" if chat else "completions", True, cancel_after=after)
        out = self.stream(rec, path, body, now(), stop_after=after)
        if out is not None and rec["outcome"] is None:
            rec["outcome"] = "ok"  # the stream ended before the client closed it
        return rec

    def k_vanish(self, rng):
        chat = rng.random() < 0.5
        body = ({"messages": [{"role": "user", "content": self.user_prompt(rng)}]} if chat
                else {"prompt": f"The {rng.choice(WORDS)} and the {rng.choice(WORDS)}"})
        body.update(max_tokens=self.args.max_tokens + 32, stream=rng.random() < 0.8, ignore_eos=True)
        wait = rng.choice([0.0, rng.uniform(0.05, 2.0)])
        rec = self.new_rec("vanish", "chat" if chat else "completions", body["stream"], vanish_after=round(wait, 3))
        try:
            s = self.raw_request("/v1/chat/completions" if chat else "/v1/completions", body)
            self.stop.wait(wait)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close = RST
            s.close()
            rec["outcome"] = "vanished"
        except OSError as e:
            self.fail_transport(rec, e)
        return rec

    def k_slow_reader(self, rng):
        body = {"messages": [{"role": "user", "content": self.user_prompt(rng)}], "max_tokens": 128,
                "stream": True, "logprobs": True, "top_logprobs": 10, "ignore_eos": True}
        rec = self.new_rec("slow_reader", "chat", True)
        t = now()
        buf = bytearray()
        try:
            s = self.raw_request("/v1/chat/completions", body, rcvbuf=4096)
            try:
                while True:
                    piece = s.recv(2048)
                    if not piece:
                        break
                    if not buf:
                        rec["ttfb"] = round(now() - t, 5)
                    buf += piece
                    if not self.hurry():  # once the run ends, read the rest at full speed
                        time.sleep(rng.uniform(0.05, 0.2))
            finally:
                s.close()
        except OSError as e:
            self.fail_transport(rec, e)
            return rec
        rec["latency"] = round(now() - t, 4)
        rec["bytes"] = len(buf)
        head, _, body_bytes = bytes(buf).partition(b"\r\n\r\n")
        m = re.match(rb"HTTP/1\.[01] (\d+)", head)
        if not m:
            rec.update(outcome="transport_error", error_message=f"no HTTP status line in {len(buf)} bytes")
            return rec
        rec["status"] = int(m.group(1))
        if b"chunked" in head.lower():
            body_bytes = dechunk(body_bytes)
        if not 200 <= rec["status"] < 300:
            self.set_http_error(rec, rec["status"], body_bytes)
            return rec
        events = [ln[5:].strip() for ln in body_bytes.split(b"\n") if ln.startswith(b"data:")]
        for e in events:
            if e.startswith(b"{") and b'"error"' in e[:20]:
                err = error_of(rec["status"], e)
                rec.update(outcome="stream_error", error_type=err["type"], error_code=err["code"], error_message=err["message"])
                return rec
        rec["chunks"] = len(events)
        if b"[DONE]" not in events:
            rec.update(outcome="stream_error", error_message=f"slow stream ended without [DONE] after {len(events)} events")
        else:
            rec["outcome"] = "ok"
        return rec

    def k_burst_one(self, barrier, rng):
        body = {"prompt": f"{rng.choice(WORDS)} {rng.choice(WORDS)}", "max_tokens": 4, "temperature": 0}
        try:
            barrier.wait(timeout=30)
        except threading.BrokenBarrierError:
            pass
        rec = self.new_rec(BURST, "completions", False)
        if self.post_json(rec, "/v1/completions", body, now()) is not None:
            rec["outcome"] = "ok"
        self.record(rec)
