"""specperf bisect: a red range of commits narrowed to the commit that changed it."""
