"""Run reports: a pandas table per kernel plus a summary, written as Markdown, CSV and a
self-contained HTML page (speedup chart embedded as a base64 PNG), and published as Prefect
artifacts. Columns ending in `_s` are compute seconds per stage, from the artifact records."""
from __future__ import annotations

import base64
import html
import io
import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from artifacts.files import write_atomic

from .runs import Run

COLUMNS = ["kernel", "status", "unit", "timing_shape", "baseline", "best", "speedup", "speedup_verify", "operators", "bound",
           "candidates_tried", "candidates_accepted", "verify_trials", "roundtrip", "hot_window", "recover_s",
           "rebuild_s", "profile_s", "edit_s", "verify_s", "time_s", "error"]
FORMATS = ("md", "csv", "html")


@dataclass
class Report:
    """A run's kernel table and summary."""

    run: Run
    table: pd.DataFrame
    summary: dict

    def markdown(self) -> str:
        lines = [f"# AsmEvo run {self.run.run_id}", "",
                 f"suite `{self.run.suite}`, state {self.run.state}, config `{self.run.config}`", "",
                 markdown_table(_summary_table(self.summary)), "", markdown_table(self.table), ""]
        return "\n".join(lines)

    def csv(self) -> str:
        return self.table.to_csv(index=False)

    def html(self) -> str:
        chart = _chart_png(self.table)
        img = f'<img alt="speedup per kernel" src="data:image/png;base64,{chart}">' if chart else "<p>no timings</p>"
        return "\n".join([
            "<!doctype html>", "<html><head><meta charset='utf-8'>",
            f"<title>AsmEvo run {html.escape(self.run.run_id)}</title>",
            "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
            "td,th{border:1px solid #ccc;padding:2px 6px;font-size:90%}</style></head><body>",
            f"<h1>AsmEvo run {html.escape(self.run.run_id)}</h1>",
            f"<p>suite <code>{html.escape(self.run.suite)}</code>, state {html.escape(self.run.state)}, "
            f"config <code>{html.escape(str(self.run.config))}</code></p>",
            _summary_table(self.summary).to_html(index=False), img, self.table.to_html(index=False, na_rep=""),
            "</body></html>"])

    def render(self, fmt: str) -> str:
        return {"md": self.markdown, "csv": self.csv, "html": self.html}[fmt]()

    def write(self) -> dict[str, Path]:
        """report.md, report.csv and report.html in the run directory."""
        paths = {}
        for fmt in FORMATS:
            paths[fmt] = self.run.dir / f"report.{fmt}"
            write_atomic(paths[fmt], self.render(fmt).encode())
        return paths


def kernel_table(rows: list[dict]) -> pd.DataFrame:
    table = pd.DataFrame(rows, columns=COLUMNS)
    return table.sort_values("kernel", kind="stable").reset_index(drop=True)


def summarize(table: pd.DataFrame) -> dict:
    """Kernels, how many ran cleanly / improved, and the geometric-mean and max speedup."""
    speedups = table["speedup"].dropna().astype(float)
    return {"kernels": len(table), "ok": int((table["status"] == "ok").sum()),
            "improved": int((speedups > 1.0).sum()),
            "geomean_speedup": round(math.exp(speedups.map(math.log).mean()), 4) if len(speedups) else None,
            "max_speedup": round(float(speedups.max()), 4) if len(speedups) else None}


def markdown_table(table: pd.DataFrame) -> str:
    """A GitHub-flavoured Markdown table (`|` in cells escaped, missing values empty)."""
    def cell(value) -> str:
        text = "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)
        return text.replace("|", "\\|").replace("\n", " ")
    header = "| " + " | ".join(map(str, table.columns)) + " |"
    rule = "|" + "|".join("---" for _ in table.columns) + "|"
    body = ["| " + " | ".join(cell(v) for v in row) + " |" for row in table.itertuples(index=False)]
    return "\n".join([header, rule, *body])


def _summary_table(summary: dict) -> pd.DataFrame:
    return pd.DataFrame([{k: ("" if v is None else v) for k, v in summary.items()}])


def _chart_png(table: pd.DataFrame) -> str:
    """A horizontal bar chart of speedups, base64 PNG ('' when nothing was timed)."""
    timed = table.dropna(subset=["speedup"])
    if timed.empty:
        return ""
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 0.3 * len(timed) + 1.2))
    ax.barh(timed["kernel"], timed["speedup"].astype(float),
            color=["tab:green" if s > 1 else "tab:gray" for s in timed["speedup"]])
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_xlabel(f"speedup over K0 ({', '.join(sorted(set(timed['unit'])))})")
    ax.invert_yaxis()
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode()


def build_report(run: Run) -> Report:
    table = kernel_table(run.results())
    return Report(run, table, summarize(table))


def publish(report: Report) -> None:
    """Publish the table and the summary as Prefect artifacts of the current flow run."""
    from prefect.artifacts import create_markdown_artifact, create_table_artifact

    key = "".join(c if c.isalnum() else "-" for c in report.run.run_id.lower())
    records = report.table.astype(object).where(report.table.notna(), None).to_dict(orient="records")
    create_table_artifact(records, key=f"{key}-kernels", description=f"AsmEvo run {report.run.run_id}: kernels")
    create_markdown_artifact(report.markdown(), key=f"{key}-report", description=f"AsmEvo run {report.run.run_id}")
