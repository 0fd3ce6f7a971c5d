# kacs: two commands for a fresh checkout: `make install`, then `make test` (the full test
# suite, as CI runs it); `make quick` is the quick set for development.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# Where the datasets are read from: KACS_DATA_DIR if set, else ../shared/datasets when that
# mirror sits beside the checkout (as on the project's machines), else the project's datasets/.
KACS_DATA_DIR ?= $(if $(wildcard ../shared/datasets/asn.csv),$(abspath ../shared/datasets),)
ifneq ($(KACS_DATA_DIR),)
export KACS_DATA_DIR
endif
# Worker processes of the campaigns (smoke, paper-runs) and of the test suite (test, quick).
JOBS ?= 2

.PHONY: install test quick bench smoke paper-runs paper-tables paper docs-tables clean

install:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --upgrade pip
	$(BIN)/pip install -e '.[test]'

# The full suite, slow tests included: what CI runs. It and the quick set run in $(JOBS)
# worker processes (pytest-xdist), one test file to a worker (--dist loadfile) so that a file's
# module-scoped fixtures, trained models among them, are built once.
test:
	$(BIN)/python -m pytest -q -n $(JOBS) --dist loadfile

# The quick set: every test but those marked slow (more than about 1 s each on two cores:
# training runs of thousands of iterations, campaigns through worker processes or over real
# data, reports that draw figures, subprocesses); meant to take at most about three minutes.
quick:
	$(BIN)/python -m pytest -q -n $(JOBS) --dist loadfile -m "not slow"

bench:
	$(BIN)/kacs bench

smoke:
	$(BIN)/kacs run configs/smoke.yaml --jobs $(JOBS)
	$(BIN)/kacs report results/smoke

# The article's experiments, in the article's order; results/paper/<experiment> each.
PAPER := results/paper
PAPER_EXPERIMENTS := main sample_scaling dim_scaling f3_variants alt_protocol suprb
# Beyond the article: every other folder under results/ with a report (docs/experiments.md),
# found on disk, so a new campaign's folder joins once `kacs report` has written its report.
# Re-runs of the article's main experiment under another engine (`kacs reproduce results/paper/main
# --out results/reproduce_<engine>/main`): compared with the published table like results/main_article.
REPRODUCED := $(patsubst %/runs.csv,%,$(wildcard results/reproduce_*/main/runs.csv))
BEYOND := $(filter-out $(PAPER) $(PAPER)/% results/main_article $(REPRODUCED),\
  $(patsubst %/report/report.md,%,$(sort $(shell find results -path '*/report/report.md' 2>/dev/null))))

# Train every article experiment (hours: see docs/experiments.md). Resumable: rerunning continues
# where it stopped, and the rows of a committed runs.csv are finished runs, never redone.
paper-runs:
	for e in $(PAPER_EXPERIMENTS); do \
	  $(BIN)/kacs run configs/$$e.yaml --out $(PAPER)/$$e --jobs $(JOBS) || exit 1; \
	done

# Render the reports of every experiment folder in results/paper (minutes; trains nothing,
# needs no data): each experiment's own report (tables and figures), then one report over
# all of them (tables only, one index at the top), then the experiments beyond the article.
# Re-rendering committed results leaves the tree unchanged byte for byte.
paper-tables:
	for d in $(PAPER)/*/; do \
	  if [ -f "$$d/runs.csv" ]; then $(BIN)/kacs report "$${d%/}" --paper || exit 1; fi; \
	done
	$(BIN)/kacs report $(PAPER) --paper --no-figures
	for d in $(BEYOND); do \
	  if [ -f "$$d/runs.csv" ]; then $(BIN)/kacs report "$$d" || exit 1; fi; \
	done
	if [ -f results/main_article/runs.csv ]; then $(BIN)/kacs report results/main_article --paper || exit 1; fi
	for d in $(REPRODUCED); do $(BIN)/kacs report "$$d" --paper || exit 1; done

# The results tables and numbers of README.md and docs/*.md, copied from the committed reports
# (between their <!-- table: ... --> and <!-- value: ... --> markers) by the filler in
# tools/doctables, which is not part of the package; tests/test_docs.py fails when a committed
# document differs from what this writes.
docs-tables:
	$(BIN)/python -m tools.doctables .

# Both: train what is missing, then render.
paper: paper-runs paper-tables

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
