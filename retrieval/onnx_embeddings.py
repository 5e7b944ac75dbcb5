"""The ONNX Runtime embedding backend and its one-time export.

``EMBEDDING_BACKEND=onnx`` runs the same sentence-transformers model
(all-MiniLM-L6-v2 by default) on ONNX Runtime: the transformer as an ONNX
graph, then mean pooling over the attention mask and L2 normalisation in
NumPy, as the model's ``1_Pooling`` and ``2_Normalize`` modules do. No torch
in the query path, which is what makes one short query fast.

The graph is exported once, at set-up (``manage.py embedding_export``, run by
``scripts/setup`` and the Dockerfile), from the local model directory into
``EMBEDDING_ONNX_DIR``; nothing is downloaded. The export directory is
self-contained (tokenizer, configuration, ``onnx/model.onnx`` and the int8
``onnx/model_int8.onnx``), with a manifest naming the source so a second run
is a no-op. Why not sentence-transformers' own ONNX backend: it needs
``optimum-onnx``, whose releases pin ``transformers < 5`` while the
sentence-transformers installed here needs ``>= 5``.

int8 is dynamic quantisation of the MatMul weights only, per output channel
(per-tensor scales cost 0.06 in cosine to fp32 on this model; per-channel
about 0.006), with ``reduce_range`` so that the u8 x s8 kernels of CPUs
without VNNI cannot saturate. bench/embedding_backends.py measures quality
and speed of each.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import threading
import warnings
from pathlib import Path
from typing import Any

import numpy as np

# Files of a sentence-transformers directory the export copies (everything
# but weights): tokenizer, model configuration, pooling configuration.
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".onnx", ".pt", ".h5", ".msgpack", ".ot")
_SKIPPED_DIRECTORIES = {"onnx", "openvino", ".git"}
MANIFEST = "daneshyar-export.json"
ONNX_FILES = {"fp32": "onnx/model.onnx", "int8": "onnx/model_int8.onnx"}
# Bump when the export changes, so that set-up exports again.
EXPORT_VERSION = 1
OPSET = 17


class ExportMissing(RuntimeError):
    """The ONNX export is not where the settings say (run manage.py embedding_export)."""


def onnx_file(export_dir: Path, precision: str) -> Path:
    return export_dir / ONNX_FILES[precision]


def check_export(export_dir: Path, precision: str) -> Path:
    """The ONNX file for ``precision``, or :class:`ExportMissing` saying how to make it."""
    path = onnx_file(export_dir, precision)
    if not path.is_file() or not (export_dir / MANIFEST).is_file():
        raise ExportMissing(
            f"no ONNX export of the embedding model at {path}: run `python manage.py embedding_export` "
            "(scripts/setup does) or set EMBEDDING_BACKEND=torch"
        )
    return path


class OnnxEmbedder:
    """Mean-pooled, L2-normalised sentence embeddings from an exported ONNX graph."""

    def __init__(self, export_dir: Path, *, precision: str, model_name: str, threads: int = 0):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        import onnxruntime
        from transformers import AutoTokenizer

        path = check_export(export_dir, precision)
        self._check_pooling(export_dir)
        self._tokenizer: Any = AutoTokenizer.from_pretrained(str(export_dir), local_files_only=True)
        options = onnxruntime.SessionOptions()
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        # One forward pass at a time per process (the lock below) on all cores;
        # no spinning threads left burning CPU between requests.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        if threads:  # else ONNX Runtime's default: one per physical core
            options.intra_op_num_threads = threads
        self._session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self._inputs = [i.name for i in self._session.get_inputs()]
        self._lock = threading.Lock()
        self.model_name = model_name
        self.precision = precision
        config = json.loads((export_dir / "sentence_bert_config.json").read_text())
        self._max_seq_length = int(config.get("max_seq_length") or self._tokenizer.model_max_length)
        hidden = json.loads((export_dir / "config.json").read_text())["hidden_size"]
        self.dimensions: int = int(hidden)

    @staticmethod
    def _check_pooling(export_dir: Path) -> None:
        pooling = json.loads((export_dir / "1_Pooling" / "config.json").read_text())
        modes = [k for k, v in pooling.items() if k.startswith("pooling_mode") and v]
        if modes != ["pooling_mode_mean_tokens"]:
            raise ExportMissing(f"the ONNX backend implements mean pooling only; the model uses {modes}")

    @property
    def tokenizer(self) -> Any:
        return self._tokenizer

    @property
    def max_seq_length(self) -> int:
        return self._max_seq_length

    def _forward(self, text: str) -> list[float]:
        encoded = self._tokenizer(
            [text], truncation=True, max_length=self._max_seq_length, return_tensors="np"
        )
        feeds = {name: encoded[name].astype(np.int64) for name in self._inputs}
        with self._lock:
            hidden = self._session.run(None, feeds)[0][0]
        pooled = hidden.mean(axis=0)  # one text, no padding: the mask is all ones
        norm = float(np.linalg.norm(pooled))
        vector: list[float] = (pooled / max(norm, 1e-12)).tolist()
        return vector

    def _encode(self, texts: list[str]) -> list[list[float]]:
        # One text per forward pass. Dynamic int8 quantisation scales the
        # activations of a whole batch at once, so in a batch a vector would
        # depend on its neighbours (cosine 0.993 to itself alone, measured);
        # alone it depends on its text only, and without padding it is no
        # slower on CPU (bench/embedding_backends.py).
        return [self._forward(text) for text in texts]

    # MiniLM has no query or passage prefix: both sides alike.
    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        return self._encode(texts)

    def embed_passages(self, texts: list[str]) -> list[list[float]]:
        return self._encode(texts)


# --- export ----------------------------------------------------------------------


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _source_fingerprint(source: Path) -> str:
    """Digest of the source model's files (weights included), in name order."""
    digest = hashlib.sha256()
    for path in sorted(p for p in source.rglob("*") if p.is_file()):
        relative = path.relative_to(source)
        if relative.parts[0] in _SKIPPED_DIRECTORIES:
            continue
        digest.update(f"{relative}\0{sha256(path)}\0".encode())
    return digest.hexdigest()


