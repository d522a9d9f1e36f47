"""The issue's constructed-Douban anchors, reproduced by ``dialeval score --protocols``.

Issue 25 (and ``shared/reference/response-selection.md``, "What this means for dialeval") quotes six MAPs of one
set of scores on "a constructed Douban-like test": 0.585 with tied positives after tied negatives, 0.626 in file
order (DAM's stable sort), 0.672 with tied positives first; 0.608 on contexts with a positive and a negative
(SMN/DAM), 0.616 on contexts with a positive (MSN), 0.556 on all contexts. Neither says how that test was built,
so this file builds the smallest one that gives exactly those numbers (to 3 decimals), in dialeval's reading:

* The three tie numbers are on ``--contexts mixed``; the three context numbers can then only be under
  ``--ties expected`` (each of the other policies already has its own mixed number, and 0.608 is none of them).
* With M mixed contexts (expected MAP sum S), one all-positive context (AP 1 under every policy) per A and Z
  without a positive (AP 0): S/M = 0.608, (S + A)/(M + A) = 0.616 and (S + A)/(M + A + Z) = 0.556 (each to 3
  decimals) first hold together at M = 45, A = 1, Z = 5: 51 contexts of 10 candidates, S in [27.3375, 27.359).
* The 45 mixed contexts are six kinds of (labels, score levels), found by an integer program over small kinds
  (one or two positives, scores in at most three levels, so ties are common) that puts the four mixed sums
  inside their rounding intervals. The kinds are listed below; candidate order is file order.
"""

from __future__ import annotations

from pathlib import Path

# (contexts of this kind, labels in file order, each candidate's score level); score = level / 10
KINDS = (
    (5, "0000001000", "1222220221"),   # the positive scores lowest: AP 1/10 under every policy
    (4, "0000100001", "0101011110"),   # both positives tied with two negatives, below six
    (5, "0001000000", "2020201122"),   # the positive tied with two negatives at the bottom
    (24, "0001000010", "1002001020"),  # both positives above every negative: AP 1
    (3, "0100000000", "0000000000"),   # every candidate tied: 1/10, 1/2 (second in file order) or 1
    (4, "0100000000", "0000000101"),   # the positive tied with seven negatives, below two
    (1, "1111111111", "0000011111"),   # every candidate positive: AP 1 (MSN and "all" keep it, SMN/DAM do not)
    (5, "0000000000", "0123456789"),   # no positive: AP 0 ("all" keeps it)
)
ANCHORS = {("mixed", "pessimistic"): "0.585", ("mixed", "input-order"): "0.626", ("mixed", "optimistic"): "0.672",
           ("mixed", "expected"): "0.608", ("with-positive", "expected"): "0.616", ("all", "expected"): "0.556"}


def write_anchor_test(folder: Path) -> tuple[Path, Path]:
    """``(test.txt, scores.txt)``: the constructed data (10 lines per context) and one score per line."""
    data, scores = [], []
    context = 0
    for count, labels, levels in KINDS:
        for _ in range(count):
            context += 1
            for j, (label, level) in enumerate(zip(labels, levels, strict=True)):
                data.append(f"{label}\t上下文 {context} 第一句\t上下文 {context} 第二句\t回复 {context}-{j + 1}\n")
                scores.append(f"0.{level}\n")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "test.txt").write_text("".join(data), encoding="utf-8")
    (folder / "scores.txt").write_text("".join(scores))
    return folder / "test.txt", folder / "scores.txt"


def test_the_construction_is_the_smallest_context_count():
    """No fewer contexts can give 0.608 / 0.616 / 0.556 for the three context choices together."""
    def feasible(m: int, a: int, z: int) -> bool:
        lo = max(0.6075 * m, 0.6155 * (m + a) - a, 0.5555 * (m + a + z) - a)
        hi = min(0.6085 * m, 0.6165 * (m + a) - a, 0.5565 * (m + a + z) - a)
        return lo < hi

    sizes = [m + a + z for m in range(1, 60) for a in range(1, 3) for z in range(0, 20) if feasible(m, a, z)]
    assert min(sizes) == 51 == sum(k[0] for k in KINDS)


def test_protocols_reproduces_the_six_constructed_douban_anchors(tmp_path, cli):
    data, scores = write_anchor_test(tmp_path)
    r = cli("score", scores, "--benchmark", "douban", "--data", data, "--protocols")
    assert r.returncode == 0, r.stderr
    assert "45 of 51 scored; 6 left out (5 without a positive, 1 without a negative)" in r.stdout
    rows = {}
    for line in r.stdout.splitlines():
        cells = line.split()
        if len(cells) >= 9 and cells[-9] in ("mixed", "with-positive", "all"):
            rows[cells[-9], cells[-8]] = float(cells[-7])  # contexts, ties, MAP, MRR, ..., n
    assert len(rows) == 12
    assert {k: f"{rows[k]:.3f}" for k in ANCHORS} == ANCHORS
