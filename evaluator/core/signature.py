"""Signatures: a compact record of every option that changes a number (SacreBLEU's convention).

``dstc6|tasks:1-5|mode:strict|nc:all|gold:id|split:tst4|task:all|metric:p@1|avg:micro|v:0.1.0`` — ``key:value``
pairs joined by ``|``, the benchmark first and the version last. Two numbers are comparable only when
their signatures agree on everything but the fields that name what was measured (split, task, metric).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from dialeval import __version__


@dataclass(frozen=True)
class Signature:
    benchmark: str  # the benchmark's registry name: every signature says what it scores
    fields: tuple[tuple[str, str], ...] = field(default_factory=tuple)
    version: str = __version__

    def with_fields(self, **kv: object) -> Signature:
        """A copy with fields set (an existing key keeps its position; new keys are appended)."""
        current = dict(self.fields)
        order = [k for k, _ in self.fields]
        for k, v in kv.items():
            if k not in current:
                order.append(k)
            current[k] = _fmt(v)
        return replace(self, fields=tuple((k, current[k]) for k in order))

    def format(self) -> str:
        parts = [self.benchmark, *(f"{k}:{v}" for k, v in self.fields), f"v:{self.version}"]
        return "|".join(parts)

    __str__ = format

    @staticmethod
    def parse(text: str) -> Signature:
        parts = text.split("|")
        fields = []
        version = __version__
        for p in parts[1:]:
            k, _, v = p.partition(":")
            if k == "v":
                version = v
            else:
                fields.append((k, v))
        return Signature(parts[0], tuple(fields), version)


def _fmt(v: object) -> str:
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, list | tuple):
        return format_tasks(v)
    return str(v)


def format_tasks(tasks) -> str:
    """``[1, 2, 3, 5]`` -> ``"1-3,5"`` (contiguous runs collapsed)."""
    ts = sorted(int(t) for t in tasks)
    runs: list[str] = []
    i = 0
    while i < len(ts):
        j = i
        while j + 1 < len(ts) and ts[j + 1] == ts[j] + 1:
            j += 1
        runs.append(str(ts[i]) if i == j else f"{ts[i]}-{ts[j]}")
        i = j + 1
    return ",".join(runs)
