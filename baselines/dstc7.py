"""DSTC7 / DSTC8 NOESIS: the constructed sample data and the two reference baselines (random, TF-IDF).

:func:`write_samples` writes the small data files of ``submissions/samples/dstc7`` and ``.../dstc8`` in the
released layout (same seed, same bytes): Ubuntu-like and Advising-like chats whose correct response shares the
context's topic words, so a lexical baseline beats chance. :func:`rank_file` ranks every example of a data file
(``random``: a seeded shuffle; ``tfidf``: cosine of TF-IDF bags of the context and each candidate, idf over the
file's texts, ties kept in option order) and writes a submission in the official layout.

``python -m dialeval.baselines.dstc7`` rewrites the samples (also ``tests/sample_data.py``) and the stored reference runs
(``submissions/baselines/dstc7|dstc8/<baseline>/``); ``tests/test_dstc7.py`` re-scores them bit for bit.
"""

from __future__ import annotations

import json
import math
import random
import re
import string
from collections import Counter
from pathlib import Path

from dialeval.files.write import atomic_write_text
from dialeval.formats.jsonio import load_json_file

BASELINES = ("random", "tfidf")
_TOPICS = {
    "ubuntu": {
        "wifi": ("my wifi drops after suspend on the broadcom card", "run sudo modprobe -r wl then modprobe wl again",
                 "check rfkill list, the wifi card may be blocked"),
        "sound": ("no sound from the speakers since the pulseaudio update", "open alsamixer and unmute the master channel",
                  "restart pulseaudio with pulseaudio -k"),
        "grub": ("grub does not show windows after the install", "run sudo update-grub so os-prober finds windows",
                 "boot a live cd and reinstall grub to the disk"),
        "apt": ("apt-get says the package has unmet dependencies", "try sudo apt-get -f install to fix dependencies",
                "remove the ppa that holds the broken package"),
        "nvidia": ("the nvidia driver gives me a black screen", "purge the nvidia driver and use the recommended one",
                   "look in the xorg log for the nvidia error"),
        "mount": ("my usb drive will not mount, ntfs error", "install ntfs-3g and mount the usb drive again",
                  "add the drive to fstab with its uuid"),
    },
    "advising": {
        "ai": ("which ai course should i take next term", "eecs 492 is the intro to ai course you want",
               "intro to artificial intelligence, eecs 492, fits you"),
        "systems": ("i liked operating systems, what is next", "eecs 482 continues operating systems work",
                    "try eecs 482, the next systems course"),
        "theory": ("i want more theory and algorithms", "eecs 376 covers algorithms and theory",
                   "the theory course eecs 376 is a good fit"),
        "web": ("is there a course on web development", "eecs 485 teaches web systems and development",
                "web systems is eecs 485, take that one"),
        "ml": ("i want to learn machine learning", "eecs 445 is the machine learning course",
               "machine learning, eecs 445, is what you are after"),
        "data": ("something with databases please", "eecs 484 is the database course",
                 "databases are taught in eecs 484"),
    },
}


def _cid(rng: random.Random) -> str:
    return "".join(rng.choice(string.ascii_uppercase + string.digits) for _ in range(12))


def _examples(rng: random.Random, dataset: str, subtask: int, split: str, n: int, n_options: int) -> list[dict]:
    topics = _TOPICS[dataset]
    names = sorted(topics)
    out = []
    for k in range(n):
        topic = names[k % len(names)]
        question, answer, paraphrase = topics[topic]
        speakers = ("student", "advisor") if dataset == "advising" else ("participant_1", "participant_2")
        messages = [{"speaker": speakers[0], "utterance": question},
                    {"speaker": speakers[1], "utterance": "ok, what did you try already?"},
                    {"speaker": speakers[0], "utterance": f"nothing yet, it is about {topic}"}]
        correct = [{"candidate-id": _cid(rng), "utterance": answer}]
        if subtask == 3:
            correct.append({"candidate-id": _cid(rng), "utterance": paraphrase})
        others = [t for t in names if t != topic]
        distractors = [{"candidate-id": _cid(rng), "utterance": topics[others[j % len(others)]][1 + j % 2]}
                       for j in range(n_options - len(correct))]
        absent = subtask == 4 and k % 3 == 2  # subtask 4: every third example's answer is not among its options
        options = distractors + ([] if absent else correct)
        if absent:
            options.append({"candidate-id": _cid(rng), "utterance": topics[others[0]][2]})
        rng.shuffle(options)
        out.append({"data-split": split, "example-id": 1000 * subtask + k + 1, "messages-so-far": messages,
                    "options-for-correct-answers": correct, "options-for-next": options, "scenario": subtask})
    return out


