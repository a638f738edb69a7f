"""The server's health and the web page: GET /health, the page at / and plotly's bundle from the installed package.

These are what a browser loads before it can send a token (`is_open`), so they stay open when the API needs one.
"""

from __future__ import annotations

import platform
from importlib import resources
from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, JSONResponse

from askchain.llm.registry import named_models
from askchain.server.routes.common import version

router = APIRouter(tags=["status"])
STATIC = Path(__file__).parent.parent / "static"


@router.get("/health")
def health(request: Request):
    services, slots = request.app.state.services, request.app.state.slots
    name = services.models.default_name
    spec = named_models().get(name)
    engine = "llama.cpp" if spec or name.endswith(".gguf") else name.split(":", 1)[0]
    return {
        "status": "ok",
        "model": name,
        "engine": engine,
        "models_loaded": services.models.loaded,
        "methods": list(services.settings.methods),
        "default_method": services.settings.pipeline.method,
        "databases": services.catalog.names(),
        "max_concurrent": slots.limit,
        "active": slots.active,
        "versions": {
            "askchain": version("askchain"),
            "python": platform.python_version(),
            **{pkg: version(pkg) for pkg in ("fastapi", "duckdb", "sqlglot", "llama-cpp-python", "plotly")},
        },
    }


@router.get("/vendor/plotly.min.js", include_in_schema=False)
def plotly_js():
    path = plotly_bundle()
    if path is None:
        return JSONResponse({"detail": "plotly is not installed: pip install 'askchain[server]'"}, status_code=404)
    return FileResponse(path, media_type="text/javascript", headers={"Cache-Control": "public, max-age=86400"})


@router.get("/", include_in_schema=False)
def index():
    return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})


def is_open(path: str) -> bool:
    """What a browser loads before it can send the token: the page, its assets and the health check."""
    return path in ("/", "/health") or path.startswith(("/static/", "/vendor/"))


def plotly_bundle() -> Path | None:
    """plotly.min.js from the installed plotly package (never a CDN)."""
    try:
        path = Path(str(resources.files("plotly").joinpath("package_data", "plotly.min.js")))
    except ModuleNotFoundError:
        return None
    return path if path.is_file() else None
