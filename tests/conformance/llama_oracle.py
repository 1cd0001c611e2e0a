"""llama.cpp (through llama-cpp-python's low-level API) as the reference for logits and greedy decoding.

Settings that matter for the comparison, all llama.cpp defaults unless named here:
- CPU backend, the AVX2 build made by tools/setup_test_deps.sh (no AMX, no AVX-512);
- n_ctx 2048, n_batch = n_ubatch = 512, 2 threads;
- KV cache f16 (default type_k/type_v), flash attention off (what llama.cpp's CPU build resolves
  "auto" to for this model, as its load log says) unless a test asks otherwise;
- weights as stored (Q4_1 matmuls take Q8_1-quantized activations inside llama.cpp);
- every prompt position requests logits (batch.logits[i] = 1);
- with `lora` (a GGUF LoRA file as convert_lora_to_gguf.py writes it): the adapter applied to every token through
  llama_adapter_lora_init + llama_set_adapters_lora, at llama.cpp's scale lora_scale * alpha / rank (alpha from
  the file's adapter.lora.alpha; llama.cpp knows nothing of rsLoRA, see tools/make_lora_adapters.py).
"""
import ctypes

import llama_cpp as lc
import numpy as np

_backend_ready = False
# Kept alive for the life of the process: llama.cpp calls it after the constructor returns.
_quiet_log = lc.llama_log_callback(lambda level, text, user: None)


class LlamaOracle:
    def __init__(self, model_path, n_ctx=2048, n_threads=2, flash_attn=None, kv_type=None, lora=None, lora_scale=1.0):
        global _backend_ready
        if not _backend_ready:
            lc.llama_backend_init()
            lc.llama_log_set(_quiet_log, ctypes.c_void_p(0))
            _backend_ready = True
        params = lc.llama_model_default_params()
        self.model = lc.llama_model_load_from_file(model_path.encode(), params)
        assert self.model, f"llama.cpp could not load {model_path}"
        self.vocab = lc.llama_model_get_vocab(self.model)
        self.n_vocab = lc.llama_vocab_n_tokens(self.vocab)
        cparams = lc.llama_context_default_params()
        cparams.n_ctx = n_ctx
        cparams.n_batch = 512
        cparams.n_ubatch = 512
        cparams.n_threads = n_threads
        cparams.n_threads_batch = n_threads
        if flash_attn is not None:
            cparams.flash_attn_type = lc.LLAMA_FLASH_ATTN_TYPE_ENABLED if flash_attn else lc.LLAMA_FLASH_ATTN_TYPE_DISABLED
        if kv_type is not None:
            cparams.type_k = cparams.type_v = kv_type
        self.ctx = lc.llama_init_from_model(self.model, cparams)
        assert self.ctx, "llama.cpp could not create a context"
        self._adapters = {}  # path -> llama_adapter_lora pointer, loaded once, freed by close()
        self.lora = None
        if lora is not None:
            self.set_lora(lora, lora_scale)
        self.batch = lc.llama_batch_init(512, 0, 1)

    def set_lora(self, lora, lora_scale=1.0):
        """Applies the GGUF LoRA file `lora` at `lora_scale` to what follows (None: the base model again)."""
        if lora is None:
            rc = lc.llama_set_adapters_lora(self.ctx, None, 0, None)
            assert rc == 0, f"llama_set_adapters_lora (clear) failed with {rc}"
            self.lora = None
            return
        key = str(lora)
        if key not in self._adapters:
            adapter = lc.llama_adapter_lora_init(self.model, key.encode())
            assert adapter, f"llama.cpp could not load the LoRA adapter {lora}"
            self._adapters[key] = adapter
        adapters = (lc.llama_adapter_lora_p_ctypes * 1)(self._adapters[key])
        scales = (ctypes.c_float * 1)(lora_scale)
        rc = lc.llama_set_adapters_lora(self.ctx, adapters, 1, scales)
        assert rc == 0, f"llama_set_adapters_lora failed with {rc}"
        self.lora = (key, lora_scale)

    def close(self):
        lc.llama_batch_free(self.batch)
        lc.llama_free(self.ctx)
        for adapter in self._adapters.values():
            lc.llama_adapter_lora_free(adapter)
        self._adapters = {}
        lc.llama_model_free(self.model)

    def _clear(self):
        lc.llama_memory_clear(lc.llama_get_memory(self.ctx), True)

    def _decode(self, ids, start_pos, all_logits):
        b = self.batch
        for i, t in enumerate(ids):
            b.token[i] = t
            b.pos[i] = start_pos + i
            b.n_seq_id[i] = 1
            b.seq_id[i][0] = 0
            b.logits[i] = 1 if (all_logits or i == len(ids) - 1) else 0
        b.n_tokens = len(ids)
        rc = lc.llama_decode(self.ctx, b)
        assert rc == 0, f"llama_decode failed with {rc}"
        n_out = len(ids) if all_logits else 1
        ptr = lc.llama_get_logits(self.ctx)
        return np.ctypeslib.as_array(ptr, shape=(n_out, self.n_vocab)).astype(np.float64)

    def logits(self, ids):
        """Next-token logits at every position of `ids`: (len(ids), n_vocab)."""
        self._clear()
        rows = []
        for start in range(0, len(ids), 512):
            rows.append(self._decode(ids[start:start + 512], start, True))
        return np.concatenate(rows)

    def greedy(self, ids, n_tokens):
        """Argmax continuation of `n_tokens` tokens (end-of-generation tokens are not special)."""
        self._clear()
        last = self._decode(ids, 0, False)[-1]
        out = []
        for step in range(n_tokens):
            token = int(np.argmax(last))
            out.append(token)
            last = self._decode([token], len(ids) + step, False)[-1]
        return out
