"""A TypeScript member declared of a type parameter of its class (`_def: Def` in
`ZodType<Output, Def>`), read inside a subclass, holds the type argument the subclass's
`extends` clause writes for it (`extends ZodType<.., ZodOptionalDef<T>>`), whose own members
declared of a type parameter hold that parameter's bound (`T extends ZodTypeAny`). zod lost
~28 calls without: `this._def.innerType._parse(..)`."""

from __future__ import annotations

import pytest

from knoxidx.index import Index
from tests.helpers import COMPILED, build

TYPES = """
export interface ZodTypeDef { description?: string }

export abstract class ZodType<Output = any, Def extends ZodTypeDef = ZodTypeDef, Input = Output> {
  readonly _def!: Def;
  _parse(input: number): number { return input; }
}

export type ZodTypeAny = ZodType<any, any, any>;

export interface ZodOptionalDef<T extends ZodTypeAny = ZodTypeAny> extends ZodTypeDef {
  innerType: T;
}

export class ZodOptional<T extends ZodTypeAny> extends ZodType<T["_output"], ZodOptionalDef<T>, T["_input"]> {
  _parse(input: number): number {
    return this._def.innerType._parse(input);
  }
}

export class Other {
  _parse(input: number): number { return input; }
}
"""


def test_members_of_type_parameters_bound_by_extends_clauses(repo) -> None:
    root = repo({"types.ts": TYPES})
    build(root)
    with Index.open(root) as idx:
        callers = {(c["name"], c["site"]["line"])
                   for c in idx.callers("ZodType._parse")["callers"]}
        assert callers == {("_parse", 17)}
        assert not idx.callers("Other._parse")["callers"]


RECORD = """
export abstract class ZodType<Output = any, Def = any> {
  readonly _def!: Def;
  _parse(input: number): number { return input; }
}

export type KeySchema = ZodType<string, any>;

export interface ZodRecordDef<Key extends KeySchema = KeySchema, Value = any> {
  keyType: Key;
}

export class ZodRecord<Key extends KeySchema> extends ZodType<string, ZodRecordDef<Key>> {
  _parse(input: number): number {
    const keyType = this._def.keyType;
    return keyType._parse(input);
  }
}

export class Other {
  _parse(input: number): number { return input; }
}
"""


def test_a_local_copying_such_a_member_holds_its_type(repo) -> None:
    root = repo({"record.ts": RECORD})
    build(root)
    with Index.open(root) as idx:
        callers = {(c["name"], c["site"]["line"])
                   for c in idx.callers("ZodType._parse")["callers"]}
        assert callers == {("_parse", 16)}
        assert not idx.callers("Other._parse")["callers"]


TWICE = TYPES.replace("""    return this._def.innerType._parse(input);
  }""", """    return this._def.innerType._parse(input);
  }
  again(input: number): number {
    return this._def.innerType._parse(input) + this._def.innerType._parse(input);
  }""")


@pytest.mark.skipif(COMPILED, reason="a compiled module calls its own functions, not the "
                    "module attribute a test patches")
def test_a_class_extends_clause_is_read_once_per_resolver(repo, monkeypatch) -> None:
    from knoxidx.graph import scopes
    from knoxidx.graph.layout import build_layout
    from knoxidx.graph.resolve import Resolver
    from knoxidx.graph.store import SQLiteStore
    from knoxidx.graph.workspace import StoreWorkspace

    root = repo({"types.ts": TWICE})
    build(root)
    scans: list[tuple[int, str]] = []
    scan = scopes._base_arguments

    def counted(fi, index, base):  # type: ignore[no-untyped-def]
        scans.append((index, base))
        return scan(fi, index, base)

    monkeypatch.setattr(scopes, "_base_arguments", counted)
    store = SQLiteStore.open(root)
    try:
        workspace = StoreWorkspace(store, build_layout(root, ["types.ts"], []), {})
        workspace.preload()
        edges = Resolver(workspace).resolve_file("types.ts").edges
    finally:
        store.close()
    assert sorted(e.line for e in edges if e.type == "Calls") == [17, 20]
    assert len(scans) == len(set(scans)) == 1
