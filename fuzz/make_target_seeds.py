"""Writes the seed inputs of the text and KV fuzz targets: fuzz/corpus/<target>/seed_* (gguf_fuzz's
seeds come from make_seeds.py). Each seed starts with the selector byte(s) its target reads (see the
comment at the top of fuzz/<target>.cc); most are valid inputs, a few are near misses.

Usage: python3 fuzz/make_target_seeds.py [fuzz/corpus]"""
import json
import os
import struct
import sys


def j(value):
    return json.dumps(value, separators=(",", ":")).encode()


WEATHER_TOOL = {"type": "function", "function": {"name": "get_weather", "description": "Weather in a city",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}
SCHEMA = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 8},
          "age": {"type": "integer", "minimum": 0}, "tags": {"type": "array", "items": {"enum": ["a", "b"]}}},
          "required": ["name"], "additionalProperties": False}


def openai_request():
    completions, chat, messages, count, responses = b"\x00", b"\x01", b"\x02", b"\x03", b"\x04"
    return {
        "completions": completions + j({"model": "m", "prompt": "Hello", "max_tokens": 16, "temperature": 0.7,
                                        "top_p": 0.9, "stop": ["\n"], "logprobs": 2, "echo": True, "n": 2, "seed": 1}),
        "completions_tokens": completions + j({"prompt": [[1, 2, 3], [4, 5]], "prompt_logprobs": 1, "max_tokens": 1,
                                               "guided_regex": "[a-z]+"}),
        "chat_tools": chat + j({"messages": [{"role": "developer", "content": "Be brief."},
                                             {"role": "user", "content": [{"type": "text", "text": "Weather?"}]}],
                                "tools": [WEATHER_TOOL], "tool_choice": "auto", "parallel_tool_calls": False,
                                "stream": True, "stream_options": {"include_usage": True}}),
        "chat_history": chat + j({"messages": [
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
                                                                  "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "sunny"}], "tools": [WEATHER_TOOL],
            "tool_choice": {"type": "function", "function": {"name": "get_weather"}}, "logit_bias": {"42": -100},
            "chat_template_kwargs": {"enable_thinking": False}, "reasoning_format": "deepseek"}),
        "chat_schema": chat + j({"messages": [{"role": "user", "content": [{"type": "text", "text": "JSON please"}]}],
                                 "response_format": {"type": "json_schema", "json_schema": {"name": "p", "schema": SCHEMA}},
                                 "whitespace": "flexible", "max_completion_tokens": 64, "top_logprobs": 3, "logprobs": True}),
        "chat_guided": chat + j({"messages": [{"role": "user", "content": "pick"}],
                                 "structured_outputs": {"choice": ["yes", "no"]}, "min_p": 0.1, "top_k": 40,
                                 "repetition_penalty": 1.1, "ignore_eos": False, "jump_forward": True}),
        "chat_grammar": chat + j({"messages": [{"role": "user", "content": "x"}], "grammar": "root ::= \"a\"+",
                                  "reasoning_budget": 32, "user": "u", "frequency_penalty": 0.5, "presence_penalty": -0.5}),
        "chat_bad_n": chat + j({"messages": [{"role": "user", "content": "hi"}], "n": 0}),
        "messages": messages + j({"model": "m", "max_tokens": 64, "system": [{"type": "text", "text": "Be brief."}],
                                  "messages": [{"role": "user", "content": "Weather?"},
                                               {"role": "assistant", "content": [
                                                   {"type": "thinking", "thinking": "...", "signature": "s"},
                                                   {"type": "tool_use", "id": "t1", "name": "get_weather", "input": {"city": "Paris"}}]},
                                               {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "sunny"}]}],
                                  "tools": [{"name": "get_weather", "description": "d",
                                             "input_schema": WEATHER_TOOL["function"]["parameters"]}],
                                  "tool_choice": {"type": "auto", "disable_parallel_tool_use": True},
                                  "thinking": {"type": "enabled", "budget_tokens": 1024}, "stop_sequences": ["END"],
                                  "temperature": 1, "top_k": 5, "stream": True}),
        "count_tokens": count + j({"model": "m", "messages": [{"role": "user", "content": "How many tokens?"}],
                                   "tool_choice": {"type": "any"}, "tools": [{"name": "f", "input_schema": {"type": "object"}}]}),
        "responses": responses + j({"model": "m", "instructions": "Be brief.", "input": "Hello", "max_output_tokens": 32,
                                    "text": {"format": {"type": "json_schema", "name": "p", "schema": SCHEMA, "strict": True}},
                                    "store": False, "temperature": 0.2, "metadata": {"k": "v"}}),
        "responses_previous": responses + j({"previous_response_id": "resp_fuzz", "input": [
            {"type": "function_call_output", "call_id": "call_fuzz", "output": "rain"},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "And tomorrow?"}]},
            {"type": "reasoning", "summary": []}],
            "tools": [{"type": "function", "name": "get_weather", "parameters": WEATHER_TOOL["function"]["parameters"]}],
            "tool_choice": {"type": "function", "name": "get_weather"}, "parallel_tool_calls": True}),
        "responses_missing": responses + j({"previous_response_id": "resp_nope", "input": [{"role": "user", "content": "x"}]}),
    }


