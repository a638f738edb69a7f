"""Conversation threads: the turns a thread remembers."""

from __future__ import annotations

import json
from dataclasses import asdict

from fastapi import APIRouter, Request
from fastapi import Path as PathParam
from fastapi.responses import JSONResponse

from askchain.server.routes.common import THREAD_ID, json_default

router = APIRouter(tags=["threads"])


@router.get("/threads/{thread_id}")
def thread(request: Request, thread_id: str = PathParam(pattern=THREAD_ID)):
    turns = request.app.state.services.threads.turns(thread_id)
    if not turns:
        return JSONResponse({"detail": f"no thread '{thread_id}'"}, status_code=404)
    return {"thread_id": thread_id, "turns": json.loads(json.dumps([asdict(t) for t in turns], default=json_default))}
