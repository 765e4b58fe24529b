"""Judging: what a test means, and whether a program's values pass it, decided outside the untrusted process.

Owns the plan (``plan``, ``plan_code``, ``plan_classes``: which probes the sandbox runs, in which process, which
checks stay here), the test's own
values computed by Python (``expected_values``) in a process of their own (``planner``), the asserts split into
calls into the program and the comparison around them (``parent_expr``, ``plain_ops``), the CPU the trainer
spends judging a sample (``budget``), the wire format of values
that cross out of the sandbox (``plaindata``), the verdict from an execution's reports (``verdict``), and the
program found in a completion (``extract``). It runs no model code.
"""
