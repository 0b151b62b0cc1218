"""Load a llama-architecture GGUF file (SmolLM2, Llama, ...) into a torch model and a
``tokenizers`` tokenizer, in a few seconds.

Why not ``transformers``' own GGUF support: it parses the file three times with the
``gguf`` package's reader (slow on a 49k-token vocabulary) and rebuilds a tensor-name
map per tensor, which took about 50 s for SmolLM2-135M on two cores. Here the file is
read once with a minimal parser (the format is a header, typed key/value pairs and a
table of tensors); only the tensor data goes through ``gguf.quants.dequantize``.

Only what a llama-style decoder needs is supported (the ``llama`` architecture and a
byte-level BPE vocabulary, ``tokenizer.ggml.model == "gpt2"``); anything else raises
:class:`GGUFError` naming what the file holds.
"""

from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

_ALIGNMENT = 32
#: GGUF metadata value types -> struct format (strings and arrays handled apart)
_SCALARS = {
    0: "<B",
    1: "<b",
    2: "<H",
    3: "<h",
    4: "<I",
    5: "<i",
    6: "<f",
    7: "<?",
    10: "<Q",
    11: "<q",
    12: "<d",
}
_STRING, _ARRAY = 8, 9


class GGUFError(ValueError):
    """The file is not a GGUF this loader understands; the message says what it holds."""


@dataclass(frozen=True)
class TensorInfo:
    name: str
    shape: tuple[int, ...]  # numpy / torch order (GGUF stores the innermost dim first)
    qtype: int
    offset: int


@dataclass(frozen=True)
class GGUFFile:
    path: Path
    metadata: dict[str, Any]
    tensors: dict[str, TensorInfo]
    data_start: int


class _Cursor:
    def __init__(self, buffer: memoryview):
        self.buffer, self.pos = buffer, 0

    def unpack(self, fmt: str) -> Any:
        value = struct.unpack_from(fmt, self.buffer, self.pos)[0]
        self.pos += struct.calcsize(fmt)
        return value

    def string(self) -> str:
        length = self.unpack("<Q")
        raw = bytes(self.buffer[self.pos : self.pos + length])
        self.pos += length
        return raw.decode("utf-8", errors="replace")

    def value(self, kind: int) -> Any:
        if kind in _SCALARS:
            return self.unpack(_SCALARS[kind])
        if kind == _STRING:
            return self.string()
        if kind == _ARRAY:
            item_kind, count = self.unpack("<I"), self.unpack("<Q")
            if item_kind in _SCALARS and item_kind != 7:
                dtype = np.dtype(_SCALARS[item_kind])
                values = np.frombuffer(self.buffer, dtype=dtype, count=count, offset=self.pos)
                self.pos += dtype.itemsize * count
                return values.tolist()
            return [self.value(item_kind) for _ in range(count)]
        raise GGUFError(f"unknown GGUF value type {kind} at byte {self.pos}")


def read_gguf(path: Path) -> GGUFFile:
    """Parse the header, metadata and tensor table of ``path`` (tensor data stays on disk)."""
    with open(path, "rb") as handle:
        head = handle.read(4)
        if head != b"GGUF":
            raise GGUFError(f"{path} is not a GGUF file (it starts with {head!r})")
        # mapped, not read: only the header pages are touched, not the tensor data
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            view = memoryview(mapped)
            try:
                return _parse(path, _Cursor(view))
            finally:
                view.release()


