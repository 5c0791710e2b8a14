"""`robustlab check PLAN.toml`: thresholds, the pass/fail table, JUnit XML and exit codes."""

from __future__ import annotations

import random
import xml.etree.ElementTree as ET

import pytest

from robustlab.cli import main
from robustlab.studies.learnability.thresholds import Check, junit_xml, load_plan

# The JUnit schema CI systems read (after Jenkins' junit-10.xsd, the reference of the GitLab and
# GitHub Actions reporters), reduced to the elements robustlab writes.
JUNIT_XSD = """<?xml version="1.0" encoding="UTF-8"?>
<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" elementFormDefault="qualified">
  <xs:simpleType name="SUREFIRE_TIME">
    <xs:restriction base="xs:string"><xs:pattern value="[0-9]+(\\.[0-9]+)?"/></xs:restriction>
  </xs:simpleType>
  <xs:complexType name="problem" mixed="true">
    <xs:attribute name="message" type="xs:string"/>
    <xs:attribute name="type" type="xs:string" use="required"/>
  </xs:complexType>
  <xs:element name="testcase">
    <xs:complexType>
      <xs:choice minOccurs="0" maxOccurs="unbounded">
        <xs:element name="skipped"/>
        <xs:element name="error" type="problem"/>
        <xs:element name="failure" type="problem"/>
        <xs:element name="system-out" type="xs:string"/>
        <xs:element name="system-err" type="xs:string"/>
      </xs:choice>
      <xs:attribute name="name" type="xs:string" use="required"/>
      <xs:attribute name="classname" type="xs:string" use="required"/>
      <xs:attribute name="time" type="SUREFIRE_TIME"/>
    </xs:complexType>
  </xs:element>
  <xs:element name="testsuite">
    <xs:complexType>
      <xs:sequence><xs:element ref="testcase" minOccurs="0" maxOccurs="unbounded"/></xs:sequence>
      <xs:attribute name="name" type="xs:string" use="required"/>
      <xs:attribute name="tests" type="xs:nonNegativeInteger" use="required"/>
      <xs:attribute name="failures" type="xs:nonNegativeInteger"/>
      <xs:attribute name="errors" type="xs:nonNegativeInteger"/>
      <xs:attribute name="skipped" type="xs:nonNegativeInteger"/>
      <xs:attribute name="time" type="SUREFIRE_TIME"/>
      <xs:attribute name="timestamp" type="xs:dateTime"/>
      <xs:attribute name="hostname" type="xs:string"/>
      <xs:attribute name="id" type="xs:string"/>
    </xs:complexType>
  </xs:element>
  <xs:element name="testsuites">
    <xs:complexType>
      <xs:sequence><xs:element ref="testsuite" minOccurs="0" maxOccurs="unbounded"/></xs:sequence>
      <xs:attribute name="name" type="xs:string"/>
      <xs:attribute name="tests" type="xs:nonNegativeInteger"/>
      <xs:attribute name="failures" type="xs:nonNegativeInteger"/>
      <xs:attribute name="errors" type="xs:nonNegativeInteger"/>
      <xs:attribute name="time" type="SUREFIRE_TIME"/>
    </xs:complexType>
  </xs:element>
</xs:schema>
"""


def validate_junit(data: bytes) -> ET.Element:
    """Validate against the XSD above (lxml) and check the counts add up (xml.etree)."""
    etree = pytest.importorskip("lxml.etree")
    schema = etree.XMLSchema(etree.fromstring(JUNIT_XSD.encode()))
    doc = etree.fromstring(data)
    assert schema.validate(doc), schema.error_log
    root = ET.fromstring(data)
    assert root.tag == "testsuites"
    cases = root.findall("testsuite/testcase")
    assert int(root.get("tests")) == len(cases)
    assert int(root.get("failures")) == len(root.findall("testsuite/testcase/failure"))
    assert int(root.get("errors")) == len(root.findall("testsuite/testcase/error"))
    for suite in root.findall("testsuite"):
        assert int(suite.get("tests")) == len(suite.findall("testcase"))
        assert int(suite.get("failures")) == len(suite.findall("testcase/failure"))
    return root


def write_random_label_data(d):
    """Labels independent of the text (seeded): no model can reach accuracy 1.0 on the test set."""
    rng = random.Random(7)
    words = "the film plot cast was good bad fine dull long short story new old".split()
    for name, n in (("train.txt", 80), ("test.txt", 40)):
        lines = [f"{rng.randint(0, 1)} {' '.join(rng.choice(words) for _ in range(6))}"
                 for _ in range(n)]
        (d / name).write_text("\n".join(lines) + "\n", encoding="utf-8")


PLAN = """name = "toy gate"
data = "train.txt"
test_data = "test.txt"
format = "label-text"
models = ["bow"]
seeds = [0]
steps = 5
out = "gate-run"

[defaults]
max_drop = 0.0

[[test]]
perturbation = "identity"

[[test]]
name = "identity accuracy"
perturbation = "identity"
min_accuracy = 1.0
"""


