"""User-facing errors: each carries a one-line reason and is reported without a traceback."""


class AskchainError(Exception):
    """A problem caused by the input or the environment, not a bug: the CLI exits with code 2."""

    exit_code = 2


class ConfigError(AskchainError):
    """Bad settings, unknown model or provider, or a missing optional dependency."""


class ProviderError(AskchainError):
    """A remote model provider kept failing (rate limit, server error, network) after its retries."""


class DatabaseError(AskchainError):
    """The database cannot be opened or introspected."""


class QueryRefused(AskchainError):
    """The safe executor refused a statement before running it (write, file access, over a limit)."""


class QueryFailed(AskchainError):
    """The statement was allowed but the engine raised an error or hit a limit while running it."""


class DatasetError(AskchainError):
    """An evaluation dataset is missing or malformed."""


class SemanticQueryError(AskchainError):
    """The semantic layer rejected a semantic query (an unknown name, a window without its parameter, ...); the
    message is the layer's reason in one line, for the query's revision."""


def require(module: str, extra: str):
    """Import an optional vendor module, or fail with the pip extra that installs it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ConfigError(
            f"'{module}' is not installed; install it with: pip install 'askchain[{extra}]'"
        ) from exc


def first_line(exc: BaseException) -> str:
    """An exception's message cut to one line (sqlglot's and databases' messages run on with context)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def describe(exc: BaseException) -> str:
    """An unexpected exception in one line, `KeyError: 'x'`, for records and messages that must not be tracebacks."""
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0]}" if text else type(exc).__name__
