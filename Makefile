# kacs: two commands for a fresh checkout: `make install`, then `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# Where the datasets are read from: KACS_DATA_DIR if set, else ../shared/datasets when that
# mirror sits beside the checkout (as on the project's machines), else the project's datasets/.
KACS_DATA_DIR ?= $(if $(wildcard ../shared/datasets/asn.csv),$(abspath ../shared/datasets),)
ifneq ($(KACS_DATA_DIR),)
export KACS_DATA_DIR
endif
JOBS ?= 2

.PHONY: install test bench smoke paper-tables clean

install:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --upgrade pip
	$(BIN)/pip install -e '.[test]'

test:
	$(BIN)/python -m pytest -q

bench:
	$(BIN)/kacs bench

smoke:
	$(BIN)/kacs run configs/smoke.yaml --jobs $(JOBS)
	$(BIN)/kacs report results/smoke

# Every article config (resumable: rerunning continues where it stopped), then the reports.
paper-tables:
	$(BIN)/kacs run configs/main.yaml --out results/paper/main --jobs $(JOBS)
	$(BIN)/kacs run configs/sample_scaling.yaml --out results/paper/sample_scaling --jobs $(JOBS)
	$(BIN)/kacs run configs/dim_scaling.yaml --out results/paper/dim_scaling --jobs $(JOBS)
	$(BIN)/kacs run configs/f3_variants.yaml --out results/paper/f3_variants --jobs $(JOBS)
	$(BIN)/kacs run configs/alt_protocol.yaml --out results/paper/alt_protocol --jobs $(JOBS)
	$(BIN)/kacs report results/paper --paper

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
