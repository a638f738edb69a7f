"""The core repairs, one module each."""