def _parse(path: Path, cursor: _Cursor) -> GGUFFile:
    cursor.pos = 4
    version = cursor.unpack("<I")
    if version < 2:
        raise GGUFError(f"{path} is GGUF version {version}; versions 2 and 3 are supported")
    n_tensors, n_kv = cursor.unpack("<Q"), cursor.unpack("<Q")
    metadata: dict[str, Any] = {}
    for _ in range(n_kv):
        key = cursor.string()
        metadata[key] = cursor.value(cursor.unpack("<I"))
    tensors: dict[str, TensorInfo] = {}
    for _ in range(n_tensors):
        name = cursor.string()
        dims = [cursor.unpack("<Q") for _ in range(cursor.unpack("<I"))]
        qtype, offset = cursor.unpack("<I"), cursor.unpack("<Q")
        tensors[name] = TensorInfo(name, tuple(reversed(dims)), qtype, offset)
    alignment = int(metadata.get("general.alignment", _ALIGNMENT))
    data_start = -(-cursor.pos // alignment) * alignment
    return GGUFFile(Path(path), metadata, tensors, data_start)


def _dequantize(file: GGUFFile, info: TensorInfo, blob: np.ndarray) -> np.ndarray:
    from gguf import GGML_QUANT_SIZES, GGMLQuantizationType
    from gguf.quants import dequantize

    qtype = GGMLQuantizationType(info.qtype)
    block, type_size = GGML_QUANT_SIZES[qtype]
    n_elements = int(np.prod(info.shape))
    n_bytes = n_elements // block * type_size
    start = file.data_start + info.offset
    data = blob[start : start + n_bytes]
    if qtype in (GGMLQuantizationType.F32, GGMLQuantizationType.F16, GGMLQuantizationType.BF16):
        rows = data
    else:
        rows = data.reshape(-1, info.shape[-1] // block * type_size)
    return np.asarray(dequantize(rows, qtype), dtype=np.float32).reshape(info.shape)


def _unpermute(weights: np.ndarray, n_head: int) -> np.ndarray:
    """Undo the rotary row interleaving llama.cpp's converter applies to q/k weights."""
    dim = weights.shape[0] // n_head // 2
    return weights.reshape(n_head, dim, 2, *weights.shape[1:]).swapaxes(2, 1).reshape(weights.shape)


_LAYER_NAMES = {
    "attn_norm": "input_layernorm",
    "attn_q": "self_attn.q_proj",
    "attn_k": "self_attn.k_proj",
    "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj",
    "ffn_norm": "post_attention_layernorm",
    "ffn_gate": "mlp.gate_proj",
    "ffn_up": "mlp.up_proj",
    "ffn_down": "mlp.down_proj",
}
_GLOBAL_NAMES = {
    "token_embd.weight": "model.embed_tokens.weight",
    "output_norm.weight": "model.norm.weight",
    "output.weight": "lm_head.weight",
}


def _hf_name(name: str) -> str | None:
    if name in _GLOBAL_NAMES:
        return _GLOBAL_NAMES[name]
    parts = name.split(".")
    if len(parts) == 4 and parts[0] == "blk" and parts[2] in _LAYER_NAMES:
        return f"model.layers.{parts[1]}.{_LAYER_NAMES[parts[2]]}.{parts[3]}"
    return None


def load_llama(path: Path) -> tuple[Any, Any, GGUFFile]:
    """The torch ``LlamaForCausalLM`` (eval mode, float32) and the ``tokenizers``
    tokenizer of the GGUF file at ``path``."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    file = read_gguf(path)
    meta = file.metadata
    arch = meta.get("general.architecture")
    if arch != "llama":
        raise GGUFError(
            f"{path} holds a {arch!r} model; only the 'llama' architecture is supported"
        )
    tokens = meta.get("tokenizer.ggml.tokens") or []
    config = LlamaConfig(
        vocab_size=len(tokens),
        hidden_size=int(meta["llama.embedding_length"]),
        intermediate_size=int(meta["llama.feed_forward_length"]),
        num_hidden_layers=int(meta["llama.block_count"]),
        num_attention_heads=int(meta["llama.attention.head_count"]),
        num_key_value_heads=int(
            meta.get("llama.attention.head_count_kv", meta["llama.attention.head_count"])
        ),
        max_position_embeddings=int(meta.get("llama.context_length", 2048)),
        rms_norm_eps=float(meta.get("llama.attention.layer_norm_rms_epsilon", 1e-5)),
        rope_theta=float(meta.get("llama.rope.freq_base", 10000.0)),
        tie_word_embeddings="output.weight" not in file.tensors,
        bos_token_id=meta.get("tokenizer.ggml.bos_token_id"),
        eos_token_id=meta.get("tokenizer.ggml.eos_token_id"),
    )
    blob = np.memmap(path, dtype=np.uint8, mode="r")
    state: dict[str, Any] = {}
    for info in file.tensors.values():
        name = _hf_name(info.name)
        if name is None:
            continue
        weights = _dequantize(file, info, blob)
        if ".attn_q." in info.name:
            weights = _unpermute(weights, config.num_attention_heads)
        elif ".attn_k." in info.name:
            weights = _unpermute(weights, config.num_key_value_heads)
        state[name] = torch.from_numpy(np.array(weights, dtype=np.float32))  # owned, writable
    with torch.device("meta"):
        model = LlamaForCausalLM(config)
    if config.tie_word_embeddings:
        state["lm_head.weight"] = state["model.embed_tokens.weight"]
    missing, unexpected = model.load_state_dict(state, strict=False, assign=True)
    missing = [m for m in missing if "rotary_emb" not in m]
    if missing or unexpected:
        raise GGUFError(f"{path}: tensors missing {missing[:5]}, unexpected {unexpected[:5]}")
    if config.tie_word_embeddings:
        model.tie_weights()
    # buffers (rotary frequencies) were created on the meta device: recompute them
    model.model.rotary_emb.__init__(config=config)
    model.eval()
    return model, build_tokenizer(file), file


def build_tokenizer(file: GGUFFile) -> Any:
    """A byte-level BPE ``tokenizers.Tokenizer`` from the vocabulary and merges in the file."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    meta = file.metadata
    kind = meta.get("tokenizer.ggml.model")
    if kind != "gpt2":
        raise GGUFError(
            f"{file.path}: tokenizer {kind!r} is not supported; only byte-level BPE ('gpt2')"
        )
    tokens: list[str] = meta["tokenizer.ggml.tokens"]
    merges = [tuple(m.split(" ", 1)) for m in meta.get("tokenizer.ggml.merges", [])]
    vocab = {token: index for index, token in enumerate(tokens)}
    tokenizer = Tokenizer(
        models.BPE(vocab=vocab, merges=merges, fuse_unk=False, byte_fallback=False)
    )
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Digits(individual_digits=True),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
        ]
    )
    tokenizer.decoder = decoders.ByteLevel()
    types = meta.get("tokenizer.ggml.token_type") or []
    control = [tokens[i] for i, t in enumerate(types) if t == 3]
    tokenizer.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in control])
    return tokenizer
