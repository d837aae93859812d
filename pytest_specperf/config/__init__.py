"""Settings: the options table, its parsers, validated Settings and the run profiles."""
