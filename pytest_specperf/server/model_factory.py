"""Tiny model folders for smoke runs on a real GPU, generated locally (no download).

SGLang's ``--load-format dummy`` builds random weights from config.json alone, so a folder
with a config and a tokenizer is a servable model. The configurations follow the seed's
family: Qwen3-Next (hybrid linear/full attention, MoE, one MTP layer for NEXTN drafts) and a
dense Qwen3 of the same size (for NGRAM drafts, which stream several tokens per chunk even
with random weights). The tokenizer is a word-level vocabulary "w0".."w{N}" written as a
plain tokenizer.json, so generating it needs no tokenizer library.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_specperf.errors import ProfileError
from pytest_specperf.files import atomic_write_bytes

CACHE_ENV = "SPECPERF_MODEL_CACHE"
VOCAB_SIZE = 1024
_SPECIAL_TOKENS = ("[PAD]", "[BOS]", "[EOS]", "[UNK]")

_COMMON: dict[str, Any] = {
    "vocab_size": VOCAB_SIZE,
    "hidden_size": 512,
    "intermediate_size": 1024,
    "num_hidden_layers": 4,
    "num_attention_heads": 8,
    "num_key_value_heads": 2,
    "max_position_embeddings": 8192,
    "rms_norm_eps": 1e-6,
    "rope_theta": 10000000.0,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
    "hidden_act": "silu",
    "bos_token_id": 1,
    "eos_token_id": 2,
    "pad_token_id": 0,
}

# What every Qwen3-Next here has: the hybrid layout (full attention every 4th layer, partial
# rotary), the linear attention's convolution, MoE in every layer, and one MTP layer.
_QWEN3_NEXT: dict[str, Any] = {
    **_COMMON,
    "architectures": ["Qwen3NextForCausalLM"],
    "model_type": "qwen3_next",
    "full_attention_interval": 4,
    "partial_rotary_factor": 0.25,
    "linear_conv_kernel_dim": 4,
    "decoder_sparse_step": 1,
    "norm_topk_prob": True,
    "num_nextn_predict_layers": 1,
}


def tiny_qwen3_next_config() -> dict[str, Any]:
    return {
        **_QWEN3_NEXT,
        "head_dim": 128,
        "linear_key_head_dim": 64,
        "linear_value_head_dim": 64,
        "linear_num_key_heads": 4,
        "linear_num_value_heads": 8,
        "num_experts": 16,
        "num_experts_per_tok": 4,
        "moe_intermediate_size": 256,
        "shared_expert_intermediate_size": 256,
    }


def tiny_qwen3_config() -> dict[str, Any]:
    return {
        **_COMMON,
        "architectures": ["Qwen3ForCausalLM"],
        "model_type": "qwen3",
        "head_dim": 64,
    }


def qwen3_next_real_width_config() -> dict[str, Any]:
    """Qwen3-Next at its real width and depth, halved in experts.

    Qwen3-Next-80B-A3B's shape (hidden 2048, 48 layers with full attention every 4th,
    16 query / 2 KV heads of 256, linear attention 16 key / 32 value heads of 128, 10 routed
    experts of width 512 plus a shared one, one MTP layer) with 256 experts instead of 512.
    BF16 in the config; the profile has SGLang quantize it to FP8 at load. (A block-FP8
    ``quantization_config``, as in Qwen's FP8 checkpoints, does not boot with SGLang 0.5.12:
    the 32-wide linear-attention projection does not divide into 128-wide blocks.)
    """
    return {
        **_QWEN3_NEXT,
        "hidden_size": 2048,
        "intermediate_size": 5120,
        "num_hidden_layers": 48,
        "num_attention_heads": 16,
        "num_key_value_heads": 2,
        "head_dim": 256,
        "linear_key_head_dim": 128,
        "linear_value_head_dim": 128,
        "linear_num_key_heads": 16,
        "linear_num_value_heads": 32,
        "num_experts": 256,
        "num_experts_per_tok": 10,
        "moe_intermediate_size": 512,
        "shared_expert_intermediate_size": 512,
        "max_position_embeddings": 32768,
    }


FACTORIES: dict[str, Callable[[], dict[str, Any]]] = {
    "tiny-qwen3-next": tiny_qwen3_next_config,
    "tiny-qwen3": tiny_qwen3_config,
    "qwen3-next-real-width": qwen3_next_real_width_config,
}


def tokenizer_json() -> dict[str, Any]:
    words = [f"w{i}" for i in range(VOCAB_SIZE - len(_SPECIAL_TOKENS))]
    vocab = {token: index for index, token in enumerate((*_SPECIAL_TOKENS, *words))}
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {
                "id": vocab[token],
                "content": token,
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": False,
                "special": True,
            }
            for token in _SPECIAL_TOKENS
        ],
        "normalizer": None,
        "pre_tokenizer": {"type": "Whitespace"},
        "post_processor": None,
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "[UNK]"},
    }


def tokenizer_config() -> dict[str, Any]:
    return {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": "[BOS]",
        "eos_token": "[EOS]",
        "pad_token": "[PAD]",
        "unk_token": "[UNK]",
        "model_max_length": 8192,
        "clean_up_tokenization_spaces": False,
    }


def default_cache_dir() -> Path:
    configured = os.environ.get(CACHE_ENV)
    if configured:
        return Path(configured)
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "pytest-specperf"


def build_model(factory: str, cache_dir: Path | None = None) -> Path:
    """The model folder for ``factory``, written once (atomically per file) and reused."""
    if factory not in FACTORIES:
        known = ", ".join(sorted(FACTORIES))
        raise ProfileError(f"unknown model_factory {factory!r}; known: {known}")
    folder = (cache_dir or default_cache_dir()) / "models" / factory
    files = {
        "config.json": FACTORIES[factory](),
        "tokenizer.json": tokenizer_json(),
        "tokenizer_config.json": tokenizer_config(),
        "special_tokens_map.json": {
            "bos_token": "[BOS]",
            "eos_token": "[EOS]",
            "pad_token": "[PAD]",
            "unk_token": "[UNK]",
        },
        "generation_config.json": {"bos_token_id": 1, "eos_token_id": 2, "do_sample": False},
    }
    for name, content in files.items():
        payload = (json.dumps(content, indent=1, sort_keys=True) + "\n").encode()
        target = folder / name
        if not target.exists() or target.read_bytes() != payload:
            atomic_write_bytes(target, payload)
    return folder
