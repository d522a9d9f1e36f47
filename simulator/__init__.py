"""An open, deterministic re-implementation of the DSTC6 Track 1 / bAbI restaurant-booking dialog simulator.

The original DSTC6 generator was never published; this one reproduces the real data's structure (KB shape,
bot wording, task flows, candidate counts, distractor sources) so that challenges of any size can be generated,
shared by seed, and scored with dialeval. Entry points: :func:`generate_challenge` (Python),
``dialeval simulate`` / ``dialeval stats`` (CLI), :func:`dialeval.simulator.default.ensure_default_challenge`.
"""

from __future__ import annotations

from dialeval.simulator.generate import GENERATOR_VERSION, atomic_output_dir, generate_challenge

__all__ = ["GENERATOR_VERSION", "atomic_output_dir", "generate_challenge"]
