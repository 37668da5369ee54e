"""lab.campaign.table: one Parquet file per task key, written whole; a key written twice is one
row; what a reader sees is only whole files."""
from __future__ import annotations

import numpy as np
import pyarrow.parquet as pq

from lab.campaign.table import COLUMNS, ROWS, done_keys, read_rows, write_row


def row(key: str, problem: str, solver: str, status: str = "ok", **more) -> dict:
    return {"key": key, "problem": problem, "solver": solver, "settings": "", "status": status,
            "iterations": 3, "error": 1e-9, **more}


def test_a_key_written_twice_is_one_row_and_rows_come_sorted(tmp_path):
    write_row(tmp_path, row("b", "p2", "pgs"))
    write_row(tmp_path, row("a", "p1", "psor", status="budget"))
    write_row(tmp_path, row("a", "p1", "psor", status="ok"))  # a retried task
    rows = read_rows(tmp_path)
    assert [(r["key"], r["status"]) for r in rows] == [("a", "ok"), ("b", "ok")]
    assert list(rows[0]) == list(COLUMNS)
    assert rows[0]["contacts"] is None and rows[0]["iterations"] == 3
    assert done_keys(tmp_path) == {"a", "b"}


def test_the_trace_goes_beside_the_table(tmp_path):
    trace = {"seconds": [0.0, 0.1, 0.2], "errors": [1.0, 1e-3, np.inf]}
    write_row(tmp_path, row("k", "p", "pgs", trace=trace))
    (got,) = read_rows(tmp_path)
    assert got["trace"] == "traces/k.npz"
    with np.load(tmp_path / got["trace"]) as z:
        assert z["seconds"].tolist() == [0.0, 0.1, 0.2] and z["errors"][-1] == np.inf


def test_a_half_written_file_is_not_read_and_the_folder_reads_as_one_table(tmp_path):
    write_row(tmp_path, row("a", "p1", "pgs"))
    write_row(tmp_path, row("b", "p1", "apgd"))
    # what an interrupted write leaves: a temporary dot-name, never a .parquet of a key
    (tmp_path / ROWS / ".tmp-1-abc.parquet").write_bytes(b"PAR1 half")
    assert done_keys(tmp_path) == {"a", "b"}
    assert len(read_rows(tmp_path)) == 2
    # pyarrow (and so pandas, DuckDB's reader of the same files) reads the folder as it is
    table = pq.read_table(tmp_path / ROWS)
    assert table.num_rows == 2 and table.column_names == list(COLUMNS)


def test_an_empty_campaign_folder_has_no_rows(tmp_path):
    assert read_rows(tmp_path) == [] and done_keys(tmp_path) == set()


def test_the_docs_list_every_column():
    from pathlib import Path

    from lab.campaign.table import columns_markdown

    page = Path(__file__).resolve().parents[3] / "docs" / "campaigns.md"
    assert columns_markdown() in page.read_text(encoding="utf-8")