def test_plan_with_one_failing_threshold_exits_1_with_valid_junit(tmp_path, capsys):
    write_random_label_data(tmp_path)
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN, encoding="utf-8")
    xml = tmp_path / "reports" / "junit.xml"
    rc = main(["check", str(plan), "--junit-xml", str(xml), "--quiet"])
    out = capsys.readouterr().out
    assert rc == 1
    assert "drop <= 0" in out and "PASS" in out and "FAIL" in out
    assert "2 of 3 checks passed" in out
    root = validate_junit(xml.read_bytes())
    cases = root.findall("testsuite/testcase")
    assert [c.get("name") for c in cases] == ["drop <= 0", "accuracy >= 1", "drop <= 0"]
    failed = [c for c in cases if c.find("failure") is not None]
    assert len(failed) == 1 and failed[0].get("classname") == "robustlab.bow.identity accuracy"
    assert "required accuracy >= 1" in failed[0].find("failure").get("message")
    assert (tmp_path / "gate-run" / "store.sqlite").exists()


def test_junit_counts_errors_for_missing_results():
    checks = [Check("bow", "leet", "max_drop", 0.05, "leet", 0.01, True, "ok"),
              Check("bow", "leet", "min_accuracy", 0.8, "leet", None, None, "no result"),
              Check("cnn", "leet", "min_accuracy", 0.8, "leet", 0.5, False, "accuracy = 0.5")]
    root = validate_junit(junit_xml(checks, "suite", 1.5))
    assert root.get("errors") == "1" and root.get("failures") == "1"
    assert [s.get("name") for s in root.findall("testsuite")] == ["suite: bow", "suite: cnn"]


@pytest.mark.parametrize("text, message", [
    ("models = [\"bow\"]\n", "no [[test]] tables"),
    ("[[test]]\nperturbation = \"identity\"\n", "no threshold"),
    ("[[test]]\nperturbation = \"identity\"\nmax_drp = 0.1\n", "unknown key(s) max_drp"),
    ("[[test]]\nperturbation = \"identty\"\nmax_drop = 0.1\n", "Did you mean"),
    ("[[test]]\nperturbation = \"identity\"\nmin_accuracy = 80\n", "outside [0, 1]"),
    ("seeds = [0, \"x\"]\n[[test]]\nperturbation = \"identity\"\nmax_drop = 0\n", "seeds"),
    ("[[test]\n", "not valid TOML"),
])
def test_bad_plans_are_clear_and_create_nothing(tmp_path, capsys, text, message):
    plan = tmp_path / "p.toml"
    plan.write_text(text, encoding="utf-8")
    rc = main(["check", str(plan)])
    err = capsys.readouterr().err
    assert rc == 2 and message in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.toml"]


def test_plan_defaults_and_paths(tmp_path):
    plan = tmp_path / "p.toml"
    plan.write_text("data = \"d/train.tsv\"\n[defaults]\nmax_drop = 0.05\n[[test]]\n"
                    "perturbation = \"leet_letters\"\nmin_accuracy = 0.7\n[[test]]\n"
                    "perturbation = \"identity\"\nmax_drop = 0\n", encoding="utf-8")
    p = load_plan(plan)
    assert p.dataset == {"path": str((tmp_path / "d" / "train.tsv").resolve())}
    assert p.models == ("bow",) and p.perturbations == ("leet_letters", "identity")
    assert [(c.perturbation, c.threshold, c.limit) for c in p.checks()] == [
        ("leet_letters", "min_accuracy", 0.7), ("leet_letters", "max_drop", 0.05),
        ("identity", "max_drop", 0.0)]
    assert p.out == (tmp_path / "p-run").resolve()


def test_robustness_command_thresholds(tmp_path, capsys):
    write_random_label_data(tmp_path)
    out, xml = tmp_path / "rob", tmp_path / "r.xml"
    base = ["robustness", "--model", "bow", "--data", str(tmp_path / "train.txt"),
            "--test-data", str(tmp_path / "test.txt"), "--format", "label-text",
            "--perturbations", "identity", "--seeds", "0", "--steps", "5", "--out", str(out),
            "--quiet", "--no-plots"]
    rc = main([*base, "--max-drop", "0", "--min-accuracy", "1.0", "--junit-xml", str(xml)])
    text = capsys.readouterr().out
    assert rc == 1 and "1 of 2 threshold checks passed" in text
    root = validate_junit(xml.read_bytes())
    assert root.get("failures") == "1" and root.get("tests") == "2"
    assert main([*base, "--max-drop", "0"]) == 0  # resumes the finished run; identity: drop 0
    rc = main([*base[:-4], "--out", str(tmp_path / "new"), "--max-drop", "7"])
    assert rc == 2 and "outside [-1, 1]" in capsys.readouterr().err
    assert not (tmp_path / "new").exists()
