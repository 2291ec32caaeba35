"""The one points table: what the explorer's CSV and the datasets' tables are written
from."""

from __future__ import annotations

import csv
import io

from app.results.services.table import csv_text


def test_csv_cells_cannot_become_spreadsheet_formulas() -> None:
    text = csv_text(
        [{"system": '=HYPERLINK("x")', "organization": "+1", "rank": 1}],
        ("rank", "system", "organization"),
    )
    row = next(csv.DictReader(io.StringIO(text)))
    assert row["system"].startswith("'=") and row["organization"] == "'+1" and row["rank"] == "1"
