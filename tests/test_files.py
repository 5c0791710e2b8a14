"""robustlab.data.files: formats, headers, columns, encodings, bad files, round trips."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robustlab.data.files import FileFormatError, Table, format_for, read_rows, write_rows
from robustlab.errors import InputError


def test_format_from_extension_and_explicit(tmp_path):
    assert format_for("a.TSV") == "tsv"
    assert format_for("a.csv") == "csv"
    assert format_for("a.ndjson") == "jsonl"
    assert format_for("a.train") == "text"
    assert format_for("a.train", "label-text") == "label-text"
    with pytest.raises(FileFormatError, match="unknown format"):
        format_for("a.txt", "xml")
    with pytest.raises(FileFormatError, match=r"\.jsonl"):
        format_for("a.json")


def test_text_lines_split_on_newline_only(tmp_path):
    f = tmp_path / "in.txt"
    # NEL (U+0085), LINE SEPARATOR and form feed live inside rows; CRLF ends a row; blank rows count
    f.write_bytes("a\u0085b\r\n\nc\u2028d\x0ce\n  \n".encode())
    t = read_rows(f)
    assert t.column() == ["a\u0085b", "", "c\u2028d\x0ce", "  "]
    assert t.lines == [1, 2, 3, 4]


def test_empty_file_has_no_rows(tmp_path):
    for name in ("e.txt", "e.tsv", "e.csv", "e.jsonl"):
        (tmp_path / name).write_bytes(b"")
        assert len(read_rows(tmp_path / name)) == 0


def test_label_text_format(tmp_path):
    f = tmp_path / "sst.train"
    f.write_text("1 a good film .\n0 bad\n1\n", encoding="utf-8")
    t = read_rows(f, "label-text")
    assert t.rows == [{"label": "1", "text": "a good film ."}, {"label": "0", "text": "bad"},
                      {"label": "1", "text": ""}]
    out = tmp_path / "o.train"
    write_rows(out, t, "label-text")
    assert out.read_text(encoding="utf-8") == f.read_text(encoding="utf-8")


def test_tsv_header_detection_and_bare_quotes(tmp_path):
    f = tmp_path / "glue.tsv"
    f.write_text('sentence\tlabel\nit \'s "great\t1\nbad "movie" .\t0\n', encoding="utf-8")
    t = read_rows(f)
    assert t.header and t.columns == ["sentence", "label"]
    assert t.column("sentence") == ['it \'s "great', 'bad "movie" .']
    assert t.column_name(None) == "sentence"
    assert t.column(1) == ["1", "0"]
    g = tmp_path / "nohead.tsv"
    g.write_text("1\tgood\n0\tbad\n", encoding="utf-8")
    t2 = read_rows(g)
    assert not t2.header and t2.columns == ["0", "1"]
    assert t2.column("1") == ["good", "bad"]
    assert read_rows(g, header=True).columns == ["1", "good"]


def test_csv_quoted_multiline_and_header(tmp_path):
    f = tmp_path / "r.csv"
    f.write_text('reviews,labels\n"line one\nline two, with comma",1\n"say ""hi""",0\n',
                 encoding="utf-8")
    t = read_rows(f)
    assert t.header and t.columns == ["reviews", "labels"]
    assert t.column() == ["line one\nline two, with comma", 'say "hi"']
    assert t.lines == [2, 4]
    out = tmp_path / "o.csv"
    write_rows(out, t)
    assert read_rows(out).rows == t.rows


def test_jsonl_mixed_keys_and_values(tmp_path):
    f = tmp_path / "d.jsonl"
    f.write_text('{"text": "a", "label": 1}\n\n{"text": "b", "extra": [1, 2]}\n', encoding="utf-8")
    t = read_rows(f)
    assert t.columns == ["text", "label", "extra"] and len(t) == 2 and t.skipped_blank == 1
    t2 = t.with_columns(text=["A", "B"], changed=[True, False])
    out = tmp_path / "o.jsonl"
    write_rows(out, t2)
    back = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert back[0] == {"text": "A", "label": 1, "extra": None, "changed": True}
    assert back[1]["extra"] == [1, 2] and back[1]["changed"] is False


@pytest.mark.parametrize(
    "name, content, match",
    [
        ("bad.jsonl", '{"text": "a"}\n{"text": \n', r"line 2: not valid JSON"),
        ("arr.jsonl", '{"text": "a"}\n["x"]\n', r"line 2: expected a JSON object"),
        ("rag.tsv", "a\tb\nc\n", r"line 2: expected 2 tab-separated fields, found 1"),
        ("rag.csv", "x,y\n1,2\n3,4,5\n", r"line 3: expected 2 comma-separated fields, found 3"),
        ("q.csv", 'x,y\n"unterminated,1\n', r"malformed CSV"),
    ],
)
def test_malformed_files_name_the_line(tmp_path, name, content, match):
    f = tmp_path / name
    f.write_text(content, encoding="utf-8")
    with pytest.raises(FileFormatError, match=match) as info:
        read_rows(f)
    assert str(f) in str(info.value)
    assert isinstance(info.value, InputError)


