"""Baseline registry: name → lazily imported factory.

Each entry names a class (or any callable returning a :class:`dialeval.baselines.base.Baseline`) by import path, so
``dialeval baseline list`` stays fast, a module that does not exist yet (or whose optional dependency, e.g. torch,
is missing) only fails when that baseline is used, and adding a baseline is one :func:`register` call or one line
in :data:`BUILTIN`. Factories are called as ``factory(seed=seed, **params)``.

Neural baselines plug in the same way, e.g.::

    register(BaselineSpec("supervised-embeddings", "baselines.embeddings:SupervisedEmbeddings",
                          "bag-of-words embeddings, margin ranking loss", needs_training=True))
    register(BaselineSpec("memn2n", "baselines.memn2n:MemN2N", "end-to-end memory network (torch)", True))
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from dialeval.core.errors import UsageError


@dataclass(frozen=True)
class BaselineSpec:
    name: str
    target: str  # "package.module:attribute"
    description: str
    needs_training: bool = True
    babi_table: str | None = None  # column name in Bordes & Weston Table 2, when the paper reports this model
    requires: tuple[str, ...] = ()  # optional packages the model imports only when it runs (torch), checked by name

    def load(self):
        """Import and return the factory; ImportError/AttributeError when it is not available."""
        module, _, attr = self.target.partition(":")
        return getattr(importlib.import_module(module), attr)

    def available(self) -> tuple[bool, str]:
        """(True, "") when the factory imports and its optional packages are installed, else (False, reason)."""
        import importlib.util

        missing = [m for m in self.requires if importlib.util.find_spec(m) is None]
        if missing:
            return False, f"not installed (needs {', '.join(missing)})"
        try:
            self.load()
        except ImportError as e:
            return False, f"not installed ({e})"
        except AttributeError as e:
            return False, f"not available ({e})"
        return True, ""


BUILTIN: tuple[BaselineSpec, ...] = (
    BaselineSpec("random", "dialeval.baselines.random:RandomBaseline", "seeded uniform shuffle of the candidates", False),
    BaselineSpec(
        "tfidf",
        "dialeval.baselines.tfidf:TfidfBaseline",
        "TF-IDF cosine between the input (last utterance or history, chosen on dev) and each candidate",
        True,
        "TF-IDF match",
    ),
    BaselineSpec(
        "nearest-neighbor",
        "dialeval.baselines.nearest:NearestNeighborBaseline",
        "response of the training pair whose user utterance overlaps most with the last utterance",
        True,
        "nearest neighbor",
    ),
    BaselineSpec(
        "rule-based", "dialeval.baselines.rules:RuleBased", "hand-written rules for the restaurant tasks", False, "rule-based"
    ),
    BaselineSpec("supervised-embeddings", "dialeval.baselines.embeddings:SupervisedEmbeddings", "bag-of-words embeddings (AΦx)ᵀ(BΦy), margin ranking loss, SGD (torch)", True, "supervised embeddings", ("torch",)),  # noqa: E501
    BaselineSpec("memn2n", "dialeval.baselines.memn2n:MemN2N", "end-to-end memory network over the conversation (torch)", True, "MemNN", ("torch",)),  # noqa: E501
    BaselineSpec("memn2n-match", "dialeval.baselines.memn2n:MemN2NMatch", "MemN2N + 7 KB entity-type match features (torch)", True, "MemNN + match", ("torch",)),  # noqa: E501
)

REGISTRY: dict[str, BaselineSpec] = {s.name: s for s in BUILTIN}


def register(spec: BaselineSpec, replace: bool = False) -> None:
    """Add a baseline (``replace=True`` to overwrite an existing name)."""
    if spec.name in REGISTRY and not replace:
        raise ValueError(f"baseline {spec.name!r} is already registered")
    REGISTRY[spec.name] = spec


def names() -> list[str]:
    return list(REGISTRY)


def get_spec(name: str) -> BaselineSpec:
    spec = REGISTRY.get(name)
    if spec is None:
        raise UsageError(f"unknown baseline {name!r} (known: {', '.join(REGISTRY)})")
    return spec


def create(name: str, seed: int = 0, **params):
    """A fresh baseline instance: ``factory(seed=seed, **params)``; UsageError when unknown or unavailable."""
    spec = get_spec(name)
    try:
        factory = spec.load()
    except (ImportError, AttributeError) as e:
        raise UsageError(f"baseline {name!r} is not available: {e}") from None
    return factory(seed=seed, **params)


def needs_training(name: str, model=None) -> bool:
    """Whether the baseline needs a training split (the instance's ``needs_training`` wins over the spec)."""
    if model is not None and hasattr(model, "needs_training"):
        return bool(model.needs_training)
    return get_spec(name).needs_training
