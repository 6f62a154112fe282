"""An empty or unusable LLM answer is a failed call, never a cache hit: it goes to ``llm_failures``, not
``llm_calls``; the next run asks for exactly those requests again (once each), up to ``llm.max_attempts``
runs (2), after which the answer is kept as a final failure and not asked again (``--retry-failed`` asks);
a stage where more than ``llm.max_failed_share`` of a strategy's answers failed stops the run with one line
(exit 1); a stage that finished with failed answers still to ask is recorded as not finished, so the next
run runs it again; one whose failures are final is finished and skipped."""

from __future__ import annotations

import duckdb
import yaml

from ingest.llm import LLMCache, LLMRequest
from ingest.llm.scripted import ScriptedBackend
from ragwh.experiment.config.rewriting import load_experiment
from ragwh.experiment.pipeline.rewriting import RewritingPipeline
from tests.ingest.llm.chat_server import ChatServer
from tests.reliability.cli import ragwh
from tests.reliability.inputs import write_hotpot
from warehouse.schema import ensure_schema

QUESTIONS = "1. Who is Ada?\n2. Where is Oslo?\n3. Who is Bob?"


def _config(tmp, server, **llm):
    write_hotpot(tmp / "hotpot.json")
    path = tmp / "rw.yml"
    path.write_text(
        yaml.safe_dump(
            {
                "name": "rw-failures",
                "study": "rewriting",
                "corpora": [{"name": "hp", "loader": "hotpotqa", "sources": ["hotpot.json"]}],
                "embedder": "all-MiniLM-L6-v2",
                "reranker": "none",
                "llm": {
                    "backend": "openai",
                    "base_url": server.base_url,
                    "model": "test-model",
                    "max_retries": 0,
                    **llm,
                },
                "rewriting": {"strategies": ["S1", "S2"], "seeds": [42]},
                "reader": "none",
            }
        )
    )
    return path


def _rows(warehouse, sql):
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_empty_answers_fail_the_run_in_one_line_and_are_asked_again(tmp_path, monkeypatch):
    for var in ("RAGWH_LLM_BACKEND", "RAGWH_LLM_BASE_URL", "RAGWH_LLM_MODEL", "RAGWH_LLM_REPLAY_ONLY"):
        monkeypatch.delenv(var, raising=False)
    warehouse = tmp_path / "w.duckdb"
    with ChatServer(lambda body: "") as server:
        config = _config(tmp_path, server)
        args = ("run", "--config", config, "--data", tmp_path, "--warehouse", warehouse)
        first = ragwh(*args)
        assert first.exit_code == 1
        line = first.output.strip().splitlines()[-1]
        assert line.startswith("run failed: stage rewrite [hp|all-MiniLM-L6-v2") and line.endswith(
            "|none] failed: LLMFailedShare: S2 seed 42: 2 of 2 "
            "answers failed (empty or unusable; first: hp/h1|S2|42), more than llm.max_failed_share = 0.5; "
            "they are not cached, so the next run asks for them again: check the server (openai) and the "
            "model 'test-model'"
        ), first.output
        assert server.n_requests == 2
        assert _rows(warehouse, "SELECT count(*) FROM llm_calls") == [(0,)]
        assert _rows(warehouse, "SELECT item_id, reason FROM llm_failures ORDER BY 1") == [
            ("hp/h1|S2|42", "empty"),
            ("hp/h2|S2|42", "empty"),
        ]
        second = ragwh(*args)  # asks again, exactly the two failed requests, and fails again: now final
        assert second.exit_code == 1 and "LLMFailedShare: S2 seed 42: 2 of 2 answers failed" in second.output
        assert "2 failed in llm.max_attempts = 2 runs and are kept as final failures" in " ".join(second.output.split())
        assert server.n_requests == 4
        assert _rows(warehouse, "SELECT count(*) FROM llm_failures") == [(4,)]
        third = ragwh(*args)  # final failures: not asked (the stage still stops on the share)
        assert third.exit_code == 1 and server.n_requests == 4
        monkeypatch.setenv("RAGWH_LLM_RETRY_FAILED", "0")  # so the flag's variable is removed after the test
        retried = ragwh(*args, "--retry-failed")  # asks them once more
        monkeypatch.setenv("RAGWH_LLM_RETRY_FAILED", "0")
        assert retried.exit_code == 1 and server.n_requests == 6


