"""TextAttack's --dataset-from-huggingface NAME^CONFIG^SPLIT is accepted, with the offline error."""

from __future__ import annotations

import pytest

from robustlab.cli import main
from robustlab.data.datasets import _textattack_spec
from robustlab.errors import InputError


def test_textattack_specs_map_to_hub_names():
    assert _textattack_spec("glue^sst2^validation", None) == ("glue/sst2", None, "validation")
    assert _textattack_spec("glue^sst2", "train") == ("glue/sst2", None, "train")
    assert _textattack_spec("imdb^^test", None) == ("imdb", None, "test")
    assert _textattack_spec("tweet_eval^sentiment^test", None) == ("tweet_eval", "sentiment",
                                                                   "test")
    with pytest.raises(InputError, match="NAME"):
        _textattack_spec("a^b^c^d", None)


def test_alias_reaches_the_hub_loader_with_a_clear_offline_error(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    out = tmp_path / "run"
    rc = main(["robustness", "--model", "bow", "--dataset-from-huggingface",
               "glue^sst2^validation", "--out", str(out), "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2 and "cannot load hub dataset 'glue/sst2' (split 'validation')" in err
    assert "Traceback" not in err and not out.exists()
