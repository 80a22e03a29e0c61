.PHONY: reproduce test bench
reproduce:   ## the main job (DC gunshot Hawkes analysis)
	bash scripts/reproduce.sh
test:        ## the whole test suite (pytest + R testthat)
	bash scripts/test.sh
bench:       ## all benchmarks (writes benchmarks/results/*.json)
	for f in benchmarks/bench_*.py; do .venv/bin/python $$f || exit 1; done
