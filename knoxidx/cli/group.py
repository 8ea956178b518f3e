"""The ``knoxidx`` command group, apart from the commands: every command module adds its
commands to it, and the package imports them all, so nothing imports back up."""

from __future__ import annotations

import click

from knoxidx.cli.options import offline_option
from knoxidx.cli.output import log_to_terminal


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="knoxidx")
@offline_option
def main() -> None:
    """knoxidx: a local code graph of functions, classes, calls and imports."""
    log_to_terminal()
