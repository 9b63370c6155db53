"""What `minimodel train` prints at the end: every part of the run folder, and what to do next."""

from __future__ import annotations

from minimodel.commands.train import saved_and_next


def test_the_saved_line_names_snapshots_and_checkpoints_and_suggests_next_steps(tmp_path):
    for name in ("model.safetensors", "tokenizer.json", "metrics.jsonl", "loss.png"):
        (tmp_path / name).write_text("x")
    (tmp_path / "snapshots").mkdir()
    (tmp_path / "checkpoints").mkdir()
    text = saved_and_next(tmp_path, "gpt")
    first, *rest = text.splitlines()
    assert first.endswith("model.safetensors, tokenizer.json, metrics.jsonl, loss.png, "
                          "snapshots/, checkpoints/")
    assert rest[0] == "next:"
    commands = [line.split("#")[0].strip() for line in rest[1:]]
    assert commands == [f'minimodel generate {tmp_path} --prompt "ROMEO:"',
                        f"minimodel explore {tmp_path} --out {tmp_path}/explorer.html",
                        f"minimodel doctor {tmp_path}", "minimodel lab next"]
    cbow = saved_and_next(tmp_path, "cbow")
    assert "generate" not in cbow and "snapshots/" in cbow
