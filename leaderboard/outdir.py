"""The site folder that ``leaderboard build`` writes as a whole (:data:`SITE`: the rule every replaced output
folder follows is :mod:`dialeval.files.outdir`'s), and the hidden splits a build is told to keep off the site."""

from __future__ import annotations

import os
import re
from pathlib import Path

from dialeval.core.errors import UsageError
from dialeval.files.outdir import OutputFolder

SITE = OutputFolder(
    marker=".dialeval-site",
    # Every name a site build writes at the top of its folder: a marked folder holding anything else is refused,
    # so a file an organizer put there by hand is never deleted by the next build.
    names=re.compile(r"^(\.dialeval-site|index\.html|static|(board|challenge)-[^/]+\.(html|csv|json)|team-\d+\.html"
                     r"|dialeval-[^/]+-py3-none-any\.whl)$"),  # the wheel a challenge page links
    made_by="an earlier site (a folder a build made)",
    legacy=("index.html",),  # builds before the marker existed
    note="a site built by dialeval: `leaderboard build` replaces this folder\n",
)


def _runs_folder_above(path: Path) -> Path | None:
    """The runs folder (a folder of team runs: ``NAME/team.json`` or ``NAME.team.json`` entries) that ``path``
    would sit in, up to three folders up (a run's own folder, a split folder in it), else None."""
    here = Path(os.path.realpath(path)).parent
    for d in (here, *here.parents)[:3]:
        try:
            if any(q.name.endswith(".team.json") or (q / "team.json").is_file() for q in d.iterdir()):
                return d
        except OSError:
            continue
    return None


def check_outside_inputs(out: str | Path, registry_dir: str | Path, what: str, option: str = "--out") -> None:
    """Refuse (one line) an organizer output (``what``: "the site", "the export") inside the registry's folder (it
    holds team contacts and per-item results, and is no place for anything else) or inside a runs folder (the next
    grade would take it for a team's run, or change a run's files and grade that run again)."""
    where = Path(os.path.realpath(out))
    reg = Path(registry_dir)
    if reg.is_dir() and Path(os.path.realpath(reg)) in where.parents:
        raise UsageError(f"{option} {out}: inside the registry's folder {registry_dir}, which holds team contacts "
                         f"and per-item results; write {what} elsewhere")
    runs = _runs_folder_above(out)
    if runs is not None:
        raise UsageError(f"{option} {out}: inside a runs folder ({runs.name} holds team runs), where the next grade "
                         f"would take {what} for a team's run (or for a change to one); write it elsewhere")


def check_hidden_splits(hidden: list[str] | set[str], known: set[str], option: str = "--hidden-splits",
                        where: str = "the boards") -> None:
    """Every hidden split must be a split of the boards, spelled exactly: a typo would publish the real one."""
    for s in sorted(hidden):
        if s in known:
            continue
        near = [k for k in sorted(known) if k.lower() == s.lower()]
        hint = f"; did you mean {near[0]!r}?" if near else ""
        shown = s if len(s) <= 40 else s[:40] + "..."
        raise UsageError(f"{option}: {shown!r} is not a split of {where} ({'they have' if where == 'the boards' else 'it has'}: "
                         f"{', '.join(sorted(known)) or 'none'}){hint}; nothing was written")


def hidden_by_board(hidden: list[str] | set[str], board_splits: dict[str, set[str]],
                    option: str = "--hidden-splits") -> dict[str, set[str]]:
    """Each board's hidden splits, checked board by board (:class:`UsageError`, one line, before anything is
    written): ``SPLIT`` hides a split on every board and must be a split of each of them; ``BOARD:SPLIT`` hides
    it on that board only. A split that exists on one board but is misspelled for another would publish the
    other board's real split, so a bare name missing from any board is refused."""
    out: dict[str, set[str]] = {b: set() for b in board_splits}
    for entry in sorted(set(hidden)):
        board, sep, split = entry.rpartition(":")
        if sep and board:
            if board not in board_splits:
                shown = board if len(board) <= 40 else board[:40] + "..."
                raise UsageError(f"{option}: no board {shown!r} (have: {', '.join(sorted(board_splits))}); "
                                 "nothing was written")
            check_hidden_splits({split}, board_splits[board], option, where=f"board {board!r}")
            out[board].add(split)
            continue
        check_hidden_splits({entry}, {s for splits in board_splits.values() for s in splits}, option)
        for b, splits in sorted(board_splits.items()):
            if entry not in splits:
                raise UsageError(f"{option}: {entry!r} is not a split of board {b!r} (it has: "
                                 f"{', '.join(sorted(splits)) or 'none'}); write BOARD:SPLIT to hide a split on "
                                 "one board only; nothing was written")
            out[b].add(entry)
    return out
