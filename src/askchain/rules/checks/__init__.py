"""The core checks, one module each."""
