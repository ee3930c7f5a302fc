"""Benchmarks: typedops side by side with its peers, in one run, reported as ratios."""
