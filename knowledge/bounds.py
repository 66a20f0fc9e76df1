"""Plausible ranges for the numbers a model's shape is read from (config.json, models.toml, overlays).

Why: a config.json with `num_hidden_layers = 10**9` used to spin for minutes, and `vocab_size = 10**15` was printed as
if real. Each bound is far above any published model (late 2025: 126 layers, hidden 16,384, FFN 53,248, vocabulary
262,208, 384 experts, a 10M-token context) and far below what would make the arithmetic slow or overflow, so a real
checkpoint always passes and an absurd one is refused at the boundary with its field named.
"""

from __future__ import annotations

MAX_LAYERS = 10_000
MAX_HIDDEN = 1_048_576  # hidden size, FFN widths, head dims, LoRA ranks of MLA
MAX_VOCAB = 16_777_216
MAX_HEADS = 65_536
MAX_EXPERTS = 65_536
MAX_POSITIONS = 2**31  # context lengths, sliding windows, learned position tables
MAX_NORMS_PER_LAYER = 16
MAX_PARAMETERS = 10**15  # a published parameter count (the largest today is about 1.0e12)
MAX_MEASURE = 1e15
"""Largest magnitude of any sourced figure (TFLOPS, GB, GB/s, W, dollars): finite, far above any real one."""
