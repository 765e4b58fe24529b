"""The review audit: training's own first rollouts compared with what the person reviewed.

``two_sample`` holds the statistics (tests for rollouts that come in prompt groups), ``compare`` the metrics and
one comparison, ``reference`` what the inspection keeps for it (``inspection/audit.json``), ``live`` the audit a
rendered ``train.py`` runs inside training and its records (docs/design.md, "The review audit").
"""
