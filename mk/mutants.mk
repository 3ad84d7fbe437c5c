# make check-mutants: the module built with each deliberate defect of
# tests/mutants/*.patch and make test's full-run VM tests run on each
# (scripts/mutants.sh): every mutant must fail them by a failed check,
# not by skips.  ARBT_MUTANTS="01 03" runs a subset.
.PHONY: check-mutants
check-mutants: all
	@bash scripts/mutants.sh
