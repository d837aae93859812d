"""This repository's own defaults for running its perf suite: nothing else lives here.

The deployment profile is the seed's (Qwen3.5-122B-A10B-FP8, TP4, MTP); override it with
--specperf-profile. Everything else comes from the pytest-specperf plugin (entry point).
"""
