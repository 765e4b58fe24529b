"""Isolation: running a model's program so that nothing it does reaches past its own execution.

Owns the processes and their walls: the pool of supervisors in the trainer (``pool``), the supervisor process
that serves one request at a time (``supervisor``), one execution as the supervisor starts, watches and ends it
(``execution``), the feeder that hands an execution its probes one test at a time (``feeder``), the template that
only forks (``template``), the untrusted child's lock-down (``child``), the
file-system jail and working directories (``jail``), Landlock (``landlock``), the seccomp filter (``seccomp``),
raw system calls (``syscalls``), the whole-tree caps and sweep (``tree``), the parent-supervisor channel
(``framing``), the resource limits (``limits``) and when the isolation is enough to score (``policy``).
It decides no verdict: it returns what an execution printed and the values it sent, as bytes.
"""
