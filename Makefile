PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test bench lint venv clean vendor

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/clankie demo $(ARGS)

lint: $(STAMP)
	$(BIN)/ruff check bot cogs journal tests bench
	$(BIN)/ruff format --check bot cogs journal tests bench
	$(BIN)/mypy journal bot cogs

# The suite runs in TEST_WORKERS processes (pytest-xdist); tests that share one fixed port are
# kept to one worker by their xdist_group. TEST_WORKERS=0 runs it in this process alone.
TEST_WORKERS ?= 2

test: lint
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadgroup

bench: $(STAMP)
	$(BIN)/python bench/run_all.py

vendor: $(STAMP)
	$(BIN)/python -m bot.web.vendor_sdk

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
