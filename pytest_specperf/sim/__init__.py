"""SGLang-compatible simulated server (`python -m pytest_specperf.sim`).

Modules: args (command line), model (performance model and profiles), scheduler
(continuous batching on an absolute-deadline clock), app (aiohttp HTTP API).
"""