def test_failed_answers_are_asked_in_max_attempts_runs_then_final(tmp_path):
    """max_attempts 2: a request failing in two runs is kept final (its latest failed answer returned, counted in
    final_failed, nothing asked); retry_failed asks it again; max_attempts 1: final after the first run."""
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    ensure_schema(con)
    try:
        requests = [
            LLMRequest(f"q{i}", "rewrite_s2.v1", ({"role": "user", "content": f"question {i}"},)) for i in range(3)
        ]
        usable = lambda text: "?" in text  # noqa: E731
        answers = {"q0": QUESTIONS, "q1": "", "q2": "no question here"}
        runs = []
        for _ in range(3):
            backend = ScriptedBackend(lambda r: answers[r.item_id])
            cache = LLMCache(con, backend, progress=False)
            assert cache.generate(requests, usable=usable) == [QUESTIONS, "", "no question here"]
            runs.append(([r.item_id for r in backend.requests], cache.failed, cache.final_failed))
        assert runs == [(["q0", "q1", "q2"], 2, 0), (["q1", "q2"], 0, 2), ([], 0, 2)]
        assert con.execute("SELECT item_id, reason, count(*) FROM llm_failures GROUP BY ALL ORDER BY 1").fetchall() == [
            ("q1", "empty", 2),
            ("q2", "unusable", 2),
        ]
        answers["q1"] = QUESTIONS
        retry = ScriptedBackend(lambda r: answers[r.item_id])
        cache = LLMCache(con, retry, progress=False, retry_failed=True)
        assert cache.generate(requests, usable=usable) == [QUESTIONS, QUESTIONS, "no question here"]
        assert [r.item_id for r in retry.requests] == ["q1", "q2"] and (cache.failed, cache.final_failed) == (0, 1)
        once = ScriptedBackend(lambda r: "")
        other = [LLMRequest("q7", "rewrite_s2.v1", ({"role": "user", "content": "question 7"},))]
        first = LLMCache(con, once, progress=False, max_attempts=1)
        assert first.generate(other, usable=usable) == [""] and (first.failed, first.final_failed) == (0, 1)
        assert LLMCache(con, once, progress=False, max_attempts=1).generate(other, usable=usable) == [""]
        assert len(once.requests) == 1
    finally:
        con.close()


def test_a_rerun_against_a_working_server_asks_only_the_failed_requests(tmp_path):
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    ensure_schema(con)
    try:
        requests = [
            LLMRequest(f"q{i}", "rewrite_s2.v1", ({"role": "user", "content": f"question {i}"},)) for i in range(4)
        ]
        broken = ScriptedBackend(lambda r: "" if r.item_id in ("q1", "q3") else QUESTIONS)
        usable = lambda text: "?" in text  # noqa: E731
        first = LLMCache(con, broken, progress=False).generate(requests, usable=usable)
        assert first == [QUESTIONS, "", QUESTIONS, ""]
        assert con.execute("SELECT item_id FROM llm_calls ORDER BY 1").fetchall() == [("q0",), ("q2",)]
        working = ScriptedBackend(lambda r: QUESTIONS)
        cache = LLMCache(con, working, progress=False)
        assert cache.generate(requests, usable=usable) == [QUESTIONS] * 4
        assert [r.item_id for r in working.requests] == ["q1", "q3"] and cache.hits == 2 and cache.failed == 0
        # an unusable answer stored before (by an older version) is a miss, replaced by the new answer
        con.execute("UPDATE llm_calls SET response_text = 'no question here' WHERE item_id = 'q0'")
        again = ScriptedBackend(lambda r: QUESTIONS)
        assert LLMCache(con, again, progress=False).generate(requests, usable=usable) == [QUESTIONS] * 4
        assert [r.item_id for r in again.requests] == ["q0"]
        assert con.execute("SELECT count(*), count(DISTINCT cache_key) FROM llm_calls").fetchone() == (4, 4)
    finally:
        con.close()


