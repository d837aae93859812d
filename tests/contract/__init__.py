"""Contract tests against SGLang's own code: see pytest_specperf/contract.py."""
