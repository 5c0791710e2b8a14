#!/usr/bin/env bash
# Set up a robustlab development environment on a fresh machine (idempotent).
# Creates $VENV (default .venv), installs CPU torch first when no torch is present (a plain
# "torch" requirement would pull a multi-GB CUDA build), handles the TextAttack/CheckList pins
# and workarounds documented in ../shared/ENVIRONMENT.md, and prepares offline NLTK data.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
PY=${PYTHON:-python3}
stamp="$VENV/.robustlab-setup-$(sha256sum pyproject.toml scripts/setup.sh | sha256sum | cut -c1-16)"
if [ -f "$stamp" ]; then echo "setup: $VENV is up to date"; exit 0; fi

[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
pip() { "$VENV/bin/python" -m pip --disable-pip-version-check -q "$@"; }
pip install -U "pip>=24" "setuptools<81" wheel

if ! "$VENV/bin/python" -c "import torch" 2>/dev/null; then
  echo "setup: installing CPU torch"
  pip install "torch==2.13.0" || pip install torch --index-url https://download.pytorch.org/whl/cpu
fi

echo "setup: installing robustlab and its stack"
pip install -e ".[all,dev]"

# CheckList 0.0.11: its setup.py runs a jupyter-extension step (needs jupyter + notebook<7, no
# build isolation); import needs ipython<9; checklist.editor needs pkg_resources (setuptools<81).
if ! "$VENV/bin/python" -c "import checklist.test_types" 2>/dev/null; then
  echo "setup: installing checklist (optional extra) with its workarounds"
  pip install jupyter "notebook<7" "ipython<9" "setuptools<81" wheel
  pip install --no-build-isolation "checklist==0.0.11"
fi

# Offline resources: NLTK stopwords (TextAttack needs them at import), WordNet from Debian,
# tmux (the TUI's real-terminal test) and chromium (the report's browser test). Debian
# packages only when apt is usable as root.
apt_pkgs=()
[ -f /usr/share/wordnet/index.sense ] || apt_pkgs+=(wordnet-base wordnet-sense-index)
command -v tmux >/dev/null 2>&1 || apt_pkgs+=(tmux)
# chromium: the browser tests of `robustlab report` (tests/test_report_browser.py, and
# tests/test_report_pages.py through Playwright, which launches this Chromium)
command -v chromium >/dev/null 2>&1 || apt_pkgs+=(chromium)
if [ ${#apt_pkgs[@]} -gt 0 ]; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "setup: apt-get install ${apt_pkgs[*]}"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${apt_pkgs[@]}") >/dev/null \
      || echo "setup: apt-get failed; WordNet-based perturbations, the tmux and browser tests will say what is missing"
  else
    echo "setup: not root or no apt-get; missing Debian packages: ${apt_pkgs[*]}"
  fi
fi
"$VENV/bin/python" -m robustlab.resources prepare
rm -f "$VENV"/.robustlab-setup-*
touch "$stamp"
echo "setup: done ($VENV)"
