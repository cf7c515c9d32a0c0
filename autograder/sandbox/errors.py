"""The one error the sandbox raises."""


class SandboxError(Exception):
    """A worker cannot start here; the message says why and what to do."""
