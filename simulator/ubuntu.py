"""Synthetic Ubuntu Dialogue Corpus v2 files for tests and trials: :func:`write_fixture` writes ``train.csv``,
``valid.csv`` and ``test.csv`` in the corpus' exact layout (:mod:`dialeval.formats.ubuntu`), the same bytes for the
same seed."""

from __future__ import annotations

import csv
import random
from pathlib import Path

from dialeval.formats.ubuntu import EOT, EOU, EVAL_HEADER, N_DISTRACTORS, TRAIN_HEADER

_TOPICS = {
    "wireless": (["wifi", "wireless", "wlan0", "network-manager", "broadcom", "router", "iwconfig", "driver"],
                 ["sudo modprobe -r b43 && sudo modprobe b43", "check rfkill list, the card may be blocked",
                  "try the bcmwl-kernel-source package", "does iwconfig show wlan0 at all?"]),
    "sound": (["sound", "audio", "alsa", "pulseaudio", "speakers", "headphones", "mixer", "volume"],
              ["run alsamixer and unmute the master channel", "killall pulseaudio, it restarts itself",
               "is the right output selected in sound settings?", "try pavucontrol, the output tab"]),
    "grub": (["grub", "boot", "dual boot", "windows", "mbr", "partition", "bootloader", "update-grub"],
             ["boot a live cd and reinstall grub to /dev/sda", "run sudo update-grub after that",
              "is windows on the same disk?", "boot-repair fixes that most of the time"]),
    "packages": (["apt-get", "dpkg", "package", "repository", "ppa", "dependencies", "sources.list", "upgrade"],
                 ["sudo apt-get -f install should fix the broken dependencies", "remove that ppa from sources.list",
                  "run sudo dpkg --configure -a first", "apt-cache policy shows where it comes from"]),
    "nvidia": (["nvidia", "graphics", "driver", "xorg", "resolution", "screen", "compiz", "monitor"],
               ["use the additional drivers tool, not the nvidia installer", "check /var/log/Xorg.0.log for errors",
                "purge nvidia-* and reinstall the recommended driver", "xrandr lists the modes it can use"]),
    "mount": (["usb", "mount", "ntfs", "fstab", "drive", "external disk", "permissions", "uuid"],
              ["add it to /etc/fstab with its uuid", "sudo blkid shows the uuid", "is ntfs-3g installed?",
               "mount it with uid=1000 so you own the files"]),
}
_OPENERS = ["hi all", "hello", "hey guys", "anyone around?", "quick question", "hi, i need some help"]
_ASKS = ["my {a} stopped working after the upgrade", "how do i fix {a} on 14.04", "{a} is broken, any idea why?",
         "i can't get {a} to work with {b}", "is there a way to reset {a}", "why does {a} say \"{b} not found\""]
_REPLIES = ["what does {b} say?", "which version of ubuntu?", "did you try rebooting, then {b}?", "pastebin the output",
            "that is a {a} problem, not {b}", "thanks, that worked", "no luck, same error", "ok, trying now",
            "it says {b} is missing", "yes, {a} and {b}, both"]


def _utterance(rng: random.Random, template: str, words: list[str]) -> str:
    a, b = rng.sample(words, 2)
    return template.format(a=a, b=b)


def _turn(utterances: list[str]) -> str:
    return " ".join(f"{u} {EOU}" for u in utterances)


def _fixture_dialog(rng: random.Random) -> tuple[str, str]:
    """(context, true response) of one synthetic support chat."""
    topic = rng.choice(sorted(_TOPICS))
    words, fixes = _TOPICS[topic]
    n_turns = rng.randint(2, 8)
    parts = []
    for t in range(n_turns):
        if t == 0:
            utts = [rng.choice(_OPENERS), _utterance(rng, rng.choice(_ASKS), words)]
        else:
            utts = [_utterance(rng, rng.choice(_REPLIES), words) for _ in range(rng.randint(1, 2))]
            if rng.random() < 0.3:
                utts.append(rng.choice(fixes))
        parts.append(f"{_turn(utts)} {EOT}")
    reply = [rng.choice(fixes)]
    if rng.random() < 0.4:
        reply.append(_utterance(rng, rng.choice(_REPLIES), words))
    return " ".join(parts), _turn(reply)


def write_fixture(
    out: str | Path, *, seed: int = 0, n_train: int = 200, n_valid: int = 50, n_test: int = 50, same_text_rate: float = 0.05
) -> dict[str, Path]:
    """Write ``train.csv``, ``valid.csv`` and ``test.csv`` in the corpus' exact layout; same seed, same bytes.

    Synthetic Ubuntu support chats on a few topics (the true response is on the context's topic, so a
    lexical baseline beats chance). Distractors are other dialogs' responses; with ``same_text_rate`` a
    distractor repeats the ground truth text, as in the real files. Quoting is the csv module's minimal
    quoting with ``\\r\\n`` line ends (what the corpus' creation scripts wrote).
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    paths = {}
    n_pool = max(50, n_train + n_valid + n_test)
    pool = [_fixture_dialog(rng) for _ in range(n_pool)]
    responses = [r for _, r in pool]

    def write(name: str, header, rows) -> None:
        p = out / name
        tmp = p.with_name(f".{name}.tmp")
        with open(tmp, "w", encoding="utf-8", newline="") as fh:
            w = csv.writer(fh, lineterminator="\r\n")
            w.writerow(header)
            w.writerows(rows)
        tmp.replace(p)
        paths[name[:-4]] = p

    train_rows = []
    for i in range(n_train):
        ctx, resp = pool[i % n_pool] if i < n_pool else _fixture_dialog(rng)
        if rng.random() < 0.5:
            train_rows.append((ctx, resp, "1.0"))
        else:
            train_rows.append((ctx, rng.choice(responses), "0.0"))
    write("train.csv", TRAIN_HEADER, train_rows)
    for name, n in (("valid.csv", n_valid), ("test.csv", n_test)):
        rows = []
        for _ in range(n):
            ctx, gt = _fixture_dialog(rng)
            ds = [gt if rng.random() < same_text_rate else rng.choice(responses) for _ in range(N_DISTRACTORS)]
            rows.append((ctx, gt, *ds))
        write(name, EVAL_HEADER, rows)
    return paths
