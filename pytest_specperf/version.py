"""The package version, in a module of its own so that every part can read it without
importing the package's public facade (which re-exports from the parts above them)."""

__version__ = "0.1.0"
