"""Benchmarks on the real test bed: `python -m benchmarks.NAME --json` (see README.md)."""
