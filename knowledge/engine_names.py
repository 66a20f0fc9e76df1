"""The serving engines' names: what engines.toml may hold, what a user may type, and their aliases.

Why a module of its own: the answers model, the knowledge schema and the engine-choice code all need these names,
and the answers must be importable without the knowledge schema or the speed model (the TUI's first screen and
`gpuadvisor recommend --help` pay for every import).
"""

from __future__ import annotations

from typing import Literal, get_args

from gpuadvisor.knowledge.errors import InputError

EngineName = Literal["llama.cpp", "vllm", "sglang", "tensorrt-llm", "tensorrt-llm-engine", "mlx"]
"""An engines.toml id."""
EngineChoice = Literal["auto", "llama.cpp", "ollama", "vllm", "sglang", "tensorrt-llm", "tensorrt-llm-engine", "mlx"]
"""What a user may name: engines.toml ids plus "auto" and "ollama" (llama.cpp). TensorRT-LLM is two runtimes
about 30 % apart at large batch: `tensorrt-llm` is its PyTorch backend (trtllm-serve, trtllm-bench, the default
since 1.0), `tensorrt-llm-engine` its TensorRT backend (engines built with trtllm-build, run on the C++ executor:
what NVIDIA's MLPerf submissions run; engines.toml)."""
ENGINE_NAMES: tuple[str, ...] = get_args(EngineName)
ENGINE_CHOICES: tuple[str, ...] = get_args(EngineChoice)
ALIASES = {"ollama": "llama.cpp", "llamacpp": "llama.cpp", "llama-cpp": "llama.cpp", "lm-studio": "llama.cpp",
           "trt-llm": "tensorrt-llm", "trtllm": "tensorrt-llm", "tensorrt": "tensorrt-llm",
           "trtllm-serve": "tensorrt-llm", "tensorrt-llm-pytorch": "tensorrt-llm",
           "trtllm-engine": "tensorrt-llm-engine", "trt-llm-engine": "tensorrt-llm-engine",
           "tensorrt-llm-cpp": "tensorrt-llm-engine", "trtllm-cpp": "tensorrt-llm-engine",
           "tensorrt-llm-tensorrt": "tensorrt-llm-engine", "mlx-lm": "mlx"}


def normal_engine_key(name: str) -> str:
    """A user's spelling folded to a choice ('Ollama' → 'ollama', 'TRT-LLM' → 'tensorrt-llm'); unknown names pass."""
    key = name.strip().lower().replace(" ", "-").replace("_", "-")
    return key if key in ENGINE_CHOICES else ALIASES.get(key, key)


def canonical_engine(name: str) -> str:
    """The engines.toml id for a user's engine name ('Ollama' → 'llama.cpp'); InputError for unknown names."""
    key = name.strip().lower().replace(" ", "-").replace("_", "-")
    key = ALIASES.get(key, key)
    if key not in ENGINE_CHOICES:
        raise InputError(f"unknown engine {name!r} (choose one of {', '.join(ENGINE_CHOICES)})")
    return key
