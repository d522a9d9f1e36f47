"""Builds the sample data in ``submissions/samples/`` (every benchmark's: :data:`BUILT`).

Every file is constructed here: the DSTC6, bAbI and AirDialogue samples by dialeval's own simulators (fixed
seeds), the DSTC7/DSTC8 ones by their baseline module, the others from the small hand-written texts below
(invented titles, people and chat lines). Nothing is copied from a release. ``tests/test_samples.py`` rebuilds
them and checks the committed files are byte-identical, so this script is their documented origin.

Run ``python tests/sample_data.py`` to rewrite them (README.md files are hand-written and left alone).

Each folder is a ``--data`` folder of its benchmark plus ``sample.json`` (the split to try and the example
run; it also marks the folder as constructed data, never a release copy) and the example run itself.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import tempfile
from pathlib import Path

SAMPLES = Path(__file__).resolve().parents[1] / "submissions" / "samples"
BUILT = ("dstc6", "babi", "movie-dialog", "ubuntu", "airdialogue", "dstc7", "dstc8", "convai2", "douban", "ecommerce",
         "ubuntu-v1")


def manifest(folder: Path, benchmark: str, split: str, run: str, note: str) -> None:
    text = json.dumps({"benchmark": benchmark, "split": split, "example_run": run, "note": note}, indent=2)
    (folder / "sample.json").write_text(text + "\n", encoding="utf-8")


def ranking(item_id: str, ids: list[str]) -> dict:
    return {"dialog_id": item_id, "lst_candidate_id": [{"candidate_id": c, "rank": r} for r, c in enumerate(ids, 1)]}


def example_order(gold: str, ids: list[str], miss: bool, k: int = 3) -> list[str]:
    """The top-k an example system returns: the gold first, or second where ``miss`` (so not every number is 1)."""
    rest = [c for c in ids if c != gold]
    return (rest[:1] + [gold] + rest[1:] if miss else [gold] + rest)[:k]


# ---- dstc6 --------------------------------------------------------------------------------------------------
def build_dstc6(out: Path) -> None:
    from dialeval.formats.dstc6 import read_dataset
    from dialeval.simulator.generate import generate_challenge

    generate_challenge(out, seed=1, n_train=3, n_test=2, splits="trn,tst1")
    for kb in out.glob("extendedkb*.txt"):  # 2.5 MB each; no scorer or baseline needs them
        kb.unlink()
    run = []
    for test in sorted((out / "tst1").glob("dialog-task*.json")):
        if test.name.endswith(".answers.json"):
            continue
        key = json.loads(test.with_name(test.name[: -len(".json")] + ".answers.json").read_text())
        gold = {k["dialog_id"]: k["lst_candidate_id"][0]["candidate_id"] for k in key}
        for n, it in enumerate(read_dataset(test)):
            ids = [c.candidate_id for c in it.candidates]
            run.append(ranking(it.dialog_id, example_order(gold[it.dialog_id], ids, miss=n == 1 and "task2" in test.name)))
    (out / "example-run.json").write_text(json.dumps(run) + "\n", encoding="utf-8")
    manifest(out, "dstc6", "tst1", "example-run.json", "a simulated DSTC6 challenge: trn (3 items per task), tst1 "
             "(2 items per task, answer keys beside the test files)")


# ---- babi ---------------------------------------------------------------------------------------------------
BABI_SPLITS = {"trn": ("trn", 1), "dev": ("tst1", 2), "tst": ("tst1", 1), "tst-OOV": ("tst2", 1)}
"""bAbI split <- (simulated split, seed): tst-OOV from the second, out-of-vocabulary KB, as in the release."""


def build_babi(out: Path) -> None:
    from dialeval.formats.convert import BABI_CANDIDATES, BABI_TASK_FILES
    from dialeval.simulator.generate import generate_challenge

    out.mkdir(parents=True, exist_ok=True)
    bots: set[str] = set()
    texts: dict[tuple[int, str], str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for split, (sim_split, seed) in BABI_SPLITS.items():
            sim = Path(tmp) / f"{split}-{seed}"
            n_train = 1 if sim_split == "trn" else 0
            generate_challenge(sim, seed=seed, n_train=n_train, n_test=1, full_conversations=True,
                               splits=sim_split)
            for task in range(1, 6):
                (fb,) = [p for p in (sim / "fb" / sim_split).glob(f"*task{task}*.txt") if "candidates" not in p.name]
                text = fb.read_text(encoding="utf-8").replace("<silence>", "<SILENCE>")  # bAbI's spelling
                texts[(task, split)] = text
                bots.update(line.split("\t", 1)[1] for line in text.splitlines() if "\t" in line)
    for (task, split), text in texts.items():
        (out / f"{BABI_TASK_FILES[task]}-{split}.txt").write_text(text, encoding="utf-8")
    cands = sorted(bots)
    (out / BABI_CANDIDATES[1]).write_text("".join(f"1 {c}\n" for c in cands), encoding="utf-8")
    cand_id = {c: str(n) for n, c in enumerate(cands, 1)}
    run = []
    for task in range(1, 6):
        stem = f"{BABI_TASK_FILES[task]}-tst"
        conv = turn = 0
        for line in texts[(task, "tst")].splitlines():
            if not line.strip():
                continue
            lid, _, rest = line.partition(" ")
            if lid == "1":
                conv += 1
            if "\t" in rest:
                turn += 1
                gold = cand_id[rest.split("\t", 1)[1]]
                miss = task == 3 and turn == 2  # one wrong turn: task 3's per-dialog accuracy is 0
                run.append(ranking(f"{stem}:{conv}:{lid}", example_order(gold, list(cand_id.values()), miss)))
    (out / "example-run.json").write_text(json.dumps(run) + "\n", encoding="utf-8")
    manifest(out, "babi", "tst", "example-run.json", "bAbI dialog tasks 1-5 in the release's FB text layout, one "
             "simulated conversation per task and split (trn, dev, tst, tst-OOV); task 6 (DSTC2) is not included")


# ---- movie-dialog -------------------------------------------------------------------------------------------
MOVIE_ENTITIES = [
    "The Lantern Keeper", "Harbor of Glass", "Nine Winters", "Quiet Engines", "Paper Comets",
    "Salt and Cedar", "Orchard, Burning", "The Last Cartographer", "Ivy Marlowe", "Tomas Brenn",
    "Odile Fairweather", "Keiran Vasquez", "Mina Hollis", "drama", "comedy", "science fiction", "1987", "2004",
    "French", "good",
]
MOVIE_FILES = {
    "task1_qa_dev.txt": (
        "1 who directed The Lantern Keeper?\tTomas Brenn\n"
        "1 what movies did Ivy Marlowe act in?\tHarbor of Glass, Orchard, Burning\n"
        "1 what genre is Quiet Engines?\tscience fiction\n"
        "1 when was Nine Winters released?\t1987\n"
    ),
    "task2_recs_dev.txt": (
        "1 I liked Nine Winters and Harbor of Glass. Can you suggest something to watch?\tSalt and Cedar\n"
        "1 Paper Comets and Quiet Engines are films I really liked. Any other suggestions?\tThe Last Cartographer\n"
    ),
    "task3_qarecs_dev.txt": (
        "1 I liked The Lantern Keeper and Nine Winters. I'm looking for a drama.\tSalt and Cedar\n"
        "2 Who directed that?\tOdile Fairweather\n"
        "3 I rate Tomas Brenn movies. Any other suggestions?\tHarbor of Glass\n"
        "\n"
        "1 Quiet Engines, Paper Comets and Harbor of Glass are films I really liked. Something French?\t"
        "Orchard, Burning\n"
        "2 Who does that star?\tIvy Marlowe, Keiran Vasquez\n"
        "3 I rate comedy movies. Any other suggestions?\tThe Last Cartographer\n"
    ),
    "task4_reddit_dev.txt": (
        "1 What is the most underrated heist movie ?\tQuiet Engines , nobody talks about it .\n"
        "2 I never saw it . Is it slow ?\tThe first half is , the ending makes up for it .\n"
        "\n"
        "1 Which film made you cry on a plane ?\tNine Winters , every single time .\n"
    ),
    "task4_reddit_cand-valid.txt": (
        "1 The soundtrack alone is worth it .\n\n1 Never seen it , adding it to my list .\n\n"
        "1 Nine Winters , every single time .\n\n1 I fell asleep halfway through .\n\n1 Book was better .\n"
    ),
}


def build_movie(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "entities.txt").write_text("".join(e + "\n" for e in MOVIE_ENTITIES), encoding="utf-8")
    for name, text in MOVIE_FILES.items():
        (out / name).write_text(text, encoding="utf-8")
    eid = {e: f"e{n}" for n, e in enumerate(MOVIE_ENTITIES, 1)}
    run = []
    for name, text in MOVIE_FILES.items():
        m = re.match(r"(task([1-4])_[a-z]+_dev)\.txt$", name)
        if not m:
            continue
        conv = 0
        for line in text.splitlines():
            if not line:
                continue
            lid, _, rest = line.partition(" ")
            conv += lid == "1"
            answer = rest.split("\t", 1)[1]
            item = f"{m.group(1)}:{conv}:{lid}"
            if m.group(2) == "4":  # Reddit: the reply, or a candidate line, by id
                ids = ["c2", "reply", "c1"] if conv == 1 and lid == "2" else ["reply", "c5", "c1"]
            else:  # the answer's entities (commas inside titles kept: "Orchard, Burning"), then other entities
                golds = [eid[e] for e in MOVIE_ENTITIES if e in answer][:1]
                ids = golds + [i for i in eid.values() if i not in golds][:2]
            run.append(ranking(item, ids))
    (out / "example-run.json").write_text(json.dumps(run) + "\n", encoding="utf-8")
    manifest(out, "movie-dialog", "dev", "example-run.json", "the Movie Dialog layout (tasks 1-4, dev split, "
             "entities.txt, the Reddit candidate file) with invented films and people")


# ---- ubuntu -------------------------------------------------------------------------------------------------
UBUNTU_ROWS = [
    ("how do i mount a usb stick __eou__ __eot__ is it listed in lsblk ? __eou__ __eot__",
     "yes it shows up as sdb1 __eou__",
     ["try sudo apt update first __eou__", "which desktop do you use ? __eou__", "reboot and check again __eou__",
      "yes it shows up as sdb1 __eou__", "no idea sorry __eou__", "what does dmesg say ? __eou__",
      "use gparted for that __eou__", "ask in the kernel channel __eou__", "thanks that worked __eou__"]),
    ("my wifi drops after suspend __eou__ __eot__",
     "restart network-manager after resume , does that help ? __eou__",
     ["is your disk full ? __eou__", "sudo systemctl restart NetworkManager __eou__", "that's a grub issue __eou__",
      "check the fan speed __eou__", "what card is it ? __eou__", "install the restricted extras __eou__",
      "hello __eou__", "try a live usb __eou__", "which release , 22.04 ? __eou__"]),
    ("how can i see which process uses port 80 __eou__ __eot__",
     "sudo ss -ltnp , look for :80 __eou__",
     ["use chmod +x __eou__", "nginx probably __eou__", "it is in /etc/hosts __eou__", "try top __eou__",
      "what error do you get ? __eou__", "apt-cache policy __eou__", "lsof -i :80 works too __eou__",
      "reinstall it __eou__", "sure __eou__"]),
    ("is there a way to undo apt autoremove __eou__ __eot__ not directly __eou__ __eot__",
     "check /var/log/apt/history.log for what it removed __eou__",
     ["yes ctrl z __eou__", "use snap instead __eou__", "reinstall ubuntu __eou__", "what package ? __eou__",
      "it's in the trash __eou__", "look at dpkg.log __eou__", "no __eou__", "ask in #debian __eou__",
      "timeshift can restore it __eou__"]),
]
UBUNTU_TRAIN = [
    ("how do i check my ubuntu version __eou__ __eot__", "lsb_release -a __eou__", "1"),
    ("how do i check my ubuntu version __eou__ __eot__", "buy a new laptop __eou__", "0"),
    ("where are cron logs __eou__ __eot__", "grep CRON /var/log/syslog __eou__", "1"),
    ("where are cron logs __eou__ __eot__", "my cat likes ubuntu __eou__", "0"),
    ("how do i mount a usb stick __eou__ __eot__", "plug it in and check lsblk __eou__", "1"),
    ("how do i mount a usb stick __eou__ __eot__", "the wifi driver is broken __eou__", "0"),
]


def _csv(rows: list[list[str]]) -> str:
    import csv
    import io

    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue()


def build_ubuntu(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    header = ["Context", "Ground Truth Utterance"] + [f"Distractor_{i}" for i in range(9)]
    (out / "test.csv").write_text(_csv([header] + [[c, g, *d] for c, g, d in UBUNTU_ROWS]), encoding="utf-8")
    train = [["Context", "Utterance", "Label"]] + [[c, u, label] for c, u, label in UBUNTU_TRAIN]
    (out / "train.csv").write_text(_csv(train), encoding="utf-8")
    # a headerless score matrix: one row per test.csv row, columns gt, d0 ... d8 (row 2 ranks d1 first)
    scores = [[0.9, 0.1, 0.2, 0.3, 0.8, 0.0, 0.4, 0.1, 0.2, 0.5],
              [0.6, 0.2, 0.7, 0.1, 0.0, 0.3, 0.1, 0.0, 0.2, 0.4],
              [0.8, 0.0, 0.1, 0.0, 0.2, 0.3, 0.1, 0.5, 0.0, 0.1],
              [0.7, 0.2, 0.1, 0.1, 0.0, 0.1, 0.4, 0.0, 0.1, 0.6]]
    (out / "example-scores.csv").write_text(_csv([[str(v) for v in row] for row in scores]), encoding="utf-8")
    manifest(out, "ubuntu", "test", "example-scores.csv", "the Ubuntu v2 layout: test.csv (4 rows: context, ground "
             "truth, 9 distractors) and train.csv (for the TF-IDF baseline), invented chat lines")


# ---- airdialogue --------------------------------------------------------------------------------------------
def build_airdialogue(out: Path) -> None:
    from dialeval.baselines.airdialogue import write_submission
    from dialeval.simulator.airdialogue import write_airdialogue

    write_airdialogue(out, seed=1, n=4, split="dev")
    write_submission("cheapest-flight", out, "dev", out / "example-run.jsonl")
    # response generation (airdialogue infer-bleu): one predicted turn per target turn, every third one generic
    from dialeval.metrics.bleu import infer_items

    lines = [json.loads(line) for line in (out / "dev_data.json").read_text(encoding="utf-8").splitlines()]
    targets = infer_items([d.get("dialogue") or [] for d in lines], [d.get("correct_sample") is not False for d in lines])
    hyps = ["ok , let me check that for you ." if n % 3 == 2 else text for n, (_, _, text) in enumerate(targets)]
    (out / "example-hyps.txt").write_text("".join(h + "\n" for h in hyps), encoding="utf-8")
    manifest(out, "airdialogue", "dev", "example-run.jsonl", "a simulated AirDialogue dev split (4 contexts with "
             "dialogues, their KBs); the example run is the cheapest-flight baseline's")


# ---- convai2 ------------------------------------------------------------------------------------------------
CONVAI2_POOL = [
    "i am a night owl , i do my best work after midnight .",
    "my favorite season is autumn because of the colors .",
    "i have two cats named pepper and salt .",
    "do you like to cook ? i make a mean lasagna .",
    "i work at a bakery downtown .",
    "i just got back from a trip to the mountains .",
    "what kind of music do you listen to ?",
    "i am learning to play the cello .",
    "my brother is a firefighter .",
    "i collect old maps of cities .",
    "have you ever been to the ocean ?",
    "i run every morning before work .",
    "my grandmother taught me how to knit .",
    "i prefer tea over coffee .",
    "i am saving up for a new bike .",
    "that sounds like a lot of fun !",
    "i grew up on a farm with goats .",
    "what do you do for a living ?",
    "i volunteer at the animal shelter on weekends .",
    "i love reading mystery novels .",
    "my car broke down again yesterday .",
    "i am allergic to peanuts .",
    "we should go hiking sometime .",
    "i paint landscapes in my free time .",
    "i am not a big fan of crowds .",
    "my dog loves to chase squirrels .",
    "i moved here from texas last year .",
    "i am studying to become a nurse .",
    "pizza is my favorite food .",
    "i like to watch old movies on sundays .",
]

CONVAI2_DIALOGS = [
    (["i love the beach .", "i have a dog named max .", "i work as a teacher .", "my favorite color is blue ."],
     [("hi ! how are you today ?", "i am great , just got back from walking my dog max ."),
      ("oh nice , what kind of dog is he ?", "he is a golden retriever , he loves the beach ."),
      ("i live far from the ocean sadly .", "that is too bad , i teach near the shore so i go often .")]),
    (["i play guitar in a band .", "i am vegetarian .", "i live in a small apartment .", "i like rainy days ."],
     [("hello , what are you up to ?", "just practicing guitar for a show with my band ."),
      ("that is cool . what do you play ?", "mostly rock covers , some of our own songs too ."),
      ("do you eat before shows ?", "a little salad , i am vegetarian so i keep it light .")]),
    (["i am a nurse .", "i have three kids .", "i enjoy gardening .", "i drive an old truck ."],
     [("hey there , long day ?", "yes , a twelve hour shift at the hospital ."),
      ("wow , you must be tired .", "very , but my kids cheer me up when i get home ."),
      ("what do you do to relax ?", "i work in my garden , tomatoes are my pride .")]),
]


def build_convai2(out: Path) -> None:
    import random

    from convai2_files import write_turns

    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(2018)
    # 19 distractors from the pool, then the gold last, as in the release's valid files
    dialogs = [(persona, [(text, label, [*rng.sample(CONVAI2_POOL, 19), label]) for text, label in turns])
               for persona, turns in CONVAI2_DIALOGS]
    write_turns(out / "valid_self_original.txt", dialogs)
    from dialeval.formats.convai2 import read_turns

    ids = read_turns(out / "valid_self_original.txt").item_ids
    positions = [str(j) for j in range(1, 21)]
    runs = [ranking(iid, example_order("20", positions, miss=i == 4)) for i, iid in enumerate(ids)]
    (out / "example-run.json").write_text(json.dumps(runs, indent=1) + "\n", encoding="utf-8")
    manifest(out, "convai2", "valid", "example-run.json", "ParlAI's FB dialog format: 3 dialogs, 9 turns of 20 "
             "candidates (the gold last), invented persona lines and replies")


def build_noesis(out: Path) -> None:
    """DSTC7 / DSTC8: constructed chats in the released layout (dialeval.baselines.dstc7, which also ranks them)."""
    from dialeval.baselines.dstc7 import write_samples

    write_samples(out, out.name)


# ---- douban, ecommerce, ubuntu-v1: the SMN/DAM TSV form -----------------------------------------------------
# invented, word-segmented chat lines: Chinese for Douban and E-commerce, Ubuntu-like English for Ubuntu v1
ZH = {
 "电影": (["周末 想 去 看 电影", "最近 有 什么 好看 的 片子", "你 喜欢 科幻片 吗"], ["新 上映 的 科幻片 挺 好看 的", "我 推荐 那部 动画 电影", "电影院 周末 人 很多", "可以 一起 去 看 首映"]),
 "美食": (["晚上 吃 什么 好 呢", "附近 新开 了 一家 火锅店", "你 吃 辣 吗"], ["火锅店 的 毛肚 很 新鲜", "我 不太 能 吃 辣", "那家 店 要 排队 很久", "周末 一起 去 尝尝 吧"]),
 "旅行": (["假期 打算 去 哪里 玩", "想 去 海边 看 日出", "机票 现在 贵 吗"], ["海边 的 日出 特别 美", "提前 订 机票 便宜 一些", "可以 坐 高铁 过去", "记得 带 防晒霜"]),
 "读书": (["最近 在 读 什么 书", "推荐 一本 小说 吧", "你 喜欢 看 历史书 吗"], ["这本 小说 的 结局 很 意外", "历史书 读 起来 很 有意思", "图书馆 周末 开门", "我 每天 睡前 读 半小时"]),
 "音乐": (["你 平时 听 什么 歌", "下个月 有 演唱会", "会 弹 吉他 吗"], ["演唱会 的 票 已经 卖完 了", "我 在 学 弹 吉他", "民谣 听 起来 很 放松", "那首歌 最近 很 火"]),
 "工作": (["今天 加班 到 很晚", "新 项目 下周 开始", "老板 又 开会 了"], ["加班 辛苦 了 早点 休息", "新 项目 听 起来 挺 有 挑战", "开会 的 时间 太 长 了", "周五 可以 早点 下班"]),
}

EN = {
 "wifi": (["my wifi drops after suspend __eou__", "which driver does the card use __eou__", "lspci shows an intel card __eou__"], ["try reloading iwlwifi after resume __eou__", "check dmesg for firmware errors __eou__", "disable power saving on the card __eou__", "the intel firmware package may be missing __eou__"]),
 "apt": (["apt says a package is held back __eou__", "upgrade fails with broken dependencies __eou__", "how do i fix dpkg errors __eou__"], ["run sudo apt full-upgrade __eou__", "try sudo dpkg --configure -a __eou__", "apt-mark showhold lists held packages __eou__", "sudo apt -f install fixes broken deps __eou__"]),
 "disk": (["my disk is full __eou__", "how do i see what uses space __eou__", "can i resize the root partition __eou__"], ["use du -sh on each folder __eou__", "gparted can resize it from a live usb __eou__", "clean the apt cache with apt clean __eou__", "ncdu shows usage interactively __eou__"]),
 "sound": (["no sound after the update __eou__", "pulseaudio shows no output device __eou__", "alsamixer is muted __eou__"], ["unmute the master channel in alsamixer __eou__", "restart pulseaudio with pulseaudio -k __eou__", "pick the hdmi output in sound settings __eou__", "check pavucontrol for the right sink __eou__"]),
 "ssh": (["ssh says connection refused __eou__", "is openssh server installed __eou__", "which port does ssh listen on __eou__"], ["install openssh-server first __eou__", "check ufw allows port 22 __eou__", "systemctl status ssh shows if it runs __eou__", "look at /etc/ssh/sshd_config __eou__"]),
 "gpu": (["the nvidia driver fails to load __eou__", "screen is black after login __eou__", "which driver should i use __eou__"], ["use ubuntu-drivers autoinstall __eou__", "boot with nomodeset to get a screen __eou__", "secure boot may block the module __eou__", "purge the old driver first __eou__"]),
}


def write_tsv_contexts(path: Path, topics: dict, n_ctx: int, seed: int, positives, gold_first: bool = False) -> None:
    """``n_ctx`` contexts of 10 labelled candidates (``positives(i)`` of them right) from ``topics``, seeded."""
    import random

    rng = random.Random(seed)
    names = list(topics)
    lines = []
    for i in range(n_ctx):
        t = names[i % len(names)]
        ctx, good = topics[t]
        utts = rng.sample(ctx, 2)
        npos = positives(i)
        others = [r for k in names if k != t for r in topics[k][1]]
        cands = [(1, r) for r in rng.sample(good, min(npos, 4))] + [(1, good[j % 4] + " 呀" * (1 + j // 4)) for j in range(max(0, npos - 4))]
        cands += [(0, r) for r in rng.sample(others, 10 - npos)]
        if not gold_first:
            rng.shuffle(cands)
        for lab, r in cands:
            lines.append(f"{lab}\t" + "\t".join(utts) + f"\t{r}\n")
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text("".join(lines), encoding="utf-8")


DOUBAN_POSITIVES = [1, 2, 0, 1, 3, 10, 1, 0, 2, 1, 1, 4]  # as in Douban: 0, one, several or 10 positives


TSV_SAMPLES = {  # name: (topics, contexts, seed, positives per context, the positive first, sample.json's note)
    "douban": (ZH, len(DOUBAN_POSITIVES), 25, lambda i: DOUBAN_POSITIVES[i], False, "Douban's TSV form: test.txt, 12 "
               "contexts x 10 candidates with 0, 1, several or 10 positives, invented word-segmented chat lines"),
    "ecommerce": (ZH, 12, 26, lambda i: 1, False, "E-commerce's TSV form: test.txt, 12 contexts x 10 candidates with "
                  "one positive each, invented word-segmented chat lines"),
    "ubuntu-v1": (EN, 12, 27, lambda i: 1, True, "Ubuntu v1 in the SMN/DAM TSV form: test.txt, 12 contexts x 10 "
                  "candidates, the positive first, invented chat lines"),
}


def build_tsv(out: Path) -> None:
    """test.txt, and the TF-IDF baseline's scores on it as the example run."""
    from dialeval.baselines.selection import run

    topics, n_ctx, seed, positives, gold_first, note = TSV_SAMPLES[out.name]
    write_tsv_contexts(out / "test.txt", topics, n_ctx, seed, positives, gold_first)
    run("tfidf", out / "test.txt", out / "example-scores.txt")
    manifest(out, out.name, "test", "example-scores.txt", note)


BUILDERS = {"dstc7": build_noesis, "dstc8": build_noesis, "dstc6": build_dstc6, "babi": build_babi, "movie-dialog": build_movie, "ubuntu": build_ubuntu,
            "airdialogue": build_airdialogue, "convai2": build_convai2, "douban": build_tsv, "ecommerce": build_tsv,
            "ubuntu-v1": build_tsv}


def build(root: Path, names=BUILT) -> None:
    """Write the samples ``names`` under ``root/<name>/`` (each folder's README.md is kept as it is)."""
    for name in names:
        folder = root / name
        readme = (folder / "README.md").read_bytes() if (folder / "README.md").is_file() else None
        if folder.exists():
            shutil.rmtree(folder)
        BUILDERS[name](folder)
        if readme is not None:
            (folder / "README.md").write_bytes(readme)


if __name__ == "__main__":
    build(SAMPLES, sys.argv[1:] or BUILT)
