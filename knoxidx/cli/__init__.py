"""The ``knoxidx`` command: parse arguments, call :class:`knoxidx.index.Index`, print.

Human output is plain aligned text (rich only draws the progress bar, and is imported only
then); ``--json`` prints exactly what the library returns. Errors are one line on stderr and a
non-zero exit code, never a traceback. The commands live in one module per command group
beside this one, each adding its commands to :data:`knoxidx.cli.group.main`; this module
imports them all and runs the group.
"""

from __future__ import annotations

import sys

from knoxidx.cli.group import main
from knoxidx.cli.output import report_error
from knoxidx.cli.process_end import closed_everything, leave_at_once


def script() -> None:
    """The ``knoxidx`` console script: :func:`run`, and the process ends as soon as a command
    that closed everything it opened (``index``) has printed its report."""
    run()
    if closed_everything():
        leave_at_once()


def run() -> None:
    """The command line in this process: errors as one line and an exit code (SystemExit)."""
    try:
        main(standalone_mode=False)
    except (Exception, KeyboardInterrupt) as exc:
        code = report_error(exc)
        if code is None:
            raise
        sys.exit(code)


# Last, as they add their commands to the group: index; symbols/callers/callees/impact/refs/
# deps; stats/verify/export; watch/serve/mcp/context; history/hotspots; search/embed; show;
# store/push/pull.
import knoxidx.cli.agent  # noqa: E402, F401
import knoxidx.cli.build  # noqa: E402, F401
import knoxidx.cli.graph  # noqa: E402, F401
import knoxidx.cli.history  # noqa: E402, F401
import knoxidx.cli.retrieval  # noqa: E402, F401
import knoxidx.cli.show  # noqa: E402, F401
import knoxidx.cli.store  # noqa: E402, F401
import knoxidx.cli.whole_index  # noqa: E402, F401
