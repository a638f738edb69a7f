"""What can be asked about: the databases, each one's schema, and its governed semantic model and queries."""

from __future__ import annotations

import json

from fastapi import APIRouter, Request
from fastapi import Path as PathParam

from askchain.semantic.governed.plans import SemanticPlan
from askchain.semantic.governed.query import SemanticQuery
from askchain.server.catalog import schema_json
from askchain.server.routes.common import DB_NAME, json_default
from askchain.server.semantic import run_semantic_query, semantic_catalog

router = APIRouter(tags=["catalog"])


@router.get("/databases")
def databases_(request: Request):
    catalog = request.app.state.services.catalog
    return {"databases": catalog.describe(), "default": catalog.default}


@router.get("/schema/{db}")
def schema(request: Request, db: str = PathParam(pattern=DB_NAME)):
    return schema_json(db, request.app.state.services.catalog.engine(db).schema())


@router.get("/semantic/{db}")
def semantic_catalog_(request: Request, db: str = PathParam(pattern=DB_NAME)):
    """The database's governed semantic model: measures, dimensions and windows (a 4xx where it has none)."""
    return semantic_catalog(request.app.state.services.catalog.engine(db))


@router.post("/semantic/{db}/query")
def semantic_query_(body: SemanticQuery | SemanticPlan, request: Request, db: str = PathParam(pattern=DB_NAME)):
    """A semantic query (or a plan of them, `{"steps": [...]}`) compiled by the semantic layer into one query and run
    read-only: its SQL, reading and rows."""
    result = run_semantic_query(request.app.state.services.catalog.engine(db), body.model_dump())
    return json.loads(json.dumps(result, default=json_default))
