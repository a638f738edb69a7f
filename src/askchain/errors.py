"""User-facing errors: each carries a one-line reason and is reported without a traceback."""


class AskchainError(Exception):
    """A problem caused by the input or the environment, not a bug: the CLI exits with code 2."""

    exit_code = 2


class ConfigError(AskchainError):
    """Bad settings, unknown model or provider, or a missing optional dependency."""


class DatabaseError(AskchainError):
    """The database cannot be opened or introspected."""


class QueryRefused(AskchainError):
    """The safe executor refused a statement before running it (write, file access, over a limit)."""


class QueryFailed(AskchainError):
    """The statement was allowed but the engine raised an error or hit a limit while running it."""


class DatasetError(AskchainError):
    """An evaluation dataset is missing or malformed."""


def require(module: str, extra: str):
    """Import an optional vendor module, or fail with the pip extra that installs it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ConfigError(
            f"'{module}' is not installed; install it with: pip install 'askchain[{extra}]'"
        ) from exc
