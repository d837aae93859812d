"""What a run leaves behind: the results schema, the results store and the reports."""