def test_non_utf8_names_line_and_fix_and_encoding_option(tmp_path):
    f = tmp_path / "win.txt"
    f.write_bytes("caf\u00e9 ok\n".encode() + "na\u00efve \u2019quote\u2019\n".encode("cp1252"))
    with pytest.raises(FileFormatError, match=r"line 2, byte 3.*--encoding cp1252"):
        read_rows(f)
    # the same file read as cp1252 decodes (the UTF-8 line as mojibake, as expected)
    t = read_rows(f, encoding="cp1252")
    assert t.column()[1] == "na\u00efve \u2019quote\u2019"
    with pytest.raises(FileFormatError, match="unknown encoding"):
        read_rows(f, encoding="no-such-codec")


def test_bom_is_dropped_and_missing_file(tmp_path):
    f = tmp_path / "b.csv"
    f.write_bytes(b"\xef\xbb\xbftext,label\nhi,1\n")
    assert read_rows(f).columns == ["text", "label"]
    with pytest.raises(FileFormatError, match="no such file"):
        read_rows(tmp_path / "missing.txt")
    with pytest.raises(FileFormatError, match="is a directory"):
        read_rows(tmp_path)


def test_column_errors_list_columns(tmp_path):
    t = Table(["a", "b"], [{"a": "x", "b": "y"}])
    with pytest.raises(FileFormatError, match=r"which column.*0='a', 1='b'"):
        t.column_name(None)
    with pytest.raises(FileFormatError, match=r"no column 'zz'"):
        t.column_name("zz")
    assert t.column_name(1) == "b"
    with pytest.raises(FileFormatError, match=r"index '-1' is negative.*0-based"):
        t.column_name("-1")  # -1 would be the last column, usually the label


def test_writers_refuse_unrepresentable_values_without_writing(tmp_path):
    out = tmp_path / "o.tsv"
    with pytest.raises(FileFormatError, match=r"row 2, column 'text'.*TSV"):
        write_rows(out, [{"text": "ok"}, {"text": "tab\there"}])
    assert not out.exists()
    out2 = tmp_path / "o.txt"
    with pytest.raises(FileFormatError, match=r"row 1 contains a line break"):
        write_rows(out2, [{"text": "two\nlines"}])
    assert not out2.exists() and list(tmp_path.iterdir()) == []


def test_long_rows_and_emoji_round_trip(tmp_path):
    long = "word " * 20_000 + "\U0001f600 \u0645\u0631\u062d\u0628\u0627 \u4f60\u597d"
    rows = [{"text": long, "label": "1"}, {"text": "", "label": "0"}]
    for ext in ("csv", "tsv", "jsonl"):
        out = tmp_path / f"o.{ext}"
        write_rows(out, rows)
        assert read_rows(out, header=True).rows == rows, ext


_field = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(_field, _field), max_size=6))
def test_csv_and_jsonl_round_trip_any_unicode(tmp_path_factory, pairs):
    d = tmp_path_factory.mktemp("rt")
    rows = [{"text": a, "label": b} for a, b in pairs]
    for ext in ("csv", "jsonl"):
        out = d / f"o.{ext}"
        write_rows(out, rows, columns=["text", "label"])
        back = read_rows(out, header=True)
        # blank CSV records (both fields empty... written as ',') are kept; only truly empty lines skip
        assert back.rows == rows, ext


def test_real_data_formats(shared_data):
    sst = read_rows(shared_data / "sst" / "stsa.binary.train", "label-text")
    assert len(sst) == 6920 and set(sst.column("label")) == {"0", "1"}
    airline = read_rows(shared_data / "amazon_multidomain" / "extra_domains" / "airline.csv")
    assert airline.columns == ["reviews", "labels"] and len(airline) == 2000
    with pytest.raises(FileFormatError, match="--encoding cp1252"):
        read_rows(shared_data / "mr" / "rt-polarity.all", "label-text")
    mr = read_rows(shared_data / "mr" / "rt-polarity.all", "label-text", encoding="cp1252")
    assert len(mr) == 10662


def test_unwritable_output_is_a_clear_error(tmp_path):
    with pytest.raises(FileFormatError, match="is a directory"):
        write_rows(tmp_path, [{"text": "a"}], "jsonl")
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    with pytest.raises(FileFormatError, match="cannot write"):
        write_rows(blocker / "sub" / "o.jsonl", [{"text": "a"}])
