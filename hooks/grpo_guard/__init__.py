"""The plugin's PreToolUse hook, as a package: ``bash_reading`` (a command read as bash reads it), ``protected``
(what is protected and how a path is matched), ``shell_writes`` (the known writers), ``readers`` (near a
protected path only what reads) and ``decision`` (the decision for one tool call). ``hooks/guard_review.py`` is
the entry point Claude Code runs."""
