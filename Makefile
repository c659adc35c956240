# The two commands of the README are `make reproduce` and `make test`; both run the set-up first.
.PHONY: setup build reproduce reproduce-again test test-engine test-python smoke bench bench-interference clean

VENV := .venv/bin

setup:
	bash scripts/setup.sh

build:
	cmake -S engine -B engine/build -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build engine/build -j$$(nproc)

reproduce: setup
	$(VENV)/snakemake --cores all reproduce_figures

# Measure again beside the finished run and compare the two (workflows/reproduce_again.py).
reproduce-again: setup
	$(VENV)/airlab reproduce-again

# --durations: the slowest tests in every log (the suite must stay well under 15 min).
# -k: run the pytest suite even when a CTest test failed, so one run shows every failure;
# make still exits non-zero if either part failed.
test: setup
	$(MAKE) -k --no-print-directory test-engine test-python

test-engine:
	cd engine/build && ctest --output-on-failure --timeout 600

test-python:
	$(VENV)/pytest -q --durations=15

smoke: setup
	$(VENV)/snakemake --cores all smoke

bench: setup
	$(VENV)/snakemake --cores all bench

# FM and LADM under 0, 1 and 2 CPU loads at remote 0.1 and 0.4 (issue 16's table, ~6 min);
# more: python3 engine/bench/interference_table.py --help
bench-interference: build
	python3 engine/bench/interference_table.py

clean:
	# everything a run generates; results/reference (the README's figures) stays
	rm -rf engine/build results/smoke results/quick results/paper results/tables results/report.html results/inputs