def openai_request_swaps():
    # Bit 7 of byte 0: byte 1 picks a value (null, 0, -1, 1.5, "x", [], {}, true) that replaces each
    # value of the (valid) body in turn; the seeds pick "x".
    seeds = openai_request()
    return {"swap_" + name: bytes([seeds[name][0] | 0x80, 4]) + seeds[name][1:]
            for name in ("completions", "chat_tools", "chat_schema", "chat_guided", "messages", "responses", "responses_previous")}


def grammar():
    schema, regex, gbnf = 0, 1, 2
    flexible, spaced = 3, 6
    return {
        "schema": bytes([schema]) + j(SCHEMA) + b"\x00" + b'{"name":"ab","age":3}',
        "schema_flexible": bytes([schema + flexible]) + j({"type": "array", "items": {"type": "number"}, "maxItems": 3}) + b"\x00\x05\x10\x20",
        "schema_refs": bytes([schema + spaced]) + j({"$defs": {"n": {"anyOf": [{"type": "null"}, {"type": "array", "items": {"$ref": "#/$defs/n"}, "maxItems": 2}]}},
                                                      "type": "object", "properties": {"x": {"$ref": "#/$defs/n"},
                                                      "s": {"type": "string", "pattern": "^[a-c]{2,4}$", "format": "date"},
                                                      "m": {"type": "number", "multipleOf": 0.5, "exclusiveMaximum": 10}},
                                                      "patternProperties": {"^y": {"const": 1}}, "minProperties": 1}),
        "schema_oneof": bytes([schema]) + j({"oneOf": [{"type": "string", "enum": ["x", "y"]}, {"type": "boolean"},
                                                       {"allOf": [{"type": "integer"}, {"not": {"const": 0}}]}]}),
        "schema_bad": bytes([schema]) + b'{"type": "object", "properties": {"a": {"$ref": "http://x/y"}}}',
        "regex": bytes([regex]) + rb"^(\d{3})-[A-Fa-f0-9]+(?:x|y)*\.?\w\s?[^\n]{0,2}$" + b"\x00123-af",
        "regex_unicode": bytes([regex]) + "[α-ω]+|\\u00e9{2}|.\\S?".encode() + b"\x00\x01\x02",
        "regex_bad": bytes([regex]) + rb"(a)\1(?=b)",
        "gbnf": bytes([gbnf]) + b'root ::= "{" ws pair ("," ws pair)* "}"\npair ::= key ":" ws value\n'
                                b'key ::= "\\"" [a-z]+ "\\""\nvalue ::= [0-9]{1,3} | "true" | key\nws ::= [ \\t\\n]*\n'
                                b'# comment\n\x00{"a":1}',
        "gbnf_escapes": bytes([gbnf]) + b'root ::= ([^"\\\\\\x00-\\x1F] | "\\\\" ["\\\\/bfnrt] | "\\u00e9" | "\\U0001F600")* "." ?\n\x00\xff\x80',
        "gbnf_left_recursive": bytes([gbnf]) + b"root ::= root \"a\" | \"b\"\n",
    }