def test_replay_only_replays_a_failed_answer_as_failed_and_a_missing_one_is_a_miss(tmp_path):
    """Replay-only over a run that had failed answers: a key in llm_failures (not in llm_calls) is the failed
    answer it was (the stage falls back from it), counted as failed, nothing stored; a key in neither is a miss."""
    import pytest

    from ingest.llm import LLMCacheMiss

    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    ensure_schema(con)
    try:
        requests = [
            LLMRequest(f"q{i}", "rewrite_s2.v1", ({"role": "user", "content": f"question {i}"},)) for i in range(4)
        ]
        usable = lambda text: "?" in text  # noqa: E731
        answers = {"q0": QUESTIONS, "q1": "", "q2": QUESTIONS, "q3": "no question here"}
        live = LLMCache(con, ScriptedBackend(lambda r: answers[r.item_id]), progress=False)
        assert live.generate(requests, usable=usable) == [QUESTIONS, "", QUESTIONS, "no question here"]
        assert live.failed == 2
        replay = LLMCache(con, None, model="scripted-test-model", replay_only=True, progress=False)
        assert replay.generate(requests, usable=usable) == [QUESTIONS, "", QUESTIONS, "no question here"]
        assert (replay.hits, replay.calls, replay.failed) == (2, 0, 2)
        assert con.execute("SELECT count(*) FROM llm_failures").fetchall() == [(2,)]  # replay stores nothing
        assert con.execute("SELECT count(*) FROM llm_calls").fetchall() == [(2,)]
        new = LLMRequest("q9", "rewrite_s2.v1", ({"role": "user", "content": "question 9"},))
        with pytest.raises(
            LLMCacheMiss,
            match=r"^replay-only: 1 request\(s\) not in llm_calls, first: q9 "
            r"\(rewrite_s2.v1\)",
        ):
            replay.generate([*requests, new], usable=usable)
    finally:
        con.close()


def test_a_stage_with_some_failed_answers_is_run_again(tmp_path, monkeypatch):
    for var in ("RAGWH_LLM_BACKEND", "RAGWH_LLM_BASE_URL", "RAGWH_LLM_MODEL", "RAGWH_LLM_REPLAY_ONLY"):
        monkeypatch.delenv(var, raising=False)
    requests = [LLMRequest(f"q{i}", "rewrite_s2.v1", ({"role": "user", "content": f"question {i}"},)) for i in range(2)]
    answers = {"question 0": QUESTIONS, "question 1": ""}
    with ChatServer(lambda body: answers[body["messages"][-1]["content"]]) as server:
        pipeline = RewritingPipeline(
            load_experiment(_config(tmp_path, server, max_failed_share=1.0)),
            data=tmp_path,
            warehouse=tmp_path / "w.duckdb",
        )
        try:

            def work() -> str:
                pipeline._llm_backend().generate(requests)
                return "done"

            manifest = "SELECT fingerprint, detail FROM stage_manifest WHERE stage = 'probe'"
            pipeline.stage("probe", "", ["inputs"], work)  # the failed answer keeps the stage unfinished
            assert server.n_requests == 2
            stored = pipeline.con.execute(manifest).fetchone()
            assert stored[0].startswith("incomplete:") and stored[1].endswith(
                "; 1 LLM answers failed (empty or unusable, not cached): the next run asks again"
            )
            pipeline.stage("probe", "", ["inputs"], work)  # asks it once more (attempt 2 of 2): now a final failure
            assert server.n_requests == 3
            stored = pipeline.con.execute(manifest).fetchone()
            assert stored[0].startswith("final:") and stored[1].endswith(
                "; 1 LLM answers kept as final failures (failed in llm.max_attempts runs; ragwh run --retry-failed "
                "asks them again)"
            )
            pipeline.stage("probe", "", ["inputs"], work)  # finished: skipped, no call
            assert server.n_requests == 3
            answers["question 1"] = QUESTIONS
            monkeypatch.setenv("RAGWH_LLM_RETRY_FAILED", "1")  # ragwh run --retry-failed
            pipeline.stage("probe", "", ["inputs"], work)  # runs again, asks the one final failure; now finished
            monkeypatch.delenv("RAGWH_LLM_RETRY_FAILED")
            pipeline.stage("probe", "", ["inputs"], work)  # skipped
            assert server.n_requests == 4
            assert not pipeline.con.execute(manifest).fetchone()[0].startswith(("final:", "incomplete:"))
        finally:
            pipeline.close()
