"""Output folders replaced as a whole (``simulate --out --force``, ``demo --out``, ``leaderboard build --out``): one rule
(:mod:`dialeval.files.outdir`): a new or empty folder, or one the same command wrote; anything else is refused with one
line (exit 2) and left exactly as it was."""

from __future__ import annotations

from pathlib import Path

from conftest import run_cli

SIM = ("--train", "1", "--test", "2", "--splits", "trn,tst1", "--tasks", "1")


def _tree(folder: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None) for p in sorted(folder.rglob("*"))}


def _one_line(r, code: int, *said: str) -> None:
    assert r.returncode == code and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr
    for s in said:
        assert s in r.stderr, r.stderr


def test_simulate_force_never_replaces_a_folder_simulate_did_not_write(tmp_path):
    # before: `simulate --out ~ --force` swapped the home folder (or a cache, a registry) for the challenge
    from dialeval.leaderboard.registry import Registry

    home = tmp_path / "home"
    (home / ".cache" / "dialeval").mkdir(parents=True)
    (home / ".bashrc").write_text("export PATH=$HOME/bin:$PATH\n")
    (home / ".cache" / "dialeval" / "index.bin").write_bytes(b"\x00" * 64)
    with Registry(tmp_path / "registry"):
        pass
    sim = tmp_path / "sim"
    assert run_cli("simulate", "--out", sim, *SIM).returncode == 0
    (sim / "notes.txt").write_text("the organizer's own notes\n")  # a simulated challenge someone added to
    for folder, held in ((home, ".bashrc"), (tmp_path / "registry", "registry.sqlite"), (sim, "notes.txt")):
        before = _tree(folder)
        r = run_cli("simulate", "--out", folder, "--force", *SIM)
        _one_line(r, 2, f"--out {folder}: holds '{held}' and is not a challenge that simulate wrote")
        assert _tree(folder) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home", "registry", "sim"]  # no temp folder left


def test_simulate_force_replaces_its_own_output_and_an_empty_folder(tmp_path):
    out = tmp_path / "sim"
    out.mkdir()
    assert run_cli("simulate", "--out", out, *SIM).returncode == 0  # an empty folder
    assert (out / ".dialeval-simulate").is_file() and (out / "trn").is_dir()
    r = run_cli("simulate", "--out", out, *SIM)
    _one_line(r, 2, "is not empty (it is a challenge that simulate wrote: use --force to replace it)")
    assert run_cli("simulate", "--out", out, "--force", "--train", "0", "--test", "2", "--splits", "tst2").returncode == 0
    assert sorted(p.name for p in out.iterdir()) == [".dialeval-simulate", "extendedkb2.txt", "simulator.json", "tst2"]
    (out / ".dialeval-simulate").unlink()  # written before the marker existed: simulator.json says whose it is
    assert run_cli("simulate", "--out", out, "--force", *SIM).returncode == 0
    assert (out / "trn").is_dir() and not (out / "tst2").exists()


def test_demo_refuses_a_folder_it_did_not_write_before_any_work(tmp_path):
    home = tmp_path / "home"
    (home / "submission").mkdir(parents=True)  # a team's own submission, which the demo would replace
    (home / "submission" / "run.json").write_text("[]")
    before = _tree(home)
    r = run_cli("demo", "--out", home, "--no-organizer")
    _one_line(r, 2, f"--out {home}: holds files and is not a folder an earlier demo wrote")
    assert _tree(home) == before and r.stdout == ""  # refused before the challenge step
