"""Sending load and turning what comes back into figures: the workload, the load generator,
client health, the metric definitions and the response fields the code reads."""
