"""One run of the suite, plain code without pytest: a depth's boots, samples and records, A/B pairs,
baseline writing, refine, the time budget and the commands it prints."""