def reasoning():
    def seed(flags, cuts, text, name=b""):
        out = bytes([flags, len(cuts)]) + bytes(cuts)
        if (flags >> 1) & 3 == 3:
            out += bytes([len(name) - 1]) + name
        return out + text
    return {
        "think": seed(0, [3, 9, 20], b"  <think>\nLet me see. 2+2=4\n</think>\n\nThe answer is 4."),
        "open": seed(1 | 8, [1, 2, 30], b"\nreasoning here  </thi" + b"nk>  answer"),
        "no_tags": seed(0, [5], b"Just an answer with </think> inside."),
        "command_r": seed(2, [10, 11], b"<|START_THINKING|>plan<|END_THINKING|>done"),
        "custom": seed(6 | 8, [4, 4, 7], b"<r> a < /r> </r> b", b"r"),
        "unclosed": seed(0, [2], b"<think> still thinking   "),
    }


def chat_template():
    def conv(*messages):
        return b"\x01".join(messages)
    user, system, assistant, tool = b"\x01", b"\x00", b"\x02", b"\x03"
    c = conv(system + b"Be brief.", user + b"Hi  ", assistant + b"call get_weather", tool + b"sunny", user + b"thanks")
    return {
        "chatml": b"{% for message in messages %}{% if loop.first and message['role'] != 'system' %}"
                  b"{{ '<|im_start|>system\\nYou are a helpful AI assistant named SmolLM<|im_end|>\\n' }}{% endif %}"
                  b"{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}"
                  b"\x00" + c,
        "llama3": b"{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' + message['content'] | trim + '<|eot_id|>' }}"
                  b"\x00" + conv(user + b" hello ", b"\x05custom:role text"),
        "mistral": b"{{ bos_token }}{% for m in messages %}[INST] {{ m['content'] }} [/INST]{% endfor %}\x00" + c,
        "gemma": b"<start_of_turn>user\n{{ content }}<end_of_turn>\x00" + conv(system + b"sys", user + b"u"),
        "phi3": b"<|user|>\n{{ message['content'] }}<|end|>\n<|assistant|>\x00" + conv(user + b"x"),
        "name": b"deepseek3\x00" + c,
        "unknown": b"{{ messages }}\x00" + conv(user + b"y"),
    }


def safetensors():
    def file(header, data=b""):
        h = j(header)
        return b"\x00" + struct.pack("<Q", len(h)) + h + data
    return {
        "file": file({"__metadata__": {"format": "pt"}, "a": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]},
                      "b": {"dtype": "BF16", "shape": [3], "data_offsets": [16, 22]},
                      "c": {"dtype": "U8", "shape": [0], "data_offsets": [22, 22]}}, bytes(range(22))),
        "file_hole": file({"a": {"dtype": "F16", "shape": [1], "data_offsets": [2, 4]}}, b"\x00" * 4),
        "file_dtypes": file({n: {"dtype": d, "shape": [1], "data_offsets": [i * 8, i * 8 + s]}
                             for i, (n, d, s) in enumerate([("x", "F64", 8), ("y", "I64", 8), ("z", "F8_E4M3", 1)])},
                            b"\x00" * 17),
        "config": b"\x01" + j({"model_type": "llama", "vocab_size": 32000, "hidden_size": 512, "num_hidden_layers": 2,
                               "num_attention_heads": 8, "num_key_value_heads": 4, "intermediate_size": 1024,
                               "max_position_embeddings": 4096, "rms_norm_eps": 1e-5, "rope_theta": 500000.0,
                               "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                                "high_freq_factor": 4.0, "original_max_position_embeddings": 8192},
                               "tie_word_embeddings": True, "hidden_act": "silu", "head_dim": None}),
        "config_qwen": b"\x01" + j({"model_type": "qwen2", "vocab_size": 151936, "hidden_size": 896, "num_hidden_layers": 24,
                                    "num_attention_heads": 14, "num_key_value_heads": 2, "intermediate_size": 4864,
                                    "rope_scaling": {"type": "linear", "factor": 2}, "mlp_bias": False}),
        "index": b"\x02" + j({"metadata": {"total_size": 18}, "weight_map": {"x": "a.safetensors", "y": "a.safetensors",
                                                                             "z": "b.safetensors"}}),
        "index_escape": b"\x02" + j({"weight_map": {"x": "../a.safetensors"}}),
    }


