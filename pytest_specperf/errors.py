"""Errors raised by pytest-specperf's plain modules.

Each carries one human-readable line; the plugin and the CLI turn them into usage errors
or test failures without a traceback.
"""


class SpecperfError(Exception):
    """Base class: something the user can act on, described in one line."""


class UsageError(SpecperfError):
    """A bad option value or argument."""


class ProfileError(SpecperfError):
    """A deployment profile that is missing, unreadable or invalid."""


class BaselineError(SpecperfError):
    """A baseline file that is missing, corrupt, of the wrong schema, or of another key."""


class BaselineMismatch(BaselineError):
    """A baseline that cannot judge the run (another depth, profile, workload or backend),
    refused before anything is measured."""


class ServerStartError(SpecperfError):
    """The server process exited, or did not become healthy, during launch."""


class ServerArgumentsRefused(ServerStartError):
    """The server exited at once with a usage error: its command line has a bad flag."""


class ServerUnreachableError(SpecperfError):
    """A server URL that does not answer."""
