"""Contract tests against SGLang's own code: see tests/support/sglang_contract.py."""
