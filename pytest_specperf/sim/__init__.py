"""SGLang-compatible simulated server (`python -m pytest_specperf.sim`).

Modules, from the command line to the wire:
  args       command line: SGLang's flags and the --sim-* knobs -> SimConfig
  model      performance model and profiles (pure; shares admission with the scheduler)
  scheduler  continuous batching on an absolute-deadline clock
  state      the running server's shared state (config, scheduler, readiness)
  parse      generation request bodies -> GenerationRequest
  render     SSE chunks, whole responses and meta_info per endpoint family
  info       /server_info, /model_info, /v1/models bodies
  faults     --sim-fault: which requests are hit and what each fault does
  wire       JSON/SSE/error bytes shared by routes, render and faults
  routes     aiohttp handlers and build_app

tests/sim/ checks it against its model with a small closed-loop client
(docs/explanation/simulator.md).
"""
