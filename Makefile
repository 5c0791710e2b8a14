# robustlab: two commands on a fresh machine — `make demo` and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
export HF_HUB_OFFLINE ?= 1
export TRANSFORMERS_OFFLINE ?= 1
export TOKENIZERS_PARALLELISM ?= false

.PHONY: setup demo test test-all lint bench clean mutate

setup:
	@bash scripts/setup.sh

demo: setup
	$(VENV)/bin/robustlab demo

test: setup
	$(PY) -m pytest -m "not slow" -q -p no:cacheprovider

test-all: setup
	$(PY) -m pytest -q -p no:cacheprovider

lint: setup
	$(VENV)/bin/ruff check robustlab tests bench

bench: setup
	@for f in bench/bench_*.py; do echo "== $$f"; $(PY) $$f || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache

# mutation testing of the core (issue 35): bench/results/mutation.md; long (tens of minutes)
mutate: setup
	$(PY) bench/mutation.py
