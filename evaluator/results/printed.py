"""Numbers laid out the way another tool prints them (``--print-as``): its lines, byte for byte, and nothing else.

A reproduction study diffs dialeval's output against a published tool's log; these layouts make that diff
empty when the numbers agree. Each is a named variant, never the default: the tool's lines go to standard output
and the signature (with ``print:<variant>``) to standard error, so the numbers stay signed.

* ``dstc6-official`` (``dialeval score``, DSTC6): the official Track 1 scorer prints three lines per answer file,
  ``Precision @1: <float>``, then @2 and @5, each float as Python 2's ``str`` writes it (12 significant digits,
  ``.0`` on a whole number). The scorer reads one file per run; when dialeval scores several, each file's three
  lines follow a ``==> <split> task <n> <==`` line (the header ``head`` and ``tail`` print between files).
* ``nlg-eval`` and ``hed-dlg`` (``dialeval embed``): see :func:`embedding_lines`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dialeval.metrics.embedding import Summary
    from dialeval.results.report import ScoreReport

SCORE_LAYOUTS = {"dstc6-official": "the official DSTC6 Track 1 scorer's 'Precision @1: <float>' lines (@1, @2, @5)"}
EMBED_LAYOUTS = {
    "nlg-eval": "nlg-eval's lines ('EmbeddingAverageCosineSimilarity: %0.6f' ...): the mean rounded to 6 decimals, "
                "no spread",
    "hed-dlg": "hed-dlg's lines ('Embedding Average Score: %f +/- %f ( %f )'): mean, 1.96·std/n and std, std with "
               "ddof=0 (numpy's default)",
}
DSTC6_OFFICIAL_METRICS = ("p@1", "p@2", "p@5")


def py2_str(value: float) -> str:
    """``str(value)`` as Python 2 wrote a float (the official DSTC6 scorer is Python 2): 12 significant digits,
    ``.0`` added when the result looks like an integer. ``1/3`` -> ``0.333333333333`` (Python 3: 16 digits)."""
    if math.isnan(value) or math.isinf(value):
        return {"nan": "nan", "inf": "inf", "-inf": "-inf"}[repr(value)]
    text = f"{value:.12g}"
    return text if any(c in text for c in ".e") else text + ".0"


def dstc6_official_lines(report: ScoreReport) -> list[str]:
    """The official scorer's printout for each scored answer file (split x task) of ``report``, in report order."""
    values: dict[tuple[str, str], dict[str, float]] = {}
    for r in report.records:
        if r["group"] != "all" and r["subset"] is None and r["split"] != "all" and r["metric"] in DSTC6_OFFICIAL_METRICS:
            values.setdefault((r["split"], r["group"]), {})[r["metric"]] = r["value"]
    several = len(values) > 1
    out: list[str] = []
    for (split, group), vals in values.items():
        if several:
            out.append(f"==> {split} {report.group_label} {group} <==")
        out.extend(f"Precision @{m[2:]}: {py2_str(vals[m])}" for m in DSTC6_OFFICIAL_METRICS)
    return out


# nlg-eval's names, in its order (the average also under the misspelt name it kept for old readers)
_NLG_EVAL = (("embedding-average", "EmbeddingAverageCosineSimilarity"),
             ("embedding-average", "EmbeddingAverageCosineSimilairty"),
             ("vector-extrema", "VectorExtremaCosineSimilarity"),
             ("greedy-matching", "GreedyMatchingScore"))
_HED_DLG = (("embedding-average", "Embedding Average Score"), ("greedy-matching", "Greedy Matching Score"),
            ("vector-extrema", "Extrema Score"))
HED_DLG_Z = 1.96  # the script's constant (dialeval's own interval uses the exact 1.959963984540054)


def hed_dlg_spread(summary: Summary) -> tuple[float, float]:
    """(printed spread, printed std) of hed-dlg's ``embedding_metrics.py``: ``1.96 * np.std(scores) / len(scores)``
    and ``np.std(scores)``, numpy's population std (ddof=0), divided by n where a standard error divides by √n.
    From dialeval's sample std (ddof=1): std0 = std1 · √((n-1)/n)."""
    n = summary.n
    std0 = summary.std * math.sqrt((n - 1) / n) if n > 1 else 0.0
    return HED_DLG_Z * std0 / n, std0


def embedding_lines(summaries: dict[str, Summary], layout: str) -> list[str]:
    """The three embedding metrics as ``layout`` prints them.

    * ``nlg-eval`` (``nlgeval.compute_metrics``): ``<Name>: %0.6f`` per metric, the mean only (no spread, no n),
      average, extrema, greedy, the average twice (its current and its old misspelt name).
    * ``hed-dlg`` (``embedding_metrics.py``): ``<Name>: %f +/- %f ( %f )`` = mean, 1.96·std/n, std (ddof=0); see
      :func:`hed_dlg_spread`. A metric with nothing scored prints ``nan`` where the script would divide by zero.
    """
    out = []
    if layout == "nlg-eval":
        for metric, name in _NLG_EVAL:
            s = summaries[metric]
            out.append(f"{name}: {_f6(s.value)}")
    elif layout == "hed-dlg":
        for metric, name in _HED_DLG:
            s = summaries[metric]
            if s.value is None:
                out.append(f"{name}: nan +/- nan ( nan )")
                continue
            spread, std0 = hed_dlg_spread(s)
            out.append(f"{name}: {s.value:f} +/- {spread:f} ( {std0:f} )")
    else:
        raise ValueError(f"unknown layout {layout!r}")
    return out


def _f6(v: float | None) -> str:
    return "nan" if v is None else f"{v:0.6f}"