def write_samples(out: Path, benchmark: str, seed: int = 7) -> list[Path]:
    """The sample data folder of ``benchmark`` (dstc7 or dstc8) at ``out``: the data files, ``sample.json`` and the
    example run (the TF-IDF run of the sample's first reference run)."""
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    files: dict[str, object] = {}
    if benchmark == "dstc7":
        dev = _examples(rng, "ubuntu", 1, "dev", 6, 10)
        files["ubuntu_dev_subtask_1.json"] = dev
        files["ubuntu_test_subtask_1.json"] = [{**{k: v for k, v in e.items() if k != "options-for-correct-answers"},
                                                "data-split": "test"} for e in dev]
        files["GROUND_TRUTH.tsv"] = "".join(
            f"{e['example-id']}\t{','.join(c['candidate-id'] for c in e['options-for-correct-answers'])}\n" for e in dev)
        files["advising_dev_subtask_3.json"] = _examples(rng, "advising", 3, "dev", 6, 10)
        files["ubuntu_dev_subtask_4.json"] = _examples(rng, "ubuntu", 4, "dev", 6, 10)
    else:
        rng.seed(seed + 1)
        files["task-1.ubuntu.dev.json"] = _examples(rng, "ubuntu", 4, "dev", 6, 10)
    written = []
    for name, content in files.items():
        atomic_write_text(out / name, content if isinstance(content, str) else json.dumps(content, indent=1) + "\n")
        written.append(out / name)
    data, run, none_id = REFERENCE_RUNS[benchmark][0]
    written.append(rank_file(out / data, "tfidf", out / run, none_id=none_id))
    note = ("Ubuntu subtasks 1 and 4 and Advising subtask 3 (dev), subtask 1's test file with GROUND_TRUTH.tsv; "
            "constructed chats" if benchmark == "dstc7" else "an Ubuntu subtask 1 dev file (NONE correct in 2 of 6 "
            "examples); constructed chats")
    manifest = {"benchmark": benchmark, "split": "dev", "example_run": run, "note": note}
    atomic_write_text(out / "sample.json", json.dumps(manifest, indent=2) + "\n")
    return [*written, out / "sample.json"]


_TOKEN = re.compile(r"[a-z0-9]+")


def _bag(text: str) -> Counter:
    return Counter(_TOKEN.findall(text.lower()))


def rank_file(data: Path, baseline: str, out: Path, seed: int = 0, none_id: bool = False) -> Path:
    """Rank every example of ``data`` with ``baseline`` and write the submission to ``out``. With ``none_id`` the
    ranking also places ``NONE`` (subtask 4, DSTC8): last for TF-IDF, at a seeded position for random."""
    examples = load_json_file(data)
    rng = random.Random(seed)
    docs = [_bag(" ".join(m["utterance"] for m in e["messages-so-far"])) for e in examples]
    docs += [_bag(o["utterance"]) for e in examples for o in e["options-for-next"]]
    df = Counter(t for d in docs for t in d)
    idf = {t: math.log((1 + len(docs)) / (1 + n)) + 1 for t, n in df.items()}

    def vector(bag: Counter) -> dict[str, float]:
        return {t: c * idf.get(t, 0.0) for t, c in bag.items()}

    def cosine(a: dict, b: dict) -> float:
        dot = sum(w * b.get(t, 0.0) for t, w in a.items())
        norm = math.sqrt(sum(w * w for w in a.values()) * sum(w * w for w in b.values()))
        return round(dot / norm, 6) if norm else 0.0

    run = []
    for e in examples:
        ids = [o["candidate-id"] for o in e["options-for-next"]]
        if baseline == "random":
            if none_id:
                ids.append("NONE")
            rng.shuffle(ids)
            scored = [(c, round(1 - j / len(ids), 6)) for j, c in enumerate(ids)]
        else:
            context = vector(_bag(" ".join(m["utterance"] for m in e["messages-so-far"])))
            scored = [(o["candidate-id"], cosine(context, vector(_bag(o["utterance"])))) for o in e["options-for-next"]]
            scored.sort(key=lambda cs: -cs[1])  # stable: ties keep the option order
            if none_id:
                scored.append(("NONE", 0.0))
        run.append({"example-id": e["example-id"],
                    "candidate-ranking": [{"candidate-id": c, "confidence": s} for c, s in scored]})
    atomic_write_text(out, json.dumps(run, indent=1) + "\n")
    return out


REFERENCE_RUNS = {
    # benchmark -> (data file under submissions/samples/<benchmark>, submission name, NONE ranked)
    "dstc7": [("ubuntu_dev_subtask_1.json", "Ubuntu_subtask_1.json", False),
              ("advising_dev_subtask_3.json", "Advising_subtask_3.json", False),
              ("ubuntu_dev_subtask_4.json", "Ubuntu_subtask_4.json", True)],
    "dstc8": [("task-1.ubuntu.dev.json", "example-run.json", True)],
}


def main(argv: list[str] | None = None) -> int:
    import sys

    from dialeval.api import score
    from dialeval.core.script import ArgumentParser

    ap = ArgumentParser(prog="python -m dialeval.baselines.dstc7",
                                 description="Rewrite the DSTC7/DSTC8 sample data and the stored reference runs of a "
                                             "source checkout (run from the checkout; takes no arguments).")
    ap.parse_args(argv)
    repo = Path(__file__).resolve().parents[1]
    if not (repo / "pyproject.toml").is_file():  # an installed package: its folder is no checkout to rewrite
        print(f"dialeval: error: {repo} is an installed package, not a source checkout: this maintainer tool rewrites a "
              "checkout's submissions/samples and submissions/baselines (run it from an editable install)",
              file=sys.stderr)
        return 2
    samples, stored = repo / "submissions" / "samples", repo / "submissions" / "baselines"
    for bench, runs in REFERENCE_RUNS.items():
        write_samples(samples / bench, bench)
        for baseline in BASELINES:
            for data, name, none_id in runs:
                sub = rank_file(samples / bench / data, baseline, stored / bench / baseline / name, none_id=none_id)
                report = score(sub, benchmark=bench, data=samples / bench / data).to_json()
                atomic_write_text(sub.with_suffix(".report.json"), json.dumps(report["results"], indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
