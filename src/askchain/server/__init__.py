"""The HTTP API and web UI (`askchain serve`); needs the `server` extra."""
