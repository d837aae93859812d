"""A/B mode: base and head booted in pairs until gate/ab.py decides."""