def kv_tier():
    def block(flags, where, identity_len, block_size, hash_, parent, tokens, payload, checksum=0):
        identity = b"model:0123456789abcdef/kv:f16/layers:32/heads:8x128/block:16/x"[:identity_len]
        head = b"RIDGEKVB" + struct.pack("<IIII", 1, len(identity), block_size, 0) + struct.pack("<QQQ", len(payload), hash_, parent)
        head += identity + struct.pack(f"<{block_size}i", *tokens)
        head += b"\x00" * (-len(head) % 64)
        return bytes([flags, where]) + head + payload + struct.pack("<Q", checksum)
    return {
        # flags: block size 1 + bits 0-2, identity bits 3-4 (0, 5, 17, 60 bytes), 32: fix the checksum, 64: write test.
        "fixed": block(32 | 3 | (1 << 3), 0, 5, 4, 0x1234, 0x42, [1, 2, 3, 4], bytes(range(40))),
        "fixed_long_identity": block(32 | 64 | 7 | (3 << 3), 7, 60, 8, 1, 0, list(range(8)), b"\xab" * 96),
        "bad_checksum": block(0 | (2 << 3), 3, 17, 1, 5, 6, [7], b"payload!"),
        "empty_payload": block(32 | 64, 0xff, 0, 1, 0, 0, [0], b""),
        "short": b"\x00\x00RIDGEKVB\x01\x00",
    }


def kv_transfer():
    pool = {"model": "0123456789abcdef", "n_layer": 2, "n_kv_heads": 2, "head_dim": 64, "block_size": 16,
            "dtype": "f16", "keys_only": False, "n_blocks": 100}
    return {
        "base64": b"\x00UkNYMQAAAAAAAAAAaG9zdA==",
        "base64_bad": b"\x00QQ=a",
        "note": b"\x01" + j({"transfer_id": "abcd1234-7", "ok": True}),
        "note_bad": b"\x01" + j({"transfer_id": 7}),
        "pool": b"\x02" + j({"transfer_id": "t", "tokens": [1, 2, 3], "first_position": 0, "blocks": [4],
                             "peer": "UkNYMQ==", "pool": pool}),
        "pool_other": b"\x02" + j({"pool": dict(pool, dtype="q8_0", n_blocks=0)}),
    }


def tokenizer():
    # Byte 0: bit 0 SPM, bits 1-3 the BPE pre-tokenizer (0 default, 1 GPT-2, 2 Llama 3, 3 Qwen 2,
    # 4 SmolLM), bit 4 ignore_merges, bit 5 parse special tokens.
    return {
        "bpe_gpt2": b"\x02Hello lower world, low lowest 123 4567!",
        "bpe_llama3": b"\x04It's 2024\r\n  tabs\tand   spaces \xc3\xa9t\xc3\xa9",
        "bpe_qwen2_special": b"\x26<|im_start|>user\nhi<|im_end|><tool>x</tool>",
        "bpe_smollm_digits": b"\x08 999999 x 3.14159e10",
        "bpe_default_ignore": b"\x10lower lowerer ...!!! ???",
        "spm_hello": b"\x01hello world  hello",
        "spm_bytes": b"\x01\xe4\xbd\xa0\xe5\xa5\xbd \xf0\x9f\x98\x80 \xc3\xa9!",
        "spm_special": b"\x21<s>hello</s> <unk>",
        "invalid_utf8": b"\x02a\xff\xfe\xc3(b\xe2\x82",
    }


