"""``python -m bench.context_eval.weigh SETTING [SETTING ...] [--repo PATH ...] [--embed]``:
the walks again, knoxidx context measured under each SETTING of its weights in the same walk
beside the installed weights (``context``) and plain retrieval. A SETTING is
``field=value[,field=value...]`` of :class:`~knoxidx.answers.context.ContextWeights`, e.g.
``recent=0.5,recent_commits=10``.

An experiment, not a published table: recall per repository and pooled, printed; nothing
under ``bench/.cache/context_eval/runs`` or ``bench/results`` is written.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import fields, replace
from typing import Any

from bench.context_eval.fusion import walk_variants
from knoxidx.answers.context import ContextWeights


def weights_of(setting: str) -> ContextWeights:
    """The installed weights with the ``field=value`` pairs of ``setting`` replaced."""
    installed = ContextWeights()
    kinds = {f.name: type(getattr(installed, f.name)) for f in fields(installed)}
    changes: dict[str, Any] = {}
    for pair in setting.split(","):
        name, _, value = pair.partition("=")
        if name not in kinds or kinds[name] not in (int, float, bool):
            raise SystemExit(f"not a numeric field of ContextWeights: {name!r}")
        kind = kinds[name]
        changes[name] = value.lower() in ("1", "true") if kind is bool else kind(value)
    return replace(installed, **changes)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.context_eval.weigh",
                                     description=__doc__.split("\n\n")[1])
    parser.add_argument("settings", nargs="+", metavar="SETTING")
    parser.add_argument("--repo", action="append", metavar="PATH",
                        help="a git repository or bundle (repeatable; default: the five)")
    parser.add_argument("--tasks", type=int, default=30, help="tasks per repository")
    parser.add_argument("--embed", action="store_true")
    args = parser.parse_args(argv)
    measured = {setting: weights_of(setting) for setting in args.settings}
    walk_variants(args.repo, args.tasks, args.embed, measured,
                  ["context", *measured, "retrieval"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
