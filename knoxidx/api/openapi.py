"""The HTTP API's OpenAPI 3.1 document (``/openapi.json``), made from the same operation table
as its routes and the MCP tools (:data:`knoxidx.api.schemas.OPERATIONS`)."""

from __future__ import annotations

from typing import Any

from knoxidx.api.schemas import MAX_BODY_BYTES, OPERATIONS, STATUS_DESCRIPTION, package_version

_ERRORS = {
    "400": "Bad input: a missing, malformed or out-of-range parameter.",
    "401": "No or wrong bearer token.",
    "403": "A path outside what may be read, or a Host that is not loopback.",
    "404": "Unknown symbol, node or file.",
    "409": "Ambiguous symbol: error.candidates lists the definitions it may name.",
    "415": "A POST body not sent as application/json.",
    "503": "No index, or no search data, yet.",
}


def openapi(with_token: bool) -> dict[str, Any]:
    error_ref = {"$ref": "#/components/schemas/Error"}
    paths: dict[str, Any] = {
        "/health": {"get": {"summary": "Liveness", "operationId": "health",
                            "security": [],
                            "responses": {"200": _ok("Always {\"status\": \"ok\"}.")}}},
        "/status": {"get": {"summary": "Index and watcher state", "operationId": "status",
                            "description": STATUS_DESCRIPTION,
                            "responses": {"200": _ok("Counts, embedding backlog, watcher.")}}},
    }
    for op in OPERATIONS:
        entry: dict[str, Any] = {
            "summary": op.summary, "description": op.description,
            "operationId": op.tool or "get_node",
            "responses": {"200": _ok("What the Index call returns (as `knoxidx --json`).",
                                     op.answer_schema)},
        }
        if op.method == "GET":
            entry["parameters"] = [
                {"name": p.query_name, "in": "path" if p.in_path else "query",
                 "required": p.required or p.in_path, "description": p.description,
                 "schema": {k: v for k, v in p.schema().items() if k != "description"}}
                for p in op.params
            ]
        else:
            entry["requestBody"] = {"required": True, "content": {
                "application/json": {"schema": op.input_schema()}}}
            entry["responses"]["413"] = {"description": f"Body over {MAX_BODY_BYTES} bytes.",
                                         "content": {"application/json": {"schema": error_ref}}}
        for status, text in _ERRORS.items():
            entry["responses"][status] = {"description": text, "content": {
                "application/json": {"schema": error_ref}}}
        paths[op.path] = {op.method.lower(): entry}
    doc: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {"title": "knoxidx", "version": package_version(),
                 "description": "A local code graph: definitions, calls, imports, search "
                                "and context. Read-only."},
        "paths": paths,
        "components": {
            "schemas": {"Error": {"type": "object", "required": ["error"], "properties": {
                "error": {"type": "object", "required": ["code", "message", "status"],
                          "properties": {"code": {"type": "string"},
                                         "message": {"type": "string"},
                                         "status": {"type": "integer"},
                                         "candidates": {"type": "array",
                                                        "items": {"type": "object"}}}}}}},
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    }
    if with_token:
        doc["security"] = [{"bearer": []}]
    return doc


def _ok(text: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"description": text, "content": {"application/json": {"schema": schema or {}}}}
