"""Booting and watching an SGLang (or simulated) server: launch commands, the process, its
watchdog, what it reports, the hardware key, and the tiny model factory for smoke profiles."""
