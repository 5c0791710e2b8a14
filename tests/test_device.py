"""``--device``: resolution, one-line errors where CUDA is missing, never part of a signature."""

from __future__ import annotations

import json

import pytest
from learnability_toy import toy_spec

from robustlab.errors import InputError
from robustlab.models import device as devmod

torch = pytest.importorskip("torch")


@pytest.fixture
def no_cuda(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)


def test_auto_and_cpu(no_cuda):
    assert devmod.resolve_device("auto") == torch.device("cpu")
    assert devmod.resolve_device(None) == torch.device("cpu")
    assert devmod.resolve_device("CPU") == torch.device("cpu")


@pytest.mark.parametrize("spec", ["cuda", "cuda:1"])
def test_cuda_without_a_gpu_is_one_line(no_cuda, spec):
    with pytest.raises(InputError) as exc:
        devmod.resolve_device(spec)
    msg = str(exc.value)
    assert "\n" not in msg and f"--device {spec}: no CUDA GPU" in msg and "--device cpu" in msg


@pytest.mark.parametrize("bad", ["gpu", "cuda:x", "tpu", "cuda:"])
def test_unknown_device_names(bad):
    with pytest.raises(InputError, match="unknown device"):
        devmod.check_device(bad)


def test_autocast_dtype_choices():
    cpu = torch.device("cpu")
    assert devmod.autocast_dtype(cpu, "auto") is None  # fp32 on CPU unless asked
    assert devmod.autocast_dtype(cpu, "bf16") == torch.bfloat16
    with pytest.raises(InputError, match="unknown"):
        devmod.autocast_dtype(cpu, "fp8")


def test_train_command_rejects_cuda_without_gpu_before_writing(no_cuda, tmp_path, capsys):
    from robustlab.cli import main

    spec = toy_spec(tmp_path / "data", n_train=40, n_test=20)
    out = tmp_path / "model"
    rc = main(["train", "--model", "bow", "--data", spec["path"], "--format", "label-text",
               "--steps", "2", "--out", str(out), "--device", "cuda"])
    err = capsys.readouterr().err
    assert rc == 2 and "no CUDA GPU" in err and "Traceback" not in err
    assert not out.exists()


def test_study_device_is_runtime_only(no_cuda, tmp_path, capsys):
    """A study started with --device cpu resumes with --device auto (or on a GPU machine): the
    device is in no cell key, signature or stored configuration."""
    from robustlab.cli import main

    spec = toy_spec(tmp_path / "data", n_train=60, n_test=30)
    args = ["learnability", "--model", "bow", "--data", spec["path"], "--test-data",
            spec["test_path"], "--format", "label-text", "--perturbations", "identity",
            "--p-grid", "1", "--seeds", "0", "--steps", "5", "--quiet", "--no-plots",
            "--out", str(tmp_path / "run")]
    assert main([*args, "--device", "cpu"]) == 0
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    cfg = json.dumps(summary["config"])
    assert '"device"' not in cfg and "device=" not in cfg
    rows = [json.loads(x) for x in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert rows and all("device" not in json.dumps(r.get("signature", "")) for r in rows)
    assert all("device" not in r["model"] for r in rows)
    assert main([*args, "--device", "auto"]) == 0  # resumes: same configuration
    capsys.readouterr()
    # CUDA asked where there is none: one line, exit 2, the finished run untouched
    assert main([*args[:-1], str(tmp_path / "other"), "--device", "cuda"]) == 2
    assert "no CUDA GPU" in capsys.readouterr().err
    assert not (tmp_path / "other").exists()


def test_masked_lm_source_follows_the_command_device(no_cuda, minilm_mlm):
    """The neighbourhoods' masked LM is no longer pinned to the CPU: it runs where --device
    says (asking for CUDA here proves it is asked for), by default where auto resolves."""
    from robustlab.studies.second_order.neighbourhood import _MLM_DEVICE, make_source, mlm_device

    src = make_source(f"mlm:{minilm_mlm}")
    with mlm_device("cuda"), pytest.raises(InputError, match="no CUDA GPU"):
        src._load()
    assert _MLM_DEVICE[0] == "auto"
    src._load()
    assert src.device == "cpu" and next(src._model.parameters()).device.type == "cpu"
    explicit = make_source(f"mlm:{minilm_mlm}", device="cuda")
    with pytest.raises(InputError, match="no CUDA GPU"):
        explicit._load()
