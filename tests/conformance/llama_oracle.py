"""llama.cpp (through llama-cpp-python's low-level API) as the reference for logits and greedy decoding.

Settings that matter for the comparison, all llama.cpp defaults unless named here:
- CPU backend, the AVX2 build made by tools/setup_test_deps.sh (no AMX, no AVX-512);
- n_ctx 2048, n_batch = n_ubatch = 512, 2 threads;
- KV cache f16 (default type_k/type_v), flash attention off (what llama.cpp's CPU build resolves
  "auto" to for this model, as its load log says) unless a test asks otherwise;
- weights as stored (Q4_1 matmuls take Q8_1-quantized activations inside llama.cpp);
- every prompt position requests logits (batch.logits[i] = 1).
"""
import ctypes

import llama_cpp as lc
import numpy as np

_backend_ready = False
# Kept alive for the life of the process: llama.cpp calls it after the constructor returns.
_quiet_log = lc.llama_log_callback(lambda level, text, user: None)


class LlamaOracle:
    def __init__(self, model_path, n_ctx=2048, n_threads=2, flash_attn=None, kv_type=None):
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
        self.batch = lc.llama_batch_init(512, 0, 1)

    def close(self):
        lc.llama_batch_free(self.batch)
        lc.llama_free(self.ctx)
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
