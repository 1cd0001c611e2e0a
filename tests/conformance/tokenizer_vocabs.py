"""Vocab-only GGUF files for the tokenizer conformance test, written with the gguf package.

* bpe_variant: SmolLM2's tokens and merges under another `tokenizer.ggml.pre`, so each
  pre-tokenizer is checked against llama.cpp on a real-sized vocabulary.
* spm_vocab: a SentencePiece-style ("llama") vocabulary: <unk>/<s>/</s>, 256 <0xXX> byte
  tokens, pieces with "▁" for spaces scored by rank, plus control and user-defined tokens.
"""
import gguf

# Token types (gguf.TokenType): NORMAL=1, UNKNOWN=2, CONTROL=3, USER_DEFINED=4, BYTE=6.


def _add_minimal_llama_hparams(w):
    # What llama.cpp reads from a llama-architecture file even when loading only the vocabulary.
    w.add_context_length(2048)
    w.add_embedding_length(64)
    w.add_block_count(1)
    w.add_feed_forward_length(128)
    w.add_head_count(4)
    w.add_head_count_kv(4)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_dimension_count(16)


def _write(w, path):
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def _smollm_vocab(model_path):
    r = gguf.GGUFReader(model_path)
    tokens = [bytes(r.fields["tokenizer.ggml.tokens"].parts[i]).decode("utf-8")
              for i in r.fields["tokenizer.ggml.tokens"].data]
    merges = [bytes(r.fields["tokenizer.ggml.merges"].parts[i]).decode("utf-8")
              for i in r.fields["tokenizer.ggml.merges"].data]
    types = [int(r.fields["tokenizer.ggml.token_type"].parts[i][0]) for i in r.fields["tokenizer.ggml.token_type"].data]
    return tokens, merges, types


def bpe_variant(model_path, out_path, pre, add_bos=False):
    tokens, merges, types = _smollm_vocab(model_path)
    w = gguf.GGUFWriter(str(out_path), "llama")
    _add_minimal_llama_hparams(w)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre(pre)
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_add_bos_token(add_bos)
    _write(w, out_path)


def _byte_decoder():
    # Inverse of the GPT-2 byte -> codepoint map.
    bs = list(range(0x21, 0x7F)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs)}


def spm_vocab(model_path, out_path, add_eos=False):
    """Pieces are SmolLM2's tokens turned back into text ("▁" for space); score = -rank."""
    tokens, _, types = _smollm_vocab(model_path)
    dec = _byte_decoder()
    pieces, seen = [], set()
    for tok, typ in zip(tokens, types):
        if typ != 1:
            continue
        try:
            text = bytes(dec[c] for c in tok).decode("utf-8")
        except (KeyError, UnicodeDecodeError):
            continue
        text = text.replace(" ", "\u2581")
        if text and text not in seen and not (text.startswith("<0x") and text.endswith(">")):
            seen.add(text)
            pieces.append(text)
    vocab = [("<unk>", 0.0, 2), ("<s>", 0.0, 3), ("</s>", 0.0, 3)]
    vocab += [(f"<0x{b:02X}>", 0.0, 6) for b in range(256)]
    vocab += [(p, -float(i), 1) for i, p in enumerate(pieces)]
    vocab += [("<|im_start|>", 0.0, 3), ("<|im_end|>", 0.0, 3), ("<tool_call>", 0.0, 4), ("</tool_call>", 0.0, 4)]
    w = gguf.GGUFWriter(str(out_path), "llama")
    _add_minimal_llama_hparams(w)
    w.add_tokenizer_model("llama")
    w.add_token_list([t for t, _, _ in vocab])
    w.add_token_scores([s for _, s, _ in vocab])
    w.add_token_types([t for _, _, t in vocab])
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_unk_token_id(0)
    w.add_add_bos_token(True)
    w.add_add_eos_token(add_eos)
    _write(w, out_path)
