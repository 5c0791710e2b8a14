"""The TUI shows an eval run (a trained model tested as it is): its results screen holds the
summary's numbers, and ``f`` opens the failing examples the run stored."""

from __future__ import annotations

import json

import numpy as np
import pytest

from robustlab.runs.store import RunStore
from robustlab.studies.eval.screen import EvalScreen
from robustlab.studies.learnability.predictions import failing_examples
from robustlab.tui.app import RobustlabApp
from robustlab.tui.screens.failures import FailuresScreen
from robustlab.tui.specs import fmt

from .test_app import open_run, text_of, wait_for

POS = ("good", "great", "fine")


class KeywordModel:
    """A tiny trained-as-it-is model: positive when a positive word appears (case-sensitive,
    so a perturbation of that word changes its prediction)."""

    def predict_proba(self, texts):
        p = np.array([0.9 if any(w in t.split() for w in POS) else 0.2 for t in texts])
        return np.stack([1 - p, p], axis=1)


@pytest.fixture
def eval_run(tmp_path):
    from robustlab.studies.eval.study import evaluate

    examples = [(f"the film was {w}", 1) for w in ("good", "great", "fine", "dull")] + \
               [(f"a {w} plot", 0) for w in ("bad", "weak", "good", "poor")]
    evaluate(KeywordModel(), tmp_path / "runs" / "eval-kw", examples=examples,
             perturbations=["leet_letters", "random_upper_transformation"], seeds=[0, 1],
             name="keyword", progress=False, plots=False)
    return tmp_path / "runs" / "eval-kw"


async def test_an_eval_run_shows_its_table_and_failing_examples(eval_run, settings):
    summary = json.loads((eval_run / "summary.json").read_text())
    with RunStore(eval_run, readonly=True) as store:
        every = failing_examples(store)
    assert every  # the fixture has failures to show
    app = RobustlabApp([eval_run.parent], settings)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_run(pilot, app, eval_run.name)
        await wait_for(pilot, lambda: isinstance(app.screen, EvalScreen)
                       and app.screen.view is not None)
        screen = app.screen
        table = screen.query_one("#eval")
        shown = [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
        expected = summary["perturbations"]
        assert [r[0] for r in shown] == [r["label"] for r in expected]
        for row, r in zip(shown, expected, strict=True):
            assert row[1] == "INV"
            assert row[3] == fmt(r["a1"]["mean"]) and row[6] == fmt(r["failure_rate"]["mean"])
        assert fmt(summary["clean_accuracy"]) in text_of(screen.query_one("#status"))
        await pilot.press("f")
        await wait_for(pilot, lambda: isinstance(app.screen, FailuresScreen)
                       and app.screen.view is not None)
        fails = app.screen.query_one("#fail-examples")
        assert fails.row_count == len(every)


async def test_a_finished_run_without_its_summary_is_not_in_progress(eval_run, settings):
    """Every cell done but no summary.json (a resume writing it, a worker stopped before): the
    status says so, not "run in progress", and the screen picks the summary up when it comes."""
    summary = (eval_run / "summary.json").read_bytes()
    (eval_run / "summary.json").unlink()
    app = RobustlabApp([eval_run.parent], settings)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_run(pilot, app, eval_run.name)
        await wait_for(pilot, lambda: isinstance(app.screen, EvalScreen)
                       and app.screen.view is not None)
        status = text_of(app.screen.query_one("#status"))
        assert "every cell done; summary not written yet" in status
        assert "in progress" not in status
        (eval_run / "summary.json").write_bytes(summary)
        await wait_for(pilot, lambda: not app.screen.view.partial)
        assert "summary not written" not in text_of(app.screen.query_one("#status"))


async def test_o_marks_the_sorted_column_in_its_header(eval_run, settings):
    app = RobustlabApp([eval_run.parent], settings)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_run(pilot, app, eval_run.name)
        await wait_for(pilot, lambda: isinstance(app.screen, EvalScreen)
                       and app.screen.view is not None)
        table = app.screen.query_one("#eval")
        heads = lambda: [str(c.label) for c in table.ordered_columns]  # noqa: E731
        assert not any(h.endswith(("▲", "▼")) for h in heads())
        await pilot.press("o")
        await wait_for(pilot, lambda: heads()[0] == "perturbation ▲")
        await pilot.press("o")
        await wait_for(pilot, lambda: heads()[1] == "test ▲" and heads()[0] == "perturbation")
        await pilot.press("O")
        await wait_for(pilot, lambda: heads()[1] == "test ▼")


@pytest.fixture
def llm_run(tmp_path):
    """An eval run of an LLM behind a real (stdlib) OpenAI-chat server: "Positive." for a text
    with a positive word, "Negative." for one without, "Hmm" (no label) for one with a digit."""
    import http.server
    import threading

    from robustlab.cli import main

    class Chat(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            text = body["messages"][-1]["content"]
            word = "Hmm" if any(c.isdigit() for c in text) else \
                "Positive." if any(w in text.split() for w in POS) else "Negative."
            data = json.dumps({"model": "chat-test", "choices": [{"index": 0, "message": {
                "role": "assistant", "content": word}}],
                "usage": {"prompt_tokens": len(text.split()), "completion_tokens": 1}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Chat)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    data = tmp_path / "dev.tsv"
    data.write_text("".join(f"1\tthe film was {w}\n0\ta {v} plot\n" for w, v in
                            (("good", "bad"), ("great", "weak"), ("fine", "dull"))))
    card = tmp_path / "card.toml"
    card.write_text(f'url = "http://127.0.0.1:{srv.server_port}/v1/chat/completions"\n'
                    'kind = "openai-chat"\ntemplate = "Sentiment? {text}"\n'
                    '[verbalizers]\n"0" = ["negative"]\n"1" = ["positive"]\n')
    out = tmp_path / "runs" / "eval-llm"
    try:
        assert main(["eval", "--model", str(card), "--dataset", str(data), "--perturbations",
                     "leet_letters", "--seeds", "0", "--out", str(out), "--quiet",
                     "--no-plots"]) == 0
    finally:
        srv.shutdown()
        srv.server_close()
    return out


async def test_an_endpoint_run_shows_requests_tokens_and_invalid_answers(llm_run, settings,
                                                                         capsys):
    capsys.readouterr()
    ep = json.loads((llm_run / "summary.json").read_text())["endpoint"]
    assert ep["requests"] > 0 and ep["tokens"] > 0 and ep["invalid"] > 0
    want = (f"endpoint: {ep['requests']:,} requests · {ep['tokens']:,} tokens · "
            f"{ep['invalid']:,} invalid answers")
    app = RobustlabApp([llm_run.parent], settings)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_run(pilot, app, llm_run.name)
        await wait_for(pilot, lambda: isinstance(app.screen, EvalScreen)
                       and app.screen.view is not None)
        status = app.screen.query_one("#status")
        assert want in text_of(status).splitlines()
        # at 80 columns the line is shown whole, on a line of its own
        await wait_for(pilot, lambda: status.size.width > 0)
        assert len(want) <= status.size.width
        rendered = [strip.text for strip in status.render_lines(status.region.reset_offset)]
        assert any(want in line for line in rendered)
    # during a run (no summary yet): the same line, from the store and the finished cells
    from robustlab.studies.eval.view import load_eval

    (llm_run / "summary.json").unlink()
    view = load_eval(llm_run)
    assert view.partial and view.endpoint == want
