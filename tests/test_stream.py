"""robustlab.data.stream: the streamed rows equal read_rows' rows, whatever the block size."""

from __future__ import annotations

import pytest

from robustlab.data import stream
from robustlab.data.files import FileFormatError, read_rows, write_rows
from robustlab.data.stream import RowReader, apply_batched, count_lines, write_stream

FILES = {
    "a.txt": ("Hello wörld\r\n\n   \nlast without newline 😍", None),
    "b.csv": ('text,label\n"two\nlines, quoted",1\n"a\rb",0\n"",1\n\nplain,0\r\nlast,1', None),
    "c.tsv": ("sentence\tlabel\nthe cat sat\t0\n\ndogs run fast\t1\n", None),
    "d.tsv": ("the cat sat\t0\ndogs run fast\t1\n", None),
    "e.jsonl": ('{"text": "a", "id": 1}\n\n{"text": null, "x": 2}\n{"id": 3, "text": "é"}\n', None),
    "f.txt": ("1 a fine film\n0 dull\n1\n", "label-text"),
}


@pytest.mark.parametrize("block", [3, 7, 1 << 20])
@pytest.mark.parametrize("name", sorted(FILES))
def test_streamed_rows_equal_read_rows(tmp_path, monkeypatch, name, block):
    monkeypatch.setattr(stream, "_BLOCK", block)  # blocks split "\r\n", multi-byte chars, rows
    text, fmt = FILES[name]
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    table = read_rows(path, fmt)
    reader = RowReader(path, fmt)
    got = list(reader)
    assert [r for _, r in got] == table.rows
    assert [ln for ln, _ in got] == table.lines
    assert reader.columns == table.columns and reader.header == table.header
    assert list(reader) == got  # iterable twice


def test_decode_error_positions_match_read_rows(tmp_path, monkeypatch):
    monkeypatch.setattr(stream, "_BLOCK", 4)
    path = tmp_path / "bad.txt"
    path.write_bytes(b"ok\nfin\xc3\xa9\xff then\n")  # a valid é, then a bad byte
    with pytest.raises(FileFormatError) as want:
        read_rows(path)
    with pytest.raises(FileFormatError) as got:
        list(RowReader(path))
    assert str(got.value) == str(want.value)
    assert "line 2, byte 6" in str(got.value)


def test_ragged_tsv_and_missing_file(tmp_path):
    path = tmp_path / "rag.tsv"
    path.write_text("text\tlabel\na\t1\nb\n", encoding="utf-8")
    with pytest.raises(FileFormatError, match="line 3: expected 2"):
        list(RowReader(path))
    with pytest.raises(FileFormatError, match="no such file"):
        RowReader(tmp_path / "nope.txt")


def test_write_stream_is_byte_identical_to_write_rows(tmp_path):
    rows = [{"text": f"row {i}", "label": i % 2, "changed": i % 3 == 0} for i in range(1100)]
    for ext in ("jsonl", "csv", "tsv", "txt"):
        a, b = tmp_path / f"a.{ext}", tmp_path / f"b.{ext}"
        write_rows(a, rows, columns=["text", "label", "changed"])
        n = write_stream(b, iter(rows), {"txt": "text"}.get(ext, ext), ["text", "label", "changed"])
        assert n == 1100 and a.read_bytes() == b.read_bytes(), ext
    bad = tmp_path / "bad.txt"
    with pytest.raises(FileFormatError, match="row 1001 contains a line break"):
        write_stream(bad, iter(rows[:1000] + [{"text": "a\nb"}]), "text", ["text"])
    assert not bad.exists() and list(tmp_path.glob(".bad.txt*")) == []


def test_apply_batched_order_and_non_strings():
    from robustlab.perturbations import make

    pert = make("append_token")
    rows = [(i + 1, {"text": t}) for i, t in enumerate(["a", None, "b", 5, "c"])]
    out = list(apply_batched(rows, [(pert, 0), (pert, 1)], "text", batch=2))
    assert [ln for ln, _, _ in out] == [1, 2, 3, 4, 5]
    results = [list(r) for _, _, r in out]  # an iterable per row (lazy past HOLD_BYTES)
    assert [len(r) for r in results] == [2] * 5
    assert [r[0].text for r in results] == ["a zxqv", None, "b zxqv", 5, "c zxqv"]
    assert results[1][1].error == "not a string (null)" and results[3][0].error == "not a string (int)"


def test_count_lines(tmp_path):
    for text, n in (("", 0), ("a", 1), ("a\n", 1), ("a\nb", 2), ("\n\n", 2)):
        (tmp_path / "x").write_text(text)
        assert count_lines(tmp_path / "x") == n
