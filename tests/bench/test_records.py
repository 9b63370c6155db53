"""The published speed and memory figures come from records: every record names its CPU, the
kernels picked, the date, the command and its source; the tables on the results pages and in
BENCHMARKS.md are exactly what ``benchmarks/records.py render`` makes of the records; and
every ratio the README cites is a record's ratio."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("records", REPO / "benchmarks" / "records.py")
records = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(records)

RECORDS = records.load_records()
README = (REPO / "README.md").read_text(encoding="utf-8")


def test_there_is_a_record_per_machine_the_issue_names():
    machines = " ".join(r["cpu"] for r in RECORDS)
    assert "Intel Xeon, family 6 model 167" in machines
    assert "Zen 3" in machines and any("Zen 4" in r["machine"] for r in RECORDS)


@pytest.mark.parametrize("record", RECORDS, ids=[r["_file"] for r in RECORDS])
def test_every_record_says_where_its_figures_hold_and_where_they_come_from(record):
    assert record["cpu"] and record["kernels"]["numpy"] and record["kernels"]["torch"]
    assert re.fullmatch(r"\d{4}-\d{2}(-\d{2})?", record["date"])
    assert record["command"].startswith("minimodel bench")
    assert isinstance(record["conditions"]["quiet"], bool)
    load = record["conditions"].get("load_average")
    assert load is None or (load >= 2.0) == (not record["conditions"]["quiet"])
    if record["source_kind"] == "transcribed":     # never passed off as a script's output
        assert record["source"].startswith("transcribed from ")
        assert "JSON" in record["source"]          # and says the run's file is not here
    else:
        assert "minimodel bench --json" in record["source"]
        assert "converted by benchmarks/records.py add" in record["source"]
    for step in record["step"].values():
        assert step["minimodel_ms"] > 0 and step["best_peer_ms"] > 0 and step["best_peer"]


def test_the_published_tables_are_what_the_records_give():
    for page, text in records.targets(RECORDS).items():
        assert page.read_text(encoding="utf-8") == text, \
            f"{page.name} is out of date: run python benchmarks/records.py render"


def test_a_row_shows_the_records_ratio_and_a_loaded_machine_says_so():
    table = records.render_table(RECORDS, "en", "results/records/")
    for record in RECORDS:
        row = next(line for line in table.splitlines()
                   if line.startswith(f"| {record['machine']} |") and "ms," in line)
        assert any(record["_file"] + "]" in line and record["cpu"] in line
                   for line in table.splitlines())
        quiet = record["conditions"]["quiet"]
        for step in record["step"].values():       # bold, a figure to cite, only when quiet
            assert f"{records.step_ratio(step):.2f}x" in row
            assert (f"**{records.step_ratio(step):.2f}x**" in row) == quiet
        assert ("**loaded**" in row) == (not quiet)
    spanish = records.render_table(RECORDS, "es", "results/records/")
    zen3 = next(r for r in RECORDS if "Zen 3" in r["machine"])
    assert f"**{records.step_ratio(zen3['step']['small']):.2f}x**".replace(".", ",") in spanish


def test_a_record_made_from_a_bench_json_keeps_the_runs_figures():
    bench = json.loads((REPO / "docs" / "measured.json").read_text(encoding="utf-8"))["bench"]
    made = records.record_from_bench(bench, "AMD EPYC, Zen 4", "note")
    committed = next(r for r in RECORDS if r["_file"] == "amd-epyc-zen-4-2026-11-25.json")
    assert made["step"] == committed["step"]
    assert made["memory"] == committed["memory"]
    assert made["command"] == bench["meta"]["command"]
    assert made["step"]["small"]["best_peer"] == "PyTorch eager (nanoGPT, SDPA)"  # fastest peer
    assert made["step"]["small"]["minimodel_ms"] == 123.5


def test_render_refuses_a_page_without_its_markers():
    with pytest.raises(ValueError, match="records:begin"):
        records.replace_between("# a page\n", "table", "page.md")


def test_every_ratio_the_readme_cites_is_in_a_record():
    cited = re.findall(r"(\d+\.\d+)(?:–(\d+\.\d+))?x\b", README)
    assert len(cited) >= 2, "the README's speed summary is gone"
    known = [ratio for record in RECORDS for ratio in records.ratios(record)]
    for group in cited:
        for figure in filter(None, group):
            digits = len(figure.split(".")[1])
            assert any(round(ratio, digits) == float(figure) for ratio in known), \
                f"the README cites {figure}x, which no record in docs/results/records gives"
    assert "docs/results.md" in README      # the summary links to the generated table


def test_the_readmes_main_job_loss_is_what_the_intel_record_reports_within_its_tolerance():
    # The README's validation loss was measured on the AMD hosts; the Intel report measured the
    # same main job on another BLAS: the README's declared tolerance must cover it.
    row = re.search(r"\*\*(?P<loss>\d\.\d{4}) nats/token\*\*[^|\n]*?± (?P<tol>0\.\d+)", README)
    intel = next(r for r in RECORDS if r["cpu"].startswith("Intel"))
    assert abs(intel["main_job"]["val_loss"] - float(row["loss"])) <= float(row["tol"])
