"""Structural check of a DSTC6 dataset file (test or training): every problem with its JSON pointer.

Kept beside the reader (:mod:`dialeval.formats.dstc6`) so that reading a dataset never reaches up into the
scorer's modules.
"""

from __future__ import annotations

from dialeval.core.problems import Problem, json_type, pointer, short


def validate_dataset_json(data: object) -> list[Problem]:
    """Check a parsed dataset (test or training) file: every problem with its pointer, up to
    :data:`~dialeval.core.problems.MAX_LISTED` of each code, then one code-less note counting the rest."""
    return check_dataset_json(data).close()


def check_dataset_json(data: object):
    """:func:`validate_dataset_json` before its closing note: a :class:`~dialeval.core.problems.Capped` list
    whose ``dropped`` counts, by code, the problems not kept (a million bad items cost twenty messages)."""
    from dialeval.core.problems import Capped

    problems = Capped()
    add, full = problems.append, problems.full  # full(code): dropped by the cap, so never built
    if not isinstance(data, list):
        add(Problem("not-a-list", "", f"expected an array of items, found {json_type(data)}"))
        return problems
    seen: set[str] = set()
    for i, item in enumerate(data):
        if type(item) is not dict:
            if not full("item-not-object"):
                add(Problem("item-not-object", f"/{i}", "item is not an object"))
            continue
        for k in ("dialog_id", "utterances", "candidates"):
            if k not in item:
                if not full("missing-key"):
                    add(Problem("missing-key", f"/{i}", f"item has no {k!r}"))
        for k in sorted(set(item) - {"dialog_id", "utterances", "candidates", "answer", "conversation_id", "turn"}):
            if not full("unknown-key"):
                add(Problem("unknown-key", pointer(i, k), f"unexpected key {short(k)}"))
        did = item.get("dialog_id")
        if "dialog_id" in item:
            if type(did) is not str:
                if not full("wrong-type"):
                    add(Problem("wrong-type", f"/{i}/dialog_id", "dialog_id must be a string"))
            elif did in seen:
                if not full("duplicate-dialog"):
                    add(Problem("duplicate-dialog", f"/{i}/dialog_id", f"dialog_id {short(did)} repeats an earlier item"))
            else:
                seen.add(did)
        utt = item.get("utterances")
        if "utterances" in item and (type(utt) is not list or any(type(u) is not str for u in utt)):
            if not full("wrong-type"):
                add(Problem("wrong-type", f"/{i}/utterances", "utterances must be an array of strings"))
        cands = item.get("candidates")
        cids: set[str] = set()
        if "candidates" in item:
            if type(cands) is not list or not cands:
                if not full("wrong-type"):
                    add(Problem("wrong-type", f"/{i}/candidates", "candidates must be a non-empty array"))
            else:
                for j, c in enumerate(cands):
                    if not _is_candidate(c):
                        if not full("wrong-type"):
                            add(Problem("wrong-type", f"/{i}/candidates/{j}", "candidate must be {candidate_id: str, utterance: str}"))
                    elif c["candidate_id"] in cids:
                        if not full("duplicate-candidate"):
                            add(Problem("duplicate-candidate", f"/{i}/candidates/{j}/candidate_id", "candidate id repeats in the item"))
                    else:
                        cids.add(c["candidate_id"])
        if "answer" in item:
            ans = item["answer"]
            if not _is_candidate(ans):
                if not full("wrong-type"):
                    add(Problem("wrong-type", f"/{i}/answer", "answer must be {candidate_id: str, utterance: str}"))
            elif cids and ans["candidate_id"] not in cids:
                if not full("unknown-candidate"):
                    add(Problem("unknown-candidate", f"/{i}/answer/candidate_id", "answer is not one of the item's candidates"))
        if "conversation_id" in item and type(item["conversation_id"]) is not str:
            if not full("wrong-type"):
                add(Problem("wrong-type", f"/{i}/conversation_id", "conversation_id must be a string"))
        if "turn" in item and (type(item["turn"]) is not int or item["turn"] < 1):
            if not full("wrong-type"):
                add(Problem("wrong-type", f"/{i}/turn", "turn must be a positive integer"))
    return problems


def _is_candidate(c: object) -> bool:
    return (
        type(c) is dict
        and c.keys() == {"candidate_id", "utterance"}
        and type(c["candidate_id"]) is str
        and type(c["utterance"]) is str
    )