def embedding_files():
    # Byte 0 (% 3): 0 a tokenizer.json, 1 text for a fixed WordPiece tokenizer, 2 a sentence-transformers
    # pipeline (modules.json, 1_Pooling/config.json, config_sentence_transformers.json split at NUL bytes).
    vocab = {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "the": 4, "##s": 5, "a": 6, ".": 7}
    tokenizer_json = {"model": {"type": "WordPiece", "unk_token": "[UNK]", "vocab": vocab},
                      "normalizer": {"type": "BertNormalizer", "lowercase": True},
                      "pre_tokenizer": {"type": "BertPreTokenizer"},
                      "post_processor": {"type": "BertProcessing", "cls": ["[CLS]", 2], "sep": ["[SEP]", 3]},
                      "added_tokens": [{"id": 3, "content": "[SEP]", "special": True}],
                      "decoder": {"type": "WordPiece", "prefix": "##"}}
    modules = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
               {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}]
    pooling = {"word_embedding_dimension": 16, "pooling_mode_mean_tokens": True}
    prompts = {"prompts": {"query": "query: ", "document": ""}, "default_prompt_name": None}
    return {
        "tokenizer_json": b"\x00" + j(tokenizer_json),
        "tokenizer_json_sequence": b"\x00" + j({**tokenizer_json, "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "NFD"}, {"type": "Lowercase"}, {"type": "StripAccents"}]}}),
        "tokenizer_json_bpe": b"\x00" + j({**tokenizer_json, "model": {"type": "BPE", "vocab": vocab, "merges": []}}),
        "text": b"\x01The abs, a.b [SEP] na\xc3\xafve caf\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87 " + b"x" * 120,
        "text_controls": b"\x01\x00\x07tab\there\r\nline \xe2\x80\x8b\xef\xbf\xbd",
        "pipeline": b"\x02" + j(modules) + b"\x00" + j(pooling) + b"\x00" + j(prompts),
        "pipeline_cls": b"\x02" + j(modules[:2]) + b"\x00" + j({"pooling_mode_cls_token": True}) + b"\x00{}",
        "pipeline_unknown_module": b"\x02" + j([{"path": "", "type": "x.Unknown"}]) + b"\x00{}\x00{}",
        "sentencepiece_model": b"\x03" + sentencepiece_model(),
    }


def sentencepiece_model():
    """A ModelProto of a few pieces: field 1 (pieces) {1: piece, 2: score (f32), 3: type}."""
    def field(number, wire, payload):
        return bytes([number << 3 | wire]) + payload

    def length_delimited(number, payload):
        return field(number, 2, bytes([len(payload)]) + payload)

    out = b""
    for text, score, kind in [("<unk>", 0.0, 2), ("<s>", 0.0, 3), ("</s>", 0.0, 3), ("\u2581Hello", -1.0, 1),
                              ("\u2581world", -2.0, 1), ("l", -3.0, 1), ("o", -3.5, 1), ("<0x41>", 0.0, 6)]:
        piece = length_delimited(1, text.encode()) + field(2, 5, struct.pack("<f", score)) + field(3, 0, bytes([kind]))
        out += length_delimited(1, piece)
    out += length_delimited(2, field(3, 0, bytes([2])))  # trainer_spec.model_type = BPE
    return out + length_delimited(3, field(4, 0, bytes([0])))  # normalizer_spec.remove_extra_whitespaces = false


TARGETS = {"openai_request_fuzz": lambda: {**openai_request(), **openai_request_swaps()}, "grammar_fuzz": grammar, "reasoning_fuzz": reasoning,
           "chat_template_fuzz": chat_template, "safetensors_fuzz": safetensors, "kv_tier_fuzz": kv_tier,
           "kv_transfer_fuzz": kv_transfer, "tokenizer_fuzz": tokenizer,
           "embedding_files_fuzz": embedding_files}


def main(root):
    for target, seeds in TARGETS.items():
        out = os.path.join(root, target)
        os.makedirs(out, exist_ok=True)
        for name, data in seeds().items():
            with open(os.path.join(out, "seed_" + name), "wb") as f:
                f.write(data)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus"))
