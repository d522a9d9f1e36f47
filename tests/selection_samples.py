"""The constructed samples of the SMN/DAM TSV benchmarks (submissions/samples/{douban,ecommerce,ubuntu-v1}/test.txt).

Invented, word-segmented chat lines (Chinese for Douban and E-commerce, Ubuntu-like English for Ubuntu v1), put
together by a seeded script: ``python tests/selection_samples.py`` rewrites the files, and
``tests/test_selection_reference.py`` checks that they are what it builds.
"""

from __future__ import annotations

import random
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "submissions" / "samples"

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


def build(path, topics, n_ctx, seed, positives, gold_first=False):
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


def build_all(root: Path = ROOT) -> None:
    build(root / "douban" / "test.txt", ZH, len(DOUBAN_POSITIVES), 25, lambda i: DOUBAN_POSITIVES[i])
    build(root / "ecommerce" / "test.txt", ZH, 12, 26, lambda i: 1)
    build(root / "ubuntu-v1" / "test.txt", EN, 12, 27, lambda i: 1, gold_first=True)


if __name__ == "__main__":
    build_all()
