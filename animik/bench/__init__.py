"""Benchmarks run by ``animik bench ...``. They print tables; no pass/fail thresholds."""
