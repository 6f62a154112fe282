"""A pathological paragraph (a 300K-character run of dots, then megabytes of one never-ending sentence) is
chunked in time and memory that grow linearly: the sentence splitter no longer retries a punctuation run
from each of its marks (quadratic: it never finished), and token counts of long texts are summed over
pieces cut at whitespace (one 3 MB text took ~1.4 GB to count whole)."""

from __future__ import annotations

import json
import subprocess
import sys

import duckdb

from tests.reliability.cli import DEMO_FILE, ragwh, subprocess_env
from warehouse.paths import PROJECT_ROOT

DOTS = 300_000
#: ``ragwh ARGS`` that prints its own peak resident set (MiB) last on stderr: VmHWM, this program's own (ru_maxrss
#: would count the pytest process it was forked from: Linux keeps the larger across exec)
PEAK = (
    "import runpy, sys\nsys.argv[0] = 'ragwh'\ntry:\n    runpy.run_module('ragwh.cli', run_name='__main__')\n"
    "finally:\n    print(next(int(line.split()[1]) // 1024 for line in open('/proc/self/status') "
    "if line.startswith('VmHWM:')), file=sys.stderr)"
)
SENTENCE = "the model improves the results here, e.g. more " * 60_000  # ~2.9 MB, no sentence end


def test_a_pathological_paragraph_is_chunked_in_bounded_time_and_memory(tmp_path):
    papers = json.loads(DEMO_FILE.read_text(encoding="utf-8"))
    paper = papers[sorted(papers)[0]]
    big = "A normal first sentence. " + "." * DOTS + " " + SENTENCE.strip()
    paper["full_text"][0]["paragraphs"].append(big)
    source = tmp_path / "big.json"
    source.write_text(json.dumps({sorted(papers)[0]: paper}), encoding="utf-8")
    warehouse = tmp_path / "big.duckdb"
    loaded = ragwh("ingest", "qasper", source, "--corpus", "big", "--warehouse", warehouse)
    assert loaded.exit_code == 0, loaded.output
    done = subprocess.run(
        [sys.executable, "-c", PEAK, "chunk", "--corpus", "big", "--warehouse", str(warehouse)],
        cwd=PROJECT_ROOT,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    peak_mib = int(done.stderr.strip().splitlines()[-1])
    assert peak_mib < 950, f"chunking peaked at {peak_mib} MiB"  # here ~700 MiB; counting each text whole, ~1380
    with duckdb.connect(str(warehouse), read_only=True) as con:
        (doc_len,) = con.execute("SELECT max(char_end) FROM paragraphs").fetchone()
        tiled = con.execute(
            "SELECT chunkset, min(char_start), max(char_end), count(*) FROM chunks GROUP BY 1"
        ).fetchall()
        (doc_tokens,) = con.execute("SELECT content_tokens FROM chunks WHERE chunkset = 'doc'").fetchone()
    assert doc_len > len(big) and all(hi == doc_len for _, _, hi, _ in tiled), tiled
    assert doc_tokens > DOTS + 300_000  # every dot is a token, and the long sentence's words count