def export_is_current(source: Path, output: Path) -> bool:
    try:
        manifest = json.loads((output / MANIFEST).read_text())
    except (OSError, ValueError):
        return False
    return (
        manifest.get("version") == EXPORT_VERSION
        and manifest.get("source_sha256") == _source_fingerprint(source)
        and all((output / name).is_file() for name in ONNX_FILES.values())
    )


def export(source: Path, output: Path, *, force: bool = False) -> bool:
    """Export ``source`` (a sentence-transformers directory) to ONNX fp32 and int8 in ``output``.

    Returns False when ``output`` already holds an export of the same source.
    Written to a temporary sibling directory and renamed into place, so a
    crash never leaves half an export where the service looks for one.
    """
    if not force and export_is_current(source, output):
        return False
    # Everything the export needs, imported before any work: a missing one fails early.
    import onnx  # noqa: F401  (needed by the exporter and the quantiser)
    import onnxruntime.quantization  # noqa: F401
    import torch  # noqa: F401
    import transformers  # noqa: F401

    staging = output.with_name(output.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    _copy_model_files(source, staging)
    fp32 = staging / ONNX_FILES["fp32"]
    fp32.parent.mkdir(parents=True, exist_ok=True)
    _export_fp32(source, fp32)
    quantize_int8(fp32, staging / ONNX_FILES["int8"])
    (staging / MANIFEST).write_text(
        json.dumps(
            {
                "version": EXPORT_VERSION,
                "source": str(source),
                "source_sha256": _source_fingerprint(source),
                "opset": OPSET,
                "files": {p: sha256(staging / f) for p, f in ONNX_FILES.items()},
            },
            indent=2,
        )
    )
    shutil.rmtree(output, ignore_errors=True)
    output.parent.mkdir(parents=True, exist_ok=True)
    staging.rename(output)
    return True


def _copy_model_files(source: Path, staging: Path) -> None:
    """The tokenizer and configuration files the runtime reads; no weights."""
    for path in source.rglob("*"):
        relative = path.relative_to(source)
        if (
            not path.is_file()
            or relative.parts[0] in _SKIPPED_DIRECTORIES
            or path.suffix in _WEIGHT_SUFFIXES
            or path.name in {"README.md", ".gitattributes"}
        ):
            continue
        (staging / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, staging / relative)


def _export_fp32(source: Path, fp32: Path) -> None:
    """The transformer's last hidden state as an ONNX graph (pooling happens in NumPy)."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer: Any = AutoTokenizer.from_pretrained(str(source), local_files_only=True)
    model: Any = AutoModel.from_pretrained(str(source), local_files_only=True).eval()
    sample = tokenizer(
        ["a short example", "a longer example sentence to trace"], padding=True, return_tensors="pt"
    )
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in sample]

    class LastHiddenState(torch.nn.Module):
        """The transformer with keyword inputs and one output (pooling happens in NumPy)."""

        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *inputs: Any) -> Any:
            return self.model(**dict(zip(names, inputs, strict=True))).last_hidden_state

    axes = {"batch": 0, "sequence": 1}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the TorchScript exporter's deprecation notices
        # The TorchScript exporter: the dynamo one needs onnxscript, and this
        # graph (a BERT encoder) is what it has always handled.
        torch.onnx.export(
            LastHiddenState(),
            tuple(sample[n] for n in names),
            str(fp32),
            input_names=names,
            output_names=["last_hidden_state"],
            dynamic_axes={n: {v: k for k, v in axes.items()} for n in [*names, "last_hidden_state"]},
            opset_version=OPSET,
            dynamo=False,
        )


def quantize_int8(fp32: Path, int8: Path, op_types: tuple[str, ...] = ("MatMul",)) -> None:
    """Dynamic int8 quantisation of the weights of ``op_types`` (the
    MatMuls by default), per channel."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.WARNING)  # the quantiser logs every tensor at INFO on the root logger
    try:
        quantize_dynamic(
            str(fp32),
            str(int8),
            weight_type=QuantType.QInt8,
            per_channel=True,
            reduce_range=True,
            op_types_to_quantize=list(op_types),
        )
    finally:
        root.setLevel(level)
