"""pytest-specperf: performance regression suite for SGLang speculative decoding."""

__version__ = "0.1.0"
